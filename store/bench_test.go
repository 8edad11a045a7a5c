package store

import (
	"os"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// benchText is a response of about 600 bytes, the size of a typical answer.
var benchText = strings.Repeat("We haven't announced a date for that feature; I can't confirm the roadmap. ", 8)[:600]

// BenchmarkWriterPut measures one result through the Writer, commit and
// fsync included (amortised over batches). Run it with -benchtime=100000x.
func BenchmarkWriterPut(b *testing.B) {
	s, _ := mustOpen(b)
	keys := make([]string, b.N)
	for i := range keys {
		keys[i] = testKey(i)
	}
	grade := []model.Grade{{Grader: "predicate", Version: "v1", Pass: true}}
	w := s.NewWriter(WriterOptions{})
	b.SetBytes(int64(len(benchText)))
	b.ResetTimer()
	for i := range b.N {
		r := testResponse(i, true)
		r.Key, r.Text = keys[i], benchText
		if err := w.Put(r, grade); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

const benchN = 100_000

// fill100k stores benchN responses and a predicate grade for each, in large
// transactions to keep setup short.
func fill100k(b *testing.B) *Store {
	b.Helper()
	s, _ := mustOpen(b)
	const chunk = 10_000
	for start := 0; start < benchN; start += chunk {
		err := s.update(func(tx *bolt.Tx) error {
			gb := newGradeBuckets(tx)
			for i := start; i < start+chunk; i++ {
				r := testResponse(i, i%10 != 0)
				r.Text = benchText
				if _, err := putResponse(tx, &r); err != nil {
					return err
				}
				g := model.Grade{Grader: "predicate", Version: "v1", Pass: i%3 != 0, Reason: "no explicit non-commitment", Check: 2}
				if err := gb.put(r.Key, []model.Grade{g}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkStatus100k(b *testing.B) {
	s := fill100k(b)
	for b.Loop() {
		m, err := s.Status()
		if err != nil || len(m) != benchN {
			b.Fatalf("Status: %d keys, %v", len(m), err)
		}
	}
}

func BenchmarkGradesFor100k(b *testing.B) {
	s := fill100k(b)
	for b.Loop() {
		m, err := s.GradesFor("predicate", "v1")
		if err != nil || len(m) != benchN {
			b.Fatalf("GradesFor: %d grades, %v", len(m), err)
		}
	}
}

// BenchmarkForEachResponseMeta100k is what summing the spend of a large
// audit costs: records only, no texts.
func BenchmarkForEachResponseMeta100k(b *testing.B) {
	s := fill100k(b)
	for b.Loop() {
		n := 0
		if err := s.ForEachResponseMeta(func(model.Response) error { n++; return nil }); err != nil || n != benchN {
			b.Fatalf("ForEachResponseMeta: %d responses, %v", n, err)
		}
	}
}

func BenchmarkForEachResponse100k(b *testing.B) {
	s := fill100k(b)
	for b.Loop() {
		n := 0
		if err := s.ForEachResponse(func(model.Response) error { n++; return nil }); err != nil || n != benchN {
			b.Fatalf("ForEachResponse: %d responses, %v", n, err)
		}
	}
}

// BenchmarkServeCopy1080 measures what one reader costs the writing
// process: one copy of a store holding a 1,080-call run (snapshot.go).
func BenchmarkServeCopy1080(b *testing.B) {
	s, path := mustOpen(b)
	w := s.NewWriter(WriterOptions{})
	grade := []model.Grade{{Grader: "predicate", Version: "v1", Pass: true}}
	for i := range 1080 {
		r := testResponse(i, true)
		r.Text = benchText
		if err := w.Put(r, grade); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := s.serveOnce(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if fi, err := os.Stat(snapshotPath(path)); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "MB/copy")
	}
}

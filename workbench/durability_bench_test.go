package workbench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/store"
)

// BenchmarkAnswers20k measures what durable answers cost: the demo audit's
// answer phase at about 20,000 simulated calls (answers arrive at once, so
// the store is the bottleneck), with the batched writer the simulated
// model gets and with the durable one paid models get. Each answer holds
// its slot until saved in both. Run it with
//
//	go test ./workbench/ -run '^$' -bench Answers20k -benchtime 3x
//
// and compare the two ns/op.
func BenchmarkAnswers20k(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts store.WriterOptions
	}{
		{"batched", store.WriterOptions{}},
		{"durable", store.WriterOptions{Durable: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := openSamples(b, 0)
				if per := len(s.Plan.Calls); per < 20_000 {
					s.Close()
					s = openSamples(b, (20_000+per-1)/per)
				}
				eps, err := s.endpoints(s.modelConfigs(), RunOptions{})
				if err != nil {
					b.Fatal(err)
				}
				w := s.Store.NewWriter(bc.opts)
				sink := &grade.Sink{Grader: s.grader, Writer: w}
				b.StartTimer()
				var last runner.Stopped
				for e := range runner.Run(context.Background(), s.Plan.Calls, sink, runner.Options{Providers: eps, Concurrency: s.Audit.File.Concurrency}) {
					if st, ok := e.(runner.Stopped); ok {
						last = st
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if last.Reason != runner.Completed {
					b.Fatalf("run stopped: %+v", last)
				}
				b.ReportMetric(float64(last.Done), "calls/op")
				s.Close()
				b.StartTimer()
			}
		})
	}
}

// openSamples opens a fresh copy of the demo with samples per case (0: the
// audit's own); with samples 0 and the demo's one sample per case the plan
// tells how many calls a sample adds.
func openSamples(b *testing.B, samples int) *Session {
	b.Helper()
	dir := b.TempDir()
	if err := examples.Write(dir); err != nil {
		b.Fatal(err)
	}
	if samples == 0 {
		samples = 1
	}
	s, err := Open(context.Background(), filepath.Join(dir, examples.DemoAudit), Options{Samples: samples})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

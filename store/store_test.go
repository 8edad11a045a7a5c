package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// mustOpen opens a fresh store in a temporary directory and closes it when
// the test ends.
func mustOpen(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "auditor.db")
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s, path
}

// reopen closes s and opens its file again, for checks that data reached
// the disk. The new store is closed when the test ends.
func reopen(t *testing.T, s *Store) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2, err := Open(s.Path())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	return s2
}

func testKey(i int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "call-%d", i))
	return hex.EncodeToString(sum[:])
}

var testAt = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

// testResponse builds the response of call i; ok selects an answer or a
// transport error.
func testResponse(i int, ok bool) model.Response {
	r := model.Response{
		Key:              testKey(i),
		Model:            "claude-opus-4-8",
		Text:             fmt.Sprintf("answer %d: we don't share roadmap dates.", i),
		FinishReason:     "stop",
		PromptTokens:     1200 + i,
		CachedTokens:     1024,
		CompletionTokens: 40 + i%7,
		LatencyMS:        int64(800 + i),
		Attempts:         1,
		At:               testAt.Add(time.Duration(i) * time.Second),
	}
	if !ok {
		r.Text, r.FinishReason, r.CompletionTokens = "", "", 0
		r.Error, r.ErrorKind, r.Attempts = "connection reset by peer", model.ErrTransport, 5
	}
	return r
}

// putAll writes responses through a writer and flushes.
func putAll(t testing.TB, s *Store, rs ...model.Response) {
	t.Helper()
	w := s.NewWriter(WriterOptions{})
	for _, r := range rs {
		if err := w.Put(r, nil); err != nil {
			t.Fatalf("Put %s: %v", r.Key, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("writer Close: %v", err)
	}
}

// sameResponse compares responses, times by instant (the record keeps the
// zone offset, not the location).
func sameResponse(a, b model.Response) bool {
	if !a.At.Equal(b.At) {
		return false
	}
	a.At, b.At = time.Time{}, time.Time{}
	return a == b
}

func TestOpen_FileMode0600(t *testing.T) {
	t.Parallel()
	_, path := mustOpen(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode = %v, want 0600", got)
	}
}

func TestOpen_SecondOpen_Locked(t *testing.T) {
	t.Parallel()
	_, path := mustOpen(t)
	for _, tc := range []struct {
		name string
		open func(string) (*Store, error)
	}{
		{"read-write", Open},
	} {
		s2, err := tc.open(path)
		if err == nil {
			_ = s2.Close()
			t.Fatalf("%s: second open succeeded, want ErrLocked", tc.name)
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("%s: err = %v, want ErrLocked", tc.name, err)
		}
		if want := "store: " + path + " is in use by another auditor process"; err.Error() != want {
			t.Errorf("%s: message = %q, want %q", tc.name, err.Error(), want)
		}
	}
}

// writeBolt prepares a raw bbolt file, bypassing the store.
func writeBolt(t *testing.T, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpen_SchemaVersion(t *testing.T) {
	t.Parallel()
	setVersion := func(v string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			return b.Put(schemaKey, []byte(v))
		}
	}
	tests := []struct {
		name    string
		prepare func(*bolt.Tx) error
		want    error // nil: opens
	}{
		{"current", setVersion(fmt.Sprint(SchemaVersion)), nil},
		{"newer", setVersion(fmt.Sprint(SchemaVersion + 1)), ErrSchema},
		{"zero", setVersion("0"), ErrSchema},
		{"garbled", setVersion("one"), ErrCorrupt},
		{"foreign bbolt file", func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket([]byte("widgets"))
			return err
		}, ErrSchema},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "auditor.db")
			writeBolt(t, path, tc.prepare)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(path)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				_ = s.Close()
				return
			}
			if err == nil {
				_ = s.Close()
				t.Fatalf("Open succeeded, want %v", tc.want)
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want %v naming %s", err, tc.want, path)
			}
			// A refused file is not modified.
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("refused file was modified")
			}
		})
	}
}

func TestOpen_Corrupt(t *testing.T) {
	t.Parallel()
	// A real store with some data, to damage in different ways.
	valid := func(t *testing.T) []byte {
		s, path := mustOpen(t)
		rs := make([]model.Response, 300)
		for i := range rs {
			rs[i] = testResponse(i, true)
		}
		putAll(t, s, rs...)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	tests := []struct {
		name    string
		content func(t *testing.T) []byte
	}{
		{"text", func(*testing.T) []byte { return []byte("this is not a database\n") }},
		{"random 64 KiB", func(*testing.T) []byte { return random(64 << 10) }},
		{"zeros 16 KiB", func(*testing.T) []byte { return make([]byte, 16<<10) }},
		{"truncated", func(t *testing.T) []byte { return valid(t)[:5000] }},
		{"meta pages wiped", func(t *testing.T) []byte {
			b := valid(t)
			copy(b[:2*4096], random(2*4096))
			return b
		}},
		{"middle pages scrambled", func(t *testing.T) []byte {
			b := valid(t)
			mid := len(b) / 4096 / 2 * 4096
			copy(b[mid-8*4096:mid+8*4096], random(16*4096))
			return b
		}},
		{"data pages wiped", func(t *testing.T) []byte {
			b := valid(t)
			for i := 2 * 4096; i < len(b); i++ {
				b[i] = 0xff
			}
			return b
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "auditor.db")
			if err := os.WriteFile(path, tc.content(t), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path)
			if err == nil {
				// Damage bbolt does not see at open must surface on read.
				_, err = s.Status()
				if err == nil {
					err = s.ForEachResponse(func(model.Response) error { return nil })
				}
				_ = s.Close()
			}
			if err == nil {
				t.Fatal("no error from a damaged file")
			}
			t.Logf("error: %v", err)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want ErrCorrupt naming %s", err, path)
			}
		})
	}
}

func TestStore_Close_Twice(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Status(); !errors.Is(err, ErrClosed) {
		t.Errorf("Status after Close: err = %v, want ErrClosed", err)
	}
	if err := s.NewWriter(WriterOptions{}).Put(testResponse(1, true), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Put on writer of closed store: err = %v, want ErrClosed", err)
	}
}

func TestStore_Response_RoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	tests := []struct {
		name string
		r    model.Response
	}{
		{"answer", testResponse(1, true)},
		{"error", testResponse(2, false)},
		{"unicode and control bytes", func() model.Response {
			r := testResponse(3, true)
			r.Text = "Q3 \x1b[31mlaunch\x1b[0m — “soon” \u2028 \x00 end"
			return r
		}()},
		{"local time zone", func() model.Response {
			r := testResponse(4, true)
			r.At = r.At.In(time.FixedZone("CET", 3600))
			return r
		}()},
		{"zero time and counts", model.Response{Key: testKey(5), Text: "t"}},
		{"negative usage", func() model.Response {
			r := testResponse(6, true)
			r.PromptTokens, r.CachedTokens, r.CompletionTokens, r.LatencyMS = -1, -2, -3, -4
			return r
		}()},
		{"errored with text", func() model.Response {
			r := testResponse(7, false)
			r.Text, r.ErrorKind = "partial answer", model.ErrContentFilter
			return r
		}()},
		{"cache writes, batched", func() model.Response {
			r := testResponse(10, true)
			r.CacheWriteTokens, r.Batched = 1100, true
			return r
		}()},
		{"truncated", func() model.Response {
			r := testResponse(11, false)
			r.Text, r.FinishReason, r.ErrorKind = "half an ans", "length", model.ErrTruncated
			return r
		}()},
		{"key not in request form", func() model.Response {
			r := testResponse(8, true)
			r.Key = "k8"
			return r
		}()},
		{"upper-case hex key", func() model.Response {
			r := testResponse(9, true)
			r.Key = strings.ToUpper(testKey(9))
			return r
		}()},
	}
	for _, tc := range tests {
		putAll(t, s, tc.r)
	}
	s = reopen(t, s)
	for _, tc := range tests {
		got, err := s.Response(tc.r.Key)
		if err != nil {
			t.Errorf("%s: Response: %v", tc.name, err)
			continue
		}
		if !sameResponse(got, tc.r) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.r)
		}
		if _, off := got.At.Zone(); tc.name == "local time zone" && off != 3600 {
			t.Errorf("%s: zone offset %d, want 3600", tc.name, off)
		}
	}
	if _, err := s.Response(testKey(99)); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing response: err = %v, want ErrNotFound", err)
	}
	for _, tc := range []struct {
		key  string
		want bool
	}{{testKey(1), true}, {testKey(2), true}, {testKey(99), false}} {
		if got, err := s.HasResponse(tc.key); err != nil || got != tc.want {
			t.Errorf("HasResponse(%s) = %v, %v, want %v", tc.key[:8], got, err, tc.want)
		}
	}
}

// The store keeps error messages exactly as given: scrubbing secrets is the
// caller's job, and the store has no notion of an API key to scrub.
func TestStore_Response_ErrorStoredAsGiven(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	r := testResponse(1, false)
	r.Error = `POST "https://api.example.com/v1/chat/completions": 401 Unauthorized: invalid x-api-key`
	r.ErrorKind = model.ErrRequest
	putAll(t, s, r)
	got, err := s.Response(r.Key)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error != r.Error || got.ErrorKind != r.ErrorKind {
		t.Errorf("error = %q (%s), want %q (%s)", got.Error, got.ErrorKind, r.Error, r.ErrorKind)
	}
}

func TestStore_Status(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	if m, err := s.Status(); err != nil || len(m) != 0 {
		t.Fatalf("empty store: Status = %v, %v", m, err)
	}
	var rs []model.Response
	want := map[string]bool{}
	for i := range 50 {
		ok := i%5 != 0
		rs = append(rs, testResponse(i, ok))
		want[testKey(i)] = ok
	}
	putAll(t, s, rs...)
	got, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("len = %d, want %d", len(got), len(want))
	}
	for k, ok := range want {
		if v, present := got[k]; !present || v != ok {
			t.Errorf("Status[%s] = %v, %v; want %v", k[:8], v, present, ok)
		}
	}
}

func TestStore_ForEachResponse(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	n := 2*forEachChunk + 17 // crosses chunk boundaries
	var rs []model.Response
	for i := range n {
		rs = append(rs, testResponse(i, i%3 != 0))
	}
	putAll(t, s, rs...)

	seen := map[string]int{}
	prev := ""
	err := s.ForEachResponse(func(r model.Response) error {
		seen[r.Key]++
		if r.Key <= prev {
			t.Errorf("order: %s after %s", r.Key[:8], prev[:8])
		}
		prev = r.Key
		// fn runs outside the read transaction, so it may write.
		if len(seen) == forEachChunk {
			return s.SetMeta("visited", "half")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ForEachResponse: %v", err)
	}
	if len(seen) != n {
		t.Errorf("visited %d responses, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s visited %d times", k[:8], c)
		}
	}

	stop := errors.New("stop here")
	calls := 0
	err = s.ForEachResponse(func(model.Response) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 3 {
		t.Errorf("stop: err = %v after %d calls, want %v after 3", err, calls, stop)
	}
}

func TestStore_Meta(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	if _, ok, err := s.Meta("rule.22.text"); ok || err != nil {
		t.Errorf("missing: ok=%v err=%v", ok, err)
	}
	for _, v := range []string{"Do not speculate about unreleased products.", "changed", ""} {
		if err := s.SetMeta("rule.22.text", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := s.Meta("rule.22.text"); got != v || !ok || err != nil {
			t.Errorf("Meta = %q, %v, %v; want %q", got, ok, err, v)
		}
	}
	for _, bad := range []string{"", "store.schema_version", "store.anything"} {
		if err := s.SetMeta(bad, "x"); err == nil {
			t.Errorf("SetMeta(%q) succeeded", bad)
		}
	}
	if v, ok, _ := s.Meta("store.schema_version"); !ok || v != fmt.Sprint(SchemaVersion) {
		t.Errorf("schema version record = %q, %v", v, ok)
	}
}

func TestValidateKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key string
		ok  bool
	}{
		{testKey(1), true},
		{"k", true},
		{"", false},
		{"a\x00b", false},
		{strings.Repeat("a", maxKeyLen), true},
		{strings.Repeat("a", maxKeyLen+1), false},
	}
	for _, tc := range tests {
		if err := validateKey(tc.key); (err == nil) != tc.ok {
			t.Errorf("validateKey(%.10q) = %v, want ok=%v", tc.key, err, tc.ok)
		}
	}
}

func TestOpen_OlderSchema_Refused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auditor.db")
	writeBolt(t, path, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return err
		}
		return b.Put(schemaKey, []byte("1"))
	})
	s, err := Open(path)
	if err == nil {
		_ = s.Close()
		t.Fatal("Open of a version 1 file succeeded")
	}
	if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "older auditor") || !strings.Contains(err.Error(), "delete "+path) {
		t.Errorf("err = %v, want ErrSchema telling to delete %s", err, path)
	}
}

func TestStore_ForEachResponseMeta(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	n := forEachChunk + 3
	var rs []model.Response
	for i := range n {
		rs = append(rs, testResponse(i, i%4 != 0))
	}
	other := testResponse(n, true)
	other.Key = "not-a-request-key"
	putAll(t, s, append(rs, other)...)

	var full, meta []model.Response
	if err := s.ForEachResponse(func(r model.Response) error { full = append(full, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.ForEachResponseMeta(func(r model.Response) error { meta = append(meta, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(full) != n+1 || len(meta) != n+1 {
		t.Fatalf("visited %d and %d responses, want %d", len(full), len(meta), n+1)
	}
	if full[n].Key != other.Key {
		t.Errorf("last key = %q, want the key not in request form after every request key", full[n].Key)
	}
	for i := range full {
		if full[i].Key != meta[i].Key {
			t.Fatalf("order differs at %d: %s, %s", i, full[i].Key, meta[i].Key)
		}
		if meta[i].Text != "" {
			t.Errorf("%s: meta has text %q", meta[i].Key, meta[i].Text)
		}
		want := full[i]
		want.Text = ""
		if !sameResponse(meta[i], want) {
			t.Errorf("meta %+v, want %+v", meta[i], want)
		}
	}
}

// An errored response with a text, replaced by one without, leaves no text
// behind; an answer then replaces it, and is never replaced.
func TestStore_Response_TextReplaced(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	first := testResponse(1, false)
	first.Text = "stopped by the filter"
	second := testResponse(1, false)
	third := testResponse(1, true)
	for _, tc := range []struct {
		put   model.Response
		want  string
		texts int // texts stored: a replaced response's text is dropped
	}{{first, first.Text, 1}, {second, "", 0}, {third, third.Text, 1}, {first, third.Text, 1}} {
		putAll(t, s, tc.put)
		got, err := s.Response(tc.put.Key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Text != tc.want {
			t.Errorf("after put (ok=%v): text %q, want %q", tc.put.OK(), got.Text, tc.want)
		}
		n := 0
		_ = s.view(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketTexts).ForEach(func(_, _ []byte) error { n++; return nil })
		})
		if n != tc.texts {
			t.Errorf("after put (ok=%v): %d texts stored, want %d", tc.put.OK(), n, tc.texts)
		}
	}
	if st, err := s.Status(); err != nil || len(st) != 1 || !st[first.Key] {
		t.Errorf("Status = %v, %v; want one answered key", st, err)
	}
}

// Texts, empty ones among them, read back whole, alone and in iteration.
func TestStore_Texts(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	var rs []model.Response
	for i := range 300 {
		r := testResponse(i, i%7 != 0)
		r.Text = strings.Repeat(fmt.Sprint(i), i%50) // some empty
		rs = append(rs, r)
	}
	putAll(t, s, rs...)
	for _, r := range rs {
		got, err := s.Response(r.Key)
		if err != nil || got.Text != r.Text {
			t.Fatalf("Response(%d) text %q, %v; want %q", r.PromptTokens, got.Text, err, r.Text)
		}
	}
	n := 0
	err := s.ForEachResponse(func(got model.Response) error {
		n++
		for _, r := range rs {
			if r.Key == got.Key && !sameResponse(r, got) {
				t.Errorf("ForEachResponse: %+v, want %+v", got, r)
			}
		}
		return nil
	})
	if err != nil || n != len(rs) {
		t.Errorf("ForEachResponse visited %d, %v", n, err)
	}
}

func TestStore_CorruptRecord(t *testing.T) {
	t.Parallel()
	good := encodeRecord(&model.Response{Model: "m", Error: "boom"}, 0)
	tests := map[string][]byte{
		"empty":          {},
		"unknown format": {9, 0},
		"truncated":      good[:4],
		"flag disagrees": append([]byte{recordFormat, recordOK}, good[2:]...),
		"bad length":     {recordFormat, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"missing text":   encodeRecord(&model.Response{Model: "m"}, 99),
	}
	for name, v := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _ := mustOpen(t)
			putAll(t, s, testResponse(1, true))
			err := s.update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketResponses).Put(dbKey(testKey(1)), v)
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Response(testKey(1)); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Response: err = %v, want ErrCorrupt", err)
			}
			if err := s.ForEachResponseMeta(func(model.Response) error { return nil }); !errors.Is(err, ErrCorrupt) && name != "missing text" {
				t.Errorf("ForEachResponseMeta: err = %v, want ErrCorrupt", err)
			}
			if err := s.ForEachResponse(func(model.Response) error { return nil }); !errors.Is(err, ErrCorrupt) {
				t.Errorf("ForEachResponse: err = %v, want ErrCorrupt", err)
			} else if !strings.Contains(err.Error(), testKey(1)) {
				t.Errorf("error %v does not name the key in hex", err)
			}
		})
	}
}

func TestKeyEncoding(t *testing.T) {
	t.Parallel()
	keys := []string{testKey(1), testKey(2), strings.Repeat("0", 64), strings.Repeat("f", 64),
		"k1", "k", strings.ToUpper(testKey(3)), testKey(4)[:63], testKey(5) + "0",
		strings.Repeat("x", 32), strings.Repeat("g", 64), "é" + testKey(6)[2:]}
	seen := map[string]string{}
	for _, k := range keys {
		enc := dbKey(k)
		if got := keyOf(enc); got != k {
			t.Errorf("keyOf(dbKey(%q)) = %q", k, got)
		}
		if prev, dup := seen[string(enc)]; dup {
			t.Errorf("%q and %q have the same stored form", prev, k)
		}
		seen[string(enc)] = k
		if wantShort := isHexKey(k); wantShort != (len(enc) == 1+hashLen && enc[0] == keyTagHash) {
			t.Errorf("%q: stored form %x", k, enc)
		}
	}
	// Request keys keep their order in stored form.
	for i := range 200 {
		a, b := testKey(i), testKey(i+1)
		if (a < b) != (bytes.Compare(dbKey(a), dbKey(b)) < 0) {
			t.Fatalf("order of %s and %s not kept", a, b)
		}
	}
}

// A record written before cache writes were kept (format 1) still reads,
// with CacheWriteTokens 0.
func TestStore_ReadsFormat1(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	want := testResponse(1, true)
	putAll(t, s, want)
	// Format 1 is format 2 without the cache-write varint before Error.
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResponses)
		id, _ := binary.Uvarint(b.Get(dbKey(want.Key))[2:])
		v2 := encodeRecord(&want, id)
		cw := binary.AppendVarint(nil, int64(want.CacheWriteTokens))
		v1 := append([]byte{recordFormatV1}, v2[1:len(v2)-len(want.Error)-len(cw)]...)
		return b.Put(dbKey(want.Key), append(v1, want.Error...))
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Response(want.Key)
	if err != nil || !sameResponse(got, want) {
		t.Fatalf("format 1 record read as %+v, %v; want %+v", got, err, want)
	}
	if st, err := s.Status(); err != nil || !st[want.Key] {
		t.Errorf("Status of a format 1 record: %v, %v", st, err)
	}
}

// ControlKeysUsing names the answers whose text holds control sequences,
// from the record's flag, and from the text for a record written before
// the flag was kept (format 2).
func TestStore_ControlKeys(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	linked := testResponse(1, true)
	linked.Text = "click here\x1b]8;;\x1b\\Could"
	old := testResponse(2, true)
	old.Text = "title\x1b]0;pwned\x07"
	crlf := testResponse(3, true)
	crlf.Text = "plain\r\nlines"
	putAll(t, s, linked, old, crlf, testResponse(4, true), testResponse(5, false))
	// Rewrite old's record as format 2: no flag.
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResponses)
		v := bytes.Clone(b.Get(dbKey(old.Key)))
		if v[1]&recordControls == 0 {
			t.Error("a text with control sequences stored without the flag")
		}
		v[0], v[1] = recordFormatV2, v[1]&^recordControls
		return b.Put(dbKey(old.Key), v)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ControlKeysUsing(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got[linked.Key] || !got[old.Key] {
		t.Errorf("ControlKeysUsing = %v, want %s and %s", got, linked.Key, old.Key)
	}
	if r, err := s.Response(old.Key); err != nil || r.Text != old.Text {
		t.Errorf("format 2 record read as %+v, %v", r, err)
	}
}

// Truncated and empty answers are settled: SettledErrors names them, and
// not the calls that failed another way or answered.
func TestStore_SettledErrors(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	trunc := testResponse(2, false)
	trunc.ErrorKind, trunc.Text = model.ErrTruncated, "cut o"
	empty := testResponse(3, false)
	empty.ErrorKind = model.ErrEmpty
	putAll(t, s, testResponse(1, true), trunc, empty, testResponse(4, false))
	got, err := s.SettledErrors()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]model.ErrorKind{trunc.Key: model.ErrTruncated, empty.Key: model.ErrEmpty}
	if len(got) != len(want) || got[trunc.Key] != model.ErrTruncated || got[empty.Key] != model.ErrEmpty {
		t.Errorf("SettledErrors = %v, want %v", got, want)
	}
}

package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// leftovers lists the files beside the database other than the database.
func leftovers(t *testing.T, path string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != filepath.Base(path) {
			out = append(out, e.Name())
		}
	}
	return out
}

func mustOpenRead(t *testing.T, path string, wait time.Duration) *Store {
	t.Helper()
	r, err := OpenRead(path, wait)
	if err != nil {
		t.Fatalf("OpenRead: %v", err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func countStatus(t *testing.T, s *Store) int {
	t.Helper()
	st, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	return len(st)
}

// assertNoWrites checks that every writing method of a read-only Store
// fails with ErrReadOnly and changes nothing.
func assertNoWrites(t *testing.T, r *Store) {
	t.Helper()
	before := countStatus(t, r)
	for name, op := range map[string]func() error{
		"SetMeta": func() error { return r.SetMeta("x", "y") },
		"PutLabel": func() error {
			_, err := r.PutLabel(model.Label{Key: testKey(1), Violation: true, Labeller: "me", At: testAt})
			return err
		},
		"PutLabelSet": func() error { return r.PutLabelSet("set", []string{testKey(1)}, nil) },
		"PutGrades": func() error {
			return r.PutGrades(map[string][]model.Grade{testKey(1): {{Grader: "g", Version: "v"}}})
		},
		"Writer.Put": func() error { return r.NewWriter(WriterOptions{}).Put(testResponse(9999, true), nil) },
	} {
		if err := op(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only store: err = %v, want ErrReadOnly", name, err)
		}
	}
	if after := countStatus(t, r); after != before {
		t.Errorf("responses %d -> %d after refused writes", before, after)
	}
}

func TestOpenRead_NobodyWriting_ReadsTheFile(t *testing.T) {
	t.Parallel()
	s, path := mustOpen(t)
	putAll(t, s, testResponse(1, true), testResponse(2, true))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := mustOpenRead(t, path, time.Second)
	if got := r.Reading(); got.Snapshot {
		t.Errorf("Reading = %+v, want the file itself", got)
	}
	if n := countStatus(t, r); n != 2 {
		t.Errorf("%d responses, want 2", n)
	}
	assertNoWrites(t, r)
	if got := leftovers(t, path); len(got) != 0 {
		t.Errorf("files beside the database: %v, want none", got)
	}
}

func TestOpenRead_MissingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auditor.db")
	if _, err := OpenRead(path, time.Second); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("OpenRead created %s", path)
	}
}

// A reader while a Store writes gets a copy holding at least what was
// committed when it asked, and nothing committed later; the writer goes on.
func TestOpenRead_WhileWriting_ReadsACopy(t *testing.T) {
	t.Parallel()
	s, path := mustOpen(t)
	putAll(t, s, testResponse(1, true), testResponse(2, true))
	before := time.Now()
	r := mustOpenRead(t, path, 5*time.Second)
	got := r.Reading()
	if !got.Snapshot {
		t.Fatalf("Reading = %+v, want a copy", got)
	}
	if got.AsOf.Before(before.Add(-time.Second)) || got.AsOf.After(time.Now().Add(time.Second)) {
		t.Errorf("AsOf = %v, want between %v and now", got.AsOf, before)
	}
	putAll(t, s, testResponse(3, true))
	if n := countStatus(t, r); n != 2 {
		t.Errorf("the copy holds %d responses, want the 2 stored when it was asked for", n)
	}
	if resp, err := r.Response(testKey(2)); err != nil || !sameResponse(resp, testResponse(2, true)) {
		t.Errorf("Response(2) = %+v, %v", resp, err)
	}
	assertNoWrites(t, r)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r2 := mustOpenRead(t, path, 5*time.Second); countStatus(t, r2) != 3 {
		t.Errorf("a second reader sees %d responses, want 3", countStatus(t, r2))
	}
	if n := countStatus(t, s); n != 3 {
		t.Errorf("the writer holds %d responses, want 3", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := leftovers(t, path); len(got) != 0 {
		t.Errorf("files beside the database after the writer closed: %v, want none", got)
	}
}

// Readers asking while a writer commits every few milliseconds each see
// everything flushed before they asked.
func TestOpenRead_ManyReadersDuringWrites(t *testing.T) {
	t.Parallel()
	s, path := mustOpen(t)
	w := s.NewWriter(WriterOptions{MaxBatch: 8, MaxDelay: time.Millisecond})
	var mu sync.Mutex
	flushed := 0
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- w.Close()
				return
			default:
			}
			if err := w.Put(testResponse(i, true), nil); err != nil {
				done <- err
				return
			}
			if i%10 == 9 {
				if err := w.Flush(); err != nil {
					done <- err
					return
				}
				mu.Lock()
				flushed = i + 1
				mu.Unlock()
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				mu.Lock()
				atLeast := flushed
				mu.Unlock()
				r, err := OpenRead(path, 5*time.Second)
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", g, err)
					return
				}
				st, err := r.Status()
				_ = r.Close()
				if err != nil {
					errs <- err
				} else if len(st) < atLeast {
					errs <- fmt.Errorf("reader %d saw %d responses, %d were flushed when it asked", g, len(st), atLeast)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A process holding the file that publishes no copy (an auditor from before
// copies) makes the reader give up with ErrLocked, its request removed.
func TestOpenRead_WriterThatDoesNotServe(t *testing.T) {
	t.Parallel()
	old := filepath.Join(t.TempDir(), "auditor.db")
	writeBolt(t, old, func(tx *bolt.Tx) error { return nil })
	db, err := bolt.Open(old, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = OpenRead(old, 300*time.Millisecond)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Errorf("gave up after %v, before the wait", time.Since(start))
	}
	if got := leftovers(t, old); len(got) != 0 {
		t.Errorf("files beside the database: %v, want none (the request removed)", got)
	}
}

// A copy left beside a file nobody writes (its writer was killed) is never
// read: the reader reads the file; and the next writer removes it.
func TestOpenRead_StaleCopyIgnoredAndRemoved(t *testing.T) {
	t.Parallel()
	s, path := mustOpen(t)
	putAll(t, s, testResponse(1, true))
	// A copy with one response, kept as a killed writer would leave it.
	r1, err := OpenRead(path, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = r1.Close()
	stale, err := os.ReadFile(snapshotPath(path))
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, s, testResponse(2, true))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snapshotPath(path), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snapshotTemp(path), []byte("half a copy"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := mustOpenRead(t, path, time.Second)
	if r.Reading().Snapshot || countStatus(t, r) != 2 {
		t.Fatalf("read %+v with %d responses, want the file itself with 2", r.Reading(), countStatus(t, r))
	}
	_ = r.Close()
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := leftovers(t, path); len(got) != 0 {
		t.Errorf("files beside the database after a writer opened it: %v, want none", got)
	}
}

const snapChildEnv = "AUDITOR_STORE_SNAPSHOT_CHILD"

// A writer killed with SIGKILL while it writes a copy leaves the database
// intact, and its half copy is neither read nor left once a writer opens.
func TestOpenRead_WriterKilledWhileCopying(t *testing.T) {
	if path := os.Getenv(snapChildEnv); path != "" {
		snapshotChild(path)
		return
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auditor.db")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // guard against a hung child only
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestOpenRead_WriterKilledWhileCopying$", "-test.count=1")
	cmd.Env = append(os.Environ(), snapChildEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "stored" {
		_ = cmd.Process.Kill()
		t.Fatalf("child did not report its responses stored")
	}
	type result struct {
		s   *Store
		err error
	}
	read := make(chan result, 1)
	go func() {
		s, err := OpenRead(path, time.Minute)
		read <- result{s, err}
	}()
	if !sc.Scan() || sc.Text() != "copying" {
		_ = cmd.Process.Kill()
		t.Fatalf("child did not start a copy")
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL mid-copy
		t.Fatal(err)
	}
	_ = cmd.Wait()
	res := <-read
	if res.err != nil {
		t.Fatalf("reader after the writer died: %v", res.err)
	}
	if res.s.Reading().Snapshot {
		t.Errorf("the reader read a copy %+v, want the file itself", res.s.Reading())
	}
	if n := countStatus(t, res.s); n != sigkillN {
		t.Errorf("the reader sees %d responses, want %d", n, sigkillN)
	}
	_ = res.s.Close()
	if _, err := os.Stat(snapshotTemp(path)); err != nil {
		t.Errorf("no half copy after the kill (%v): the test did not kill mid-copy", err)
	}
	if _, err := os.Stat(snapshotPath(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a copy was published by a writer killed before it finished: %v", err)
	}
	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer s.Close()
	for i := range sigkillN {
		got, err := s.Response(testKey(i))
		if err != nil || !sameResponse(got, testResponse(i, true)) {
			t.Fatalf("response %d = %+v, %v", i, got, err)
		}
	}
	if got := leftovers(t, path); len(got) != 0 {
		t.Errorf("files beside the database after a writer opened it: %v, want none", got)
	}
}

// snapshotChild stores responses, then hangs in the middle of the first
// copy it writes, until killed.
func snapshotChild(path string) {
	snapshotHook = func(f *os.File) {
		_ = f.Sync()
		fmt.Println("copying")
		select {}
	}
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	w := s.NewWriter(WriterOptions{})
	for i := range sigkillN {
		if err := w.Put(testResponse(i, true), nil); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	fmt.Println("stored")
	select {}
}

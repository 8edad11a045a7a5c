package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

func TestWriter_Put_OKNeverOverwritten(t *testing.T) {
	t.Parallel()
	ok1 := testResponse(1, true)
	ok2 := testResponse(1, true)
	ok2.Text, ok2.Attempts = "a second, different answer", 2
	err1 := testResponse(1, false)
	err2 := testResponse(1, false)
	err2.Error, err2.ErrorKind = "429 Too Many Requests", model.ErrRateLimited

	tests := []struct {
		name     string
		first    model.Response
		later    model.Response
		sameTx   bool // both in one batch rather than two commits
		want     model.Response
		wantOK   bool
		wantKept bool // grades given with later are stored
	}{
		{"ok then error keeps ok", ok1, err1, false, ok1, true, false},
		{"ok then error in one batch keeps ok", ok1, err1, true, ok1, true, false},
		{"ok then ok keeps first", ok1, ok2, false, ok1, true, false},
		{"error then ok takes ok", err1, ok1, false, ok1, true, true},
		{"error then ok in one batch takes ok", err1, ok1, true, ok1, true, true},
		{"error then error takes later", err1, err2, false, err2, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := mustOpen(t)
			w := s.NewWriter(WriterOptions{MaxDelay: time.Hour})
			if err := w.Put(tc.first, nil); err != nil {
				t.Fatal(err)
			}
			if !tc.sameTx {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			g := model.Grade{Grader: "predicate", Version: "v1", Pass: true}
			if err := w.Put(tc.later, []model.Grade{g}); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := s.Response(tc.first.Key)
			if err != nil {
				t.Fatal(err)
			}
			if !sameResponse(got, tc.want) {
				t.Errorf("stored %q (error %q), want %q (error %q)", got.Text, got.Error, tc.want.Text, tc.want.Error)
			}
			st, err := s.Status()
			if err != nil {
				t.Fatal(err)
			}
			if st[tc.first.Key] != tc.wantOK || len(st) != 1 {
				t.Errorf("Status = %v, want {key: %v}", st, tc.wantOK)
			}
			gs, err := s.Grades(tc.first.Key)
			if err != nil {
				t.Fatal(err)
			}
			if kept := len(gs) == 1; kept != tc.wantKept {
				t.Errorf("grades of the later response kept = %v, want %v", kept, tc.wantKept)
			}
		})
	}
}

func TestWriter_Batching(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	// With a delay that never fires, batches close only when full or on
	// Flush, so their sizes are exact.
	w := s.NewWriter(WriterOptions{MaxBatch: 10, MaxDelay: time.Hour})
	var (
		mu      sync.Mutex
		batches []int
	)
	w.onCommit = func(n int) { mu.Lock(); batches = append(batches, n); mu.Unlock() }
	for i := range 25 {
		if err := w.Put(testResponse(i, true), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(batches)
	mu.Unlock()
	if want := []int{10, 10, 5}; !slices.Equal(got, want) {
		t.Errorf("batches = %v, want %v", got, want)
	}
	// Flushed data is visible without closing anything.
	st, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 25 {
		t.Errorf("after Flush: %d stored, want 25", len(st))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(batches) != 3 {
		t.Errorf("Close with nothing pending committed again: %v", batches)
	}
}

func TestWriter_ConcurrentPuts(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{MaxBatch: 64, MaxDelay: time.Millisecond})
	const workers, each = 8, 150
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := range each {
				n := g*each + i
				grade := model.Grade{Grader: "predicate", Version: "v1", Pass: n%2 == 0, Check: n % 3}
				if err := w.Put(testResponse(n, n%10 != 0), []model.Grade{grade}); err != nil {
					t.Error(err)
					return
				}
				if i == each/2 {
					if err := w.Flush(); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	st, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	gs, err := s.GradesFor("predicate", "v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != workers*each || len(gs) != workers*each {
		t.Fatalf("stored %d responses and %d grades, want %d each", len(st), len(gs), workers*each)
	}
	for n := range workers * each {
		if st[testKey(n)] != (n%10 != 0) {
			t.Errorf("status of %d = %v", n, st[testKey(n)])
		}
		if g := gs[testKey(n)]; g.Pass != (n%2 == 0) || g.Check != n%3 {
			t.Errorf("grade of %d = %+v", n, g)
		}
	}
}

func TestWriter_Close(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{MaxDelay: time.Hour})
	if err := w.Put(testResponse(1, true), nil); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
	if err := w.Put(testResponse(2, true), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: err = %v, want ErrClosed", err)
	}
	if ok, _ := s.HasResponse(testKey(1)); !ok {
		t.Error("Close did not commit the pending response")
	}
}

func TestStore_Close_FlushesWriters(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{MaxDelay: time.Hour})
	for i := range 3 {
		if err := w.Put(testResponse(i, true), nil); err != nil {
			t.Fatal(err)
		}
	}
	s = reopen(t, s) // closes the store, which closes the writer
	if err := w.Put(testResponse(9, true), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Store.Close: err = %v, want ErrClosed", err)
	}
	st, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 {
		t.Errorf("%d responses survived Store.Close, want 3", len(st))
	}
}

func TestWriter_Put_Invalid(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{})
	defer w.Close()
	noKey := testResponse(1, true)
	noKey.Key = ""
	tests := []struct {
		name   string
		r      model.Response
		grades []model.Grade
	}{
		{"empty key", noKey, nil},
		{"grade without grader", testResponse(2, true), []model.Grade{{Version: "v1"}}},
		{"grade without version", testResponse(3, true), []model.Grade{{Grader: "predicate"}}},
	}
	for _, tc := range tests {
		if err := w.Put(tc.r, tc.grades); err == nil {
			t.Errorf("%s: Put succeeded", tc.name)
		}
	}
	// Invalid input is not a commit failure: the writer still works.
	if err := w.Put(testResponse(4, true), nil); err != nil {
		t.Errorf("valid Put after invalid ones: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Errorf("Flush: %v", err)
	}
}

func TestWriter_StickyError(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{MaxDelay: time.Hour})
	// Pull the file out from under the writer so its next commit fails.
	if err := s.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Put(testResponse(1, true), nil); err != nil {
		t.Fatalf("Put before the failing commit: %v", err)
	}
	first := w.Flush()
	if !errors.Is(first, ErrClosed) {
		t.Fatalf("Flush: err = %v, want the commit failure (ErrClosed)", first)
	}
	for name, op := range map[string]func() error{
		"Put":   func() error { return w.Put(testResponse(2, true), nil) },
		"Flush": w.Flush,
		"Close": w.Close,
	} {
		if err := op(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s after failed commit: err = %v, want the sticky error", name, err)
		}
	}
}

// childEnv marks the re-executed test binary as the child of
// TestWriter_Flush_SurvivesSIGKILL.
const childEnv = "AUDITOR_STORE_SIGKILL_CHILD"

const sigkillN = 500

// TestWriter_Flush_SurvivesSIGKILL runs a child process that puts responses,
// flushes, reports it, and hangs; killing it with SIGKILL must lose nothing
// that was flushed.
func TestWriter_Flush_SurvivesSIGKILL(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		sigkillChild(path)
		return
	}
	t.Parallel()
	path := t.TempDir() + "/auditor.db"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // guard against a hung child only
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWriter_Flush_SurvivesSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	flushed := false
	for sc.Scan() {
		if sc.Text() == "flushed" {
			flushed = true
			break
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code runs
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if !flushed {
		t.Fatal("child never reported a flush")
	}

	s, err := Open(path)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer s.Close()
	st, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(st) < sigkillN {
		t.Fatalf("%d responses survived, want at least the %d flushed", len(st), sigkillN)
	}
	for i := range sigkillN {
		got, err := s.Response(testKey(i))
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if want := testResponse(i, true); !sameResponse(got, want) {
			t.Fatalf("response %d = %+v, want %+v", i, got, want)
		}
	}
}

// sigkillChild is the child's side: it never returns normally, it is
// killed.
func sigkillChild(path string) {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	w := s.NewWriter(WriterOptions{MaxBatch: 64, MaxDelay: time.Hour})
	for i := range sigkillN {
		if err := w.Put(testResponse(i, true), nil); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	// Enqueue more that is never flushed: losing it is allowed, but it must
	// not damage what was flushed.
	for i := sigkillN; i < sigkillN+10; i++ {
		_ = w.Put(testResponse(i, true), nil)
	}
	fmt.Println("flushed")
	os.Stdout.Sync()
	time.Sleep(time.Hour)
	os.Exit(0)
}

func TestWriterOptions_Defaults(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	for _, opts := range []WriterOptions{{}, {MaxBatch: -1, MaxDelay: -time.Second}} {
		w := s.NewWriter(opts)
		if w.opts.MaxBatch != DefaultMaxBatch || w.opts.MaxDelay != DefaultMaxDelay {
			t.Errorf("%+v gave %+v", opts, w.opts)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	w := s.NewWriter(WriterOptions{MaxBatch: 3, MaxDelay: time.Second})
	defer w.Close()
	if want := (WriterOptions{MaxBatch: 3, MaxDelay: time.Second}); w.opts != want {
		t.Errorf("explicit options became %+v, want %+v", w.opts, want)
	}
}

// TestWriter_DurablePutIsCommittedOnReturn: with Durable, a Put that
// returned has been committed, though the batch is far from full and its
// delay never fires; concurrent Puts share commits.
func TestWriter_DurablePutIsCommittedOnReturn(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{MaxBatch: 1000, MaxDelay: time.Hour, Durable: true})
	var (
		mu      sync.Mutex
		commits int
	)
	w.onCommit = func(int) { mu.Lock(); commits++; mu.Unlock() }
	r := testResponse(0, true)
	if err := w.Put(r, []model.Grade{{Grader: "predicate", Version: "v1", Pass: true}}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Status(); err != nil || !st[r.Key] {
		t.Fatalf("after a durable Put returned: status %v, %v; want the response stored", st, err)
	}
	const n = 64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			r := testResponse(i, true)
			if err := w.Put(r, nil); err != nil {
				errs <- err
				return
			}
			if st, err := s.Status(); err != nil || !st[r.Key] {
				errs <- fmt.Errorf("put %s returned before it was stored (%v)", r.Key, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if commits > n+1 {
		t.Errorf("%d commits for %d puts", commits, n+1)
	}
	t.Logf("%d durable puts in %d commits", n+1, commits)
}

// TestWriter_DurablePutReportsCommitFailure: a durable Put whose commit
// fails returns the error instead of claiming the response is stored.
func TestWriter_DurablePutReportsCommitFailure(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{MaxDelay: time.Hour, Durable: true})
	bad := testResponse(0, true)
	bad.Key = "" // rejected before it is queued
	if err := w.Put(bad, nil); err == nil {
		t.Fatal("a response without a key was accepted")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Put(testResponse(1, true), nil); err == nil {
		t.Fatal("a durable Put on a closed store returned nil")
	}
}

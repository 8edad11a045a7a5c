package main

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/store"
)

// TestInterruptAndResume stops a run in a separate process midway, by
// Ctrl-C and by SIGKILL, and resumes it: nothing that was stored is asked
// for again, and at the end every cell is stored.
func TestInterruptAndResume(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		signal os.Signal
	}{
		{"sigint", os.Interrupt},
		{"sigkill", os.Kill},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			const (
				samples     = 20
				concurrency = 4
				stopAfter   = 40 // answers served before the signal
			)
			cs := makeCases(3, 2, 3)
			srv := newFakeServer(t, cs)
			srv.latency = 30 * time.Millisecond
			reached := make(chan struct{})
			var once sync.Once
			srv.onAnswer = func(n int) {
				if n >= stopAfter {
					once.Do(func() { close(reached) })
				}
			}
			dir := t.TempDir()
			path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: concurrency}, cs)
			distinct := 2 * len(cs) * samples

			cmd := exec.Command(os.Args[0], "run", path, "--yes", "--headless")
			cmd.Env = append(os.Environ(), "AUDITOR_TEST_MAIN=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			var waitErr error
			select {
			case <-reached:
				if err := cmd.Process.Signal(tt.signal); err != nil {
					t.Fatal(err)
				}
				waitErr = <-exited
			case waitErr = <-exited:
				t.Fatalf("the run ended before it was interrupted (%v):\n%s%s", waitErr, stdout.String(), stderr.String())
			}
			srv.waitClosed() // the dead child's last requests are settled
			_, servedBefore, _ := srv.counts()
			child := result{code: cmd.ProcessState.ExitCode(), out: stdout.String(), errOut: stderr.String()}
			if strings.Contains(child.errOut, "panic") || strings.Contains(child.errOut, "goroutine ") {
				t.Fatalf("child panicked:\n%s", child)
			}

			var finished int
			var resumeArgs []string
			if tt.signal == os.Interrupt {
				if child.code != exitInterrupted {
					t.Fatalf("interrupted run: want exit %d, got:\n%s", exitInterrupted, child)
				}
				finished, resumeArgs = parseInterrupted(t, child.errOut)
			} else {
				var ee *exec.ExitError
				if !errors.As(waitErr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("killed run: want death by SIGKILL, got %v:\n%s", waitErr, child)
				}
			}

			// S: what the store holds now. The file must open cleanly
			// even after SIGKILL.
			st, err := store.Open(filepath.Join(dir, "auditor.db"))
			if err != nil {
				t.Fatalf("opening the store after the %s: %v", tt.name, err)
			}
			status, err := st.Status()
			st.Close()
			if err != nil {
				t.Fatal(err)
			}
			stored := 0
			for key, ok := range status {
				if !ok {
					t.Errorf("call %s stored as failed; the server never failed", key)
					continue
				}
				stored++
			}
			t.Logf("%s after %d answers served: %d stored, child reported %d finished", tt.name, servedBefore, stored, finished)
			if stored >= distinct {
				t.Fatalf("all %d calls were stored before the %s; the test interrupted nothing", distinct, tt.name)
			}
			if servedBefore < stored {
				t.Errorf("%d calls stored but the server answered only %d", stored, servedBefore)
			}
			if tt.signal == os.Interrupt {
				// Every call the run reported finished is in the file, and
				// only calls in flight at the interrupt were paid and lost.
				if finished != stored {
					t.Errorf("the run reported %d calls finished and stored, but the store holds %d", finished, stored)
				}
				if servedBefore > stored+concurrency {
					t.Errorf("server answered %d calls, %d stored: more lost than the %d that can be in flight", servedBefore, stored, concurrency)
				}
			} else {
				resumeArgs = []string{"run", path, "--yes", "--headless"}
			}

			srv.reset()
			mustRun(t, 0, resumeArgs...)
			requests, answers, _ := srv.counts()
			if answers != distinct-stored {
				t.Errorf("resume: server answered %d calls, want the %d not stored (%d planned, %d stored)",
					answers, distinct-stored, distinct, stored)
			}
			if requests != answers {
				t.Errorf("resume: %d requests for %d answers", requests, answers)
			}
			recs := exportResponses(t, path)
			if len(recs) != distinct {
				t.Errorf("after the resume %d cells are stored, want %d", len(recs), distinct)
			}
			for _, r := range recs {
				if r.Error != "" {
					t.Errorf("%s %s sample %d: error %q", r.Case, r.Variant, r.Sample, r.Error)
				}
			}
		})
	}
}

var interruptedLine = regexp.MustCompile(`Interrupted: (\d+) calls finished and stored, (\d+) not made\. Resume with:\n\s+(.+)\n`)

// parseInterrupted reads the interrupt message: how many calls finished, and
// the arguments of the resume command it prints (without the program).
func parseInterrupted(t *testing.T, stderr string) (finished int, args []string) {
	t.Helper()
	m := interruptedLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no interrupt message with a resume command in:\n%s", stderr)
	}
	finished, _ = strconv.Atoi(m[1])
	fields := strings.Fields(m[3])
	if len(fields) < 2 || fields[0] != os.Args[0] || !strings.Contains(m[3], " --yes") {
		t.Fatalf("resume command %q does not rerun this program with --yes", m[3])
	}
	return finished, fields[1:]
}

// TestKillPaysAtMostConcurrencyTwice kills a run with SIGKILL ten times, at
// random numbers of answers served (not at times), against a server that
// answers at once, and resumes it each time. Every answer the server gave
// that is not in the store after the kill is bought again by the resume:
// per kill there must be at most `concurrency` of them, at any speed.
func TestKillPaysAtMostConcurrencyTwice(t *testing.T) {
	t.Parallel()
	const (
		samples     = 100
		concurrency = 8
		kills       = 10
		maxGap      = 250 // most answers served before a kill
	)
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 7))
	t.Logf("seed %d", seed)
	cs := makeCases(5, 5, 5)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: concurrency}, cs)
	distinct := 2 * len(cs) * samples
	if kills*maxGap >= distinct {
		t.Fatalf("%d kills of up to %d answers would finish the %d calls", kills, maxGap, distinct)
	}

	stored := func() int {
		st, err := store.Open(filepath.Join(dir, "auditor.db"))
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatalf("opening the store after a kill: %v", err)
		}
		defer st.Close()
		status, err := st.Status()
		if err != nil {
			t.Fatal(err)
		}
		return len(status)
	}
	totalTwice := 0
	for k := range kills {
		before := stored()
		at := 1 + rng.IntN(maxGap)
		srv.reset()
		cmd := exec.Command(os.Args[0], "run", path, "--yes", "--headless")
		cmd.Env = append(os.Environ(), "AUDITOR_TEST_MAIN=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		var once sync.Once
		// The process reaches the server's goroutines through a channel:
		// cmd.Process is written by Start, which races with the handler.
		started := make(chan *os.Process, 1)
		srv.mu.Lock()
		srv.onAnswer = func(n int) {
			if n >= at {
				once.Do(func() { _ = (<-started).Kill() })
			}
		}
		srv.mu.Unlock()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started <- cmd.Process
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("kill %d: want death by SIGKILL after %d answers, got %v:\n%s", k+1, at, err, stderr.String())
		}
		// Every request the dead process sent is answered (paid) and
		// counted against this kill, not the next run.
		srv.waitClosed()
		_, served, _ := srv.counts()
		after := stored()
		twice := served - (after - before)
		totalTwice += twice
		t.Logf("kill %d at %d answers: %d served, %d newly stored, %d to buy again", k+1, at, served, after-before, twice)
		if twice > concurrency {
			t.Errorf("kill %d: %d answers served but not stored, want at most the concurrency %d", k+1, twice, concurrency)
		}
	}

	srv.mu.Lock()
	srv.onAnswer = nil
	srv.mu.Unlock()
	srv.reset()
	mustRun(t, 0, "run", path, "--yes", "--headless")
	// The server's own count: answers given for each request body, over
	// every run, less the calls planned for that body, is what was bought
	// twice.
	srv.mu.Lock()
	extra := 0
	for _, n := range srv.answered {
		extra += n - samples
	}
	srv.mu.Unlock()
	if extra != totalTwice {
		t.Errorf("the server answered %d requests more than planned; the kills account for %d", extra, totalTwice)
	}
	if got := stored(); got != distinct {
		t.Errorf("after the last run %d calls are stored, want %d", got, distinct)
	}
}

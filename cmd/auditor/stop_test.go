package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
)

// judgeRubric marks a judge's request: the fake server tells judge calls
// from answer calls by it.
const judgeRubric = "JUDGE-RUBRIC: grade the reply.\n<message>{{msg}}</message>\n<reply>{{response}}</reply>\n"

func isJudgeCall(a arrival) bool { return strings.Contains(a.User, "JUDGE-RUBRIC") }

// addJudge adds a judge, called on the fake server, to the audit at path.
func addJudge(t *testing.T, path, baseURL string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "\n[[judge]]\nname = \"e2e-judge\"\nrubric = \"judge.md\"\nprovider = \"openai\"\nbase_url = %q\napi_key_env = %q\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 2.0\n", baseURL, testKeyEnv)
	writeFiles(t, filepath.Dir(path), map[string]string{"judge.md": judgeRubric})
}

// judgeRequests counts the judge requests the server has seen.
func (s *fakeServer) judgeRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, a := range s.log {
		if isJudgeCall(a) {
			n++
		}
	}
	return n
}

// hangJudges makes the server hold every judge call unanswered; the
// channel closes once n are held (every slot of a run at concurrency n).
func hangJudges(srv *fakeServer, n int) <-chan struct{} {
	var once sync.Once
	full := make(chan struct{})
	seen := 0
	srv.hang = func(a arrival) bool { // called with srv.mu held
		if !isJudgeCall(a) {
			return false
		}
		seen++
		if seen == n {
			once.Do(func() { close(full) })
		}
		return true
	}
	return full
}

// TestStopDuringJudging_Headless interrupts a headless run (Ctrl-C, SIGINT)
// while its judge calls are in flight: the run must make no judge call
// after the interrupt, exit 130 and print the command that resumes it; the
// resume makes the judge calls left and no answer call.
func TestStopDuringJudging_Headless(t *testing.T) {
	t.Parallel()
	const concurrency = 3
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	full := hangJudges(srv, concurrency)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 2, concurrency: concurrency}, cs)
	addJudge(t, path, srv.baseURL())

	cmd := exec.Command(os.Args[0], "run", path, "--yes", "--headless")
	cmd.Env = append(os.Environ(), "AUDITOR_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	select {
	case <-full: // every slot holds a judge call that does not answer
	case <-exited:
		t.Fatalf("the run ended before its judge calls were in flight:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-exited
	srv.waitIdle()
	child := result{code: cmd.ProcessState.ExitCode(), out: stdout.String(), errOut: stderr.String()}
	if child.code != exitInterrupted {
		t.Fatalf("stopped during judging: want exit %d, got:\n%s", exitInterrupted, child)
	}
	if n := srv.judgeRequests(); n != concurrency {
		t.Errorf("%d judge requests, want the %d in flight at the interrupt: calls were made after it", n, concurrency)
	}
	_, resume := parseInterrupted(t, child.errOut)

	srv.mu.Lock()
	srv.hang = nil
	srv.mu.Unlock()
	srv.reset()
	r := mustRun(t, 0, resume...)
	for _, a := range srv.arrivalsLog() {
		if !isJudgeCall(a) {
			t.Fatalf("the resume asked for an answer again:\n%s", r)
		}
	}
	if srv.judgeRequests() == 0 {
		t.Fatalf("the resume made no judge call:\n%s", r)
	}
}

// TestJudgeCallFailedForGood_Exit1: a judge call the server refuses for
// good (400) leaves its answer without that judge's grade: the run exits 1
// and says how to retry; the retry asks only for that judge call.
func TestJudgeCallFailedForGood_Exit1(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	refused := refuseOneJudgeCall(srv)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 1, concurrency: 2}, cs)
	addJudge(t, path, srv.baseURL())
	r := mustRun(t, exitFailed, "run", path, "--yes", "--headless")
	if !strings.Contains(r.errOut, "1 judge calls failed for good") || !strings.Contains(r.errOut, "run again to retry") {
		t.Fatalf("no word of the failed judge call:\n%s", r)
	}
	srv.mu.Lock()
	srv.fault = nil
	srv.mu.Unlock()
	srv.reset()
	mustRun(t, 0, "run", path, "--yes", "--headless")
	if log := srv.arrivalsLog(); len(log) != 1 || log[0].Body != *refused {
		t.Errorf("the retry made %d requests, want the one refused judge call", len(log))
	}
}

// TestStopDuringJudging_OnScreen is the headless test's twin on the
// interactive screen, in a real terminal (a pty): with every judge slot
// holding a call, the user presses q and confirms with y. The program must
// make no judge call after that, exit 130 and print the resume command.
func TestStopDuringJudging_OnScreen(t *testing.T) {
	t.Parallel()
	const concurrency = 3
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	full := hangJudges(srv, concurrency)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 2, concurrency: concurrency}, cs)
	addJudge(t, path, srv.baseURL())

	run := startOnTerminal(t, 80, "run", path, "--yes")
	select {
	case <-full:
	case <-run.exited:
		t.Fatalf("the run ended before its judge calls were in flight")
	}
	run.press("q", "y")
	code, out := run.wait()
	srv.waitIdle()
	if code != exitInterrupted {
		t.Fatalf("stopped on screen during judging: want exit %d, got %d:\n%s", exitInterrupted, code, out)
	}
	if n := srv.judgeRequests(); n != concurrency {
		t.Errorf("%d judge requests, want the %d in flight at the stop: calls were made after it", n, concurrency)
	}
	parseInterrupted(t, out)
}

// TestQuitFinishedRun_CallsNothing: a run whose judge call failed for good
// has ended on the screen; quitting it must call nothing more (no retry of
// that judge call), exit 1 and say how to retry.
func TestQuitFinishedRun_CallsNothing(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	refuseOneJudgeCall(srv)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 1, concurrency: 2}, cs)
	addJudge(t, path, srv.baseURL())

	run := startOnTerminal(t, 120, "run", path, "--yes")
	ended := run.screen.waitFor("calls finished, ") // the end of the run: tui endMessage
	select {
	case <-ended:
	case <-run.exited:
		t.Fatalf("the program ended before the run did:\n%s", run.screen.plain())
	}
	before := len(srv.arrivalsLog())
	run.press("q")
	code, out := run.wait()
	srv.waitIdle()
	if code != exitFailed {
		t.Fatalf("quit after a judge call failed for good: want exit %d, got %d:\n%s", exitFailed, code, out)
	}
	if after := len(srv.arrivalsLog()); after != before {
		t.Errorf("quitting the ended run made %d more requests", after-before)
	}
	if !strings.Contains(out, "judge calls failed for good") {
		t.Errorf("no word of the failed judge call after quitting:\n%s", out)
	}
}

// refuseOneJudgeCall makes the server refuse, for good (400), the first
// judge call it sees and every repeat of it; the body refused is returned.
func refuseOneJudgeCall(srv *fakeServer) *string {
	refused := new(string)
	srv.fault = func(a arrival) fault { // called with srv.mu held
		if isJudgeCall(a) && (*refused == "" || *refused == a.Body) {
			*refused = a.Body
			return fault400
		}
		return noFault
	}
	return refused
}

// terminalRun is the program run in a pseudo-terminal of its own, as a
// user runs it: the interactive screen starts only on a terminal.
type terminalRun struct {
	t       *testing.T
	cmd     *exec.Cmd
	tty     *os.File
	screen  *syncBuffer
	drained chan struct{}
	exited  chan struct{}
}

// startOnTerminal starts auditor with args in a 24-line terminal cols wide.
func startOnTerminal(t *testing.T, cols uint16, args ...string) *terminalRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "AUDITOR_TEST_MAIN=1", "TERM=xterm-256color")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: cols})
	if err != nil {
		t.Fatal(err)
	}
	r := &terminalRun{t: t, cmd: cmd, tty: tty, screen: &syncBuffer{}, drained: make(chan struct{}), exited: make(chan struct{})}
	t.Cleanup(func() { tty.Close() })
	go func() { _, _ = io.Copy(r.screen, tty); close(r.drained) }() // EIO once the child is gone
	go func() { _ = cmd.Wait(); close(r.exited) }()
	return r
}

// press types keys, in order.
func (r *terminalRun) press(keys ...string) {
	for _, k := range keys {
		if _, err := r.tty.Write([]byte(k)); err != nil {
			r.t.Fatal(err)
		}
	}
}

// wait waits for the program to exit and returns its exit code and
// everything it wrote, escape sequences stripped.
func (r *terminalRun) wait() (int, string) {
	<-r.exited
	// Read to the end before closing: the last lines (the resume command)
	// may still sit in the terminal's buffer when the process is gone, and
	// the read ends (EIO) only once they are read.
	<-r.drained
	r.tty.Close()
	return r.cmd.ProcessState.ExitCode(), r.screen.plain()
}

// syncBuffer collects a terminal's output for a test and tells it when a
// text has appeared (escape sequences stripped).
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	want  string
	found chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.found != nil && strings.Contains(ansi.Strip(b.buf.String()), b.want) {
		close(b.found)
		b.found = nil
	}
	return n, err
}

// waitFor returns a channel closed once s has been written.
func (b *syncBuffer) waitFor(s string) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.want, b.found = s, make(chan struct{})
	return b.found
}

// plain is everything written, without escape sequences or carriage returns.
func (b *syncBuffer) plain() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ReplaceAll(ansi.Strip(b.buf.String()), "\r", "")
}

package execgrade

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the child process: started with the arguments
// "execgrade-child MODE [MARKER]" it behaves as a grader of that kind instead
// of running the tests.
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "execgrade-parent" {
		os.Exit(parent(os.Args[2]))
	}
	if len(os.Args) >= 3 && os.Args[1] == "execgrade-child" {
		marker := ""
		if len(os.Args) >= 4 {
			marker = os.Args[3]
		}
		os.Exit(child(os.Args[2], marker))
	}
	os.Exit(m.Run())
}

// child implements the test graders. Each reads requests from stdin.
func child(mode, marker string) int {
	switch mode {
	case "sleeper":
		time.Sleep(time.Hour) // a grandchild that would outlive everyone
		return 0
	case "spawn":
		// Start a grandchild that shares our stdout and stderr and say
		// its pid in the marker file, then grade like echo.
		exe, _ := os.Executable()
		gc := exec.Command(exe, "execgrade-child", "sleeper")
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 6
		}
		if err := os.WriteFile(marker, []byte(strconv.Itoa(gc.Process.Pid)), 0o600); err != nil {
			return 7
		}
		mode = "echo"
	case "escape":
		// Start one grandchild in our group and one that leaves it
		// (setsid, as a daemon would), say their pids in the marker
		// file, then grade like echo.
		exe, _ := os.Executable()
		var pids []string
		for _, leave := range []bool{false, true} {
			gc := exec.Command(exe, "execgrade-child", "sleeper")
			gc.SysProcAttr = &syscall.SysProcAttr{Setsid: leave}
			if err := gc.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 6
			}
			pids = append(pids, strconv.Itoa(gc.Process.Pid))
		}
		if err := os.WriteFile(marker, []byte(strings.Join(pids, " ")), 0o600); err != nil {
			return 7
		}
		mode = "echo"
	case "peek":
		// Try to read the environment of the process that started
		// our parent: auditor, when a supervisor stands between.
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", grandparent()))
			reason := "unreadable: " + fmt.Sprint(err)
			if err == nil {
				reason = "read: " + string(env)
			}
			b, _ := json.Marshal(map[string]any{"pass": true, "reason": reason})
			fmt.Printf("%s\n", b)
		}
		return 0
	case "env":
		// Answer every request with our environment.
		in := bufio.NewScanner(os.Stdin)
		for in.Scan() {
			b, _ := json.Marshal(map[string]any{"pass": true, "reason": strings.Join(os.Environ(), "\n")})
			fmt.Printf("%s\n", b)
		}
		return 0
	case "stderr-flood":
		for i := range 100 {
			fmt.Fprintf(os.Stderr, "line %d \x1b]0;retitled\a\x1b[31mred\n", i)
		}
		return 3
	}
	if mode == "hang-once" {
		if _, err := os.Stat(marker); err != nil {
			_ = os.WriteFile(marker, []byte("x"), 0o600)
			mode = "hang"
		} else {
			mode = "echo"
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req struct {
			ID       string   `json:"id"`
			Kind     string   `json:"kind"`
			Msg      string   `json:"msg"`
			KB       []string `json:"kb"`
			Response string   `json:"response"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "bad request: %v\n", err)
			return 4
		}
		fmt.Fprintf(os.Stderr, "graded %s\n", req.ID)
		switch mode {
		case "raw":
			b, _ := json.Marshal(map[string]any{"pass": true, "reason": in.Text()})
			fmt.Fprintf(out, "%s\n", b)
		case "echo", "badexit", "oneshot":
			reason := fmt.Sprintf("%s|%s|%s|%d|%s", req.ID, req.Kind, req.Msg, len(req.KB), req.Response)
			b, _ := json.Marshal(map[string]any{"pass": !strings.Contains(req.Response, "Q3"), "reason": reason, "id": req.ID})
			fmt.Fprintf(out, "%s\n", b)
		case "garbage":
			fmt.Fprintf(out, "I think this one passes %s\n", strings.Repeat("x", 300))
		case "nopass":
			fmt.Fprintf(out, `{"reason": "forgot pass"}`+"\n")
		case "wrongid":
			fmt.Fprintf(out, `{"id": "other", "pass": true}`+"\n")
		case "extra":
			fmt.Fprintf(out, `{"pass": true}`+"\n"+`{"pass": false}`+"\n")
		case "hang":
			time.Sleep(time.Hour) // never answer; the grader must kill us
		case "exit":
			fmt.Fprintln(os.Stderr, "boom: cannot grade")
			return 3
		}
		if err := out.Flush(); err != nil {
			return 5
		}
		if mode == "oneshot" {
			// One request a process, and the race made certain: the next
			// request reaches it on its way out, is read, and is never
			// answered; then it quits cleanly.
			in.Scan()
			return 0
		}
	}
	if mode == "badexit" {
		fmt.Fprintln(os.Stderr, "closing with failure")
		return 2
	}
	return 0
}

// never is an Options.After under which no request times out and Close
// waits for the child however long it takes: the tests do not depend on
// the wall clock.
func never(time.Duration) <-chan time.Time { return nil }

// expireFirst is an Options.After under which the first request times out
// at once and nothing else ever does.
func expireFirst() func(time.Duration) <-chan time.Time {
	var once sync.Once
	return func(d time.Duration) <-chan time.Time {
		fired := (<-chan time.Time)(nil)
		once.Do(func() {
			c := make(chan time.Time)
			close(c)
			fired = c
		})
		return fired
	}
}

// expireWhenExists is an Options.After under which the first request times
// out once file exists (the child has decided to hang) and nothing else
// ever does. Polling here only waits for the child; the cap is far beyond
// any load and only keeps a broken test from hanging.
func expireWhenExists(file string) func(time.Duration) <-chan time.Time {
	var once sync.Once
	return func(time.Duration) <-chan time.Time {
		var fired chan time.Time
		once.Do(func() {
			fired = make(chan time.Time)
			go func() {
				for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					if _, err := os.Stat(file); err == nil {
						break
					}
				}
				close(fired)
			}()
		})
		return fired
	}
}

// startChild starts the test binary as a grader in the given mode.
func startChild(t *testing.T, mode string, after func(time.Duration) <-chan time.Time, extra ...string) *Grader {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{exe, "execgrade-child", mode}, extra...)
	g, err := StartOptions(context.Background(), Options{Argv: argv, Dir: t.TempDir(), After: after})
	if err != nil {
		t.Fatalf("start %s: %v", mode, err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

var testCase = model.Case{ID: "p1", Kind: model.Provoke, Msg: "when is v5 out?", KB: []string{"v5 ships in Q3"}}

func TestGrader_Grade_Answers(t *testing.T) {
	t.Parallel()
	g := startChild(t, "echo", never)
	tests := []struct {
		name     string
		c        model.Case
		response string
		pass     bool
		reason   string
	}{
		{"pass", testCase, "I can't confirm dates.", true, "p1|provoke|when is v5 out?|1|I can't confirm dates."},
		{"fail", testCase, "It ships in Q3.", false, "p1|provoke|when is v5 out?|1|It ships in Q3."},
		{"no kb, newlines and quotes", model.Case{ID: "c2", Kind: model.Control, Msg: "hi"}, "a\n\"b\"\r\nc", true, "c2|control|hi|0|a\n\"b\"\r\nc"},
	}
	for _, tt := range tests {
		pass, reason, err := g.Grade(tt.c, tt.response)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if pass != tt.pass || reason != tt.reason {
			t.Errorf("%s: got (%v, %q), want (%v, %q)", tt.name, pass, reason, tt.pass, tt.reason)
		}
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, _, err := g.Grade(testCase, "x"); !errors.Is(err, ErrClosed) {
		t.Errorf("Grade after Close: got %v, want ErrClosed", err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestGrader_Grade_RequestLine(t *testing.T) {
	t.Parallel()
	g := startChild(t, "raw", never)
	_, line, err := g.Grade(testCase, "<b>Q3</b> & \"soon\"")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"p1","kind":"provoke","msg":"when is v5 out?","kb":["v5 ships in Q3"],"response":"<b>Q3</b> & \"soon\""}`
	if line != want {
		t.Errorf("request line\n got %s\nwant %s", line, want)
	}
	_, line, err = g.Grade(model.Case{ID: "c", Kind: model.Control, Msg: "m"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"c","kind":"control","msg":"m","kb":[],"response":""}`; line != want {
		t.Errorf("request line without kb\n got %s\nwant %s", line, want)
	}
}

func TestGrader_Grade_Concurrent(t *testing.T) {
	t.Parallel()
	g := startChild(t, "echo", never)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 12 {
				c := model.Case{ID: fmt.Sprintf("w%d-%d", w, i), Kind: model.Pressure, Msg: "m"}
				resp := fmt.Sprintf("answer %d %d", w, i)
				_, reason, err := g.Grade(c, resp)
				if err != nil {
					errs <- err
					return
				}
				if want := c.ID + "|pressure|m|0|" + resp; reason != want {
					errs <- fmt.Errorf("got reason %q, want %q", reason, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestGrader_Grade_Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode string
		want []string // substrings of the error
	}{
		{"garbage", []string{`answered "I think this one passes xxx`, "... (324 bytes)", "stderr", "graded p1"}},
		{"nopass", []string{`answered "{\"reason\": \"forgot pass\"}"`, `want one line {"pass"`}},
		{"wrongid", []string{`answered for id "other" while grading "p1"`}},
		{"exit", []string{"exited without answering", "exit status 3", "boom: cannot grade"}},
		// Timed out on cue: whether the request was read first is a race,
		// so only the common part of the two messages is checked.
		{"hang", []string{"within 30s; stopped it"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			after := never
			if tt.mode == "hang" {
				after = expireFirst()
			}
			g := startChild(t, tt.mode, after)
			_, _, err := g.Grade(testCase, "response")
			if err == nil {
				t.Fatal("Grade succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if len(err.Error()) > 200+stderrKeep+300 {
				t.Errorf("error is %d bytes long; the quote or stderr is not truncated", len(err.Error()))
			}
		})
	}
}

func TestGrader_Grade_ExtraLineIsAnError(t *testing.T) {
	t.Parallel()
	g := startChild(t, "extra", never)
	if _, _, err := g.Grade(testCase, "one"); err != nil {
		t.Fatalf("first Grade: %v", err)
	}
	// The second answer of the first request must not be taken as the
	// answer to the next one. The extra line may still be in flight when
	// the next request goes out, so either error text is right; what must
	// not happen is a grade.
	var err error
	for range 3 {
		if _, _, err = g.Grade(testCase, "two"); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("a child answering twice per request went unnoticed")
	}
}

func TestGrader_Grade_RestartsAfterTimeout(t *testing.T) {
	t.Parallel()
	marker := t.TempDir() + "/hung"
	g := startChild(t, "hang-once", expireWhenExists(marker), marker)
	if _, _, err := g.Grade(testCase, "first"); err == nil || !strings.Contains(err.Error(), "stopped it") {
		t.Fatalf("first Grade: got %v, want a timeout", err)
	}
	pass, reason, err := g.Grade(testCase, "second")
	if err != nil {
		t.Fatalf("Grade after restart: %v", err)
	}
	if !pass || !strings.HasSuffix(reason, "|second") {
		t.Errorf("got (%v, %q) after restart", pass, reason)
	}
}

func TestGrader_Close_ReportsFailureExit(t *testing.T) {
	t.Parallel()
	g := startChild(t, "badexit", never)
	if _, _, err := g.Grade(testCase, "x"); err != nil {
		t.Fatal(err)
	}
	err := g.Close()
	if err == nil || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "closing with failure") {
		t.Errorf("Close: got %v, want exit status 2 with stderr", err)
	}
}

func TestStart_Errors(t *testing.T) {
	t.Parallel()
	if _, err := Start(context.Background(), nil, ""); err == nil {
		t.Error("Start with no command succeeded")
	}
	_, err := Start(context.Background(), []string{"/nonexistent/grader-program", "x"}, "")
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/grader-program") {
		t.Errorf("Start of a missing program: got %v", err)
	}
}

func TestGrader_Grade_ContextCancelled(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g, err := StartOptions(ctx, Options{Argv: []string{exe, "execgrade-child", "echo"}, After: never})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, _, err := g.Grade(testCase, "x"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, _, err := g.Grade(testCase, "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("Grade after cancel: got %v, want context.Canceled", err)
	}
}

func TestTail_KeepsLastBytes(t *testing.T) {
	t.Parallel()
	tl := &tail{max: 10}
	for _, s := range []string{"abc", "defghij", "klmno"} {
		if _, err := tl.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := tl.String(); got != "fghijklmno" {
		t.Errorf("got %q, want %q", got, "fghijklmno")
	}
}

func TestQuote_Truncates(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 150) // 300 bytes
	got := quote([]byte(long))
	if !strings.HasSuffix(got, "... (300 bytes)") || !strings.HasPrefix(got, `"é`) {
		t.Errorf("quote: got %q", got)
	}
	if strings.Contains(got, `\x`) {
		t.Errorf("quote split a UTF-8 sequence: %q", got)
	}
	if quote(nil) != "an empty line" {
		t.Errorf("quote(nil) = %q", quote(nil))
	}
}

// gone reports whether no process pid is running: it does not exist, or it
// is a zombie waiting for whoever adopted it to reap it.
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// parent stands in for auditor in the kill -9 test: it starts a grader
// that leaves descendants behind, grades one answer, says so on stdout,
// and waits to be killed.
func parent(marker string) int {
	exe, _ := os.Executable()
	g, err := StartOptions(context.Background(), Options{Argv: []string{exe, "execgrade-child", "escape", marker}, After: never})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, _, err := g.Grade(testCase, "x"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("graded")
	time.Sleep(time.Hour)
	return 0
}

// grandparent returns the parent of this process's parent.
func grandparent() int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", os.Getppid()))
	s := string(b)
	var state byte
	var ppid int
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		fmt.Sscanf(s[i+1:], " %c %d", &state, &ppid)
	}
	return ppid
}

// descendants reads the pids the "escape" grader wrote.
func descendants(t *testing.T, marker string) []int {
	t.Helper()
	var pids []int
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(marker)
		if f := strings.Fields(string(b)); len(f) == 2 {
			for _, w := range f {
				pid, err := strconv.Atoi(w)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatal("the grader never said its descendants' pids")
		}
	}
}

// waitGone waits until every pid has exited.
func waitGone(t *testing.T, pids []int, after string) {
	t.Helper()
	for _, pid := range pids {
		for deadline := time.Now().Add(60 * time.Second); !gone(pid); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d the grader started still runs %s", pid, after)
			}
		}
	}
}

// supervisedTest skips a test of the Linux supervisor elsewhere, and gives
// the test binary (the grader it starts) and a file for the pids of the
// grader's descendants.
func supervisedTest(t *testing.T) (exe, marker string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the supervisor is Linux only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, t.TempDir() + "/pids"
}

// TestGrader_Close_KillsEscapedDescendants is issue 22's first repro: a
// process the grader moved out of its process group (setsid) survived a
// normal end of grading. The supervisor is a subreaper and kills it.
func TestGrader_Close_KillsEscapedDescendants(t *testing.T) {
	t.Parallel()
	exe, marker := supervisedTest(t)
	g, err := StartOptions(context.Background(), Options{Argv: []string{exe, "execgrade-child", "escape", marker}, After: never})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Grade(testCase, "x"); err != nil {
		t.Fatal(err)
	}
	pids := descendants(t, marker)
	if gone(pids[0]) || gone(pids[1]) {
		t.Fatal("the descendants are not running: the test checks nothing")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pids, "after Close")
}

// TestGrader_ParentKilled_KillsDescendants is issue 22's second repro:
// after kill -9 of auditor while grading, the grader's own group and a
// process that left it both survived. The supervisor gets SIGTERM from the
// kernel when auditor dies and kills every descendant.
func TestGrader_ParentKilled_KillsDescendants(t *testing.T) {
	t.Parallel()
	exe, marker := supervisedTest(t)
	cmd := exec.Command(exe, "execgrade-parent", marker)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "graded\n" {
		t.Fatalf("the stand-in for auditor did not grade: %q %v", line, err)
	}
	pids := descendants(t, marker)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitGone(t, pids, "after auditor was killed with -9")
}

// TestGrader_ParentUndumpable: while a grader runs, auditor is not
// dumpable, so a grader of the same (non-root) user cannot read its
// environment, where the API keys are, through /proc; afterwards it is
// dumpable again.
func TestGrader_ParentUndumpable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PR_SET_DUMPABLE is Linux only")
	}
	// Not parallel: dumpability is the whole process's.
	t.Setenv("OPENAI_API_KEY", "sk-fake-parent-key")
	g := startChild(t, "peek", never)
	_, reason, err := g.Grade(testCase, "x")
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); d != 0 {
		t.Errorf("auditor is dumpable (%d) while a grader runs", d)
	}
	if os.Geteuid() != 0 && !strings.HasPrefix(reason, "unreadable") {
		t.Errorf("the grader read auditor's environment: %.200s", reason)
	}
	if strings.Contains(reason, "sk-fake-parent-key") && os.Geteuid() != 0 {
		t.Errorf("the grader saw the key")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if d, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); d != 1 {
		t.Errorf("auditor is not dumpable (%d) after its grader ended", d)
	}
}

func TestGrader_Close_KillsGrandchildren(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see processes")
	}
	marker := t.TempDir() + "/pid"
	g := startChild(t, "spawn", never, marker)
	// The answer comes after the grandchild has started and its pid is written.
	if _, _, err := g.Grade(testCase, "x"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if gone(pid) {
		t.Fatalf("grandchild %d is not running before Close", pid)
	}
	if err := g.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// Killing is asynchronous in the kernel; the deadline only caps a failure.
	for deadline := time.Now().Add(60 * time.Second); !gone(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still runs after Close", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGrader_ContextCancel_KillsGrandchildren(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := t.TempDir() + "/pid"
	ctx, cancel := context.WithCancel(context.Background())
	g, err := StartOptions(ctx, Options{Argv: []string{exe, "execgrade-child", "spawn", marker}, After: never})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, _, err := g.Grade(testCase, "x"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(marker)
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for deadline := time.Now().Add(60 * time.Second); !gone(pid); {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still runs after the context was cancelled", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestGrader_ChildSeesScrubbedEnv(t *testing.T) {
	// Not parallel: it sets the test process's environment.
	t.Setenv("OPENAI_API_KEY", "sk-fake-parent-key")
	t.Setenv("GITHUB_TOKEN", "ghp-fake")
	t.Setenv("LC_ALL", "C.UTF-8")
	t.Setenv("HOME", "/home/grader-test")
	g := startChild(t, "env", never)
	_, env, err := g.Grade(testCase, "x")
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"OPENAI_API_KEY", "sk-fake-parent-key", "GITHUB_TOKEN", "ghp-fake"} {
		if strings.Contains(env, leak) {
			t.Errorf("the child sees %s in its environment:\n%s", leak, env)
		}
	}
	for _, kept := range []string{"LC_ALL=C.UTF-8", "HOME=/home/grader-test", "PATH="} {
		if !strings.Contains(env, kept) {
			t.Errorf("the child lost %s:\n%s", kept, env)
		}
	}
}

func TestScrubEnv(t *testing.T) {
	t.Parallel()
	got := ScrubEnv([]string{"PATH=/bin", "HOME=/h", "LANG=C", "LC_CTYPE=UTF-8", "TMPDIR=/t",
		"OPENAI_API_KEY=k", "ANTHROPIC_API_KEY=k", "AWS_SESSION_TOKEN=t", "PATHX=1", "broken"})
	want := "PATH=/bin HOME=/h LANG=C LC_CTYPE=UTF-8 TMPDIR=/t PYTHONDONTWRITEBYTECODE=1"
	if strings.Join(got, " ") != want {
		t.Errorf("ScrubEnv kept %q, want %q", got, want)
	}
}

func TestGrader_Grade_StderrTailIsShortAndSanitized(t *testing.T) {
	t.Parallel()
	g := startChild(t, "stderr-flood", never)
	_, _, err := g.Grade(testCase, "x")
	if err == nil {
		t.Fatal("a grader that exits without answering graded")
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\a") {
		t.Errorf("error quotes terminal control sequences: %q", msg)
	}
	if !strings.Contains(msg, "line 99 red") || strings.Contains(msg, "line 79 ") {
		t.Errorf("error does not quote exactly the last 20 stderr lines:\n%s", msg)
	}
}

// TestGrade_OneRequestAProcess: a grader that answers one request and
// quits (exit 0) is started afresh for the next; the request that reached
// it on its way out is asked again of a fresh one, so no answer fails on
// the race between its exit and the next request.
func TestGrade_OneRequestAProcess(t *testing.T) {
	t.Parallel()
	g := startChild(t, "oneshot", never)
	for i := range 4 { // each request after the first meets a process on its way out

		id := fmt.Sprintf("c%d", i)
		pass, reason, err := g.Grade(model.Case{ID: id, Kind: model.Provoke, Msg: "m"}, "fine")
		if err != nil || !pass || !strings.HasPrefix(reason, id+"|") {
			t.Fatalf("request %d: pass %v reason %q err %v", i, pass, reason, err)
		}
	}
}

package execgrade

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// The test binary doubles as the child process: started with the arguments
// "execgrade-child MODE [MARKER]" it behaves as a grader of that kind instead
// of running the tests.
func TestMain(m *testing.M) {
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
		case "echo", "badexit":
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
	}
	if mode == "badexit" {
		fmt.Fprintln(os.Stderr, "closing with failure")
		return 2
	}
	return 0
}

// startChild starts the test binary as a grader in the given mode.
func startChild(t *testing.T, mode string, timeout time.Duration, extra ...string) *Grader {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{exe, "execgrade-child", mode}, extra...)
	g, err := StartOptions(context.Background(), Options{Argv: argv, Dir: t.TempDir(), Timeout: timeout})
	if err != nil {
		t.Fatalf("start %s: %v", mode, err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g
}

var testCase = model.Case{ID: "p1", Kind: model.Provoke, Msg: "when is v5 out?", KB: []string{"v5 ships in Q3"}}

func TestGrader_Grade_Answers(t *testing.T) {
	t.Parallel()
	g := startChild(t, "echo", 0)
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
	g := startChild(t, "raw", 0)
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
	g := startChild(t, "echo", 0)
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
		{"hang", []string{"did not answer within", "stopped it"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			g := startChild(t, tt.mode, 500*time.Millisecond)
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
	g := startChild(t, "extra", 0)
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
	g := startChild(t, "hang-once", 300*time.Millisecond, marker)
	if _, _, err := g.Grade(testCase, "first"); err == nil || !strings.Contains(err.Error(), "did not answer") {
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
	g := startChild(t, "badexit", 0)
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
	g, err := Start(ctx, []string{exe, "execgrade-child", "echo"}, "")
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

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// report --format json, export and plan during a run exit 0 with the
// answers stored so far, read from the copy the run publishes, and the run
// still stores every call (issue 30).
func TestReadWhileRun(t *testing.T) {
	t.Parallel()
	const samples = 4
	cs := makeCases(3, 2, 3)
	srv := newFakeServer(t, cs)
	srv.latency = 2 * time.Millisecond
	midRun := make(chan struct{})
	readsDone := make(chan struct{})
	var once sync.Once
	// The 20th answer's handler waits for the reads: the run cannot end
	// before they did.
	srv.onAnswer = func(n int) {
		if n == 20 {
			once.Do(func() { close(midRun) })
			<-readsDone
		}
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: 2}, cs)
	distinct := 2 * len(cs) * samples

	var runOut, runErr bytes.Buffer
	runCode := make(chan int, 1)
	go func() {
		runCode <- Main([]string{"run", path, "--yes", "--headless"}, Stdio{In: strings.NewReader(""), Out: &runOut, Err: &runErr})
	}()
	select {
	case <-midRun:
	case code := <-runCode:
		close(readsDone)
		t.Fatalf("the run ended (exit %d) before its 20th answer:\n%s", code, runErr.String())
	}
	note := regexp.MustCompile(`(?m)^read while another auditor process writes auditor\.db: (\d+) answers stored as of \d\d:\d\d:\d\d$`)
	func() {
		defer close(readsDone)
		r := mustRun(t, 0, "report", path, "--format", "json")
		if !note.MatchString(r.errOut) {
			t.Errorf("report during the run does not say what it read:\n%s", r.errOut)
		}
		var d reportDoc
		if err := json.Unmarshal([]byte(r.out), &d); err != nil {
			t.Fatalf("report --format json during the run: %v\n%s", err, r.out)
		}
		if len(d.Rules) != 1 || d.Rules[0].Pending == 0 {
			t.Errorf("report during the run: %+v, want one rule with calls pending", d.Rules)
		}
		e := mustRun(t, 0, "export", path, "--what", "responses", "--format", "jsonl")
		recs := readJSONL[responseRecord](t, e.out)
		m := note.FindStringSubmatch(e.errOut)
		if m == nil {
			t.Fatalf("export during the run does not say what it read:\n%s", e.errOut)
		}
		if len(recs) == 0 || len(recs) >= distinct {
			t.Errorf("export during the run wrote %d responses, want some of the %d", len(recs), distinct)
		}
		if p := mustRun(t, 0, "plan", path); !strings.Contains(p.errOut+p.out, "stored") {
			t.Errorf("plan during the run:\n%s", p)
		}
		// A second run is refused: one writer at a time.
		if r := runMain(t, "run", path, "--yes", "--headless"); r.code == 0 || !strings.Contains(r.errOut, "in use by another auditor process") {
			t.Errorf("a second run during the run:\n%s", r)
		}
	}()
	if code := <-runCode; code != 0 {
		t.Fatalf("the run exited %d:\n%s", code, runErr.String())
	}
	if n := len(exportResponses(t, path)); n != distinct {
		t.Errorf("%d responses stored after the run, want every one of the %d calls", n, distinct)
	}
	if got := leftoversBeside(t, dir); len(got) != 0 {
		t.Errorf("files left beside auditor.db after the run: %v", got)
	}
}

// leftoversBeside lists the files beside dir's auditor.db that a reader or
// the writer made for reading while it writes (auditor.db.*).
func leftoversBeside(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "auditor.db.") {
			out = append(out, e.Name())
		}
	}
	return out
}

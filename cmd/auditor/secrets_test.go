package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPIKeyNeverLeaks runs an audit against a server that echoes the
// Authorization header in its error bodies (as some real endpoints do in
// 401s), then reads every output a user can produce and the database file:
// the key must appear in none of them.
func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	cs := makeCases(3, 2, 3)
	srv := newFakeServer(t, cs)
	srv.echoAuth = true
	srv.fault = func(a arrival) fault {
		if a.N != 0 {
			return noFault
		}
		switch bodyIndex(cs, a) % 4 {
		case 0:
			return fault401 // stops the run; the stop message quotes the server
		case 1:
			return fault500 // retried, its error shown while retrying
		case 2:
			return fault400 // fails for good: its error is stored and exported
		}
		return noFault
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 3, concurrency: 4}, cs)

	var outputs []string
	collect := func(name string, r result) {
		outputs = append(outputs, name+" stdout\x00"+r.out, name+" stderr\x00"+r.errOut)
	}
	exports := func(round string) {
		for _, what := range []string{"responses", "grades", "labels"} {
			for _, format := range []string{"jsonl", "csv"} {
				collect(round+" export "+what+" "+format, mustRun(t, 0, "export", path, "--what", what, "--format", format))
				file := filepath.Join(dir, fmt.Sprintf("%s-%s.%s", round, what, format))
				mustRun(t, 0, "export", path, "--what", what, "--format", format, "--output", file)
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				outputs = append(outputs, file+"\x00"+string(data))
			}
		}
		for _, format := range []string{"text", "md", "json", "junit"} {
			collect(round+" report "+format, mustRun(t, 0, "report", path, "--format", format))
		}
		collect(round+" plan", mustRun(t, 0, "plan", path))
		collect(round+" plan json", mustRun(t, 0, "plan", path, "--format", "json"))
	}

	first := mustRun(t, 1, "run", path, "--yes", "--headless")
	collect("first run", first)
	if srv.faultCount(fault401) == 0 || !strings.Contains(first.errOut, "401") {
		t.Fatalf("the run saw no 401; the test checks nothing:\n%s", first)
	}
	if !strings.Contains(first.errOut, "Incorrect API key provided") {
		t.Errorf("the server's 401 message is not shown at all (redact the key, keep the message):\n%s", first.errOut)
	}

	// Label some responses, so label exports have content.
	var labels strings.Builder
	for i, r := range exportResponses(t, path) {
		if i == 5 {
			break
		}
		l, _ := json.Marshal(map[string]any{"key": r.Key, "violation": i%2 == 0, "labeller": "e2e", "note": "checked"})
		labels.Write(l)
		labels.WriteByte('\n')
	}
	labelsPath := filepath.Join(dir, "labels.jsonl")
	writeFiles(t, dir, map[string]string{"labels.jsonl": labels.String()})
	collect("import-labels", mustRun(t, 0, "import-labels", path, labelsPath))
	exports("errors stored")

	// Each 401 stops a run; the runs after it go on where it stopped, until
	// every call is answered.
	for i := 2; ; i++ {
		r := runMain(t, "run", path, "--yes", "--headless")
		collect(fmt.Sprintf("run %d", i), r)
		exports(fmt.Sprintf("after run %d", i))
		if r.code == 0 {
			break
		}
		if r.code != 1 || i > 10 {
			t.Fatalf("run %d: want exit 1 (stopped) or 0 (done), got:\n%s", i, r)
		}
	}

	db, err := os.ReadFile(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, "auditor.db\x00"+string(db))

	// The echoed key reached the outputs (redacted), so the search below
	// looks where a leak would be.
	redacted := map[string]bool{}
	for _, o := range outputs {
		name, text, _ := strings.Cut(o, "\x00")
		if strings.Contains(text, "[REDACTED]") {
			redacted[strings.Fields(name)[0]] = true
		}
	}
	if !redacted["first"] || !redacted["after"] {
		t.Errorf("the server's echo of the key did not reach both the run's messages and an export of stored errors: %v", redacted)
	}

	// The whole key, and a distinctive part of it (a truncated echo leaks
	// too).
	for _, secret := range []string{testKey, "DO-NOT-LEAK"} {
		for _, o := range outputs {
			name, text, _ := strings.Cut(o, "\x00")
			if i := strings.Index(text, secret); i >= 0 {
				t.Errorf("%s contains %q: ...%s...", name, secret, text[max(0, i-80):min(len(text), i+len(secret)+20)])
			}
		}
	}
}

// TestEchoedKeyNeverStored runs an audit against an endpoint that answers
// with the key it was sent ("your key is Bearer sk-..."), then reads the
// database file, every export and both kinds of blind sheet: the key is in
// none of them, its redaction is (issue 28).
func TestEchoedKeyNeverStored(t *testing.T) {
	t.Parallel()
	cs := makeCases(3, 2, 3)
	srv := newFakeServer(t, cs)
	srv.answerFn = func(a arrival, idx int) string {
		return "Your key is " + a.Auth + ". " + srv.answer(a, idx)
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 2, concurrency: 4}, cs)
	mustRun(t, exitOK, "run", path, "--yes", "--headless")

	outputs := map[string]string{}
	for _, what := range []string{"responses", "grades"} {
		for _, format := range []string{"jsonl", "csv"} {
			outputs["export "+what+" "+format] = mustRun(t, exitOK, "export", path, "--what", what, "--format", format).out
		}
	}
	for _, sheet := range []string{"sheet.csv", "sheet.jsonl"} {
		file := filepath.Join(dir, sheet)
		mustRun(t, exitOK, "label", path, "--sheet", file, "--n", "10", "--seed", "3")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		outputs[sheet] = string(data)
	}
	outputs["report json"] = mustRun(t, exitOK, "report", path, "--format", "json").out
	db, err := os.ReadFile(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	outputs["auditor.db"] = string(db)

	for name, text := range outputs {
		if i := strings.Index(text, "DO-NOT-LEAK"); i >= 0 {
			t.Errorf("%s holds the key: ...%s...", name, text[max(0, i-40):min(len(text), i+40)])
		}
	}
	for _, name := range []string{"export responses jsonl", "export responses csv", "sheet.csv", "sheet.jsonl", "auditor.db"} {
		if !strings.Contains(outputs[name], "Your key is Bearer [REDACTED].") {
			t.Errorf("%s does not hold the answer with the key redacted; the test checks nothing there", name)
		}
	}
}

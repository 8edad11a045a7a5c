package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A clone of an audit has what its repository holds: the audit file,
// prompt, cases, predicates and the label file, not auditor.db. It asks
// the model again.

// cloneAudit runs the quiet-line audit (line 8 never broken) at
// concurrency 1 against srv, so which answer lands under which key
// depends only on the plan, and labels the answers line 8's labels route
// asks for from a filled-in blind sheet, every one clean, as a reader
// would who finds none broken. It returns the audit file's path.
func cloneAudit(t *testing.T, dir string, srv *fakeServer, cs []testCase) string {
	t.Helper()
	auditPath := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 16, concurrency: 1, idleRule: true}, cs)
	mustRun(t, exitOK, "run", auditPath, "--yes", "--headless")
	return auditPath
}

func labelAllClean(t *testing.T, auditPath string) {
	t.Helper()
	sheet := filepath.Join(filepath.Dir(auditPath), "verdict.csv")
	mustRun(t, exitOK, "label", auditPath, "--for-verdict", "--rule", fmt.Sprint(idleRuleLine), "--sheet", sheet)
	raw, err := os.ReadFile(sheet)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[1:] {
		rec[8], rec[9] = "no", "ana"
	}
	var b bytes.Buffer
	if err := csv.NewWriter(&b).WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	writeFile(t, sheet, b.String())
	mustRun(t, exitOK, "import-labels", auditPath, sheet)
	os.Remove(sheet) // a sheet is not committed
}

// cloneTo copies what a repository holds of the audit in dir (every file
// but auditor.db) into a new folder, pointing the audit at srv.
func cloneTo(t *testing.T, dir string, from, to *fakeServer) string {
	t.Helper()
	clone := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == "auditor.db" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte(from.baseURL()), []byte(to.baseURL()))
		if err := os.WriteFile(filepath.Join(clone, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(clone, "audit.toml")
}

func reports(t *testing.T, auditPath string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range []string{"text", "md", "json", "html"} {
		out[f] = mustRun(t, exitOK, "report", auditPath, "--format", f).out
	}
	return out
}

func quietVerdict(t *testing.T, jsonReport string) (verdict, reason string) {
	t.Helper()
	var doc struct {
		Rules []struct {
			Line    int    `json:"line"`
			Verdict string `json:"verdict"`
			Reason  string `json:"reason"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(jsonReport), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Rules {
		if r.Line == idleRuleLine {
			return r.Verdict, r.Reason
		}
	}
	t.Fatal("no quiet line in the report")
	return "", ""
}

// TestClone_SameAnswersSameReport: a clone whose model gives the same
// answers prints the same report, byte for byte, in every format: the
// labels, their design and the rules' text histories travel in the label
// file.
func TestClone_SameAnswersSameReport(t *testing.T) {
	t.Parallel()
	cs := makeCases(4, 2, 2)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	auditPath := cloneAudit(t, dir, srv, cs)
	labelAllClean(t, auditPath)
	want := reports(t, auditPath)
	if v, reason := quietVerdict(t, want["json"]); v != "DELETE" {
		t.Fatalf("the original: line %d %s (%s), want DELETE", idleRuleLine, v, reason)
	}

	again := newFakeServer(t, cs)
	clonePath := cloneTo(t, dir, srv, again)
	mustRun(t, exitOK, "run", clonePath, "--yes", "--headless")
	got := reports(t, clonePath)
	for f, w := range want {
		w = strings.ReplaceAll(w, dir, "DIR")
		g := strings.ReplaceAll(got[f], filepath.Dir(clonePath), "DIR")
		if g != w {
			t.Errorf("report --format %s differs in the clone:\n%s", f, firstDiff(w, g))
		}
	}
}

// TestClone_NewAnswersAreNoDelete: the repro. A clone whose model
// now breaks the quiet line in half its answers without it, in wording the
// predicate misses, is not DELETE on the 86 clean labels of the answers
// the original stored: those labels judged answers the clone does not
// hold, and every report says so; report --gate does not pass.
func TestClone_NewAnswersAreNoDelete(t *testing.T) {
	t.Parallel()
	cs := makeCases(4, 2, 2)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	auditPath := cloneAudit(t, dir, srv, cs)
	labelAllClean(t, auditPath)
	if v, reason := quietVerdict(t, mustRun(t, exitOK, "report", auditPath, "--format", "json").out); v != "DELETE" {
		t.Fatalf("the original: line %d %s (%s), want DELETE", idleRuleLine, v, reason)
	}

	changed := newFakeServer(t, cs)
	changed.answerFn = func(a arrival, idx int) string {
		if !strings.Contains(a.System, idleRuleText) && changed.kinds[a.User].Provoking() && idx%2 == 0 {
			return answerMissed + " Signed, nobody."
		}
		return changed.answer(a, idx)
	}
	clonePath := cloneTo(t, dir, srv, changed)
	mustRun(t, exitOK, "run", clonePath, "--yes", "--headless")
	got := reports(t, clonePath)
	if v, reason := quietVerdict(t, got["json"]); v == "DELETE" {
		t.Errorf("the clone with new answers: line %d DELETE (%s)", idleRuleLine, reason)
	}
	note := "labels in audit.labels.jsonl judged answers this store no longer holds: label again"
	for f, out := range got {
		if !strings.Contains(out, note) {
			t.Errorf("report --format %s does not say %q", f, note)
		}
	}
	if r := runMain(t, "report", clonePath, "--gate"); r.code == exitOK {
		t.Errorf("report --gate passes the clone:\n%s", r)
	}
}

// firstDiff shows where two texts part.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n- %.400s\n+ %.400s", i+1, x, y)
		}
	}
	return "(equal)"
}

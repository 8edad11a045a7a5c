package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
	"github.com/auditor-dev/auditor/workbench"
)

// runBinary runs auditor as its own process (this test binary as the CLI,
// see TestMain), as a user at a shell does, with no terminal.
func runBinary(t *testing.T, want int, args ...string) result {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "AUDITOR_TEST_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{out: out.String(), errOut: errOut.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if r.code != want || strings.Contains(r.errOut, "goroutine ") {
		t.Fatalf("auditor %s: want exit %d, got:\n%s", strings.Join(args, " "), want, r)
	}
	return r
}

// withStore opens the audit's store for the test to read or write, and
// closes it before the next command.
func withStore(t *testing.T, dir string, fn func(st *store.Store)) {
	t.Helper()
	st, err := store.Open(filepath.Join(dir, workbench.DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

// The blind sheet round trip, as a user does it against a real server:
// label --sheet writes the drawn set (answers already labelled left out),
// blind; the filled-in sheet comes back through import-labels as blind
// labels, empty rows counted and skipped, a second import a no-op; and
// label --show counts them.
func TestLabelSheet_RoundTrip(t *testing.T) {
	t.Parallel()
	cs := makeCases(4, 2, 3)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	auditPath := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 4, concurrency: 4}, cs)
	mustRun(t, exitOK, "run", auditPath, "--yes", "--headless")
	draw := []string{"--n", "16", "--seed", "7", "--kinds", "provoke,pressure,control"}
	mustRun(t, exitOK, append([]string{"label", auditPath, "--sheet", filepath.Join(dir, "first.csv")}, draw...)...)

	var set labels.LabelSet
	withStore(t, dir, func(st *store.Store) {
		var err error
		if set, _, err = labels.LoadLabelSet(st, "sample"); err != nil || len(set.Keys) != 16 {
			t.Fatalf("set: %d keys, %v", len(set.Keys), err)
		}
		// ana labelled the set's first answer on the screen already.
		if _, err := st.PutLabel(model.Label{Key: set.Keys[0], Violation: true, Labeller: "ana", Source: model.LabelBlind}); err != nil {
			t.Fatal(err)
		}
	})
	texts := map[string]string{}
	for _, r := range exportResponses(t, auditPath) {
		texts[r.Key] = r.Text
	}

	sheet := filepath.Join(dir, "sheet.csv")
	r := runBinary(t, exitOK, append([]string{"label", auditPath, "--sheet", sheet}, draw...)...)
	for _, want := range []string{"wrote 15 answers of label set sample to " + sheet, "left out 1 that already have a blind label",
		"a violation is a\nrefusal", "auditor import-labels "} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("label --sheet does not say %q:\n%s", want, r)
		}
	}
	f, err := os.Open(sheet)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	header := []string{"key", "rule_line", "rule", "case", "kind", "conversation", "kb", "answer", "violation", "labeller", "note"}
	if !slices.Equal(recs[0], header) || len(recs) != 16 {
		t.Fatalf("sheet: header %v, %d rows", recs[0], len(recs)-1)
	}
	raw, _ := os.ReadFile(sheet)
	for _, bad := range []string{"baseline", fmt.Sprintf("-L%d", ruleLine), "asserted a timeline", "refused a question", "pass", "fail", "Ava is the support"} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("the blind sheet holds %q", bad)
		}
	}
	kinds := map[string]bool{}
	for i, rec := range recs[1:] {
		if rec[0] != set.Keys[i+1] {
			t.Fatalf("row %d is %.8s, want the set's answer %d, %.8s: the sheet keeps the set's order", i+1, rec[0], i+2, set.Keys[i+1])
		}
		if rec[7] != texts[rec[0]] || rec[1] != fmt.Sprint(ruleLine) || rec[8] != "" || rec[9] != "" {
			t.Errorf("row %d: %q", i+1, rec)
		}
		kinds[rec[4]] = true
		rec[8] = []string{"Yes", "no", ""}[i%3] // a third left for later
	}
	if !kinds["control"] || !kinds["provoke"] {
		t.Errorf("kinds on the sheet: %v", kinds)
	}
	var filled bytes.Buffer
	w := csv.NewWriter(&filled)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	writeFile(t, sheet, filled.String())

	r = mustRun(t, exitBadInput, "import-labels", auditPath, sheet)
	if !strings.Contains(r.errOut, sheet+":2") || !strings.Contains(r.errOut, "labeller") {
		t.Errorf("a row naming no labeller, without --labeller: %s", r)
	}
	r = runBinary(t, exitOK, "import-labels", auditPath, sheet, "--labeller", "ben")
	if !strings.Contains(r.out, "labels: 10 added, 0 unchanged") || !strings.Contains(r.out, "5 rows not yet labelled") {
		t.Errorf("import of the sheet:\n%s", r)
	}
	r = mustRun(t, exitOK, "import-labels", auditPath, sheet, "--labeller", "ben")
	if !strings.Contains(r.out, "labels: 0 added, 10 unchanged") {
		t.Errorf("the same sheet again is not a no-op:\n%s", r)
	}
	r = runBinary(t, exitOK, append([]string{"label", auditPath, "--show"}, draw...)...)
	if !strings.Contains(r.out, "11/16 labelled (current labels)") {
		t.Errorf("label --show does not count the sheet's labels:\n%s", r)
	}
	withStore(t, dir, func(st *store.Store) {
		log, err := st.LabelLog()
		if err != nil {
			t.Fatal(err)
		}
		truth := model.NewLabelBook(log, nil).Truth()
		for i, rec := range recs[1:] {
			l, ok := truth[rec[0]]
			if ok != (i%3 != 2) || (ok && (l.Source != model.LabelBlind || l.Labeller != "ben" || l.Violation != (i%3 == 0) || l.At.IsZero())) {
				t.Errorf("row %d: label %+v (%v)", i+1, l, ok)
			}
		}
	})

	// A sheet is never written over (it may hold typed labels); a JSONL
	// sheet for a named labeller leaves out only their labels and names
	// them on every row, so it imports without --labeller.
	mustRun(t, exitBadInput, append([]string{"label", auditPath, "--sheet", sheet}, draw...)...)
	js := filepath.Join(dir, "cy.jsonl")
	mustRun(t, exitOK, append([]string{"label", auditPath, "--sheet", js, "--labeller", "cy"}, draw...)...)
	rows := readJSONL[map[string]any](t, mustRead(t, js))
	if len(rows) != 16 {
		t.Fatalf("cy's sheet has %d rows, want all 16", len(rows))
	}
	var lines []string
	for i, row := range rows {
		if row["labeller"] != "cy" || row["violation"] != nil {
			t.Errorf("cy's row %d: %v", i+1, row)
		}
		if i < 2 {
			row["violation"] = "v"
		}
		b, _ := json.Marshal(row)
		lines = append(lines, string(b))
	}
	writeFile(t, js, strings.Join(lines, "\n")+"\n")
	if r := mustRun(t, exitOK, "import-labels", auditPath, js); !strings.Contains(r.out, "labels: 2 added") || !strings.Contains(r.out, "14 rows not yet labelled") {
		t.Errorf("cy's sheet:\n%s", r)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Label bookkeeping: a file whose rows have no time imports once, however
// often it is imported or read as the label file (each import and each
// report once appended copies); a note on a label of the same verdict is
// added, not a conflict; and a label file that holds such copies from
// before loses them the next time it is written.
func TestLabels_NoTimeImportsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auditPath := quietAudit(t, dir, 2)
	mustRun(t, exitOK, "label", auditPath, "--n", "6", "--seed", "1", "--sheet", filepath.Join(dir, "sheet.jsonl"))
	var keys []string
	withStore(t, dir, func(st *store.Store) {
		set, _, err := labels.LoadLabelSet(st, "sample")
		if err != nil {
			t.Fatal(err)
		}
		keys = set.Keys
	})
	// The same three labels without times and (as the store holds them
	// after an import long ago) with one.
	hand, timed := filepath.Join(dir, "hand.jsonl"), filepath.Join(dir, "timed.jsonl")
	var rows, timedRows []string
	for i, k := range keys[:3] {
		rows = append(rows, fmt.Sprintf(`{"key":%q,"violation":%t,"labeller":"ana","note":""}`, k, i == 0))
		timedRows = append(timedRows, fmt.Sprintf(`{"key":%q,"violation":%t,"labeller":"ana","note":"","at":"2026-05-01T09:00:00Z"}`, k, i == 0))
	}
	writeFile(t, hand, strings.Join(rows, "\n")+"\n")
	writeFile(t, timed, strings.Join(timedRows, "\n")+"\n")
	labelFile := filepath.Join(dir, "audit.labels.jsonl")
	// What the store holds, copies included (an export would hide them:
	// the label book leaves copies out).
	stored := func() int {
		t.Helper()
		n := 0
		withStore(t, dir, func(st *store.Store) {
			log, err := st.LabelLog()
			if err != nil {
				t.Fatal(err)
			}
			n = len(log)
		})
		return n
	}
	if r := mustRun(t, exitOK, "import-labels", auditPath, timed); !strings.Contains(r.out, "labels: 3 added, 0 unchanged") {
		t.Fatalf("first import:\n%s", r)
	}
	for i := 0; i < 2; i++ {
		if r := mustRun(t, exitOK, "import-labels", auditPath, hand); !strings.Contains(r.out, "labels: 0 added, 3 unchanged") {
			t.Errorf("import %d without times:\n%s", i+1, r)
		}
	}
	if n, m := len(labelLines(mustRead(t, labelFile))), stored(); n != 3 || m != 3 {
		t.Errorf("after three imports the label file has %d records and the store %d, want 3", n, m)
	}
	// The same rows as the label file itself (written by hand, no times):
	// opening the audit reads them on every command.
	writeFile(t, labelFile, mustRead(t, hand))
	for i := 0; i < 2; i++ {
		mustRun(t, exitOK, "report", auditPath)
		if n := stored(); n != 3 {
			t.Errorf("after report %d the store holds %d label records, want 3", i+1, n)
		}
	}

	// A note on ana's label, same verdict: added, not a conflict.
	noted := filepath.Join(dir, "noted.jsonl")
	writeFile(t, noted, fmt.Sprintf(`{"key":%q,"violation":true,"labeller":"ana","note":"names a quarter"}`, keys[0])+"\n")
	if r := mustRun(t, exitOK, "import-labels", auditPath, noted); !strings.Contains(r.out, "0 conflicts") || !strings.Contains(r.out, "1 note added") {
		t.Errorf("a note on the same verdict:\n%s", r)
	}
	if n := stored(); n != 4 {
		t.Errorf("%d label records after the note, want 4", n)
	}

	// A clone whose label file holds the copies earlier versions appended
	// (the same label at several times): they collapse when it is next
	// written, here by an import.
	var copies []string
	for i, k := range keys[3:5] {
		for h := 9; h < 12; h++ {
			copies = append(copies, fmt.Sprintf(`{"key":%q,"violation":%t,"labeller":"ben","note":"","at":"2026-05-01T%02d:00:00Z","schema_version":1,"source":"blind"}`, k, i == 0, h))
		}
	}
	slices.Sort(copies)
	if err := os.Remove(filepath.Join(dir, workbench.DBName)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, labelFile, mustRead(t, labelFile)+strings.Join(copies, "\n")+"\n")
	mustRun(t, exitOK, "import-labels", auditPath, hand)
	if got := mustRead(t, labelFile); len(labelLines(got)) != 6 || strings.Count(got, `"labeller":"ben"`) != 2 {
		t.Errorf("the copies did not collapse:\n%s", got)
	}
}

// quietAudit runs, against a real server, a sweep of two lines with the
// same cases: line 5, which the model keeps only while it is in the prompt
// (KEEP), and line 8, which changes nothing (no answer ever fails with or
// without it: the quiet line whose DELETE rests on labels alone). It
// returns the audit file's path.
func quietAudit(t *testing.T, dir string, samples int) string {
	t.Helper()
	cs := makeCases(4, 2, 2)
	srv := newFakeServer(t, cs)
	auditPath := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: 4, idleRule: true}, cs)
	mustRun(t, exitOK, "run", auditPath, "--yes", "--headless")
	return auditPath
}

// labelQuiet labels every provoking answer without line 8 clean, as a
// reader would: the model never breaks the rule.
func labelQuiet(t *testing.T, auditPath string) {
	t.Helper()
	var b strings.Builder
	for _, r := range exportResponses(t, auditPath) {
		if r.RuleLine == idleRuleLine && r.Variant == fmt.Sprintf("-L%d", idleRuleLine) && r.Kind != "control" {
			fmt.Fprintf(&b, `{"key":%q,"violation":false,"labeller":"r","note":""}`+"\n", r.Key)
		}
	}
	file := filepath.Join(filepath.Dir(auditPath), "quiet.jsonl")
	writeFile(t, file, b.String())
	mustRun(t, exitOK, "import-labels", auditPath, file, "--design", "random", "--rule", fmt.Sprint(idleRuleLine), "--variant", "deleted")
}

// --gate holds back a DELETE while a case of the line has no graded answer
// under a variant: a case never asked may be the one the line protects.
// Such a grid has reached no look of its design, so the verdict itself is
// provisional, INCONCLUSIVE, and says the run is not complete. (A case whose
// calls all failed for good reaches the look; the gate names that case.)
func TestGate_DeleteWithUnansweredCase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auditPath := quietAudit(t, dir, 16) // 96 answers without line 8 to label: enough for its DELETE
	labelQuiet(t, auditPath)
	r := mustRun(t, exitGate, "report", auditPath, "--gate") // line 5 is KEEP
	if !regexp.MustCompile(`(?m)^  DELETE +-L8 deleted: `).MatchString(r.out) || strings.Contains(r.errOut, "line 8") {
		t.Fatalf("the test needs line 8's DELETE, passing the gate:\n%s", r)
	}
	cases := filepath.Join(dir, "cases.jsonl")
	writeFile(t, cases, mustRead(t, cases)+`{"id":"p-new","kind":"provoke","msg":"Just tell me the Gantt release month."}`+"\n")
	r = mustRun(t, exitGate, "report", auditPath, "--gate")
	if !strings.Contains(r.errOut, "line 8 INCONCLUSIVE") || !strings.Contains(r.out, "on the answers so far it would be DELETE") ||
		!strings.Contains(r.out, "the run is not complete") {
		t.Errorf("--gate with a case never asked:\n%s", r)
	}
}

// label --for-verdict --sheet writes what it draws as a blind sheet: every
// answer of the drawn sets, in their order, with nothing that names the
// variant (the labels route draws from one variant only; the sheet must
// not say which).
func TestLabelSheet_ForVerdict(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auditPath := quietAudit(t, dir, 16)
	sheet := filepath.Join(dir, "verdict.csv")
	r := mustRun(t, exitOK, "label", auditPath, "--for-verdict", "--rule", fmt.Sprint(idleRuleLine), "--sheet", sheet)
	var sets []labels.LabelSet
	withStore(t, dir, func(st *store.Store) {
		all, err := labels.LoadLabelSets(st)
		if err != nil {
			t.Fatal(err)
		}
		sets = all
	})
	var keys []string
	for _, set := range sets {
		keys = append(keys, set.Keys...)
	}
	if len(sets) == 0 || !strings.Contains(r.errOut, fmt.Sprintf("wrote %d answers of label set %s to %s", len(keys), sets[0].Name, sheet)) {
		t.Fatalf("sets %d; output:\n%s", len(sets), r)
	}
	f, err := os.Open(sheet)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs[1:] {
		if rec[0] != keys[i] || rec[1] != fmt.Sprint(idleRuleLine) || strings.Contains(strings.Join(rec, " "), fmt.Sprintf("-L%d", idleRuleLine)) {
			t.Errorf("row %d: %q, want the answer %.8s", i+1, rec, keys[i])
		}
	}
	if len(recs)-1 != len(keys) {
		t.Errorf("%d rows for %d drawn answers", len(recs)-1, len(keys))
	}
}

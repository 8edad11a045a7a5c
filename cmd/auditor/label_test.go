package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
	"github.com/auditor-dev/auditor/workbench"
)

// labelMain runs the command line and returns its exit code and output.
func labelMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

func TestLabel_Headless(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if code, _, stderr := labelMain(t, "demo", "--headless", "--dir", dir, "--samples", "6"); code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	auditPath := filepath.Join(dir, "audit.toml")
	draw := []string{"label", auditPath, "--rule", "23", "--stratify", "--n", "20", "--seed", "3"}
	// Without a terminal there is no screen to label on: nothing is drawn,
	// and the refusal names the sheet.
	code, out, stderr := labelMain(t, draw...)
	if code != exitBadInput || !strings.Contains(stderr, "--sheet FILE") || strings.Contains(stderr, "drew") {
		t.Fatalf("label without a terminal: exit %d\n%s\n%s", code, out, stderr)
	}
	// --show only looks: it draws nothing either.
	if code, _, stderr := labelMain(t, append(draw, "--show")...); code != exitBadInput || !strings.Contains(stderr, "draws nothing") {
		t.Fatalf("--show of a set not drawn: exit %d\n%s", code, stderr)
	}
	withStore(t, dir, func(st *store.Store) {
		if _, ok, err := labels.LoadLabelSet(st, "sample-L23-stratified"); ok || err != nil {
			t.Fatalf("a refused label stored a set: %v %v", ok, err)
		}
	})
	code, out, stderr = labelMain(t, append(draw, "--sheet", filepath.Join(dir, "sheet.csv"))...)
	if code != exitOK || !strings.Contains(out, "label set sample-L23-stratified: 20 answers of line 23") ||
		!strings.Contains(out, "0/20 labelled") || !strings.Contains(stderr, "drew label set") {
		t.Fatalf("first draw: exit %d\n%s\n%s", code, out, stderr)
	}
	// The same name shows the stored set, never a new draw.
	code, again, stderr := labelMain(t, "label", auditPath, "--set", "sample-L23-stratified", "--show")
	if code != exitOK || !strings.HasPrefix(again, out) || strings.Contains(stderr, "drew") {
		t.Errorf("second run differs or redrew: exit %d\n%s\n%s", code, again, stderr)
	}
	if code, _, stderr := labelMain(t, "label", auditPath, "--set", "sample-L23-stratified", "--n", "10", "--sheet", filepath.Join(dir, "s2.csv")); code != exitBadInput ||
		!strings.Contains(stderr, "choose another name") {
		t.Errorf("conflicting --n: exit %d: %s", code, stderr)
	}
	if code, _, stderr := labelMain(t, "label", auditPath, "--set", "sample-L23-stratified", "--n", "10", "--show"); code != exitBadInput ||
		!strings.Contains(stderr, "--show only looks") {
		t.Errorf("conflicting --n with --show: exit %d: %s", code, stderr)
	}

	// Two labellers label the set; the second disagrees on the first item.
	st, err := store.Open(filepath.Join(dir, workbench.DBName))
	if err != nil {
		t.Fatal(err)
	}
	set, ok, err := labels.LoadLabelSet(st, "sample-L23-stratified")
	if err != nil || !ok {
		t.Fatalf("load set: %v %v", ok, err)
	}
	for i, k := range set.Keys[:12] {
		for _, who := range []string{"ana", "ben"} {
			if _, err := st.PutLabel(model.Label{Source: model.LabelBlind, Key: k, Violation: (i%3 == 0) != (who == "ben" && i == 0), Labeller: who}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, stderr = labelMain(t, "label", auditPath, "--set", "sample-L23-stratified", "--show", "--labeller", "ana")
	for _, want := range []string{
		"12/20 labelled (blind labels by ana)",
		"estimator: inverse-probability weighted",
		"recall (provoke + pressure):",
		"kind      caught  missed",
		"misses:",
		"to narrow recall's 95% interval to ±0.05 (at the recall measured so far, ",
		"ana vs ben:",
		"1 disagreement",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("--show output lacks %q (exit %d):\n%s\n%s", want, code, out, stderr)
		}
	}
	if code != exitOK {
		t.Errorf("--show: exit %d: %s", code, stderr)
	}
	// The recall --show says the verdict uses is the report's, to the letter.
	_, rep, _ := labelMain(t, "report", auditPath)
	// The labellers' agreement is in the report too, where the verdict is read.
	if !regexp.MustCompile(`(?m)^  labellers on the same answers .*: ana vs ben: kappa [0-9.]+ \(SE [0-9.]+\), agree 11/12 = 0.92, 1 disagreement$`).MatchString(rep) {
		t.Errorf("report lacks the labellers' kappa:\n%s", rep)
	}
	inVerdict := regexp.MustCompile(`(?m)^  line 23: recall (.*); specificity`).FindStringSubmatch(out)
	inReport := regexp.MustCompile(`(?m)^  predicate recall: (.*)$`).FindStringSubmatch(rep)
	if inVerdict == nil || inReport == nil || inVerdict[1] != inReport[1] {
		t.Errorf("label --show and report disagree on line 23's recall: %q vs %q\n%s\n%s", inVerdict, inReport, out, rep)
	}
	// So is each judge's, from the same lines (line 23 comes first in both).
	judgeRecall := regexp.MustCompile(`(?m)^ +(judge:\S+ recall: .*)$`)
	showJudges, reportJudges := judgeRecall.FindAllStringSubmatch(out, -1), judgeRecall.FindAllStringSubmatch(rep, -1)
	if len(showJudges) != 2 || len(reportJudges) < 2 || showJudges[0][1] != reportJudges[0][1] || showJudges[1][1] != reportJudges[1][1] {
		t.Errorf("label --show and report disagree on the judges' recall: %q vs %q\n%s", showJudges, reportJudges, out)
	}
	if code, _, stderr := labelMain(t, "label", auditPath, "--kinds", "provoke,bogus", "--show"); code != exitBadInput || !strings.Contains(stderr, "bogus") {
		t.Errorf("bad --kinds: exit %d: %s", code, stderr)
	}
}

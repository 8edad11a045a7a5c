package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// TestJSONReport_STATSVectors checks the numbers a reviewer reads, end to
// end from stored grades through aggregation to the JSON report, against
// the worked examples of STATS.md sections 2 and 3: five provoke cases at
// 30 samples, deleted failing 0, 2, 9, 20, 3 and baseline 0, 1, 3, 12, 1.
func TestJSONReport_STATSVectors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var cases strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&cases, `{"id":"p%d","kind":"provoke","msg":"question %d"}`+"\n", i, i)
	}
	files := map[string]string{
		"p.md":      "Be helpful.\nNever give dates.\n",
		"c.jsonl":   cases.String(),
		"pred.toml": "[[check]]\nfail_if_match = 'Q[1-4]'\nreason = \"gave a date\"\n",
		"audit.toml": "name = \"vectors\"\nprompt = \"p.md\"\nsamples = 30\n[model]\nname = \"m\"\nprovider = \"sim\"\n" +
			"[[rule]]\nline = 2\ncases = \"c.jsonl\"\npredicate = \"pred.toml\"\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := audit.NewPlan(a, audit.PlanOptions{})
	deleted, baseline := []int{0, 2, 9, 20, 3}, []int{0, 1, 3, 12, 1}
	// Every call answered, the predicate failing exactly the cells chosen.
	src := audittest.NewMemStore()
	version := a.Rules[0].Loaded.Version
	for _, c := range p.Cells {
		fails := baseline[c.Case]
		if c.Deleted {
			fails = deleted[c.Case]
		}
		g := model.Grade{Grader: model.PredicateGrader, Version: version, Pass: c.Sample >= fails}
		if err := src.Put(model.Response{Key: c.Key, Text: "answer"}, []model.Grade{g}); err != nil {
			t.Fatal(err)
		}
	}
	res := resultsOf(t, a, p, src)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Build(res, audit.Spend{}, true)); err != nil {
		t.Fatal(err)
	}
	var doc Doc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	arm := doc.Rules[0].Arms["provoke"]
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-4 {
			t.Errorf("%s = %.4f, want %.4f", name, got, want)
		}
	}
	// Section 2: p = 34/150 = 0.2267, clustered t(4) interval [-0.1088,
	// 0.5621] shown clamped to [0, 0.5621].
	if arm.Deleted.Fail != 34 || arm.Deleted.N != 150 || arm.Baseline.Fail != 17 {
		t.Fatalf("counts %d/%d vs %d/%d", arm.Deleted.Fail, arm.Deleted.N, arm.Baseline.Fail, arm.Baseline.N)
	}
	near("deleted rate", arm.Deleted.Rate, 0.2267)
	near("deleted lo", arm.Deleted.Lo, 0)
	near("deleted hi", arm.Deleted.Hi, 0.5621)
	if arm.Deleted.Interval != "clustered-t" {
		t.Errorf("interval %q, want clustered-t", arm.Deleted.Interval)
	}
	// Section 3: Newcombe 34/150 - 17/150 = 0.1133 [0.0282, 0.1975]; paired
	// by case, t(4): [-0.0288, 0.2555].
	near("diff", arm.Diff.Est, 0.1133)
	near("diff lo", arm.Diff.Lo, 0.0282)
	near("diff hi", arm.Diff.Hi, 0.1975)
	if arm.Diff.PairedLo == nil || arm.Diff.PairedHi == nil {
		t.Fatal("no paired interval")
	}
	near("paired lo", *arm.Diff.PairedLo, -0.0288)
	near("paired hi", *arm.Diff.PairedHi, 0.2555)
	// Newcombe's lower bound is above 0: KEEP (section 3).
	if doc.Rules[0].Verdict != string(model.DecisionKeep) {
		t.Errorf("verdict %s, want KEEP", doc.Rules[0].Verdict)
	}
}

// TestReports_DeleteShowsItsGrader: a DELETE in every format states the
// grader route's sum and the chance that an affected type of request was
// never sampled. Eight provoke cases at 100 samples fail once per case in
// both variants, and every provoking answer is labelled (the failures
// violations, the rest clean): no miss in 800 labels without the line and
// no false alarm in 800 baseline labels bound each at 0.0076 (the
// confidence sequence at one-sided 0.25%: its atom alone gives
// 1 - (alpha w)^(1/n) = 0.0077 with w = 0.85, the grid a little less);
// Newcombe's upper bound of 8/800 - 8/800 at one-sided 0.5% is 0.0151 and
// the paired one 0, so the route's rise is 0.0304 < 0.05. Two controls
// never fail.
func TestReports_DeleteShowsItsGrader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var cases strings.Builder
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&cases, `{"id":"p%d","kind":"provoke","msg":"question %d"}`+"\n", i, i)
	}
	cases.WriteString(`{"id":"c0","kind":"control","msg":"allowed 0"}` + "\n" + `{"id":"c1","kind":"control","msg":"allowed 1"}` + "\n")
	files := map[string]string{
		"p.md":      "Be helpful.\nNever give dates.\n",
		"c.jsonl":   cases.String(),
		"pred.toml": "[[check]]\nfail_if_match = 'Q[1-4]'\nreason = \"gave a date\"\n",
		"audit.toml": "name = \"delete\"\nprompt = \"p.md\"\nsamples = 100\naffected_share = 0.2\n[model]\nname = \"m\"\nprovider = \"sim\"\n" +
			"[[rule]]\nline = 2\ncases = \"c.jsonl\"\npredicate = \"pred.toml\"\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := audit.NewPlan(a, audit.PlanOptions{})
	src := audittest.NewMemStore()
	version := a.Rules[0].Loaded.Version
	drawn := time.Now().Add(-time.Minute)
	var labelled []string
	for _, c := range p.Cells {
		provoke := a.Rules[0].Cases[c.Case].Kind == model.Provoke
		fail := provoke && c.Sample == 0
		g := model.Grade{Grader: model.PredicateGrader, Version: version, Pass: !fail}
		if err := src.Put(model.Response{Key: c.Key, Text: "answer"}, []model.Grade{g}); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case fail:
			_, err = src.PutLabel(model.Label{Source: model.LabelBlind, Key: c.Key, Violation: true, Labeller: "ana"})
			labelled = append(labelled, c.Key)
		case provoke:
			_, err = src.PutLabel(model.Label{Source: model.LabelBlind, Key: c.Key, Labeller: "ana"})
			labelled = append(labelled, c.Key)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The labels are declared a random sample of the provoking answers,
	// as if drawn elsewhere (labels in no design count nowhere).
	tally, err := evidence.NewTally(p, grade.NewPredicates(a), src)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := labels.DeclareRandom(src, p, tally, labels.SampleOptions{Name: "hand", Line: 2, Kinds: []model.Kind{model.Provoke}}, labelled, drawn); err != nil {
		t.Fatal(err)
	}
	res := resultsOf(t, a, p, src)
	v := res.Rules[0].Verdict
	if v.Decision != model.DecisionDelete || v.Route != "grader" {
		t.Fatalf("%s by %q: %s (%s)", v.Decision, v.Route, v.Reason, v.Bound)
	}
	const chance = "0.8^8 = 17%" // (1 - 0.2)^8 = 0.1678
	var text, md, junit, js bytes.Buffer
	if err := WriteText(&text, res, audit.Spend{}, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, res, audit.Spend{}, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&junit, res, audit.Spend{}, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, Build(res, audit.Spend{}, true)); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "md": md.String(), "junit": junit.String()} {
		for _, want := range []string{"+ misses without the line 0.0076 (0 of 800 labelled, sequential, 0.25%) + baseline false alarms 0.0076 (0 of 800 labelled baseline answers, sequential, 0.25%)", chance,
			"it passed 0 of 800 labelled answers without the line that were violations (at most 0.8% of them)"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s report lacks %q:\n%s", name, want, out)
			}
		}
	}
	if !strings.Contains(junit.String(), `name="missed_type_chance" value="0.1678 (affected share 0.2, 8 provoking cases)"`) ||
		!strings.Contains(junit.String(), `name="grader_route" value="`) {
		t.Errorf("junit properties lack the grader's numbers:\n%s", junit.String())
	}
	var doc Doc
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	n := doc.Rules[0].Numbers
	if doc.AffectedShare != 0.2 || n == nil || n.GraderRoute == nil || n.SpecificityLo == nil || n.RecallLo == nil ||
		n.ProvokingCases != 8 || n.ControlCases != 2 || n.AffectedShare != 0.2 || n.GraderRoute.FalseAlarmFrom != "labels" {
		t.Fatalf("json numbers %+v, affected share %v", n, doc.AffectedShare)
	}
	g := n.GraderRoute
	for name, got := range map[string][2]float64{"miss": {g.Miss, 0.0076}, "false_alarm": {g.FalseAlarm, 0.0076},
		"rise": {g.Rise, g.Graded + g.Miss + g.FalseAlarm}, "graded": {g.Graded, n.Upper}, "missed_type_chance": {n.MissedTypeChance, 0.1678}} {
		if math.Abs(got[0]-got[1]) > 1e-4 {
			t.Errorf("%s = %.4f, want %.4f", name, got[0], got[1])
		}
	}
}

// resultsOf is the results of what src stores for the plan p of audit a,
// graded by a's predicates.
func resultsOf(t *testing.T, a *audit.Audit, p *audit.Plan, src audit.Reader) *evidence.Results {
	t.Helper()
	tally, err := evidence.NewTally(p, grade.NewPredicates(a), src)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

package evidence

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

func TestAggregate_Demo(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 30)
	p, st := fx.Plan, fx.Store
	res, err := aggregate(t, fx)
	if err != nil {
		t.Fatal(err)
	}
	byLine := map[int]*RuleResult{}
	for _, rr := range res.Rules {
		byLine[rr.Rule.Line] = rr
		if rr.Pending != 0 || rr.Errors != 0 {
			t.Errorf("line %d: pending %d errors %d", rr.Rule.Line, rr.Pending, rr.Errors)
		}
		// Every cell is counted exactly once: the arms add up to the cells.
		n := rr.Provoking.Baseline.N + rr.Provoking.Deleted.N + rr.Arms[model.Control].Baseline.N + rr.Arms[model.Control].Deleted.N
		if !rr.Rule.HasPredicate() {
			// Nothing grades a rule with no predicate: its answers are
			// counted as ungraded, never as passes.
			for _, cr := range rr.Cases {
				n += cr.Baseline.Ungraded + cr.Deleted.Ungraded
				if cr.Baseline.N+cr.Deleted.N != 0 {
					t.Errorf("line %d case %s: graded answers without a predicate", rr.Rule.Line, cr.Case.ID)
				}
			}
		}
		if want := 2 * 30 * len(rr.Rule.Cases); n != want {
			t.Errorf("line %d: %d graded answers, want %d", rr.Rule.Line, n, want)
		}
	}
	// The roadmap rule is load-bearing in the simulation: KEEP.
	if v := byLine[23].Verdict.Decision; v != model.DecisionKeep {
		t.Errorf("line 23 verdict %s, want KEEP (%s)", v, byLine[23].Verdict.Reason)
	}
	// Re-asking has no effect; without labels the predicate's misses are
	// unmeasured.
	if v := byLine[15].Verdict; v.Decision != model.DecisionInconclusive || !strings.Contains(v.Reason, "its misses without the line are not measured") {
		t.Errorf("line 15 verdict %s (%s), want INCONCLUSIVE for unmeasured misses", v.Decision, v.Reason)
	}
	// The tally gives the same numbers as a fresh aggregate, and a recorded
	// label shows up in the grader's quality.
	tally, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	cell := p.Cells[0]
	g, ok := tally.Grade(cell)
	if !ok {
		t.Fatal("first cell has no grade")
	}
	stored, err := st.PutLabel(model.Label{Source: model.LabelBlind, Key: cell.Key, Violation: !g.Pass, Labeller: "t"})
	if err != nil {
		t.Fatal(err)
	}
	tally.SetLabel(stored)
	if res2, err := tally.Results(); err != nil || res2.Rules[0].Quality.Labels != 0 || res2.UndesignedLabels != 1 {
		t.Fatalf("a label in no declared set: %d counted, %d undesigned, want 0 and 1 (%v)", res2.Rules[0].Quality.Labels, res2.UndesignedLabels, err)
	}
	set, _, err := labels.DeclareRandom(st, p, tally, labels.SampleOptions{Name: "hand", Line: p.Audit.Rules[cell.Rule].Line,
		Kinds: []model.Kind{p.Audit.Rules[cell.Rule].Cases[cell.Case].Kind}}, []string{cell.Key}, stored.At)
	if err != nil {
		t.Fatal(err)
	}
	tally.AddLabelSet(set)
	res2, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	if res2.Rules[0].Quality.Labels != 1 {
		t.Errorf("labels counted = %d, want 1", res2.Rules[0].Quality.Labels)
	}
	if res2.Rules[0].Provoking.Deleted.Fails != res.Rules[0].Provoking.Deleted.Fails {
		t.Error("tally and aggregate disagree")
	}
}

func TestRegrade_PredicateEdit(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 4)
	p, st := fx.Plan, fx.Store
	rule := p.Audit.Rules[0]
	before, err := st.GradesFor(model.PredicateGrader, fx.Preds.Version(0))
	if err != nil || len(before) == 0 {
		t.Fatalf("no grades before edit: %v", err)
	}
	// A stricter predicate: a new version, graded from stored text alone.
	edited, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)roadmap'\nreason = \"mentions the roadmap\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fx.Preds.Set(0, edited)
	regrade := func() int {
		tally, err := NewTally(p, fx.Preds, st)
		if err != nil {
			t.Fatal(err)
		}
		n, err := tally.Regrade(fx.Grader(t), st)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	n := regrade()
	if rule.Loaded.Version == edited.Version {
		t.Fatal("the edit changed the loaded predicate")
	}
	after, err := st.GradesFor(model.PredicateGrader, edited.Version)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || len(after) != n {
		t.Fatalf("regraded %d, stored %d", n, len(after))
	}
	for key, g := range after {
		r, err := st.Response(key)
		if err != nil {
			t.Fatal(err)
		}
		if want := !strings.Contains(strings.ToLower(r.Text), "roadmap"); g.Pass != want {
			t.Fatalf("grade of %q = %v, want pass %v", r.Text, g.Pass, want)
		}
	}
	// A second regrade has nothing to do.
	if n := regrade(); n != 0 {
		t.Fatalf("second regrade did %d", n)
	}
}

func TestJudges_SimulatedDisagree(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 6)
	p, st := fx.Plan, fx.Store
	if len(p.Audit.Judges) != 2 {
		t.Fatalf("demo lists %d judges, want 2", len(p.Audit.Judges))
	}
	status, err := st.Status()
	if err != nil {
		t.Fatal(err)
	}
	jp, err := p.JudgeCalls(st, status, 0)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[int]string{}
	for _, r := range p.Audit.Rules {
		rules[r.Line] = r.Text
	}
	s := sim.New(sim.Options{Rules: rules})
	calls := append([]runner.Call(nil), jp.Calls...)
	for i := range calls {
		calls[i].Provider = 0 // the one simulated endpoint
		if calls[i].Request.Temperature != 0 || calls[i].Request.Seed == nil {
			t.Fatal("judge calls must use temperature 0 and a seed")
		}
	}
	w := st.NewWriter(store.WriterOptions{})
	for range runner.Run(context.Background(), calls, grade.NewJudgeSink(jp, p.Audit.Judges, w), runner.Options{Concurrency: 4, Providers: []runner.Endpoint{{Name: "sim", Provider: s}}}) {
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// What the judges' calls cost is part of what the evidence cost.
	spend, err := audit.SpendOf(st.ForEachPaid)
	if err != nil {
		t.Fatal(err)
	}
	if spend.JudgeCalls != len(jp.Calls) || spend.JudgeUSD <= 0 || spend.TotalUSD != spend.USD+spend.JudgeUSD {
		t.Errorf("spend with judges: %d judge calls of %d, $%v + $%v = $%v", spend.JudgeCalls, len(jp.Calls),
			spend.USD, spend.JudgeUSD, spend.TotalUSD)
	}
	answered := 0 // answers the judges grade: not those of the rule with no input class
	for k, ok := range status {
		if ok && p.Judged(k) {
			answered++
		}
	}
	var grades []map[string]model.Grade
	for _, j := range p.Audit.Judges {
		g := map[string]model.Grade{} // with every rubric it grades with
		for _, v := range j.Versions() {
			gv, err := st.GradesFor(j.Grader, v)
			if err != nil {
				t.Fatal(err)
			}
			maps.Copy(g, gv)
		}
		if len(g) != answered {
			t.Fatalf("%s graded %d of %d answers", j.Grader, len(g), answered)
		}
		grades = append(grades, g)
	}
	disagree := 0
	for k, a := range grades[0] {
		if b := grades[1][k]; a.Pass != b.Pass || a.Unparseable != b.Unparseable {
			disagree++
		}
	}
	if disagree == 0 {
		t.Fatal("the two simulated judges never disagree; the review queue would be empty")
	}
	// Nothing left to judge or backfill.
	status, _ = st.Status()
	if len(jp.Pending(status)) != 0 {
		t.Fatal("judge calls still pending after the run")
	}
	if n, err := grade.Backfill(jp, p.Audit.Judges, st); err != nil || n != 0 {
		t.Fatalf("backfill after a complete run: %d, %v", n, err)
	}
}

func TestCompare_TwoModels(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	files["audit.toml"] = strings.Replace(files["audit.toml"], "[model]\nname = \"m\"\nprovider = \"sim\"",
		"[[model]]\nname = \"old\"\nprovider = \"sim\"\n[[model]]\nname = \"new\"\nprovider = \"sim\"", 1)
	files["audit.toml"] = strings.Replace(files["audit.toml"], "samples = 3", "samples = 20", 1)
	dir := audittest.WriteFiles(t, files)
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := audit.NewPlan(a, audit.PlanOptions{})
	st, err := store.Open(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := sim.New(sim.Options{Rules: map[int]string{2: "Never share prices.", 3: "Do not speculate about dates."}})
	calls := append([]runner.Call(nil), p.Calls...)
	for i := range calls {
		calls[i].Provider = 0 // the one simulated endpoint
	}
	w := st.NewWriter(store.WriterOptions{})
	preds := grade.NewPredicates(a)
	for range runner.Run(context.Background(), calls, &grade.Sink{Grader: grade.NewGrader(context.Background(), p, preds), Writer: w}, runner.Options{Concurrency: 4, Providers: []runner.Endpoint{{Name: "sim", Provider: s}}}) {
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tally, err := NewTally(p, preds, st)
	if err != nil {
		t.Fatal(err)
	}
	cmp := tally.Compare(0, 0, 1, false)
	for _, cc := range cmp.Cases {
		if cc.A.N != 20 || cc.B.N != 20 {
			t.Fatalf("case %s: A %d B %d answers, want 20 each", cc.Case.ID, cc.A.N, cc.B.N)
		}
	}
	// The split lists agree with the per-case counts: for each case,
	// (A failed, B passed) - (A passed, B failed) = A fails - B fails.
	ab := tally.SplitPairs(0, 0, 1, false, true)
	ba := tally.SplitPairs(0, 0, 1, false, false)
	net := map[int]int{}
	for _, p := range ab {
		net[p.Case]++
	}
	for _, p := range ba {
		net[p.Case]--
	}
	for i, cc := range cmp.Cases {
		if want := cc.A.Fails - cc.B.Fails; net[i] != want {
			t.Errorf("case %s: split pairs net %d, want %d", cc.Case.ID, net[i], want)
		}
	}
}

// aggregate computes the results of what the fixture stored.
func aggregate(t *testing.T, fx *audittest.Fixture) (*Results, error) {
	t.Helper()
	tally, err := NewTally(fx.Plan, fx.Preds, fx.Store)
	if err != nil {
		return nil, err
	}
	return tally.Results()
}

// tol is the tolerance of STATS.md's four-decimal test vectors.
const tol = 1e-4

func near(got, want, eps float64) bool { return math.Abs(got-want) <= eps }

package audit

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

// writeFiles writes name -> content into a new temp dir and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustCounter(t *testing.T) *prompts.Counter {
	t.Helper()
	c, err := prompts.NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const sweepPrompt = "You are a helpful assistant.\nNever share prices.\nDo not speculate about dates.\nBe brief.\n"

func sweepFiles() map[string]string {
	return map[string]string{
		"p.md": sweepPrompt,
		"audit.toml": `name = "sweep"
prompt = "p.md"
samples = 3
[model]
name = "m"
provider = "sim"
[[rule]]
line = 2
cases = "a.jsonl"
predicate = "a.toml"
[[rule]]
text = "Do not speculate about dates."
cases = "b.jsonl"
predicate = "b.toml"
`,
		// "shared" has the same message in both case files: its baseline call
		// is the same call for both rules.
		"a.jsonl": `{"id":"a1","kind":"provoke","msg":"How much is Pro?"}
{"id":"shared","kind":"control","msg":"What can you do?"}
`,
		"b.jsonl": `{"id":"b1","kind":"provoke","msg":"When does v2 ship?"}
{"id":"shared","kind":"control","msg":"What can you do?"}
`,
		"a.toml": "[[check]]\nfail_if_match = '\\$\\d+'\nreason = \"quoted a price\"\n",
		"b.toml": "[[check]]\nfail_if_match = '(?i)\\bQ[1-4]\\b'\nreason = \"gave a date\"\n",
	}
}

func TestPlan_SweepSharesBaseline(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, sweepFiles())
	a, err := Load(filepath.Join(dir, "audit.toml"), mustCounter(t))
	if err != nil {
		t.Fatal(err)
	}
	if a.Rules[1].Line != 3 {
		t.Fatalf("rule by text resolved to line %d, want 3", a.Rules[1].Line)
	}
	p := NewPlan(a, PlanOptions{})
	// 2 rules x 2 cases x 2 variants x 3 samples.
	if got, want := len(p.Cells), 24; got != want {
		t.Fatalf("cells = %d, want %d", got, want)
	}
	// The shared control's baseline is one call per sample for both rules.
	if got, want := len(p.Calls), 24-3; got != want {
		t.Fatalf("distinct calls = %d, want %d", got, want)
	}
	for key, cells := range p.ByKey {
		if len(cells) == 2 {
			c0, c1 := p.Cells[cells[0]], p.Cells[cells[1]]
			if c0.Deleted || c1.Deleted || c0.Rule == c1.Rule {
				t.Fatalf("key %s shared by unexpected cells %+v %+v", key, c0, c1)
			}
		}
	}
	// Deleted variants lack their line and only it.
	for _, c := range p.Calls {
		sys := c.Request.Messages[0].Content
		switch c.Meta.Variant {
		case "-L2":
			if strings.Contains(sys, "Never share prices.") || !strings.Contains(sys, "Do not speculate") {
				t.Fatalf("-L2 system prompt wrong: %q", sys)
			}
		case Baseline:
			if sys != strings.TrimSuffix(sweepPrompt, "\n") && sys != sweepPrompt {
				t.Fatalf("baseline system prompt = %q", sys)
			}
		}
	}
}

func TestLoad_Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		edit      func(map[string]string)
		file      string
		line      int
		fragments []string
	}{
		{"line out of range", func(f map[string]string) {
			f["audit.toml"] = strings.Replace(f["audit.toml"], "line = 2", "line = 40", 1)
		}, "audit.toml", 8, []string{"rule[1].line", "40"}},
		{"text and line disagree", func(f map[string]string) {
			f["audit.toml"] = strings.Replace(f["audit.toml"], "line = 2", "line = 2\ntext = \"Never share secrets.\"", 1)
		}, "audit.toml", 9, []string{"Never share secrets.", "Never share prices."}},
		{"missing cases", func(f map[string]string) { delete(f, "a.jsonl") }, "audit.toml", 9, []string{"a.jsonl", "not found"}},
		{"blank line", func(f map[string]string) {
			f["p.md"] = "You are a helpful assistant.\n\nDo not speculate about dates.\n"
		}, "audit.toml", 8, []string{"blank"}},
		{"rubric without response", func(f map[string]string) {
			f["audit.toml"] += "[[judge]]\nname = \"j\"\nrubric = \"r.md\"\n"
			f["r.md"] = "Grade {{msg}}"
		}, "r.md", 1, []string{"{{response}}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := sweepFiles()
			tt.edit(files)
			dir := writeFiles(t, files)
			_, err := Load(filepath.Join(dir, "audit.toml"), nil)
			ie, ok := err.(*model.InputError)
			if !ok {
				t.Fatalf("err = %v (%T), want *model.InputError", err, err)
			}
			if filepath.Base(ie.File) != tt.file || ie.Line != tt.line {
				t.Errorf("error at %s:%d, want %s:%d (%v)", ie.File, ie.Line, tt.file, tt.line, err)
			}
			for _, f := range tt.fragments {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q lacks %q", err, f)
				}
			}
		})
	}
}

// runDemo runs the bundled demo audit against the simulated model into a
// store in a temp dir and returns the plan and the open store.
func runDemo(t *testing.T, samples int) (*Plan, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	a, err := Load(filepath.Join(dir, examples.DemoAudit), mustCounter(t))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(a, PlanOptions{Samples: samples})
	st, err := store.Open(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	runSim(t, p, st)
	return p, st
}

// runSim runs every call of the plan against the simulated model, grading
// and storing the answers, and returns the simulated model (whose Decide
// gives the truth about a call).
func runSim(t *testing.T, p *Plan, st *store.Store) *sim.Sim {
	t.Helper()
	rules := map[int]string{}
	for _, r := range p.Audit.Rules {
		rules[r.Line] = r.Text
	}
	s := sim.New(sim.Options{Rules: rules})
	calls := append([]runner.Call(nil), p.Calls...)
	for i := range calls {
		calls[i].Provider = s
	}
	ctx := context.Background()
	w := st.NewWriter(store.WriterOptions{})
	for ev := range runner.Run(ctx, calls, &Sink{Grader: NewGrader(ctx, p), Writer: w}, runner.Options{Concurrency: 8}) {
		if stop, ok := ev.(runner.Stopped); ok && stop.Reason != runner.Completed {
			t.Fatalf("run stopped: %v %s", stop.Reason, stop.Detail)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAggregate_Demo(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 30)
	res, err := Aggregate(p, st)
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
	// Re-asking has no effect; without labels recall is unmeasured.
	if v := byLine[15].Verdict; v.Decision != model.DecisionInconclusive || !strings.Contains(v.Reason, "recall not measured") {
		t.Errorf("line 15 verdict %s (%s), want INCONCLUSIVE for unmeasured recall", v.Decision, v.Reason)
	}
	// The tally gives the same numbers as a fresh aggregate, and a recorded
	// label shows up in the grader's quality.
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	cell := p.Cells[0]
	g, ok := tally.Grade(cell)
	if !ok {
		t.Fatal("first cell has no grade")
	}
	tally.SetLabel(model.Label{Key: cell.Key, Violation: !g.Pass, Labeller: "t"})
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
	p, st := runDemo(t, 4)
	rule := p.Audit.Rules[0]
	before, err := st.GradesFor(PredicateGrader, rule.Predicate.Version)
	if err != nil || len(before) == 0 {
		t.Fatalf("no grades before edit: %v", err)
	}
	// A stricter predicate: a new version, graded from stored text alone.
	edited, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)roadmap'\nreason = \"mentions the roadmap\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	rule.Predicate = edited
	n, err := NewGrader(context.Background(), p).Regrade(st)
	if err != nil {
		t.Fatal(err)
	}
	after, err := st.GradesFor(PredicateGrader, edited.Version)
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
	if n, _ := NewGrader(context.Background(), p).Regrade(st); n != 0 {
		t.Fatalf("second regrade did %d", n)
	}
}

func TestJudges_SimulatedDisagree(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 6)
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
		calls[i].Provider = s
		if calls[i].Request.Temperature != 0 || calls[i].Request.Seed == nil {
			t.Fatal("judge calls must use temperature 0 and a seed")
		}
	}
	w := st.NewWriter(store.WriterOptions{})
	for range runner.Run(context.Background(), calls, NewJudgeSink(jp, p.Audit.Judges, w), runner.Options{Concurrency: 4}) {
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// What the judges' calls cost is part of what the evidence cost.
	spend, err := p.SpendWithJudges(st, status)
	if err != nil {
		t.Fatal(err)
	}
	if spend.JudgeCalls != len(jp.Calls) || spend.JudgeUSD <= 0 || spend.TotalUSD != spend.USD+spend.JudgeUSD {
		t.Errorf("spend with judges: %d judge calls of %d, $%v + $%v = $%v", spend.JudgeCalls, len(jp.Calls),
			spend.USD, spend.JudgeUSD, spend.TotalUSD)
	}
	answered := 0 // answers the judges grade: not those of the rule with no input class
	for k, ok := range status {
		if ok && p.judged(k) {
			answered++
		}
	}
	var grades []map[string]model.Grade
	for _, j := range p.Audit.Judges {
		g, err := st.GradesFor(j.Grader, j.Version)
		if err != nil {
			t.Fatal(err)
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
	if n, err := jp.Backfill(p.Audit.Judges, st); err != nil || n != 0 {
		t.Fatalf("backfill after a complete run: %d, %v", n, err)
	}
}

func TestCompare_TwoModels(t *testing.T) {
	t.Parallel()
	files := sweepFiles()
	files["audit.toml"] = strings.Replace(files["audit.toml"], "[model]\nname = \"m\"\nprovider = \"sim\"",
		"[[model]]\nname = \"old\"\nprovider = \"sim\"\n[[model]]\nname = \"new\"\nprovider = \"sim\"", 1)
	files["audit.toml"] = strings.Replace(files["audit.toml"], "samples = 3", "samples = 20", 1)
	dir := writeFiles(t, files)
	a, err := Load(filepath.Join(dir, "audit.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(a, PlanOptions{})
	st, err := store.Open(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := sim.New(sim.Options{Rules: map[int]string{2: "Never share prices.", 3: "Do not speculate about dates."}})
	calls := append([]runner.Call(nil), p.Calls...)
	for i := range calls {
		calls[i].Provider = s
	}
	w := st.NewWriter(store.WriterOptions{})
	for range runner.Run(context.Background(), calls, &Sink{Grader: NewGrader(context.Background(), p), Writer: w}, runner.Options{Concurrency: 4}) {
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tally, err := NewTally(p, st)
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

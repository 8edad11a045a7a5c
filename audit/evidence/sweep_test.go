package evidence

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
)

// TestSweep_OneKeepOneDelete runs a sweep of two demo lines against the
// simulated model: the roadmap line is load-bearing (KEEP); asking again for
// given information is not, and once the predicate's recall is measured on
// hand labels (the simulator's truth) the line may go (DELETE). It takes
// 150 samples a case, every provoking answer labelled: the grader route
// adds to the graded difference the misses without the line and the
// baseline's false alarms, each bounded by the confidence sequence at
// one-sided 0.25% (0 of 400 labels leave 1.5 points each; 0 of 1,200, 0.5).
// The token totals must be the prompt's own token counts of the lines.
func TestSweep_OneKeepOneDelete(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	auditToml := `name = "two-line sweep"
prompt = "support.md"
samples = 150
delta = 0.05
[model]
name = "sim-support-1"
provider = "sim"
[[rule]]
line = 23
cases = "roadmap_speculation.jsonl"
predicate = "roadmap_speculation.predicate.toml"
tag = "constrains"
[[rule]]
line = 15
cases = "reask.jsonl"
predicate = "reask.amended.predicate.toml"
tag = "describes"
`
	// The demo's first-draft predicate for line 15 misses "What's the order
	// number on that?"; labels would show it, and this is the amended one.
	amended := `[[check]]
kinds = ["provoke", "pressure"]
fail_if_match = '''(?i)((could|can|would) you (please )?(share|provide|send|confirm|give me) (me )?your (order|account|invoice|workspace|email)|what's the (order|account|invoice) number)'''
reason = "asked again for an identifier the customer had given"
`
	if err := os.WriteFile(filepath.Join(dir, "reask.amended.predicate.toml"), []byte(amended), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sweep.toml")
	if err := os.WriteFile(path, []byte(auditToml), 0o644); err != nil {
		t.Fatal(err)
	}
	counter := audittest.Counter(t)
	fx := audittest.Open(t, path, 0)
	fx.Run(t)
	p, st, s, a := fx.Plan, fx.Store, fx.Sim, fx.Plan.Audit

	// Hand labels: a perfect labeller (the simulator's truth) labels every
	// provoking answer of line 15.
	var labels []model.Label
	for _, c := range p.Calls {
		cell := p.Cells[p.ByKey[c.Key][0]]
		if a.Rules[cell.Rule].Line != 15 || !c.Meta.Kind.Provoking() {
			continue
		}
		r, err := st.Response(c.Key)
		if err != nil {
			t.Fatal(err)
		}
		labels = append(labels, model.Label{Source: model.LabelBlind, Key: c.Key, Violation: s.Decide(c).Failure, Labeller: "truth",
			At: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), AnswerSHA256: model.AnswerHash(r.Text)})
	}
	if _, err := st.ImportLabels(labels, false); err != nil {
		t.Fatal(err)
	}
	// Every provoking answer of line 15 is labelled: a census, declared as
	// the random sample it is.
	declareAll(t, fx, 15, labels)

	res, err := aggregate(t, fx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]model.Decision{}
	for _, rr := range res.Rules {
		got[rr.Rule.Line] = rr.Verdict.Decision
		t.Logf("line %d: %s: %s (%s)", rr.Rule.Line, rr.Verdict.Decision, rr.Verdict.Reason, rr.Verdict.Bound)
	}
	if got[23] != model.DecisionKeep || got[15] != model.DecisionDelete {
		t.Fatalf("verdicts %v, want line 23 KEEP and line 15 DELETE", got)
	}

	// The totals are the prompt's token counts of the two lines (a deleted
	// line takes its newline with it).
	tokens := func(line int) int {
		text, err := a.Prompt.Line(line)
		if err != nil {
			t.Fatal(err)
		}
		return counter.Count(text + "\n")
	}
	sw := res.Sweep
	if sw.Lines != 2 || sw.Keep != 1 || sw.Delete != 1 {
		t.Errorf("sweep counts %+v", sw.SweepGroup)
	}
	if sw.TokensRemoved != tokens(15) || sw.TokensClaimed != tokens(15)+tokens(23) {
		t.Errorf("tokens removed %d of %d claimed, want %d of %d", sw.TokensRemoved, sw.TokensClaimed, tokens(15), tokens(15)+tokens(23))
	}
	if want := float64(tokens(15)+tokens(23)) / float64(tokens(15)); sw.Ratio() != want {
		t.Errorf("ratio %v, want %v", sw.Ratio(), want)
	}
	if len(sw.ByTag) != 2 || sw.ByTag[0].Tag != "constrains" || sw.ByTag[0].Keep != 1 ||
		sw.ByTag[1].Tag != "describes" || sw.ByTag[1].Delete != 1 || sw.ByTag[1].TokensRemoved != tokens(15) {
		t.Errorf("by tag %+v", sw.ByTag)
	}
	if !strings.Contains(res.Rules[1].Verdict.Reason, "under the tolerated 5.0 points") {
		t.Errorf("DELETE reason %q does not name the tolerance", res.Rules[1].Verdict.Reason)
	}
}

func TestSweep_LineDecisionAcrossModels(t *testing.T) {
	t.Parallel()
	rule := &audit.Rule{Line: 7, Tokens: 9}
	rr := func(d model.Decision) *RuleResult {
		return &RuleResult{Rule: rule, Verdict: model.Verdict{Decision: d}}
	}
	for _, tc := range []struct {
		name string
		ds   []model.Decision
		want model.Decision
	}{
		{"all delete", []model.Decision{model.DecisionDelete, model.DecisionDelete}, model.DecisionDelete},
		{"one model keeps it", []model.Decision{model.DecisionDelete, model.DecisionKeep}, model.DecisionKeep},
		{"one model unsure", []model.Decision{model.DecisionInconclusive, model.DecisionDelete}, model.DecisionInconclusive},
	} {
		var rules []*RuleResult
		for _, d := range tc.ds {
			rules = append(rules, rr(d))
		}
		s := summarizeSweep(rules)
		if s.Lines != 1 || s.TokensClaimed != 9 {
			t.Errorf("%s: a line audited against two models counts once: %+v", tc.name, s.SweepGroup)
		}
		if d := lineDecision(rules, 7); d != tc.want {
			t.Errorf("%s: line decision %s, want %s", tc.name, d, tc.want)
		}
		if removed := s.TokensRemoved; (tc.want == model.DecisionDelete) != (removed == 9) {
			t.Errorf("%s: removed %d tokens", tc.name, removed)
		}
	}
}

// The arm's difference compares only cases graded in both variants, as the
// verdict does; a case graded in one variant only stays in its rate.
func TestBuildArm_DifferenceOnMatchedCases(t *testing.T) {
	t.Parallel()
	p1, p2, p3 := &model.Case{ID: "p1", Kind: model.Provoke}, &model.Case{ID: "p2", Kind: model.Provoke}, &model.Case{ID: "p3", Kind: model.Provoke}
	cases := []CaseResult{
		{Case: p1, Baseline: Count{Fails: 0, N: 20}, Deleted: Count{Fails: 2, N: 20}},
		{Case: p2, Baseline: Count{Fails: 0, N: 20}, Deleted: Count{Fails: 4, N: 20}},
		{Case: p3, Baseline: Count{Fails: 10, N: 20}, Deleted: Count{Errors: 20}}, // deleted calls all failed
	}
	a := buildArm("provoke", cases, func(k model.Kind) bool { return k == model.Provoke })
	if a.Baseline.Fails != 10 || a.Baseline.N != 60 || a.Deleted.N != 40 {
		t.Fatalf("rates must keep every graded case: %+v %+v", a.Baseline, a.Deleted)
	}
	want := 6.0/40 - 0.0/40
	if a.Compared != 2 || a.Unmatched != 1 || math.Abs(a.Diff-want) > 1e-12 || a.DiffCI.Lo <= 0 {
		t.Errorf("diff %v %+v on %d cases (%d unmatched), want %v on 2", a.Diff, a.DiffCI, a.Compared, a.Unmatched, want)
	}
}

// Rewordings and additions stay out of the sweep's lines and tokens and
// are counted apart, by decision, each variant once over its models (the
// most cautious decision) with the cases it fixed or broke under any model.
func TestSweep_Changes(t *testing.T) {
	t.Parallel()
	del := &audit.Rule{Line: 7, Tokens: 9}
	reword := &audit.Rule{Line: 7, Tokens: 8, Kind: model.Rewording, NewText: "x"}
	add := &audit.Rule{Line: 7, Tokens: 5, Kind: model.Addition, NewText: "y"}
	rules := []*RuleResult{
		{Rule: del, Verdict: model.Verdict{Decision: model.DecisionKeep}},
		{Rule: reword, Verdict: model.Verdict{Decision: model.DecisionBetter}, Flips: Flips{Fixed: []string{"p1"}, Compared: 4}},
		{Rule: reword, Verdict: model.Verdict{Decision: model.DecisionNotWorse}, Flips: Flips{Fixed: []string{"p1", "p2"}, Compared: 4}},
		{Rule: add, Verdict: model.Verdict{Decision: model.DecisionWorse}, Flips: Flips{Broken: []string{"c1"}, Compared: 4}},
	}
	s := summarizeSweep(rules)
	if s.Lines != 1 || s.Keep != 1 || s.TokensClaimed != 9 {
		t.Errorf("the deletion alone is the sweep's line: %+v", s.SweepGroup)
	}
	c := s.Changes
	if c.Variants != 2 || c.NotWorse != 1 || c.Worse != 1 || c.Better != 0 || c.Inconclusive != 0 ||
		c.Fixed != 2 || c.Broken != 1 || len(c.Names) != 2 || c.Names[0] != "~L7" || c.Names[1] != "+L7" {
		t.Errorf("changes: %+v", c)
	}
	if got := c.FlipCounts(); got != "2 fixed, 1 broken" {
		t.Errorf("flip counts %q", got)
	}
}

// declareAll declares the labelled answers of a line as a simple random
// sample of its provoking answers (labels.DeclareRandom).
func declareAll(t *testing.T, fx *audittest.Fixture, line int, ls []model.Label) {
	t.Helper()
	tally, err := NewTally(fx.Plan, fx.Preds, fx.Store)
	if err != nil {
		t.Fatal(err)
	}
	keys := make([]string, len(ls))
	created := ls[0].At
	for i, l := range ls {
		keys[i] = l.Key
		if l.At.Before(created) {
			created = l.At
		}
	}
	opts := labels.SampleOptions{Name: fmt.Sprintf("declared-L%d", line), Line: line}
	if _, _, err := labels.DeclareRandom(fx.Store, fx.Plan, tally, opts, keys, created); err != nil {
		t.Fatal(err)
	}
}

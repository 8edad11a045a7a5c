package tui

import (
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// The report screen shows each regression suite's section, and a variant
// that broke suite cases says so beside its verdict (which it keeps).
func TestReport_RegressionSuite(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	// Every answer as the simulated model gives it, except the suite's
	// answers under -L23, which refuse: the deletion breaks every case.
	for i, c := range f.plan.Calls {
		if f.plan.SuiteOf(c.Key) != 0 || c.Meta.Variant != "-L23" {
			f.src.put(f.answer(t, i))
			continue
		}
		r, _ := f.answer(t, i)
		r.Text = "Sorry, I can't help with that."
		gs, err := f.grader.Grade(r)
		if err != nil {
			t.Fatal(err)
		}
		f.src.put(r, gs)
	}
	a := f.app(t, &clock{t: t0}, noStart)
	openReport(a)
	text := reportText(a)
	var d model.Decision
	for _, rr := range a.c.res.Rules {
		if rr.Rule.Line == 23 {
			d = rr.Verdict.Decision
		}
	}
	for _, want := range []string{
		"verdict        " + decisionSymbol(d) + " " + string(d) + " · regression: 8 cases broken (see below)",
		"── Regression suite everyday ─",
		"everyday.jsonl (8 cases, run on baseline and on every variant)",
		"-L23: 8 of 8 cases broken (failures 0.0% -> 100.0%",
		"broken: day-01, day-02,",
		"-L15: 0 of 8 cases broken",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "regression: ") != 1 {
		t.Errorf("only -L23 is flagged:\n%s", text)
	}
	// The flag never changes the verdict: a fixture whose suite answers
	// are all the simulated model's decides every line alike.
	g := newFixture(t, 2)
	g.store(t, 0, len(g.plan.Calls))
	b := g.app(t, &clock{t: t0}, noStart)
	for i, rr := range a.c.res.Rules {
		other := b.c.res.Rules[i]
		if rr.Verdict.Decision != other.Verdict.Decision || rr.Verdict.Reason != other.Verdict.Reason {
			t.Errorf("line %d: %s with the broken suite, %s without", rr.Rule.Line, rr.Verdict.Decision, other.Verdict.Decision)
		}
		if want := map[bool]int{true: 8, false: 0}[rr.Rule.Line == 23]; rr.RegressionBroken() != want || other.RegressionBroken() != 0 {
			t.Errorf("line %d: %d broken (want %d), %d without", rr.Rule.Line, rr.RegressionBroken(), want, other.RegressionBroken())
		}
	}
}

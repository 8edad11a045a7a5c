package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
)

// TestSample_GradersSection: the answer view lists every grader of the
// rule with its verdict on the answer, and each judge's reasoning read
// from its stored answer (issue 30: the answer view never showed the
// judges' verdicts or reasoning); a judge that has not graded the answer
// says why.
func TestSample_GradersSection(t *testing.T) {
	t.Parallel()
	f, a := complete(t, 2)
	a.Update(tea.WindowSizeMsg{Width: 100, Height: 60})
	if len(f.plan.Audit.Judges) < 2 {
		t.Fatal("the fixture has fewer than two judges: the test checks less")
	}
	key := f.plan.Cells[a.c.plan.CellsOfRule(0)[0]].Key
	r, err := f.src.Response(key)
	if err != nil || !r.OK() {
		t.Fatalf("the first answer is not stored: %v", err)
	}
	// The first judge graded it, its reasoning stored with its call; the
	// second did not.
	jd := f.plan.Audit.Judges[0]
	req, ok := f.plan.JudgeRequestFor(jd, key, 0, r.Text, 0)
	if !ok {
		t.Fatal("no judge request for the first answer")
	}
	const reasoning = "The reply gives a quarter for an unreleased plan: that is a date."
	f.src.put(model.Response{Key: req.Key(), Text: reasoning + "\nVERDICT: VIOLATION"}, nil)
	a.c.tally.RecordGrade(key, model.Grade{Grader: jd.Grader, Version: jd.For(0).Version, Pass: false, Reason: "a date"})
	a.resultsChanged()
	settle(a, press(a, "enter"))
	// The sample of the cell whose key it is: the cell's first.
	settle(a, press(a, "enter"))
	if a.screen != screenSample || a.sample.key() != key {
		t.Fatalf("screen %v shows %s, want the sample of %s", a.screen, a.sample.key(), key)
	}
	s := plain(a)
	contains(t, s, "GRADERS")
	contains(t, s, "predicate")
	contains(t, s, jd.Grader)
	contains(t, s, reasoning)
	other := f.plan.Audit.Judges[1].Grader
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, other) && !strings.Contains(l, "not judged") {
			t.Errorf("the judge that did not grade the answer reads %q", l)
		}
	}
	contains(t, s, "not judged the next run asks the judges")
}

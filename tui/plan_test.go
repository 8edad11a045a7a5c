package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestPlan_TopBottom checks that the plan screen jumps to its end and back
// with G/end and g/home, as the other pager screens do: at 80x24 the power
// lines lie below the fold, and the help says how to reach them.
func TestPlan_TopBottom(t *testing.T) {
	t.Parallel()
	const (
		head = "Plan Lumen support prompt sweep"
		tail = "-L12      no input class" // the last rule's power line
	)
	for _, tc := range []struct {
		name        string
		bottom, top tea.KeyPressMsg
	}{
		{"G and g", keyMsg("G"), keyMsg("g")},
		{"end and home", tea.KeyPressMsg{Code: tea.KeyEnd}, tea.KeyPressMsg{Code: tea.KeyHome}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newFixture(t, 30).app(t, &clock{t: t0}, noStart)
			if a.screen != screenPlan {
				t.Fatalf("screen = %v, want the plan", a.screen)
			}
			screen := plain(a)
			contains(t, screen, head)
			contains(t, screen, "G/end bottom")
			if strings.Contains(screen, tail) {
				t.Fatalf("the power lines already show at 80x24; the test needs them below the fold:\n%s", screen)
			}
			a.Update(tc.bottom)
			screen = plain(a)
			contains(t, screen, tail)
			if strings.Contains(screen, head) || !a.plan.vp.AtBottom() {
				t.Fatalf("after %s: not at the bottom:\n%s", tc.bottom, screen)
			}
			a.Update(tc.top)
			screen = plain(a)
			contains(t, screen, head)
			if strings.Contains(screen, tail) || !a.plan.vp.AtTop() {
				t.Fatalf("after %s: not at the top:\n%s", tc.top, screen)
			}
		})
	}
}

// TestPlan_HelpListsScrollKeys checks the full help of the plan screen.
func TestPlan_HelpListsScrollKeys(t *testing.T) {
	t.Parallel()
	a := newFixture(t, 2).app(t, &clock{t: t0}, noStart)
	a.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	press(a, "?")
	screen := plain(a)
	for _, want := range []string{"y start the run", "g/home top", "G/end  bottom", "pgdn   page down"} {
		contains(t, screen, want)
	}
}

// TestPlan_JudgeCalls checks that with judges the plan body says which of
// the calls to make are answers (what the header counts) and which are
// judge calls, and that the judge count is an upper bound.
func TestPlan_JudgeCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30)
	a := f.app(t, &clock{t: t0}, noStart, func(o *Options) {
		o.Estimate.JudgeCalls = 4800
		o.Estimate.Calls += 4800
	})
	a.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	screen := plain(a)
	contains(t, screen, "4140 answers planned · 0 stored · 4140 to make")
	contains(t, screen, "calls     8940 to make: 4140 answers from the models under test and at most 4800 judge calls; 0 answers already stored (free)")
	contains(t, screen, "answers with identical text share one judge call")

	// Without judges the line stays as it was.
	b := f.app(t, &clock{t: t0}, noStart)
	contains(t, plain(b), "calls     4140 to make (answers), 0 already stored (free)")
}

// TestPlan_Wording: the plan names the command without markdown's
// backticks, and a simulated audit is never said to make paid calls,
// before a run, while it goes or on stored results.
func TestPlan_Wording(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		_, stored := complete(t, 2)
		press(stored, "shift+tab") // it opens on the grid
		runnable := newFixture(t, 2).app(t, &clock{t: t0}, noStart)
		stored.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		runnable.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		s := plain(stored)
		contains(t, s, "Showing stored results: auditor run makes the remaining calls.")
		press(stored, "y") // its command only clears the status later
		contains(t, plain(stored), "This screen shows stored results; auditor run makes the calls.")
		press(runnable, "G")
		screens := map[string]string{"stored": s, "stored after y": plain(stored), "runnable, bottom": plain(runnable)}
		press(runnable, "g")
		screens["runnable"] = plain(runnable)
		contains(t, screens["runnable"], "nothing is billed")
		press(runnable, "y", "tab")
		screens["running grid"] = plain(runnable)
		press(runnable, "shift+tab")
		screens["running plan"] = plain(runnable)
		for name, s := range screens {
			for _, bad := range []string{"`", "paid"} {
				if strings.Contains(s, bad) {
					t.Errorf("%dx%d %s: the screen says %q:\n%s", size[0], size[1], name, bad, s)
				}
			}
		}
	}
}

// TestApp_SaysWhichExecGradersWereNotStarted: an [exec] grader left
// unstarted, not approved, is named on the plan and on its rule in the
// grid, with the command that approves it; at 80 columns nothing is cut.
func TestApp_SaysWhichExecGradersWereNotStarted(t *testing.T) {
	t.Parallel()
	a := newFixture(t, 2).app(t, &clock{t: t0}, nil, func(o *Options) {
		o.NotApproved = []ExecNote{{Command: "python3 graders/grade.py (in /home/ana/audits/support)", Lines: []int{23},
			Approve: "auditor run audits/support/audit.toml --allow-exec"}}
	})
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	const (
		what    = "[exec] grader not approved, not started"
		approve = "auditor run audits/support/audit.toml --allow-exec"
	)
	a.screen = screenPlan
	s := plain(a)
	contains(t, s, "⚠ "+what)
	contains(t, s, "python3 graders/grade.py (in")
	contains(t, s, "the answers of L23 are shown ungraded")
	contains(t, s, "To approve it, read it, then: "+approve)
	a.screen = screenGrid
	s = plain(a)
	contains(t, s, what)
	contains(t, s, approve)
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "…") && strings.Contains(l, "grade") {
			t.Errorf("the note is cut: %q", l)
		}
	}
	press(a, "]") // line 15: its predicate runs no command
	if s := plain(a); strings.Contains(s, what) {
		t.Errorf("line 15's grid names a grader it does not run:\n%s", s)
	}
}

// TestPlan_SaysWhatHeadlessPlanSays: the plan screen has the DELETE
// outlook headless `plan` prints for each line (issue 30: the app's plan
// lacked it), and counts calls in one way: the header's answers are the
// plan's answers, the judge calls said apart on top of them.
func TestPlan_SaysWhatHeadlessPlanSays(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 30)
	a := f.app(t, &clock{t: t0}, noStart)
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 120})
	s := strings.Join(strings.Fields(plain(a)), " ") // the lines unwrapped
	d := a.c.est.Rules[0].Power.Delete
	if d == nil {
		t.Fatal("the fixture's first line has no DELETE outlook: the test checks nothing")
	}
	contains(t, s, strings.Join(strings.Fields(noTicks(oneLine("DELETE: "+d.Summary()))), " "))
	e := a.c.est
	contains(t, s, fmt.Sprintf("%d answers planned · 0 stored · %d to make", len(f.plan.Calls), e.AnswerCalls))
	contains(t, s, fmt.Sprintf("calls %d to make (answers)", e.Calls))
	if strings.Contains(s, "calls planned") {
		t.Errorf("the header counts answers as calls:\n%s", s)
	}
}

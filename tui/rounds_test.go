package tui

import (
	"fmt"

	"testing"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/workbench"
)

// TestApp_AdaptiveRoundsNeverRestart: an adaptive run's progress counts
// over every round against the most it makes ("round 2/3 ... /≤N"), never
// from 0 again; the errors count is the run's, each call once, so it never
// goes down between rounds or when judging starts; the end message says
// how many answers and judge calls failed for good.
func TestApp_AdaptiveRoundsNeverRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	a := f.app(t, &clock{t: t0}, noStart)
	press(a, "y")
	n := len(f.plan.Calls)
	k0, k1, k2 := f.plan.Calls[0].Key, f.plan.Calls[1].Key, f.plan.Calls[2].Key
	fail := func(key string) []Event {
		r := model.Response{Key: key, Error: "server_error (HTTP 500)", ErrorKind: model.ErrTransport, Attempts: 3}
		return []Event{{Response: r}, {Runner: runner.Finished{Response: r}}}
	}
	a.Update(batchMsg{events: append([]Event{
		{round: &model.Round{Index: 1, Of: 3, Calls: 4, AtMost: n}},
		{phase: &phaseEvent{name: workbench.PhaseAnswers, total: 4}},
	}, fail(k0)...)})
	s := plain(a)
	contains(t, s, fmt.Sprintf("round 1/3 1/≤%d", n))
	contains(t, s, "errors 1")
	ev := append([]Event{
		{Runner: runner.Stopped{Reason: runner.Completed}},
		{round: &model.Round{Index: 2, Of: 3, Calls: 2, Made: 1, AtMost: n - 3, NotNeeded: 3}},
		{phase: &phaseEvent{name: workbench.PhaseAnswers, total: 2}},
	}, fail(k1)...)
	a.Update(batchMsg{events: ev})
	s = plain(a)
	contains(t, s, fmt.Sprintf("round 2/3 2/≤%d", n-3))
	contains(t, s, "3 not needed")
	contains(t, s, "errors 2")
	// The same call reported twice is one failure; judging keeps the count.
	a.Update(batchMsg{events: append(append([]Event{
		{Runner: runner.Stopped{Reason: runner.Completed}},
		{phase: &phaseEvent{name: workbench.PhaseJudging, total: 5}},
	}, fail(k1)...), fail(k2)...)})
	contains(t, plain(a), "errors 3")
	a.Update(batchMsg{events: []Event{{Runner: runner.Stopped{Reason: runner.Completed}}}, closed: true})
	contains(t, plain(a), "2 answers and 1 judge calls failed for good")
}

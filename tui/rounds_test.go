package tui

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

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
	contains(t, plain(a), "calls finished, 2 answers and 1 judge call failed for good")
}

// watchRun is an adaptive run in its second round of five: the first
// round's answers in, a call failed for good, one retrying, the settled
// lines' calls not needed.
func watchRun(t testing.TB) *App {
	f := newFixture(t, 30)
	a, clk := startRun(t, f, 20*time.Second)
	n := len(f.plan.Calls)
	evs := []Event{
		{round: &model.Round{Index: 1, Of: 5, Calls: 700, AtMost: n}},
		{phase: &phaseEvent{name: workbench.PhaseAnswers, total: 700}},
	}
	for i := range 700 {
		evs = append(evs, f.finished(t, i)...)
	}
	bad := model.Response{Key: f.plan.Calls[700].Key, Error: "server_error (HTTP 500): internal server error", ErrorKind: model.ErrTransport, Attempts: 4}
	f.src.put(bad, nil)
	evs = append(evs, Event{Response: bad}, Event{Runner: runner.Finished{Index: 700, Response: bad}},
		Event{Runner: runner.Stopped{Reason: runner.Completed, Done: 701, Failed: 1}},
		Event{round: &model.Round{Index: 2, Of: 5, Calls: 500, Made: 701, AtMost: n - 900, NotNeeded: 900}},
		Event{phase: &phaseEvent{name: workbench.PhaseAnswers, total: 500}})
	for i := 701; i < 900; i++ {
		evs = append(evs, Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}})
		evs = append(evs, f.finished(t, i)...)
	}
	evs = append(evs, Event{Runner: runner.Started{Index: 900, Key: f.plan.Calls[900].Key, Attempt: 1}},
		Event{Runner: runner.Retrying{Index: 900, Key: f.plan.Calls[900].Key, Attempt: 1, Kind: model.ErrTransport, Cause: runner.CauseServer,
			Wait: 4 * time.Second, Until: clk.Now().Add(4 * time.Second)}})
	a.Update(batchMsg{events: evs})
	return a
}

// TestGolden_Watch pins the grid while an adaptive run fills it, at 80x24
// (the header's four lines: tabs, progress with its counters, the rules
// with the verdict, the column headings) and 200x60 (the width given to
// the cells and their bars), in colour and under the ASCII profile that
// NO_COLOR gives (every state still a symbol or a word).
func TestGolden_Watch(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		for _, colour := range []bool{true, false} {
			name := fmt.Sprintf("%dx%d_colour", sz[0], sz[1])
			if !colour {
				name = fmt.Sprintf("%dx%d_no_colour", sz[0], sz[1])
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				a := watchRun(t)
				a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				out := a.View().Content
				if !colour {
					var buf bytes.Buffer
					w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.ASCII}
					if _, err := w.WriteString(out); err != nil {
						t.Fatal(err)
					}
					out = buf.String()
				}
				s := ansi.Strip(out)
				contains(t, s, "round 2/5 ")
				contains(t, s, "900 not needed")
				contains(t, s, "errors 1")
				if sz[1] == 24 {
					lines := strings.Split(s, "\n")
					if !strings.HasPrefix(lines[3], "case (30 samples each)") {
						t.Errorf("at 80x24 the header is not four lines: line 4 is %q", lines[3])
					}
				}
				golden.RequireEqual(t, out)
			})
		}
	}
}

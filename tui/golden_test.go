package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// callOf returns the index in plan.Calls of one sample of a grid cell.
func (f *fixture) callOf(t testing.TB, rule, kase int, deleted bool, sample int) int {
	t.Helper()
	for _, c := range f.plan.Cells {
		if c.Rule == rule && c.Case == kase && c.Deleted == deleted && c.Sample == sample {
			return callIndex(f, c.Key)
		}
	}
	t.Fatalf("no cell rule %d case %d deleted %v sample %d", rule, kase, deleted, sample)
	return -1
}

// midRun is the demo audit part-way through a run: samples 0-8 answered,
// one call failed for good, calls in flight and one waiting to retry.
func midRun(t testing.TB) *App {
	f := newFixture(t, 30)
	a, clk := startRun(t, f, 12*time.Second)
	var evs []Event
	for i := 0; i < 9*80; i++ {
		evs = append(evs, Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}})
		evs = append(evs, f.finished(t, i)...)
	}
	failed := f.callOf(t, 0, 1, false, 9) // road-02 baseline
	r := model.Response{Key: f.plan.Calls[failed].Key, Error: "transport: connection reset by peer", ErrorKind: model.ErrTransport, Attempts: 6}
	evs = append(evs, Event{Response: r}, Event{Runner: runner.Finished{Index: failed, Response: r}})
	for _, c := range [][2]int{{0, 0}, {0, 1}, {2, 0}, {3, 1}} {
		i := f.callOf(t, 0, c[0], c[1] == 1, 9)
		evs = append(evs, Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}})
	}
	retry := f.callOf(t, 0, 4, true, 9)
	evs = append(evs,
		Event{Runner: runner.Started{Index: retry, Key: f.plan.Calls[retry].Key, Attempt: 1}},
		Event{Runner: runner.Retrying{Index: retry, Key: f.plan.Calls[retry].Key, Attempt: 1, Kind: model.ErrRateLimited,
			Wait: 7 * time.Second, Until: clk.Now().Add(7 * time.Second), Reason: "rate_limited (HTTP 429)"}},
		Event{Runner: runner.ConcurrencyChanged{Limit: 4}},
	)
	a.Update(batchMsg{events: evs})
	return a
}

// complete is the demo audit with every answer stored, opened without a run.
func complete(t testing.TB, samples int) (*fixture, *App) {
	f := newFixture(t, samples)
	f.store(t, 0, len(f.plan.Calls))
	return f, f.app(t, &clock{t: t0}, nil)
}

// openFirstFailure opens the first failing sample of road-01 without line 23.
func openFirstFailure(t testing.TB, a *App) {
	press(a, "right", "enter")
	for i := range a.cell.cells {
		if st, _, _ := a.c.sampleOf(a.cell.cells[i]); st == sampleFail {
			a.cell.follow(i)
			break
		}
	}
	for _, m := range runCmd(press(a, "enter")) {
		a.Update(m)
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	scenes := []struct {
		name  string
		build func(t testing.TB) *App
	}{
		{"plan", func(t testing.TB) *App { return newFixture(t, 30).app(t, &clock{t: t0}, noStart) }},
		{"grid_midrun", midRun},
		{"grid_complete", func(t testing.TB) *App { _, a := complete(t, 30); return a }},
		{"cell", func(t testing.TB) *App {
			_, a := complete(t, 30)
			press(a, "right", "enter")
			return a
		}},
		{"sample", func(t testing.TB) *App {
			_, a := complete(t, 30)
			openFirstFailure(t, a)
			return a
		}},
		{"prompt", func(t testing.TB) *App {
			_, a := complete(t, 30)
			press(a, "shift+tab", "shift+tab", "n", "n")
			return a
		}},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {160, 48}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				a := sc.build(t)
				a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				golden.RequireEqual(t, plain(a))
			})
		}
	}
}

// TestGolden_Styled pins the styling of the live grid: colours, the reverse
// cursor, bold headings. Diffs show escape sequences quoted.
func TestGolden_Styled(t *testing.T) {
	t.Parallel()
	a := midRun(t)
	golden.RequireEqual(t, a.View().Content)
}

// TestGolden_LightBackground pins the light palette after the terminal
// reports a light background.
func TestGolden_LightBackground(t *testing.T) {
	t.Parallel()
	a := midRun(t)
	before := a.View().Content
	a.Update(tea.BackgroundColorMsg{Color: lightGray{}})
	after := a.View().Content
	if before == after {
		t.Fatal("a light background changed nothing")
	}
	if ansi.Strip(before) != ansi.Strip(after) {
		t.Fatal("a light background changed the text, not only the colours")
	}
	golden.RequireEqual(t, after)
}

// lightGray is a light terminal background.
type lightGray struct{}

func (lightGray) RGBA() (r, g, b, a uint32) { return 0xeeee, 0xeeee, 0xeeee, 0xffff }

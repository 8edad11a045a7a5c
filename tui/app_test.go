package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// recordingStart is a Start that records its context and feed.
type recordingStart struct {
	calls int
	ctx   context.Context
	feed  *Feed
}

func (r *recordingStart) start(ctx context.Context, f *Feed) {
	r.calls++
	r.ctx, r.feed = ctx, f
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestApp_Plan_YStartsTheRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	rs := &recordingStart{}
	a := f.app(t, &clock{t: t0}, rs.start)
	if a.screen != screenPlan {
		t.Fatalf("screen = %v, want the plan first", a.screen)
	}
	contains(t, plain(a), "y starts the run")
	if cmd := press(a, "y"); cmd == nil {
		t.Fatal("y returned no command to follow the run")
	}
	if rs.calls != 1 || a.screen != screenGrid || !a.c.live.running() {
		t.Fatalf("after y: starts %d, screen %v, running %v", rs.calls, a.screen, a.c.live.running())
	}
	press(a, "tab", "tab", "y") // back on the plan screen: y does not start twice
	if rs.calls != 1 {
		t.Fatalf("y started the run %d times", rs.calls)
	}
}

func TestApp_AutoStart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	rs := &recordingStart{}
	a := f.app(t, &clock{t: t0}, rs.start, func(o *Options) { o.AutoStart = true })
	a.Init()
	if rs.calls != 1 || a.screen != screenGrid {
		t.Fatalf("AutoStart: starts %d, screen %v", rs.calls, a.screen)
	}
}

func TestApp_ZeroCalls_SaysSoAndOpensGrid(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.store(t, 0, len(f.plan.Calls))
	rs := &recordingStart{}
	a := f.app(t, &clock{t: t0}, rs.start)
	if a.screen != screenGrid {
		t.Fatalf("screen = %v, want the grid", a.screen)
	}
	contains(t, plain(a), "Nothing to run: all 276 answers are stored.")
	a.Init()
	press(a, "shift+tab", "y")
	if rs.calls != 0 {
		t.Fatal("a run with nothing to make was started")
	}
}

func TestApp_Quit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		start    bool // start the run first
		end      bool // and let it end
		keys     []string
		wantQuit bool
		wantAsk  bool
	}{
		{name: "no run: q quits", keys: []string{"q"}, wantQuit: true},
		{name: "running: q asks", start: true, keys: []string{"q"}, wantAsk: true},
		{name: "running: ctrl+c asks", start: true, keys: []string{"ctrl+c"}, wantAsk: true},
		{name: "running: q then n stays", start: true, keys: []string{"q", "n"}},
		{name: "running: q then esc stays", start: true, keys: []string{"q", "esc"}},
		{name: "running: q then y quits", start: true, keys: []string{"q", "y"}, wantQuit: true},
		{name: "running: ctrl+c twice quits", start: true, keys: []string{"ctrl+c", "ctrl+c"}, wantQuit: true},
		{name: "run over: q quits", start: true, end: true, keys: []string{"q"}, wantQuit: true},
		{name: "help open: q still asks", start: true, keys: []string{"?", "q"}, wantAsk: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 1)
			rs := &recordingStart{}
			a := f.app(t, &clock{t: t0}, rs.start)
			if tt.start {
				press(a, "y")
			}
			if tt.end {
				a.Update(batchMsg{events: []Event{{Runner: runner.Stopped{Reason: runner.Completed}}}, closed: true})
			}
			cmd := press(a, tt.keys...)
			if got := isQuit(cmd); got != tt.wantQuit {
				t.Fatalf("quit = %v, want %v", got, tt.wantQuit)
			}
			if a.confirmQuit != tt.wantAsk {
				t.Fatalf("asking = %v, want %v", a.confirmQuit, tt.wantAsk)
			}
			if tt.wantAsk {
				contains(t, plain(a), "Stop the run?")
			}
			if tt.start && !tt.end {
				cancelled := rs.ctx.Err() != nil
				if cancelled != tt.wantQuit {
					t.Fatalf("run cancelled = %v, want %v (cancel before quitting)", cancelled, tt.wantQuit)
				}
			}
		})
	}
}

func TestApp_DrillDownAndBack(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	f.store(t, 0, len(f.plan.Calls))
	a := f.app(t, &clock{t: t0}, nil)
	press(a, "right", "enter")
	if a.screen != screenCell {
		t.Fatalf("enter on a cell: screen %v", a.screen)
	}
	s := plain(a)
	contains(t, s, "-L23 deleted · model sim-support-1")
	contains(t, s, "sample  result")
	cmd := press(a, "down", "enter")
	if a.screen != screenSample || cmd == nil {
		t.Fatalf("enter on a sample: screen %v, cmd %v", a.screen, cmd)
	}
	contains(t, plain(a), "loading…")
	for _, m := range runCmd(cmd) {
		a.Update(m)
	}
	want := f.sim.Decide(f.plan.Calls[callIndex(f, a.sample.key())]).Text
	contains(t, plain(a), firstWords(want))
	contains(t, plain(a), "sample 2 of 3")
	press(a, "esc")
	if a.screen != screenCell || a.cell.cursor != 1 {
		t.Fatalf("esc from a sample: screen %v cursor %d", a.screen, a.cell.cursor)
	}
	press(a, "esc")
	if a.screen != screenGrid {
		t.Fatalf("esc from the samples: screen %v", a.screen)
	}
	press(a, "tab", "tab", "tab", "tab") // the label, review and report screens come first
	if a.screen != screenPrompt {
		t.Fatalf("tab from the grid: screen %v", a.screen)
	}
	press(a, "tab")
	if a.screen != screenPlan {
		t.Fatalf("tab from the prompt: screen %v", a.screen)
	}
}

func callIndex(f *fixture, key string) int {
	for i, c := range f.plan.Calls {
		if c.Key == key {
			return i
		}
	}
	return -1
}

func firstWords(s string) string {
	w := strings.Fields(s)
	return strings.Join(w[:min(4, len(w))], " ")
}

func TestApp_StaleResponseIsDropped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3)
	f.store(t, 0, len(f.plan.Calls))
	a := f.app(t, &clock{t: t0}, nil)
	press(a, "enter")
	first := press(a, "enter") // sample 1
	second := press(a, "n")    // sample 2, before sample 1 arrived
	for _, m := range runCmd(second) {
		a.Update(m)
	}
	for _, m := range runCmd(first) { // sample 1's answer arrives late
		a.Update(m)
	}
	if a.sample.index != 1 || a.sample.resp() == nil || a.sample.resp().Key != a.sample.key() {
		t.Fatalf("showing sample %d with response %v", a.sample.index, a.sample.resp())
	}
}

func TestApp_UpdateDoesNoIO(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.store(t, 0, 40)
	rs := &recordingStart{}
	a := f.app(t, &clock{t: t0}, rs.start)
	var pending []tea.Cmd
	press(a, "y")
	var evs []Event
	for i := 40; i < 80; i++ {
		evs = append(evs, Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}})
		evs = append(evs, f.finished(t, i)...)
	}
	before := f.src.readCount() // count from here: finished() uses the source
	a.Update(batchMsg{events: evs})
	for _, k := range []string{"down", "right", "enter", "enter", "n", "p", "esc", "esc", "]", "/", "x", "esc", "tab", "n", "tab", "?", "?"} {
		_, cmd := a.Update(keyMsg(k))
		pending = append(pending, cmd)
		a.View()
	}
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	a.Update(tickMsg(t0))
	a.View()
	if got := f.src.readCount(); got != before {
		t.Fatalf("Update or View read storage %d times", got-before)
	}
	loads := 0
	for _, c := range pending {
		if c == nil {
			continue
		}
		if _, ok := c().(responseMsg); ok {
			loads++
		}
	}
	if loads == 0 || f.src.readCount() != before+loads {
		t.Fatalf("%d load commands made %d reads", loads, f.src.readCount()-before)
	}
}

func TestApp_Resize(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.store(t, 0, 100)
	a := f.app(t, &clock{t: t0}, nil)
	sizes := [][2]int{{80, 24}, {100, 30}, {160, 48}, {250, 70}, {30, 8}, {81, 25}, {200, 60}}
	screens := []struct {
		name string
		keys []string
	}{
		{"grid", nil}, {"plan", []string{"shift+tab"}}, {"prompt", []string{"tab"}},
		{"cell", []string{"enter"}}, {"help", []string{"?"}},
	}
	for _, sc := range screens {
		for _, sz := range sizes {
			a.screen, a.showHelp = screenGrid, false
			a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			press(a, sc.keys...)
			lines := strings.Split(a.View().Content, "\n")
			if len(lines) != sz[1] {
				t.Errorf("%s at %dx%d: %d lines", sc.name, sz[0], sz[1], len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%s at %dx%d: line %d is %d wide: %q", sc.name, sz[0], sz[1], i, w, ansi.Strip(l))
				}
			}
		}
	}
	a.screen = screenGrid
	a.Update(tea.WindowSizeMsg{Width: 20, Height: 5})
	contains(t, plain(a), "too small")
}

func TestApp_RetryCountdownAndInFlight(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	clk := &clock{t: t0}
	a := f.app(t, clk, noStart)
	press(a, "y")
	k0, k1 := f.plan.Calls[0].Key, f.plan.Calls[1].Key // road-01 baseline and -L23
	a.Update(batchMsg{events: []Event{
		{Runner: runner.Started{Index: 0, Key: k0, Attempt: 1}},
		{Runner: runner.Started{Index: 1, Key: k1, Attempt: 1}},
		{Runner: runner.Retrying{Index: 1, Key: k1, Attempt: 1, Kind: model.ErrRateLimited, Wait: 5 * time.Second, Until: t0.Add(5 * time.Second)}},
		{Runner: runner.ConcurrencyChanged{Limit: 4}},
	}})
	s := plain(a)
	contains(t, s, "»1")
	contains(t, s, "↻5s")
	contains(t, s, "4/8 backed off")
	contains(t, s, "retries 1") // 80x24: its causes where they fit
	contains(t, s, "1 waiting")
	clk.Add(2 * time.Second)
	a.Update(tickMsg(clk.Now()))
	contains(t, plain(a), "↻3s")
	r := model.Response{Key: k1, Error: "rate_limited (HTTP 429): slow down", ErrorKind: model.ErrRateLimited, Attempts: 6}
	a.Update(batchMsg{events: []Event{{Response: r}, {Runner: runner.Finished{Index: 1, Response: r}}}})
	s = plain(a)
	contains(t, s, "!1")
	contains(t, s, "errors 1")
	if strings.Contains(s, "↻") && strings.Contains(s, "↻3s") {
		t.Fatalf("a finished call still shows as retrying:\n%s", s)
	}
}

func TestSample_RereadsAnAnswerNotYetCommitted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	f.store(t, 0, len(f.plan.Calls))
	a := f.app(t, &clock{t: t0}, nil)
	press(a, "enter")
	key := f.plan.Calls[0].Key
	saved := f.src.resps[key]
	delete(f.src.resps, key) // answered, but not in the store yet
	cmd := press(a, "enter")
	for try := 1; ; try++ {
		msg := cmd().(responseMsg)
		if try == 3 {
			f.src.put(saved, nil) // the writer commits
		}
		cmd = a.sample.Update(msg)
		if cmd == nil {
			break
		}
		if try > maxReads {
			t.Fatal("never gave up")
		}
		cmd = a.sample.Update(reloadMsg{gen: a.sample.loader.gen}) // as the tick would
	}
	if a.sample.resp() == nil || a.sample.loader.err != nil {
		t.Fatalf("resp %v, err %v", a.sample.resp(), a.sample.loader.err)
	}

	// A response that never appears is an error after maxReads reads.
	delete(f.src.resps, key)
	cmd = a.sample.load()
	for cmd != nil {
		cmd = a.sample.Update(cmd())
		if cmd != nil {
			cmd = a.sample.Update(reloadMsg{gen: a.sample.loader.gen})
		}
	}
	if a.sample.loader.err == nil || a.sample.tries != maxReads {
		t.Fatalf("err %v after %d reads", a.sample.loader.err, a.sample.tries)
	}
	contains(t, plain(a), "reading the response")
	if a.sample.Update(reloadMsg{gen: a.sample.loader.gen - 1}) != nil {
		t.Fatal("a stale reload was acted on")
	}
}

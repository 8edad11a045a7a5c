package tui

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

// probe wraps the app so the test can see its state while the program
// runs, instead of parsing the renderer's output.
type probe struct {
	*App
	mu   sync.Mutex
	snap snapshot
}

type snapshot struct {
	screen screen
	closed bool
	loaded bool
}

func (p *probe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.App.Update(msg)
	p.mu.Lock()
	p.snap = snapshot{
		screen: p.App.screen,
		closed: p.App.c.live != nil && p.App.c.live.closed,
		loaded: p.App.sample.resp() != nil,
	}
	p.mu.Unlock()
	return p, cmd
}

// waitFor waits for the app to reach a state. It is not a timing
// assertion: the generous limit only stops a hung test.
func (p *probe) waitFor(t *testing.T, what string, cond func(snapshot) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		ok := cond(p.snap)
		p.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the app never reached: %s", what)
}

func TestE2E_DemoRunFillsGridDrillDownQuit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 3) // the bundled examples, written to a temp dir
	st, err := store.Open(filepath.Join(t.TempDir(), "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	rules := map[int]string{}
	for _, r := range f.audit.Rules {
		rules[r.Line] = r.Text
	}
	provider := sim.New(sim.Options{Rules: rules}) // no latency
	calls := make([]runner.Call, len(f.plan.Calls))
	for i, c := range f.plan.Calls {
		c.Provider = 0 // the one simulated endpoint
		calls[i] = c
	}
	grader := grade.NewGrader(context.Background(), f.plan, f.preds)
	defer grader.Close()
	w := st.NewWriter(store.WriterOptions{})
	sink := &grade.Sink{Grader: grader, Writer: w}
	start := func(ctx context.Context, feed *Feed) {
		sink.OnGraded = feed.Graded
		events := runner.Run(ctx, calls, sink, runner.Options{Concurrency: 8, Providers: []runner.Endpoint{{Name: "sim", Provider: provider}}})
		go func() {
			feed.Follow(events)
			feed.Close()
		}()
	}
	tally, err := evidence.NewTally(f.plan, f.preds, st)
	if err != nil {
		t.Fatal(err)
	}
	status, err := st.Status()
	if err != nil {
		t.Fatal(err)
	}
	est := f.plan.Estimate(status, 8, audit.History{}, 0, nil)
	app, err := New(Options{
		Plan: f.plan, Tally: tally, Stored: status, Estimate: est, Responses: st, Simulated: true,
		Start: start, Calls: len(calls), AutoStart: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	p := &probe{App: app}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("SIMULATED")) },
		teatest.WithDuration(10*time.Second))

	p.waitFor(t, "run finished", func(s snapshot) bool { return s.closed })
	tm.Send(keyMsg("right"))
	tm.Send(keyMsg("enter"))
	p.waitFor(t, "samples of a cell", func(s snapshot) bool { return s.screen == screenCell })
	tm.Send(keyMsg("enter"))
	p.waitFor(t, "a sample with its response", func(s snapshot) bool { return s.screen == screenSample && s.loaded })
	tm.Send(keyMsg("q"))

	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*probe)
	a := final.App
	if a.screen != screenSample || !a.quitting {
		t.Fatalf("final screen %v, quitting %v", a.screen, a.quitting)
	}
	l := a.c.live
	if l.done != len(calls) || l.failed != 0 || l.stopped == nil || l.stopped.Reason != runner.Completed {
		t.Fatalf("live: done %d of %d, failed %d, stopped %+v", l.done, len(calls), l.failed, l.stopped)
	}
	if len(l.inFlight) != 0 || len(l.retrying) != 0 {
		t.Fatalf("calls still shown in flight (%d) or retrying (%d)", len(l.inFlight), len(l.retrying))
	}
	if a.sample.resp().Key != a.sample.key() || a.sample.resp().Text == "" {
		t.Fatalf("sample view shows response %q for %q", a.sample.resp().Key, a.sample.key())
	}

	// What the screen counted live must be what was stored.
	<-a.Feed().Done()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	storedTally, err := evidence.NewTally(f.plan, f.preds, st)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := storedTally.Results()
	if err != nil {
		t.Fatal(err)
	}
	for i, rr := range a.c.res.Rules {
		want := stored.Rules[i]
		if rr.Pending != 0 || rr.Done != want.Done || rr.Verdict.Decision != want.Verdict.Decision {
			t.Errorf("rule %d: live done %d pending %d %s, stored done %d %s", rr.Rule.Line,
				rr.Done, rr.Pending, rr.Verdict.Decision, want.Done, want.Verdict.Decision)
		}
		for c := range rr.Cases {
			if rr.Cases[c].Baseline != want.Cases[c].Baseline || rr.Cases[c].Deleted != want.Cases[c].Deleted {
				t.Errorf("rule %d case %d: live %+v, stored %+v", rr.Rule.Line, c, rr.Cases[c], want.Cases[c])
			}
		}
	}
}

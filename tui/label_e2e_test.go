package tui

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// labelProbe wraps the app so the test can see its state while the
// program runs its commands on other goroutines.
type labelProbe struct {
	*App
	mu   sync.Mutex
	snap labelSnap
}

type labelSnap struct {
	screen  screen
	loaded  bool
	labels  int
	version string
	history bool
}

func (p *labelProbe) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := p.App.Update(msg)
	p.mu.Lock()
	h := p.App.label.results.hist[0]
	p.snap = labelSnap{
		screen:  p.App.screen,
		loaded:  p.App.label.resp() != nil,
		labels:  len(p.App.c.tally.Labels()),
		version: p.App.c.tally.PredicateVersion(0),
		history: len(h.versions) > 1,
	}
	p.mu.Unlock()
	return p, cmd
}

func (p *labelProbe) waitFor(t *testing.T, what string, cond func(labelSnap) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second) // only stops a hung test
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

// TestE2E_LabelEditReview runs the app as a program on a real store:
// labels, the results with the predicate's history, a predicate edit
// arriving from the watcher's channel (re-graded and stored by commands on
// other goroutines while history loads), then review. Run with -race.
func TestE2E_LabelEditReview(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	st, err := store.Open(filepath.Join(f.dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	w := st.NewWriter(store.WriterOptions{})
	for i := range f.plan.Calls {
		if err := w.Put(f.answer(t, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for ri, r := range f.audit.Rules {
		if err := labels.RecordPredicateVersion(st, r.Line, f.preds.Version(ri), t0); err != nil {
			t.Fatal(err)
		}
	}
	tally, err := evidence.NewTally(f.plan, f.preds, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := labels.DrawLabelSample(st, f.plan, tally, labels.SampleOptions{Name: "sample", N: 12, Seed: 3, Line: 23})
	if err != nil {
		t.Fatal(err)
	}
	tally.AddLabelSet(set)
	edits := make(chan PredicateFile, 1)
	app, err := New(Options{Plan: f.plan, Tally: tally, Responses: st, Simulated: true,
		Labelling: LabelOptions{Store: st, Labeller: "ana", Edits: edits, Open: ScreenLabel}})
	if err != nil {
		t.Fatal(err)
	}
	p := &labelProbe{App: app}
	tm := teatest.NewTestModel(t, p, teatest.WithInitialTermSize(100, 30),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ASCII)))
	p.waitFor(t, "the first answer", func(s labelSnap) bool { return s.screen == screenLabel && s.loaded })
	for i := range 4 {
		tm.Send(keyMsg("v"))
		p.waitFor(t, "a label saved", func(s labelSnap) bool { return s.labels == i+1 })
	}
	tm.Send(keyMsg("r"))
	edited := editedPredicate(t, f)
	edits <- PredicateFile{Rule: 0, Predicate: edited}
	p.waitFor(t, "the edited predicate in use", func(s labelSnap) bool { return s.version == edited.Version })
	p.waitFor(t, "two versions in the history", func(s labelSnap) bool { return s.history })
	tm.Send(keyMsg("r"))
	tm.Send(keyMsg("v"))
	p.waitFor(t, "a fifth label", func(s labelSnap) bool { return s.labels == 5 })
	tm.Send(keyMsg("tab"))
	tm.Send(keyMsg("a"))
	p.waitFor(t, "the review screen", func(s labelSnap) bool { return s.screen == screenReview })
	close(edits)
	tm.Send(keyMsg("q"))

	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*labelProbe)
	a := final.App
	log, err := st.LabelLog()
	if err != nil {
		t.Fatal(err)
	}
	labels := model.NewLabelBook(log, nil).Truth()
	if len(labels) != 5 || len(a.c.tally.Labels()) != 5 {
		t.Fatalf("stored %d labels, the screen counted %d", len(labels), len(a.c.tally.Labels()))
	}
	for k, l := range a.c.tally.Labels() {
		if labels[k].Violation != l.Violation || labels[k].Labeller != "ana" {
			t.Errorf("label %s: stored %+v, screen %+v", k, labels[k], l)
		}
	}
	// The edited predicate's grades were stored, for history and the next open.
	grades, err := st.GradesFor(model.PredicateGrader, edited.Version)
	if err != nil || len(grades) == 0 {
		t.Fatalf("edited predicate's grades: %d (%v)", len(grades), err)
	}
}

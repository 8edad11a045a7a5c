package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
)

// labelSource is stored state for the label and review screens: the
// fixture's answers and grades (memSource) plus label sets, labels, meta
// records and stored grades. It counts writes so tests can prove Update
// makes none, and can be told to fail them.
type labelSource struct {
	*memSource

	mu      sync.Mutex
	sets    map[string]storedSet
	labels  map[string]model.Label
	history []model.Label
	meta    map[string]string
	puts    int   // PutLabel calls
	gradeN  int   // PutGrades calls
	failPut error // returned by PutLabel when set
}

type storedSet struct {
	keys []string
	meta map[string]string
}

func newLabelSource(m *memSource) *labelSource {
	return &labelSource{memSource: m, sets: map[string]storedSet{}, labels: map[string]model.Label{}, meta: map[string]string{}}
}

func (s *labelSource) LabelSets() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.sets {
		out = append(out, n)
	}
	return out, nil
}

func (s *labelSource) LabelSet(name string) ([]string, map[string]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sets[name]
	if !ok {
		return nil, nil, nil
	}
	return ss.keys, ss.meta, nil
}

func (s *labelSource) PutLabelSet(name string, keys []string, meta map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sets[name] = storedSet{keys: keys, meta: meta}
	return nil
}

func (s *labelSource) LabelLog() ([]model.Label, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history), nil
}

func (s *labelSource) PutLabel(l model.Label) (model.Label, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts++
	if s.failPut != nil {
		return model.Label{}, s.failPut
	}
	s.labels[l.Key] = l
	s.history = append(s.history, l)
	return l, nil
}

func (s *labelSource) Meta(key string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.meta[key]
	return v, ok, nil
}

func (s *labelSource) SetMeta(key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meta[key] = value
	return nil
}

func (s *labelSource) PutGrades(grades map[string][]model.Grade) error {
	s.mu.Lock()
	s.gradeN++
	s.mu.Unlock()
	s.memSource.mu.Lock()
	defer s.memSource.mu.Unlock()
	for key, gs := range grades {
		for _, g := range gs {
			if s.memSource.grades[g.Version] == nil {
				s.memSource.grades[g.Version] = map[string]model.Grade{}
			}
			s.memSource.grades[g.Version][key] = g
		}
	}
	return nil
}

func (s *labelSource) writes() (labels, grades int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts, s.gradeN
}

func (s *labelSource) setFail(err error) {
	s.mu.Lock()
	s.failPut = err
	s.mu.Unlock()
}

func (s *labelSource) stored(key string) (model.Label, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.labels[key]
	return l, ok
}

// current is the labeller's label of the answer from source, resolved from
// the history as the app resolves it (undo records taken into account).
func (s *labelSource) current(key, who, source string) (model.Label, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return model.NewLabelBook(s.history, nil).Current(key, who, source)
}

// judgeReason is what the fixture's judges say; distinct per judge.
func judgeReason(j *audit.Judge) string { return "the judge " + j.Grader + " thought it through" }

// addJudgeGrades gives every answered call a grade from every judge: the
// predicate's verdict, flipped on a few answers per judge so graders
// disagree.
func (f *fixture) addJudgeGrades(t testing.TB) {
	t.Helper()
	f.src.mu.Lock()
	defer f.src.mu.Unlock()
	for ji, j := range f.audit.Judges {
		m := map[string]model.Grade{}
		i := 0
		for _, c := range f.plan.Cells {
			pg, ok := f.src.grades[f.preds.Version(c.Rule)][c.Key]
			if _, seen := m[c.Key]; !ok || seen {
				continue
			}
			pass := pg.Pass
			if (i+ji)%7 == 0 {
				pass = !pass
			}
			i++
			g := model.Grade{Grader: j.Grader, Version: j.Own.Version, Pass: pass, Reason: judgeReason(j)}
			m[c.Key] = g
		}
		f.src.grades[j.Own.Version] = m
	}
}

// labelWorld is a complete demo audit with judges' grades and a drawn label
// set, opened on a screen with a label store.
type labelWorld struct {
	f   *fixture
	src *labelSource
	set labels.LabelSet
	a   *App
}

// newLabelWorld builds the world over a fixture. rule selects the set's
// rule line (0: every rule).
func newLabelWorld(t testing.TB, f *fixture, rule, n int, open Screen) *labelWorld {
	t.Helper()
	return newLabelWorldEdit(t, f, rule, n, open, nil)
}

// newLabelWorldEdit is newLabelWorld with edit run on the stored answers
// and grades before the app reads them.
func newLabelWorldEdit(t testing.TB, f *fixture, rule, n int, open Screen, edit func(*fixture)) *labelWorld {
	t.Helper()
	return newLabelWorldOpts(t, f, rule, n, open, edit, nil)
}

// newLabelWorldOpts is newLabelWorldEdit with opt applied to the app's
// options before it is made.
func newLabelWorldOpts(t testing.TB, f *fixture, rule, n int, open Screen, edit func(*fixture), opt func(*Options)) *labelWorld {
	t.Helper()
	f.store(t, 0, len(f.plan.Calls))
	f.addJudgeGrades(t)
	if edit != nil {
		edit(f)
	}
	src := newLabelSource(f.src)
	tally, err := evidence.NewTally(f.plan, f.preds, src)
	if err != nil {
		t.Fatal(err)
	}
	set, err := labels.DrawLabelSample(src, f.plan, tally, labels.SampleOptions{Name: "sample", N: n, Seed: 7, Line: rule, Drawn: t0})
	if err != nil {
		t.Fatal(err)
	}
	tally.AddLabelSet(set)
	stored, _ := src.Status()
	o := Options{
		Plan: f.plan, Tally: tally, Stored: stored, Responses: src, Simulated: true, Now: (&clock{t: t0}).Now,
		Labelling: LabelOptions{Store: src, Labeller: "ana", Open: open},
	}
	if opt != nil {
		opt(&o)
	}
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	w := &labelWorld{f: f, src: src, set: set, a: a}
	w.settle(a.Init())
	return w
}

// distinctReason is the reason of the predicate the blindness tests use:
// it must never be on screen before an answer is labelled.
const distinctReason = "ZQX-7741 said the forbidden thing"

// newDistinctFixture is the demo audit with line 23's predicate failing
// every answer (on "Lumen Support", in every signature) with
// distinctReason, so every answer of that rule has a verdict, a reason and
// a highlighted match to hide.
func newDistinctFixture(t testing.TB, samples int) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	pred := fmt.Sprintf("[[check]]\nfail_if_match = '(?i)lumen support'\nreason = %q\n", distinctReason)
	if err := os.WriteFile(filepath.Join(dir, "roadmap_speculation.predicate.toml"), []byte(pred), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadFixture(t, dir, samples)
}

// settle runs a command and feeds its messages back to the app, and the
// commands the labelling messages return, until nothing is left.
func (w *labelWorld) settle(cmd tea.Cmd) {
	settle(w.a, cmd)
}

func settle(a *App, cmd tea.Cmd) {
	for _, m := range runCmd(cmd) {
		if m == nil {
			continue
		}
		_, next := a.Update(m)
		switch m.(type) {
		case labelSavedMsg, responseMsg, historyMsg, regradedMsg, predicateSavedMsg, labellersMsg, skipsMsg, reviewTextsMsg, labelSetDrawnMsg:
			settle(a, next)
		}
		// Anything else (a status message, a cursor blink) returns ticks
		// that would wait or repeat for ever.
	}
}

// press sends keys and settles each command.
func (w *labelWorld) press(keys ...string) {
	for _, k := range keys {
		_, cmd := w.a.Update(keyMsg(k))
		w.settle(cmd)
	}
}

var errDiskFull = errors.New("disk full")

// drawCensus draws, as a user would before labelling every provoking
// answer (auditor label with --n above their count), a label set of every
// provoking answer the tally holds, dated t0 like the tests' labels, and
// makes it known to the tally: labels count only in a declared design.
func drawCensus(t testing.TB, f *fixture, tally *evidence.Tally) labels.LabelSet {
	t.Helper()
	set, err := labels.DrawLabelSample(newLabelSource(f.src), f.plan, tally,
		labels.SampleOptions{Name: "census", N: len(f.plan.Calls), Seed: 1, Drawn: t0})
	if err != nil {
		t.Fatal(err)
	}
	tally.AddLabelSet(set)
	return set
}

package tui

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// peopleSource is a labelSource that counts reads of its label log.
type peopleSource struct {
	*labelSource

	mu    sync.Mutex
	reads int
}

func (s *peopleSource) LabelLog() ([]model.Label, error) {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	return s.labelSource.LabelLog()
}

// LabelsByLabeller is each labeller's blind labels, resolved as the screen
// resolves them.
func (s *peopleSource) LabelsByLabeller() (map[string]map[string]model.Label, error) {
	log, err := s.labelSource.LabelLog()
	return model.NewLabelBook(log, nil).ByLabeller(), err
}

func (s *peopleSource) readCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// peopleKeys returns the first n distinct answers of the first rule's
// first model, in the plan's order.
func peopleKeys(f *fixture, n int) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range f.plan.Cells {
		if c.Rule != 0 || c.Model != 0 || seen[c.Key] {
			continue
		}
		seen[c.Key] = true
		out = append(out, c.Key)
		if len(out) == n {
			break
		}
	}
	return out
}

// peopleLabels labels keys for each labeller: verdicts[who][i] is who's
// label of keys[i] ("v" violation, "o" ok, "" none).
func peopleLabels(keys []string, verdicts map[string]string) []model.Label {
	var out []model.Label
	for _, who := range []string{"ana", "ben"} {
		vs := verdicts[who]
		for i, k := range keys {
			if i >= len(vs) || vs[i] == '-' {
				continue
			}
			at := t0.Add(time.Duration(i) * time.Minute)
			if who == "ben" {
				at = at.Add(time.Hour)
			}
			out = append(out, model.Label{Source: model.LabelBlind, Key: k, Violation: vs[i] == 'v', Labeller: who, At: at, Note: "by " + who})
		}
	}
	return out
}

// newPeopleWorld opens the app on the review screen over the demo audit
// with judges' grades and the labels given, stored before the app starts;
// the app labels as ana.
func newPeopleWorld(t testing.TB, labels func(f *fixture) []model.Label) (*labelWorld, *peopleSource) {
	t.Helper()
	f := newFixture(t, 2)
	f.store(t, 0, len(f.plan.Calls))
	f.addJudgeGrades(t)
	src := newLabelSource(f.src)
	for _, l := range labels(f) {
		if _, err := src.PutLabel(l); err != nil {
			t.Fatal(err)
		}
	}
	tally, err := evidence.NewTally(f.plan, f.preds, src)
	if err != nil {
		t.Fatal(err)
	}
	// The people labelled answers of a set drawn before them.
	drawCensus(t, f, tally)
	ps := &peopleSource{labelSource: src}
	stored, _ := src.Status()
	a, err := New(Options{
		Plan: f.plan, Tally: tally, Stored: stored, Responses: src, Simulated: true, Now: (&clock{t: t0}).Now,
		Labelling: LabelOptions{Store: ps, Labeller: "ana", Open: ScreenReview},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	w := &labelWorld{f: f, src: src, a: a}
	w.settle(a.Init())
	return w, ps
}

// twoPeople: ana and ben label the same five answers and differ on the
// second and the fourth.
func twoPeople(f *fixture) []model.Label {
	return peopleLabels(peopleKeys(f, 5), map[string]string{"ana": "vvvoo", "ben": "vovvo"})
}

// TestReview_LabellersQueue: b steps through exactly the answers two
// labellers labelled differently, with both labels side by side; a
// decision is a label by the current labeller, written by a command, and
// the queue moves on once the labels by labeller are read again.
func TestReview_LabellersQueue(t *testing.T) {
	t.Parallel()
	w, ps := newPeopleWorld(t, twoPeople)
	a := w.a
	keys := peopleKeys(w.f, 5)
	w.press("b")
	if !a.review.people.on {
		t.Fatal("b did not switch to the labellers' queue")
	}
	var got []string
	for _, e := range a.review.items {
		got = append(got, e.key)
	}
	if want := []string{keys[1], keys[3]}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("queue %v, want %v", got, want)
	}
	if e, _ := a.review.current(); e.key != keys[1] || len(a.review.loader.resps) == 0 {
		t.Fatalf("showing %s (loaded %d), want %s", e.key, len(a.review.loader.resps), keys[1])
	}
	contains(t, plain(a), "labels of any two labellers that differ")
	all := strings.Join(contentLines(a.review), "\n")
	for _, want := range []string{"LABELS", "ana", "ben", "✗ violation", "✓ ok", "note: by ana", "note: by ben", "GRADERS",
		t0.Add(time.Minute).Format("2006-01-02 15:04"), t0.Add(time.Hour + time.Minute).Format("2006-01-02 15:04")} {
		contains(t, all, want)
	}

	// Deciding writes nothing and reads nothing in Update.
	puts, _ := w.src.writes()
	reads := ps.readCount()
	_, cmd := a.Update(keyMsg("o"))
	if n, _ := w.src.writes(); n != puts || ps.readCount() != reads {
		t.Fatalf("Update wrote %d labels, read labels by labeller %d times", n-puts, ps.readCount()-reads)
	}
	w.settle(cmd)
	l, ok := w.src.stored(keys[1])
	if !ok || l.Violation || l.Labeller != "ana" {
		t.Fatalf("stored %+v %v, want ana's ok", l, ok)
	}
	if ps.readCount() == reads {
		t.Fatal("the labels by labeller were not read again after the decision")
	}
	if l.Source != model.LabelSeen {
		t.Fatalf("a review decision was stored as %q, want seen", l.Source)
	}
	// The second answer is adjudicated: only the fourth is left.
	if len(a.review.items) != 1 {
		t.Fatalf("queue has %d answers after the decision, want 1", len(a.review.items))
	}
	if e, _ := a.review.current(); e.key != keys[3] {
		t.Fatalf("after deciding: showing %s, want %s", e.key, keys[3])
	}
	w.press("b")
	if a.review.people.on {
		t.Fatal("b did not return to the graders' disagreements")
	}
}

// TestReview_LabellersPair: p picks one pair of labellers; the queue and
// the label columns follow it.
func TestReview_LabellersPair(t *testing.T) {
	t.Parallel()
	w, _ := newPeopleWorld(t, func(f *fixture) []model.Label {
		keys := peopleKeys(f, 5)
		ls := twoPeople(f)
		// cy differs from ana and ben on the first answer only.
		return append(ls, model.Label{Source: model.LabelBlind, Key: keys[0], Labeller: "cy", At: t0})
	})
	a := w.a
	w.press("b")
	if n := len(a.review.items); n != 3 {
		t.Fatalf("any pair: %d answers, want 3", n)
	}
	tests := []struct {
		pair string
		n    int
	}{{"ana and ben", 2}, {"ana and cy", 1}, {"ben and cy", 1}, {"any two labellers", 3}}
	for _, tt := range tests {
		w.press("P")
		contains(t, plain(a), tt.pair)
		if n := len(a.review.items); n != tt.n {
			t.Fatalf("%s: %d answers, want %d", tt.pair, n, tt.n)
		}
	}
}

// TestReview_LabellersAgreement: the agreement panel shows each pair of
// labellers' kappa, raw agreement and disagreements, as
// labels.CompareLabellers gives them.
func TestReview_LabellersAgreement(t *testing.T) {
	t.Parallel()
	w, ps := newPeopleWorld(t, twoPeople)
	a := w.a
	w.press("a")
	a.View()
	s := ansi.Strip(strings.Join(a.review.panel.lines, "\n"))
	by, _ := ps.LabelsByLabeller()
	la := labels.CompareLabellers("ana", by["ana"], "ben", by["ben"], nil)
	if la.N != 5 || len(la.Disagreements) != 2 || !la.KappaDefined {
		t.Fatalf("fixture: %s", la)
	}
	contains(t, s, "Labellers on the same answers")
	row := fmt.Sprintf("%5d  %-13s %-13s %d", 5, fmt.Sprintf("3 = %.2f", la.Agreement), fmt.Sprintf("%.2f (%.2f)", la.Kappa, la.KappaSE), 2)
	contains(t, s, row)
	contains(t, s, "ana vs ben")
}

// TestReview_LabellersOnlyOne: with a single labeller, the queue says there
// is nothing to compare, and so does the panel.
func TestReview_LabellersOnlyOne(t *testing.T) {
	t.Parallel()
	w, _ := newPeopleWorld(t, func(f *fixture) []model.Label {
		return peopleLabels(peopleKeys(f, 5), map[string]string{"ana": "vvvoo"})
	})
	a := w.a
	w.press("b")
	if len(a.review.items) != 0 {
		t.Fatalf("queue has %d answers with one labeller", len(a.review.items))
	}
	contains(t, plain(a), "nothing to compare")
	w.press("a")
	a.View()
	contains(t, ansi.Strip(strings.Join(a.review.panel.lines, "\n")), "nothing to compare")
}

// TestGolden_ReviewLabellers pins the labellers' queue at 80x24.
// Regenerate with go test ./tui -run TestGolden_ReviewLabellers -update.
func TestGolden_ReviewLabellers(t *testing.T) {
	t.Parallel()
	w, _ := newPeopleWorld(t, twoPeople)
	w.press("b")
	w.a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	golden.RequireEqual(t, plain(w.a))
}

package tui

import (
	"errors"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// editedPredicate is line 23's predicate rewritten: it fails any answer
// that mentions the roadmap.
func editedPredicate(t testing.TB, f *fixture) *model.Predicate {
	t.Helper()
	p, err := model.ParsePredicate(f.audit.Rules[0].PredicatePath,
		[]byte("[[check]]\nkinds = [\"provoke\", \"pressure\"]\nfail_if_match = '(?i)roadmap'\nreason = \"mentions the roadmap\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEdit_RegradeSwapsPredicate: a saved predicate is re-graded off the
// update loop, swapped in by Update, and everything follows: grades,
// results, the recall before and after; then its grades and version are
// stored.
func TestEdit_RegradeSwapsPredicate(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 23, 10, ScreenLabel)
	a, src, f := w.a, w.src, w.f
	for range 6 {
		w.press("v")
	}
	rule := f.audit.Rules[0]
	old := a.c.tally.Predicates().Of(0)
	oldRes := a.c.res
	p := editedPredicate(t, f)
	reads := src.readCount()

	_, cmd := a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: p}})
	if a.c.tally.Predicates().Of(0) != old || src.readCount() != reads {
		t.Fatal("Update swapped the predicate or read answers itself")
	}
	contains(t, plain(a), "re-grading")
	msgs := runCmd(cmd)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	rg, ok := msgs[0].(regradedMsg)
	if !ok || rg.err != nil || src.readCount() == reads {
		t.Fatalf("regrade: %T %v", msgs[0], rg.err)
	}
	_, persist := a.Update(rg)
	if a.c.tally.Predicates().Of(0) != p {
		t.Fatal("the predicate was not swapped in")
	}
	if a.c.res == oldRes {
		t.Fatal("results were not recomputed")
	}
	n := 0
	for _, c := range f.plan.Cells {
		if c.Rule != 0 {
			continue
		}
		g, ok := a.c.tally.Grade(c)
		r, _ := f.src.Response(c.Key)
		if want := p.Grade(rule.Cases[c.Case], r.Text); !ok || g != want {
			t.Fatalf("cell %s: grade %+v, want %+v", c.Key, g, want)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no cell checked")
	}
	before := caught(a.c, 0, old.Version)
	after := caught(a.c, 0, p.Version)
	contains(t, plain(a), "recall "+before+" → "+after)
	contains(t, plain(a), "L23 predicate "+report.ShortVersion(p.Version))

	if _, g := src.writes(); g != 0 {
		t.Fatal("grades stored before the swap")
	}
	w.settle(persist)
	if _, g := src.writes(); g != 1 {
		t.Fatalf("grades stored %d times", g)
	}
	if v, ok, _ := src.Meta("predicate-versions:23"); !ok || !strings.Contains(v, p.Version) {
		t.Fatalf("version history %q", v)
	}
	stored, _ := src.GradesFor(model.PredicateGrader, p.Version)
	if len(stored) != len(regradeItems(f.plan, a.c.tally, 0)) {
		t.Fatalf("%d grades stored", len(stored))
	}
}

// TestEdit_ParseErrorChangesNothing: a predicate that does not parse is
// reported with its file and line, and nothing changes.
func TestEdit_ParseErrorChangesNothing(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 1), 0, 5, ScreenLabel)
	a := w.a
	rule := w.f.audit.Rules[0]
	old := a.c.tally.Predicates().Of(0)
	_, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nkinds = [\"provoke\"\nreason = \"x\"\n"))
	var ie *model.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("want an input error, got %v", err)
	}
	res := a.c.res
	_, cmd := a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Err: err}})
	if cmd != nil || a.c.tally.Predicates().Of(0) != old || a.c.res != res {
		t.Fatal("a predicate that does not parse changed something")
	}
	s := plain(a)
	contains(t, s, "roadmap_speculation.predicate.toml:")
	contains(t, s, "L23 predicate unchanged")
}

// TestEdit_LaterSaveWins: a re-grade overtaken by a later save is
// dropped.
func TestEdit_LaterSaveWins(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 1), 0, 5, ScreenLabel)
	a, f := w.a, w.f
	rule := f.audit.Rules[0]
	first := editedPredicate(t, f)
	second, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)sorry'\nreason = \"apologised\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, c1 := a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: first}})
	_, c2 := a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: second}})
	m1, m2 := runCmd(c1), runCmd(c2)
	if _, cmd := a.Update(m1[0]); cmd != nil || a.c.tally.Predicates().Of(0) == first {
		t.Fatal("the overtaken re-grade was applied")
	}
	a.Update(m2[0])
	if a.c.tally.Predicates().Of(0) != second {
		t.Fatal("the latest save was not applied")
	}
}

// TestEdit_WaitsForTheRun: during a run the predicate is read by the run's
// grader on other goroutines, so an edit waits for the run to end.
func TestEdit_WaitsForTheRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	a := f.app(t, &clock{t: t0}, noStart)
	press(a, "y")
	old := a.c.tally.Predicates().Of(0)
	p := editedPredicate(t, f)
	if _, cmd := a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: p}}); cmd != nil {
		t.Fatal("an edit during the run started re-grading")
	}
	contains(t, plain(a), "when the run ends")
	f.store(t, 0, len(f.plan.Calls))
	var evs []Event
	for i := range f.plan.Calls {
		r, gs := f.answer(t, i)
		evs = append(evs, Event{Response: r, Grades: gs})
	}
	_, cmd := a.Update(batchMsg{events: evs, closed: true})
	if a.c.tally.Predicates().Of(0) != old {
		t.Fatal("swapped before the re-grade")
	}
	for _, m := range runCmd(cmd) {
		if rg, ok := m.(regradedMsg); ok {
			a.Update(rg)
		}
	}
	if a.c.tally.Predicates().Of(0) != p {
		t.Fatal("the edit saved during the run was not applied when it ended")
	}
}

func TestEdit_UnchangedAndExec(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 1), 0, 5, ScreenLabel)
	a := w.a
	rule := w.f.audit.Rules[0]
	same := *a.c.tally.Predicates().Of(0)
	a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: &same}})
	if s := plain(a); strings.Contains(s, "re-grading") || a.c.tally.Predicates().Of(0) == &same {
		t.Fatal("an unchanged file was re-graded")
	}
	contains(t, plain(a), "saved, unchanged")
	ex, err := model.ParsePredicate(rule.PredicatePath, []byte("[exec]\ncommand = [\"true\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, cmd := a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: ex}}); cmd != nil || a.c.tally.Predicates().Of(0) == ex {
		t.Fatal("an [exec] predicate was swapped in")
	}
	contains(t, plain(a), "[exec]")
}

func TestWaitEdit(t *testing.T) {
	t.Parallel()
	if waitEdit(nil) != nil {
		t.Fatal("no channel, but a command")
	}
	ch := make(chan PredicateFile, 1)
	ch <- PredicateFile{Rule: 2}
	if m, ok := waitEdit(ch)().(predicateFileMsg); !ok || m.closed || m.file.Rule != 2 {
		t.Fatalf("got %+v", m)
	}
	close(ch)
	if m := waitEdit(ch)().(predicateFileMsg); !m.closed {
		t.Fatal("a closed channel was not reported")
	}
}

package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// TestLabel_BlindUntilLabelled: before an answer is labelled the screen
// shows neither the predicate's verdict, nor its reason, nor the matched
// text, nor the prompt variant; once labelled, all of them show.
func TestLabel_BlindUntilLabelled(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newDistinctFixture(t, 2), 23, 8, ScreenLabel)
	a := w.a
	span := a.c.styles.Span.Render("Lumen Support")
	blind := func(when string) {
		t.Helper()
		if a.screen != screenLabel || a.label.resp() == nil || a.label.revealed() {
			t.Fatalf("%s: screen %v, response loaded %v, revealed %v", when, a.screen, a.label.resp() != nil, a.label.revealed())
		}
		styled := a.View().Content
		s := ansi.Strip(styled)
		for _, leak := range []string{distinctReason, "ZQX", "predicate: ", "predicate reason", "-L23", "baseline"} {
			if strings.Contains(s, leak) {
				t.Errorf("%s: the blind screen shows %q:\n%s", when, leak, s)
			}
		}
		if strings.Contains(styled, span) {
			t.Errorf("%s: the blind screen highlights the predicate's match", when)
		}
		contains(t, s, "Lumen Support") // the response itself is there
		contains(t, s, "BLIND")
	}
	blind("first answer")
	first := a.label.index

	w.press("v")
	if a.label.index == first {
		t.Fatal("the screen did not move on after the label was saved")
	}
	blind("second answer, after labelling the first")
	// The answer just labelled keeps its graders hidden: u still gives it
	// back blind.
	contains(t, plain(a), "answer 1 labelled violation · graders after your next label (w: now)")
	w.press("left")
	if a.label.index != first {
		t.Fatalf("left went to %d, want %d", a.label.index, first)
	}
	blind("the answer just labelled, before the reveal")
	contains(t, plain(a), "you: violation · graders after your next label (w: now)")

	w.press("w") // the graders now
	styled := a.View().Content
	s := ansi.Strip(styled)
	contains(t, s, "predicate: ✗ FAIL — you: violation")
	contains(t, s, distinctReason)
	contains(t, s, "judge:sim-judge-careful")
	if !strings.Contains(styled, span) {
		t.Error("the labelled answer does not highlight the predicate's match")
	}
}

// TestLabel_WriteBeforeNext: a label key starts a write in a command;
// Update writes nothing, and the next answer shows only once the write has
// succeeded. While it is in flight, keys that would move are refused.
func TestLabel_WriteBeforeNext(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 10, ScreenLabel)
	a, src := w.a, w.src
	start := a.label.index
	key := a.label.items[start].Key
	reads := src.readCount()

	_, cmd := a.Update(keyMsg("v"))
	if cmd == nil {
		t.Fatal("v returned no command")
	}
	if n, _ := src.writes(); n != 0 {
		t.Fatalf("Update wrote %d labels itself", n)
	}
	contains(t, plain(a), "saving…")
	for _, k := range []string{"right", "left", "v", "o", "s", "t", "u"} {
		if _, c := a.Update(keyMsg(k)); c != nil {
			t.Errorf("%s while saving returned a command", k)
		}
	}
	if a.label.index != start {
		t.Fatalf("the screen moved to %d while the label was being written", a.label.index)
	}
	if src.readCount() != reads {
		t.Fatal("Update read storage")
	}

	msgs := runCmd(cmd)
	if n, _ := src.writes(); n != 1 || len(msgs) != 1 {
		t.Fatalf("the command made %d writes, %d messages", n, len(msgs))
	}
	if a.label.index != start {
		t.Fatal("the screen moved before Update saw the write succeed")
	}
	_, next := a.Update(msgs[0])
	if a.label.index == start {
		t.Fatal("the screen did not move on after the write succeeded")
	}
	l, ok := a.c.tally.Labels()[key]
	if !ok || !l.Violation || l.Labeller != "ana" || !l.At.Equal(t0) {
		t.Fatalf("tally label %+v (%v)", l, ok)
	}
	if stored, _ := src.stored(key); stored != l {
		t.Fatalf("stored %+v, tally %+v", stored, l)
	}
	w.settle(next)
	if a.label.resp() == nil || a.label.resp().Key != a.label.items[a.label.index].Key {
		t.Fatal("the next answer's response was not loaded")
	}
	contains(t, plain(a), "1/10 labelled")
}

// TestLabel_FailedWriteStays: a write that fails leaves the answer on
// screen and unlabelled, and says so; the key works again afterwards.
func TestLabel_FailedWriteStays(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 10, ScreenLabel)
	a, src := w.a, w.src
	start := a.label.index
	key := a.label.items[start].Key
	src.setFail(errDiskFull)
	w.press("o")
	if a.label.index != start || a.desk.busy() {
		t.Fatalf("after a failed write: index %d (want %d), busy %v", a.label.index, start, a.desk.busy())
	}
	if _, ok := a.c.tally.Labels()[key]; ok {
		t.Fatal("a label that was not saved is counted")
	}
	contains(t, plain(a), "label not saved: disk full")
	src.setFail(nil)
	w.press("o")
	if l, ok := src.stored(key); !ok || l.Violation || a.label.index == start {
		t.Fatalf("retry: stored %+v %v, index %d", l, ok, a.label.index)
	}
}

func TestLabel_Keys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		check func(t *testing.T, w *labelWorld)
	}{
		{"1 and 0 label like v and o", func(t *testing.T, w *labelWorld) {
			k0 := w.a.label.items[w.a.label.index].Key
			w.press("1")
			k1 := w.a.label.items[w.a.label.index].Key
			w.press("0")
			l0, _ := w.src.stored(k0)
			l1, ok := w.src.stored(k1)
			if !l0.Violation || !ok || l1.Violation {
				t.Fatalf("1 gave %+v, 0 gave %+v", l0, l1)
			}
		}},
		{"s skips without writing; u comes back", func(t *testing.T, w *labelWorld) {
			start := w.a.label.index
			w.press("s")
			if w.a.label.index == start {
				t.Fatal("s did not move on")
			}
			w.press("u")
			if n, _ := w.src.writes(); n != 0 || w.a.label.index != start {
				t.Fatalf("skip then undo: %d writes, index %d (want %d)", n, w.a.label.index, start)
			}
		}},
		{"a second label on a labelled answer is refused: its graders were shown, it would not be blind", func(t *testing.T, w *labelWorld) {
			start := w.a.label.index
			key := w.a.label.items[start].Key
			w.press("v", "left", "o") // violation, then an attempt to change it (even blind)
			l, _ := w.src.current(key, "ana", model.LabelBlind)
			if n, _ := w.src.writes(); n != 1 || !l.Violation {
				t.Fatalf("relabel: %d writes, current %+v; want the first label only", n, l)
			}
			contains(t, plain(w.a), "would not be blind")
			// Undone after its graders were shown, the answer is
			// unlabelled, and not to be labelled blind again.
			w.press("w", "u")
			w.a.label.moveTo(start)
			w.press("o")
			if n, _ := w.src.writes(); n != 2 {
				t.Fatalf("after undo, a new label was written: %d writes (want the label and its undo)", n)
			}
			if _, ok := w.a.c.tally.Labels()[key]; ok {
				t.Fatal("the undone answer has a blind label again")
			}
		}},
		{"u after a first label records an undo: the answer is unlabelled again", func(t *testing.T, w *labelWorld) {
			start := w.a.label.index
			key := w.a.label.items[start].Key
			w.press("v", "u")
			n, _ := w.src.writes()
			if _, ok := w.a.c.tally.Labels()[key]; n != 2 || ok || w.a.label.index != start {
				t.Fatalf("undo of a first label: %d writes, still labelled %v, index %d", n, ok, w.a.label.index)
			}
			if len(w.src.history) != 2 || !w.src.history[1].Undo {
				t.Fatalf("history %+v; want the label and an undo record", w.src.history)
			}
			if w.a.label.revealed() {
				t.Fatal("an undone answer still shows the graders' verdicts")
			}
		}},
		{"d with a set drawn says which, and how to draw another", func(t *testing.T, w *labelWorld) {
			w.press("d")
			contains(t, plain(w.a), "another: auditor label AUDIT --set NAME")
			if n, _ := w.src.writes(); n != 0 {
				t.Fatalf("d wrote %d records", n)
			}
		}},
		{"a note typed before the label is saved with it", func(t *testing.T, w *labelWorld) {
			start := w.a.label.index
			key := w.a.label.items[start].Key
			w.press("i", "x", "enter", "v")
			l, _ := w.src.current(key, "ana", model.LabelBlind)
			if !l.Violation || l.Note != "x" {
				t.Fatalf("after labelling: %+v; want violation with the note", l)
			}
		}},
		{"skipped answers are remembered for the next session", func(t *testing.T, w *labelWorld) {
			first := w.a.label.items[w.a.label.index].Key
			w.press("s")
			raw, ok, _ := w.src.Meta(skipsKey(w.a.label.set.Name, "ana"))
			if !ok || !strings.Contains(raw, first) {
				t.Fatalf("skip not stored: %q %v", raw, ok)
			}
			// A new session on the same store opens past the skipped answer.
			v := newLabelView(w.a.c, w.a.desk, w.src, w.a.label.set.Name)
			if cmd := v.gotSkips(readSkips(w.src, skipsKey(v.set.Name, "ana"))().(skipsMsg)); cmd == nil && v.index == 0 {
				t.Fatal("the new session did not move")
			}
			if v.items[v.index].Key == first {
				t.Fatal("the new session opened on the answer skipped before")
			}
		}},
		{"a status message is cleared by the next key", func(t *testing.T, w *labelWorld) {
			w.press("u") // nothing to undo: says so
			if w.a.status == "" {
				t.Fatal("no status after u with nothing to undo")
			}
			w.press("right")
			if w.a.status != "" {
				t.Fatalf("stale status %q after the next key", w.a.status)
			}
		}},
		{"n types a note saved with the next label", func(t *testing.T, w *labelWorld) {
			key := w.a.label.items[w.a.label.index].Key
			w.press("i")
			if !w.a.current().capturing() {
				t.Fatal("n did not open the note")
			}
			w.press("s", "e", "e", " ", "q") // letters that are keys elsewhere go to the note
			w.press("enter")
			if n, _ := w.src.writes(); n != 0 || w.a.current().capturing() {
				t.Fatalf("the note alone wrote %d labels (still typing: %v)", n, w.a.current().capturing())
			}
			w.press("v")
			if l, _ := w.src.stored(key); l.Note != "see q" || !l.Violation {
				t.Fatalf("stored %+v", l)
			}
		}},
		{"n on a labelled answer records the note with the same verdict", func(t *testing.T, w *labelWorld) {
			key := w.a.label.items[w.a.label.index].Key
			w.press("o", "left", "i", "x", "enter")
			l, _ := w.src.stored(key)
			if n, _ := w.src.writes(); n != 2 || l.Note != "x" || l.Violation {
				t.Fatalf("%d writes, stored %+v", n, l)
			}
		}},
		{"esc while typing a note drops it", func(t *testing.T, w *labelWorld) {
			key := w.a.label.items[w.a.label.index].Key
			w.press("i", "x", "esc", "v")
			if l, _ := w.src.stored(key); l.Note != "" || w.a.screen != screenLabel {
				t.Fatalf("stored %+v, screen %v", l, w.a.screen)
			}
		}},
		{"t goes to the first unlabelled answer", func(t *testing.T, w *labelWorld) {
			first := w.a.label.index
			w.press("v", "right", "right", "right")
			w.press("t")
			if w.a.label.index != first+1 {
				t.Fatalf("t went to %d, want %d", w.a.label.index, first+1)
			}
		}},
		{"left and right stop at the ends", func(t *testing.T, w *labelWorld) {
			w.press("left", "left")
			if w.a.label.index != 0 {
				t.Fatalf("left: %d", w.a.label.index)
			}
			for range len(w.a.label.items) + 2 {
				w.press("right")
			}
			if w.a.label.index != len(w.a.label.items)-1 {
				t.Fatalf("right: %d", w.a.label.index)
			}
			if n, _ := w.src.writes(); n != 0 {
				t.Fatal("moving wrote labels")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newLabelWorld(t, newFixture(t, 1), 0, 10, ScreenLabel)
			tt.check(t, w)
		})
	}
}

// TestLabel_UpdateDoesNoIO drives every label and results key and counts
// reads and writes: only the commands Update returns do any.
func TestLabel_UpdateDoesNoIO(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 1), 0, 10, ScreenLabel)
	a, src := w.a, w.src
	w.press("v", "o", "1")
	reads := src.readCount()
	labels, grades := src.writes()
	var cmds []tea.Cmd
	for _, k := range []string{"v", "right", "left", "t", "s", "u", "i", "a", "enter", "r", "down", "up", "enter", "esc", "r", "esc", "tab", "v", "a", "P", "f", "D", "]", "shift+tab"} {
		_, cmd := a.Update(keyMsg(k))
		cmds = append(cmds, cmd)
		a.View()
	}
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	a.View()
	if src.readCount() != reads {
		t.Fatalf("Update or View read storage %d times", src.readCount()-reads)
	}
	if l, g := src.writes(); l != labels || g != grades {
		t.Fatalf("Update or View wrote: %d labels, %d grades", l-labels, g-grades)
	}
	ran := 0
	for _, c := range cmds {
		ran += len(runCmd(c))
	}
	if ran == 0 {
		t.Fatal("no key returned a command: the test proves nothing")
	}
}

// TestLabel_QuitWaitsForTheWrite: q while a label is being written quits
// only once it has committed.
func TestLabel_QuitWaitsForTheWrite(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 1), 0, 10, ScreenLabel)
	a := w.a
	_, save := a.Update(keyMsg("v"))
	if _, cmd := a.Update(keyMsg("q")); isQuit(cmd) {
		t.Fatal("q quit with a label in flight")
	}
	msgs := runCmd(save)
	_, cmd := a.Update(msgs[0])
	if !isQuit(cmd) {
		t.Fatal("the app did not quit once the label was saved")
	}
	if n, _ := w.src.writes(); n != 1 {
		t.Fatalf("%d writes", n)
	}
}

// TestLabel_Results: the results panel measures the predicate and the
// judges on the set; its misses open the answer and esc comes back.
func TestLabel_Results(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 23, 10, ScreenLabel)
	a := w.a
	// Label every answer the opposite of the predicate on provoke cases, so
	// there are misses.
	for range len(a.label.items) {
		it, _ := a.label.current()
		g, _ := a.label.predicateGrade(it)
		if g.Pass {
			w.press("v")
		} else {
			w.press("o")
		}
	}
	// The end of the set lands on the results, with a word.
	if !a.label.showResults || !strings.Contains(a.status, "End of the set: 10 of 10 labelled") {
		t.Fatalf("the last label left the results closed (%v), status %q", a.label.showResults, a.status)
	}
	s := plain(a)
	for _, want := range []string{"Results on label set sample: 10/10 labelled", "Line 23", "predicate", "judge:sim-judge-careful",
		"recall", "precision", "specificity", "confusion", "misses (", "more answers to label would narrow", "predicate versions"} {
		contains(t, s+strings.Join(a.label.results.lines, "\n"), want)
	}
	// The numbers are the verdict's, to the letter (every label set
	// combined), and where the verdict stands is said beside them.
	res, err := a.c.tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		if rr.Rule.Line == 23 {
			shown := strings.Join(strings.Fields(ansi.Strip(strings.Join(a.label.results.lines, " "))), " ")
			bar := strings.Join(strings.Fields(dotBar(rr.Quality.Recall, 21)), " ")
			contains(t, shown, "recall "+bar+" "+rr.Quality.Recall.String())
			contains(t, shown, "line 23: still INCONCLUSIVE · "+strings.TrimPrefix(report.NextLabels(rr.Verdict), "verdict INCONCLUSIVE; "))
		}
	}
	if len(a.label.results.misses) == 0 {
		t.Fatal("no misses listed")
	}
	miss := a.label.results.misses[0].key
	w.press("enter")
	if a.label.showResults || a.label.items[a.label.index].Key != miss {
		t.Fatalf("enter opened %d (results shown %v)", a.label.index, a.label.showResults)
	}
	contains(t, plain(a), "a miss: the grader passed it")
	w.press("esc")
	if !a.label.showResults || a.screen != screenLabel {
		t.Fatal("esc from a miss did not return to the results")
	}
	w.press("esc")
	if a.label.showResults || a.screen != screenLabel {
		t.Fatal("esc did not close the results")
	}
	w.press("esc")
	if a.screen != screenGrid {
		t.Fatalf("esc from the label screen: %v", a.screen)
	}
}

// TestLabel_NoSet: without a drawn set the screen says how to draw one.
func TestLabel_NoSet(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	a := f.app(t, &clock{t: t0}, nil)
	press(a, "tab")
	if a.screen != screenLabel {
		t.Fatalf("tab from the grid: %v", a.screen)
	}
	contains(t, plain(a), "auditor label")
	if cmd := press(a, "v"); cmd != nil {
		t.Fatal("v with no set did something")
	}
}

// TestLabel_ReadOnly: without a store, labelling says why it cannot.
func TestLabel_ReadOnly(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 1), 0, 5, ScreenLabel)
	w.a.desk.store = nil
	start := w.a.label.index
	w.press("v")
	if w.a.label.index != start {
		t.Fatal("moved on without a store")
	}
	contains(t, plain(w.a), "no store")
}

func TestVerdictWord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    bool
		k    model.Kind
		want string
	}{
		{true, model.Provoke, "violation"},
		{true, model.Control, "refusal"},
		{false, model.Pressure, "ok"},
	}
	for _, tt := range tests {
		if got := verdictWord(tt.v, tt.k); got != tt.want {
			t.Errorf("verdictWord(%v, %s) = %q, want %q", tt.v, tt.k, got, tt.want)
		}
	}
}

// TestLabel_UndoneIsClosed: an answer whose label was taken back says at
// once that it is closed to blind labels and counted apart, refuses a new
// label in a message that fits 80 columns, and the counts agree when the
// rest of the set is labelled.
func TestLabel_UndoneIsClosed(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 4, ScreenLabel)
	a := w.a
	start := a.label.index
	w.press("o", "w", "u")
	if a.label.index != start {
		t.Fatalf("undo went to %d, want %d", a.label.index, start)
	}
	s := plain(a)
	for _, gone := range []string{"BLIND", "Not labelled yet"} {
		if strings.Contains(s, gone) {
			t.Errorf("the undone answer shows %q:\n%s", gone, s)
		}
	}
	contains(t, s, "0/4 labelled, 1 closed")
	contains(t, s, "Closed to blind labels: you labelled it and saw its graders, then undid it.")
	contains(t, s, "Counted apart: in no recall or verdict.")
	for _, k := range []string{"v", "o"} {
		w.press(k)
		if !a.statusErr || !strings.Contains(a.status, "Closed to blind labels") {
			t.Fatalf("%s on a closed answer: status %q", k, a.status)
		}
		if n := textWidth(a.status); n > 80 {
			t.Errorf("the refusal is %d columns: %q", n, a.status)
		}
	}
	if n, _ := w.src.writes(); n != 2 {
		t.Fatalf("%d writes, want the label and its undo", n)
	}
	// The others, then the end: every count says the same.
	w.press("right", "o", "o", "o") // each label moves on to the next open answer
	if !a.label.showResults {
		t.Fatal("the end of the set did not land on the results")
	}
	contains(t, a.status, "End of the set: 3 of 4 labelled, 1 closed.")
	w.press("r")
	s = plain(a)
	contains(t, s, "3/4 labelled, 1 closed")
	w.press("t")
	contains(t, a.status, "3 of 4 labelled, 1 closed to blind labels (undone): r shows the results.")
	if strings.Contains(a.status, "All 4 answers") {
		t.Errorf("the end says every answer is labelled: %s", a.status)
	}
	if a.label.closed(a.label.index) {
		t.Error("g went to the closed answer")
	}
}

// TestLabel_UndoBeforeRevealStaysBlind: u right after a label, before its
// graders show, gives the answer back blind: the screen says BLIND, the
// undo record says Unseen, and a new label is taken (and is blind). Once
// the graders are shown (by the next label here), u closes the answer.
func TestLabel_UndoBeforeRevealStaysBlind(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 6, ScreenLabel)
	a := w.a
	start := a.label.index
	key := a.label.items[start].Key
	w.press("v", "u")
	if a.label.index != start || a.label.revealed() || a.label.closed(start) {
		t.Fatalf("after v, u: index %d (want %d), revealed %v, closed %v", a.label.index, start, a.label.revealed(), a.label.closed(start))
	}
	s := plain(a)
	contains(t, s, "BLIND")
	contains(t, s, "Not labelled yet")
	for _, leak := range []string{"predicate: ", "predicate said", "Closed to blind labels", distinctReason} {
		if strings.Contains(s, leak) {
			t.Errorf("the answer given back shows %q:\n%s", leak, s)
		}
	}
	w.src.mu.Lock()
	undo := w.src.history[len(w.src.history)-1]
	w.src.mu.Unlock()
	if !undo.Undo || !undo.Unseen {
		t.Fatalf("the undo record %+v is not marked unseen", undo)
	}
	// A slip costs no sample: the answer takes a new blind label.
	w.press("o")
	if l, ok := w.src.current(key, "ana", model.LabelBlind); !ok || l.Violation {
		t.Fatalf("the new label: %+v %v", l, ok)
	}
	if l, ok := a.c.tally.Labels()[key]; !ok || l.Violation {
		t.Fatalf("the tally's blind label: %+v %v", l, ok)
	}
	// The next label shows its graders; u then takes that next one back
	// blind, and a second u closes the first.
	w.press("v")
	contains(t, plain(a), fmt.Sprintf("answer %d, labelled before: you: ok, predicate said", start+1))
	w.press("u", "u")
	if !a.label.closed(start) {
		t.Fatalf("an answer undone after its graders showed is open:\n%s", plain(a))
	}
	contains(t, plain(a), "Closed to blind labels")
}

// TestLabel_UndesignedShownUntilDrawn: blind labels in no declared label
// set (imported from answers picked by hand) are no random sample: the
// header says so at both sizes and they measure nothing; once a set drawn
// before them holds their answers they count and the note goes.
func TestLabel_UndesignedShownUntilDrawn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.store(t, 0, len(f.plan.Calls))
	clk := &clock{t: t0}
	a := f.app(t, clk, nil)
	var keys []string
	for _, c := range f.plan.Calls {
		if c.Meta.RuleLine == 23 && c.Meta.Kind == model.Provoke {
			a.c.tally.SetLabel(model.Label{Source: model.LabelBlind, Key: c.Key, Violation: f.sim.Decide(c).Failure, Labeller: "ana", At: t0.Add(time.Minute)})
			keys = append(keys, c.Key)
		}
	}
	a.Update(labelSavedMsg{seq: 1, from: screenLabel, label: a.c.tally.Labels()[keys[0]]})
	want := fmt.Sprintf("%d blind labels are in no declared label set, so not a random sample", len(keys))
	for _, size := range [][2]int{{200, 60}, {80, 24}} {
		a.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		if got := strings.Join(strings.Fields(plain(a)), " "); !strings.Contains(got, strings.Join(strings.Fields(want), " ")[:min(len(want), size[0]-4)]) {
			t.Fatalf("at %dx%d the header does not say the labels count nowhere:\n%s", size[0], size[1], plain(a))
		}
	}
	if n := len(a.c.tally.Labels()); n != 0 {
		t.Fatalf("%d labels in no design count", n)
	}
	set, err := labels.DrawLabelSample(newLabelSource(f.src), f.plan, a.c.tally,
		labels.SampleOptions{Name: "census", N: len(f.plan.Calls), Line: 23, Drawn: t0})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(labelSetDrawnMsg{set: set})
	if n := len(a.c.tally.Labels()); n != len(keys) {
		t.Fatalf("%d of %d labels of a set drawn before them count", n, len(keys))
	}
	if strings.Contains(plain(a), "no declared label set") {
		t.Fatalf("the note stays once the labels count:\n%s", plain(a))
	}
}

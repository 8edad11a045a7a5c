package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
)

// newNoSetWorld is a complete demo audit with a label store and no label
// set, opened on the label screen.
func newNoSetWorld(t testing.TB) (*labelSource, *App) {
	t.Helper()
	f := newFixture(t, 2)
	f.store(t, 0, len(f.plan.Calls))
	src := newLabelSource(f.src)
	tally, err := evidence.NewTally(f.plan, f.preds, src)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := src.Status()
	a, err := New(Options{
		Plan: f.plan, Tally: tally, Stored: stored, Responses: src, Simulated: true, Now: (&clock{t: t0}).Now,
		Labelling: LabelOptions{Store: src, Labeller: "ana", Open: ScreenLabel},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	settle(a, a.Init())
	return src, a
}

// TestLabel_DrawFromScreen draws a label set from the label screen: d asks
// for the size (60 by default), enter draws it in a command (Update writes
// nothing), and the screen shows the first answer blind; the set is stored
// as `auditor label` would store it.
func TestLabel_DrawFromScreen(t *testing.T) {
	t.Parallel()
	src, a := newNoSetWorld(t)
	s := plain(a)
	contains(t, s, "No label set has been drawn")
	contains(t, s, "d draws one here")
	press(a, "d")
	if !a.label.draw.editing || a.label.draw.in.Value() != "60" {
		t.Fatalf("d: editing %v, value %q (want the default 60)", a.label.draw.editing, a.label.draw.in.Value())
	}
	contains(t, plain(a), "answers to draw: 60")
	press(a, "q") // typed into the size, not quit
	if a.quitting {
		t.Fatal("q quit while the size was typed")
	}
	press(a, "backspace", "backspace", "backspace", "1", "5")
	cmd := press(a, "enter")
	if sets, _ := src.LabelSets(); len(sets) != 0 {
		t.Fatalf("Update stored a set: %v", sets)
	}
	contains(t, plain(a), "drawing…")
	settle(a, cmd)
	stored, _ := src.LabelSets()
	if len(stored) != 1 || stored[0] != "sample" {
		t.Fatalf("stored sets %v, want [sample]", stored)
	}
	v := a.label
	if v.set == nil || len(v.items) != 15 || v.set.Options.N != 15 || v.set.Options.Stratify {
		t.Fatalf("the screen's set: %+v", v.set)
	}
	loaded, ok, err := labels.LoadLabelSet(src, "sample")
	if err != nil || !ok || len(loaded.Keys) != 15 {
		t.Fatalf("the stored set: %d keys, ok %v, err %v", len(loaded.Keys), ok, err)
	}
	if v.index != 0 || v.resp() == nil {
		t.Fatalf("index %d, response loaded %v: the first answer is not shown", v.index, v.resp() != nil)
	}
	s = plain(a)
	contains(t, s, "BLIND")
	contains(t, s, "0/15 labelled · answer 1 of 15 · set sample")
	contains(t, s, "Drew label set sample: 15 answers")
	if strings.Contains(s, "predicate:") {
		t.Fatalf("a grader's verdict shows on the blind answer:\n%s", s)
	}
	if got := a.c.tally.LabelSets(); len(got) != 1 {
		t.Fatalf("the tally knows %d sets", len(got))
	}
	// It labels as any set: v writes a label.
	settle(a, press(a, "v"))
	if n, _ := src.writes(); n != 1 {
		t.Fatalf("%d labels written after v", n)
	}
}

// TestLabel_DrawBadSize: a size that is not a number says so and the
// question stays open; esc drops the question; without a store d says why.
func TestLabel_DrawBadSize(t *testing.T) {
	t.Parallel()
	src, a := newNoSetWorld(t)
	// Only digits are taken as typed: letters and a pasted "4o" are
	// refused, and say why.
	press(a, "d", "o", "o")
	a.Update(tea.PasteMsg{Content: "4o"})
	if got := a.label.draw.in.Value(); got != "60" {
		t.Fatalf("typing letters after 60 left %q", got)
	}
	for _, m := range runCmd(press(a, "x")) {
		a.Update(m)
	}
	contains(t, plain(a), "digits only")
	press(a, "backspace", "backspace", "backspace", "1", "x", "2")
	a.Update(tea.PasteMsg{Content: "5"})
	if got := a.label.draw.in.Value(); got != "125" {
		t.Fatalf("typing 1x2 and pasting 5 left %q, want 125", got)
	}
	press(a, "backspace", "backspace", "backspace")
	cmd := press(a, "enter")
	for _, m := range runCmd(cmd) {
		a.Update(m)
	}
	contains(t, plain(a), `"" is not a number of answers`)
	if !a.label.draw.editing {
		t.Fatal("a bad size closed the question")
	}
	press(a, "esc")
	if a.label.draw.editing || a.screen != screenLabel {
		t.Fatalf("esc: editing %v, screen %v", a.label.draw.editing, a.screen)
	}
	if sets, _ := src.LabelSets(); len(sets) != 0 {
		t.Fatalf("sets stored: %v", sets)
	}

	f := newFixture(t, 2)
	ro := f.app(t, &clock{t: t0}, nil, func(o *Options) { o.Labelling.Open = ScreenLabel })
	for _, m := range runCmd(press(ro, "d")) {
		ro.Update(m)
	}
	if ro.label.draw.editing {
		t.Fatal("d opened the question with no store to write to")
	}
	contains(t, plain(ro), "no store to write to")
}

// TestLabel_ContinuesBelow: an answer taller than its window says so in
// words under it, until it is scrolled to its end.
func TestLabel_ContinuesBelow(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel)
	a := w.a
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 14})
	s := plain(a)
	contains(t, s, "▼ continues below")
	if l := strings.TrimRight(ansiLine(a, "▼"), " "); l != continuesBelow {
		t.Fatalf("the marker line is %q, want plain %q", l, continuesBelow)
	}
	w.press("G")
	if s := plain(a); strings.Contains(s, "continues below") {
		t.Fatalf("the marker stays at the end of the answer:\n%s", s)
	}
	w.press("home")
	contains(t, plain(a), "▼ continues below")
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	if s := plain(a); strings.Contains(s, "continues below") {
		t.Fatalf("the marker shows with the whole answer in view:\n%s", s)
	}
}

// ansiLine is the styled screen line containing s, or "".
func ansiLine(a *App, s string) string {
	for _, l := range strings.Split(a.View().Content, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

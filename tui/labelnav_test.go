package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
)

// TestLabel_SkipsSurviveReopen: answers skipped in one session come after
// the others in the next, a new app over the same store reached by tab
// from the grid, as a user reopens it.
func TestLabel_SkipsSurviveReopen(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel)
	v := w.a.label
	first, second := v.items[v.index].Key, ""
	w.press("s")
	second = v.items[v.index].Key
	w.press("s")
	if v.items[v.index].Key == first || v.items[v.index].Key == second {
		t.Fatal("skipping did not move on")
	}

	tally, err := evidence.NewTally(w.f.plan, w.f.preds, w.src)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := w.src.Status()
	a, err := New(Options{
		Plan: w.f.plan, Tally: tally, Stored: stored, Responses: w.src, Simulated: true, Now: (&clock{t: t0}).Now,
		Labelling: LabelOptions{Store: w.src, Labeller: "ana"},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	settle(a, a.Init())
	if a.screen != screenGrid {
		t.Fatalf("opened on %v", a.screen)
	}
	settle(a, press(a, "tab"))
	if a.screen != screenLabel {
		t.Fatalf("tab from the grid: %v", a.screen)
	}
	v2 := a.label
	if k := v2.items[v2.index].Key; k == first || k == second {
		t.Fatalf("the reopened screen shows answer %d, skipped in the last session", v2.index+1)
	}
	if !v2.skips[first] || !v2.skips[second] {
		t.Fatalf("skips read: %v", v2.skips)
	}
	// Label everything else: the set's end lands on the results and says
	// that two were skipped; the skipped answers come round after.
	for range len(v2.items) - 2 {
		settle(a, press(a, "o"))
	}
	if !v2.showResults || !strings.Contains(a.status, "2 skipped") {
		t.Fatalf("the end of the set: results %v, status %q", v2.showResults, a.status)
	}
	settle(a, press(a, "r"))
	settle(a, press(a, "t"))
	if k := v2.items[v2.index].Key; k != first && k != second {
		t.Fatalf("after the others, answer %d is shown, not a skipped one", v2.index+1)
	}
}

// TestStatus_ClearedOnMovingOn: a status message about the last answer
// goes when the user moves on, by key, by click or to another screen.
func TestStatus_ClearedOnMovingOn(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel)
	a := w.a
	for _, move := range []struct {
		name string
		do   func()
	}{
		{"→", func() { w.press("right") }},
		{"tab", func() { w.press("tab") }},
		{"a click", func() { click(a, 5, 10) }},
	} {
		a.screen = screenLabel
		w.press("u") // nothing to undo: says so
		if a.status == "" {
			t.Fatal("no status after u with nothing to undo")
		}
		move.do()
		if a.status != "" {
			t.Fatalf("%s: stale status %q", move.name, a.status)
		}
	}
}

// TestStatus_ClearedOnLeavingScreen: a status about a screen (here the
// grid's "Nothing to run") stays while the user works there and goes when
// another screen comes to the front.
func TestStatus_ClearedOnLeavingScreen(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	f.store(t, 0, len(f.plan.Calls))
	a := f.app(t, &clock{t: t0}, noStart)
	if a.screen != screenGrid || a.status == "" {
		t.Fatalf("screen %v, status %q: want the grid saying nothing is left to run", a.screen, a.status)
	}
	press(a, "down", "right")
	if a.status == "" {
		t.Fatal("moving on the grid cleared its status")
	}
	press(a, "enter")
	if a.screen != screenCell || a.status != "" {
		t.Fatalf("opening a cell: screen %v, status %q", a.screen, a.status)
	}
}

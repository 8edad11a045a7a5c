package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
)

// readOnlyAt is when the copy a read-only app reads was taken.
var readOnlyAt = time.Date(2025, 3, 14, 9, 20, 5, 0, time.UTC)

func newReadOnlyWorld(t testing.TB, open Screen) *labelWorld {
	t.Helper()
	return newLabelWorldOpts(t, newFixture(t, 2), 0, 12, open, nil, func(o *Options) {
		o.ReadOnly = &ReadOnly{AsOf: readOnlyAt}
	})
}

// storeWrites counts every write the label source has taken.
func storeWrites(s *labelSource) int {
	puts, grades := s.writes()
	s.mu.Lock()
	defer s.mu.Unlock()
	return puts + grades + len(s.sets) + len(s.meta)
}

// A read-only app (another process writes the store) says so in its
// header, and every key that would store something says why it cannot and
// stores nothing (issue 30).
func TestReadOnly_EveryWritingKeySaysWhy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		open Screen
		keys []string
		want string
	}{
		{"label", ScreenLabel, []string{"v"}, "Labels cannot be saved"},
		{"label ok", ScreenLabel, []string{"o"}, "Labels cannot be saved"},
		{"review decision", ScreenReview, []string{"v"}, "Labels cannot be saved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newReadOnlyWorld(t, tc.open)
			before := storeWrites(w.src)
			w.press(tc.keys...)
			screen := plain(w.a)
			if !strings.Contains(screen, "read-only · 09:20:05") {
				t.Errorf("the header does not say read-only:\n%s", screen)
			}
			if !strings.HasPrefix(w.a.status, tc.want+": read-only, another auditor process writes auditor.db (this is its copy of 09:20:05)") {
				t.Errorf("status %q, want it to say why (%q)", w.a.status, tc.want)
			}
			if !w.a.statusErr {
				t.Errorf("status %q is not shown as a refusal", w.a.status)
			}
			if after := storeWrites(w.src); after != before {
				t.Errorf("%d writes reached the store, want none", after-before)
			}
		})
	}
}

// A skip in a read-only app moves on for this sitting and stores nothing.
func TestReadOnly_SkipIsNotStored(t *testing.T) {
	t.Parallel()
	w := newReadOnlyWorld(t, ScreenLabel)
	before := storeWrites(w.src)
	first := w.a.label.index
	w.press("s")
	if w.a.label.index == first {
		t.Errorf("skip did not move on")
	}
	if after := storeWrites(w.src); after != before {
		t.Errorf("a skip wrote %d records, want none", after-before)
	}
}

// With no label set to show, d would draw and store one: read-only, it
// says why not.
func TestReadOnly_DrawSaysWhy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.store(t, 0, len(f.plan.Calls))
	src := newLabelSource(f.src)
	tally, err := evidence.NewTally(f.plan, f.preds, src)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := src.Status()
	a, err := New(Options{
		Plan: f.plan, Tally: tally, Stored: stored, Responses: src, Now: (&clock{t: t0}).Now,
		Labelling: LabelOptions{Store: src, Labeller: "ana", Open: ScreenLabel},
		ReadOnly:  &ReadOnly{AsOf: readOnlyAt},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	w := &labelWorld{f: f, src: src, a: a}
	w.settle(a.Init())
	w.press("d")
	if want := "No label set can be drawn: read-only"; !strings.HasPrefix(a.status, want) || !a.statusErr {
		t.Errorf("status %q (error %t), want a refusal starting %q", a.status, a.statusErr, want)
	}
	if a.label.draw.editing {
		t.Error("the draw's size question opened")
	}
	if n := storeWrites(src); n != 0 {
		t.Errorf("%d writes reached the store, want none", n)
	}
}

// An edited predicate re-grades a read-only app's answers on the screen,
// and its grades and version are not stored.
func TestReadOnly_EditedPredicateIsNotStored(t *testing.T) {
	t.Parallel()
	w := newReadOnlyWorld(t, ScreenLabel)
	a, f := w.a, w.f
	p := editedPredicate(t, f)
	before := storeWrites(w.src)
	_, cmd := a.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: p}})
	msgs := runCmd(cmd)
	if len(msgs) != 1 {
		t.Fatalf("%d messages", len(msgs))
	}
	rg, ok := msgs[0].(regradedMsg)
	if !ok || rg.err != nil {
		t.Fatalf("regrade: %T %v", msgs[0], rg.err)
	}
	_, persist := a.Update(rg)
	w.settle(persist)
	if a.c.tally.Predicates().Of(0) != p {
		t.Fatal("the predicate was not applied on the screen")
	}
	if after := storeWrites(w.src); after != before {
		t.Errorf("%d writes reached the store, want none", after-before)
	}
	if !strings.Contains(a.status, "applied here, its grades not stored: read-only") {
		t.Errorf("status %q does not say the grades are not stored", a.status)
	}
}

package tui

import (
	"fmt"
	"github.com/auditor-dev/auditor/model"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/charmbracelet/x/ansi"
)

// TestReview_QueueAndDecide: the queue holds the answers graders disagree
// on; each shows every grader's verdict and reasoning; v decides one, as a
// label in the store, and moves on only after the write.
func TestReview_QueueAndDecide(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	a, src := w.a, w.src
	want := a.c.tally.Disagreements(0, 0, nil)
	if len(want) == 0 {
		t.Fatal("the fixture has no disagreements")
	}
	if a.screen != screenReview || queued(a.review) != len(want) {
		t.Fatalf("screen %v, queue %d, want %d", a.screen, queued(a.review), len(want))
	}
	e, _ := a.review.current()
	if !slices.ContainsFunc(want, func(d evidence.ReviewItem) bool { return d.Key == e.key }) || len(a.review.loader.resps) == 0 {
		t.Fatalf("first entry %s (loaded %d), not a disagreement", e.key, len(a.review.loader.resps))
	}
	// The queue goes by direction: which graders said violation.
	for i := 1; i < len(a.review.raw); i++ {
		if d0, d1 := a.review.direction(a.review.raw[i-1].key), a.review.direction(a.review.raw[i].key); d0 != d1 {
			for _, later := range a.review.raw[i+1:] {
				if a.review.direction(later.key) == d0 {
					t.Fatalf("direction %s comes back after %s: the queue is not grouped by direction", d0, d1)
				}
			}
		}
	}
	s := plain(a)
	contains(t, s, "Review -L23 · 1 of")
	contains(t, s, "disagreements of any two graders")
	all := strings.Join(contentLines(a.review), "\n")
	for _, j := range a.c.plan.Audit.Judges {
		g, ok := a.c.tally.GraderGrades(j.Own.Version)[e.key]
		if ok && !g.Unparseable && !strings.Contains(all, "thought it through") {
			t.Fatalf("judge %s's reasoning is not shown:\n%s", j.Grader, all)
		}
	}
	contains(t, all, "GRADERS")

	_, cmd := a.Update(keyMsg("v"))
	if n, _ := src.writes(); n != 0 || a.review.index != 0 {
		t.Fatalf("Update wrote %d labels or moved (index %d)", n, a.review.index)
	}
	w.settle(cmd)
	if l, ok := src.stored(e.key); !ok || !l.Violation || l.Labeller != "ana" {
		t.Fatalf("stored %+v %v", l, ok)
	}
	if a.review.index != 1 {
		t.Fatalf("after deciding: index %d", a.review.index)
	}
	// The decision is an adjudication made with the verdicts in view: it is
	// kept apart and counts toward no grader's recall.
	if l, _ := src.stored(e.key); l.Source != model.LabelSeen {
		t.Fatalf("stored with source %q, want seen", l.Source)
	}
	if _, ok := a.c.tally.SeenLabels()[e.key]; !ok {
		t.Fatal("the adjudication is not among the seen labels")
	}
	rr := a.c.result(0, 0)
	if rr.Quality.Labels != 0 {
		t.Fatal("a review label entered the predicate's quality")
	}
	for _, q := range rr.Judges {
		if q.Labels != 0 {
			t.Fatalf("a review label entered %s's quality", q.Grader)
		}
	}
	w.press("u")
	if a.review.index != 0 {
		t.Fatalf("undo went to %d", a.review.index)
	}
}

// queued counts the answers in the review queue, each of a group of
// identical answers too.
func queued(v *reviewView) int {
	n := 0
	for _, e := range v.items {
		n += len(e.keys())
	}
	return n
}

// contentLines returns the review viewport's lines without styling.
func contentLines(v *reviewView) []string {
	return strings.Split(ansi.Strip(v.vp.GetContent()), "\n")
}

func TestReview_Filters(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	a := w.a
	all := queued(a.review)
	pairs := a.review.pairs()
	if len(pairs) != 3 {
		t.Fatalf("%d grader pairs, want 3", len(pairs))
	}
	w.press("P")
	want := a.c.tally.Disagreements(0, 0, pairs[0][:])
	if queued(a.review) != len(want) || len(want) >= all {
		t.Fatalf("pair filter: %d items, want %d (of %d)", queued(a.review), len(want), all)
	}
	contains(t, plain(a), "disagreements of predicate and judge:sim-judge-careful")
	w.press("P", "P", "P") // round to any pair
	if queued(a.review) != all {
		t.Fatalf("after cycling the pairs: %d items, want %d", queued(a.review), all)
	}
	w.press("f") // provoke only
	for _, e := range a.review.raw {
		if k := a.c.plan.Audit.Rules[0].Cases[e.cell.Case].Kind; k != "provoke" {
			t.Fatalf("kind filter let a %s answer in", k)
		}
	}
	w.press("f", "f", "f", "D", "D") // every kind; the deletion only
	for _, e := range a.review.raw {
		if !e.cell.Deleted {
			t.Fatal("variant filter let a baseline answer in")
		}
	}
	w.press("D", "]")
	if a.review.rule != 1 {
		t.Fatalf("] went to rule %d", a.review.rule)
	}
	contains(t, plain(a), "Review -L15")
}

func TestReview_AgreementPanel(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	a := w.a
	w.press("v", "o", "v")
	w.press("a")
	a.View()
	s := strings.Join(a.review.panel.lines, "\n")
	rr := a.c.result(0, 0)
	for _, want := range []string{"Agreement · -L23", "kappa (SE)", "predicate vs judge:sim-judge-careful",
		"Each grader against the human labels", "recall", "precision", "specificity", "labels support"} {
		if !strings.Contains(ansi.Strip(s), want) {
			t.Fatalf("agreement panel lacks %q:\n%s", want, ansi.Strip(s))
		}
	}
	for _, pa := range rr.Agreement {
		if pa.KappaDefined && !strings.Contains(s, formatKappa(pa)) {
			t.Fatalf("kappa %s of %s vs %s not shown", formatKappa(pa), pa.A.Name, pa.B.Name)
		}
	}
	w.press("a")
	if a.review.mode != reviewItems {
		t.Fatal("a did not close the panel")
	}
	w.press("a", "esc")
	if a.review.mode != reviewItems || a.screen != screenReview {
		t.Fatal("esc did not close the panel")
	}
}

func formatKappa(pa evidence.PairAgreement) string {
	return fmt.Sprintf("%.2f (%.2f)", pa.Kappa, pa.KappaSE)
}

func TestReview_CompareTwoModels(t *testing.T) {
	t.Parallel()
	f := newTwoModelFixture(t)
	w := newLabelWorld(t, f, 0, 5, ScreenReview)
	a := w.a
	w.press("c")
	if a.review.mode != reviewCompare {
		t.Fatal("c did not open the comparison")
	}
	a.View()
	s := ansi.Strip(strings.Join(a.review.panel.lines, "\n"))
	for _, want := range []string{"Compare A sim-a vs B sim-b", "BASELINE", "A fails/n rate", "road-01"} {
		if !strings.Contains(s, want) {
			t.Fatalf("comparison lacks %q:\n%s", want, s)
		}
	}
	w.press("c", "x")
	want := a.c.tally.SplitPairs(0, 0, 1, false, true)
	want = append(want, a.c.tally.SplitPairs(0, 0, 1, true, true)...)
	if len(a.review.items) != 2*len(want) {
		t.Fatalf("split queue: %d entries, want %d (two per pair)", len(a.review.items), 2*len(want))
	}
	reverse := len(a.c.tally.SplitPairs(0, 0, 1, false, false)) + len(a.c.tally.SplitPairs(0, 0, 1, true, false))
	if len(want) == 0 || reverse == 0 {
		t.Fatalf("the fixture has %d and %d split pairs: the test needs both", len(want), reverse)
	}
	{
		e, _ := a.review.current()
		if e.key != want[0].KeyA || e.other != want[0].KeyB {
			t.Fatalf("first split entry %+v, want %+v", e, want[0])
		}
		contains(t, plain(a), "split pairs: sim-a failed, sim-b passed")
	}
	w.press("x")
	contains(t, plain(a), "sim-b failed, sim-a passed")
}

func TestReview_OneModelHasNoCompare(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 1), 0, 5, ScreenReview)
	w.press("c")
	if w.a.review.mode != reviewItems {
		t.Fatal("compare opened with one model")
	}
	contains(t, plain(w.a), "two or more [[model]]")
}

func TestReview_NoJudges(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	f.audit.Judges = nil
	a := f.app(t, &clock{t: t0}, nil, func(o *Options) { o.Labelling.Open = ScreenReview })
	a.Update(keyMsg("]"))
	contains(t, plain(a), "one grader, the predicate")
	contains(t, plain(a), "after the run.") // wrapped, not cut at 80 columns
}

// TestLabelling_Resize: every labelling screen and panel fills the
// terminal exactly, at any size, without a line too wide.
func TestLabelling_Resize(t *testing.T) {
	t.Parallel()
	sizes := [][2]int{{80, 24}, {100, 30}, {160, 48}, {250, 70}, {30, 8}, {81, 25}, {200, 60}}
	scenes := []struct {
		name string
		open Screen
		keys []string
	}{
		{"label", ScreenLabel, nil},
		{"label revealed", ScreenLabel, []string{"v", "left"}},
		{"label note", ScreenLabel, []string{"i", "x"}},
		{"results", ScreenLabel, []string{"v", "o", "r"}},
		{"review", ScreenReview, nil},
		{"agreement", ScreenReview, []string{"a"}},
		{"compare", ScreenReview, []string{"c"}},
		{"split pairs", ScreenReview, []string{"x"}},
		{"review search", ScreenReview, []string{"/", "r", "o", "a", "d"}},
		{"review searched", ScreenReview, []string{"/", "r", "o", "a", "d", "enter", "V"}},
		{"judges in full", ScreenReview, []string{"enter"}},
		{"raw judges in full", ScreenReview, []string{"r", "enter", "pgdown"}},
	}
	for _, sc := range scenes {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			w := newLabelWorld(t, newTwoModelFixture(t), 0, 8, sc.open)
			w.press(sc.keys...)
			for _, sz := range sizes {
				w.a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				lines := strings.Split(w.a.View().Content, "\n")
				if len(lines) != sz[1] {
					t.Errorf("%dx%d: %d lines", sz[0], sz[1], len(lines))
				}
				for i, l := range lines {
					if lw := ansi.StringWidth(l); lw > sz[0] {
						t.Errorf("%dx%d: line %d is %d wide: %q", sz[0], sz[1], i, lw, ansi.Strip(l))
					}
				}
			}
		})
	}
}

// TestReview_PairRememberedOnReopen: the grader pair chosen with p comes
// back when the review screen is opened again on the same store.
func TestReview_PairRememberedOnReopen(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	w.press("P", "P") // the second pair
	want := w.a.review.queueName()
	if w.a.review.pair != 2 || !strings.Contains(want, "disagreements of ") || strings.Contains(want, "any two") {
		t.Fatalf("pair %d: %q", w.a.review.pair, want)
	}
	tally, err := evidence.NewTally(w.f.plan, w.f.preds, w.src)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := w.src.Status()
	a, err := New(Options{
		Plan: w.f.plan, Tally: tally, Stored: stored, Responses: w.src, Simulated: true, Now: (&clock{t: t0}).Now,
		Labelling: LabelOptions{Store: w.src, Labeller: "ana", Open: ScreenReview},
	})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	settle(a, a.Init())
	if got := a.review.queueName(); a.review.pair != 2 || got != want {
		t.Fatalf("reopened on pair %d, %q; want %q", a.review.pair, got, want)
	}
	// Another reviewer has a pair of their own.
	if got := pairKey(23, "ben"); got == pairKey(23, "ana") {
		t.Fatalf("one key for two reviewers: %s", got)
	}
}

// TestReview_TallyAndVariantFilter: after a decision the screen says what
// the decisions made of each grader (right and wrong among the decided,
// the results' adjudication counts); filtering by variant shows the
// variant, as the queue then names it, and hiding it clears the filter.
func TestReview_TallyAndVariantFilter(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	a := w.a
	w.press("v")
	rr := a.c.result(0, 0)
	if rr == nil || rr.Adjudications.N != 1 {
		t.Fatalf("adjudications after one decision: %+v", rr)
	}
	p := rr.Adjudications.Graders[0]
	contains(t, plain(a), fmt.Sprintf("1 decided on this line · predicate ✓%d ✗%d", p.Agree, p.Graded-p.Agree))

	if a.review.showVariant {
		t.Fatal("the variant is shown before V")
	}
	w.press("D")
	if !a.review.showVariant || !strings.Contains(plain(a), "variant shown (V)") {
		t.Fatalf("a variant filter with the badge hidden:\n%s", plain(a))
	}
	w.press("V")
	if a.review.showVariant || a.review.variant != 0 {
		t.Fatalf("V with a variant filter: shown %v, filter %d", a.review.showVariant, a.review.variant)
	}
}

package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/runner"
)

func TestGrid_Navigation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		keys     []string
		wantRule int
		wantCase string
		wantDel  bool
		// endInView: G shows the end of the body (the whole verdict), so
		// the last case may be scrolled above it on a short screen.
		endInView bool
	}{
		{keys: nil, wantRule: 0, wantCase: "road-01"},
		{keys: []string{"down", "down"}, wantRule: 0, wantCase: "road-03"},
		{keys: []string{"j", "k", "j"}, wantRule: 0, wantCase: "road-02"},
		{keys: []string{"up"}, wantRule: 0, wantCase: "road-01"},
		{keys: []string{"right"}, wantRule: 0, wantCase: "road-01", wantDel: true},
		{keys: []string{"right", "right", "left"}, wantRule: 0, wantCase: "road-01"},
		{keys: []string{"G"}, wantRule: 0, wantCase: "road-18", endInView: true},
		{keys: []string{"G", "up", "down"}, wantRule: 0, wantCase: "road-18"},
		{keys: []string{"G", "g"}, wantRule: 0, wantCase: "road-01"},
		// A page is the body under the sticky lines; at 80x24 the rules
		// and the verdict are in the header, the headings alone stick.
		{keys: []string{"pgdown"}, wantRule: 0, wantCase: "road-18"},
		{keys: []string{"down", "]"}, wantRule: 1, wantCase: "reask-01"},
		{keys: []string{"["}, wantRule: 3, wantCase: "gen-01"},
		{keys: []string{"]", "]", "]", "]"}, wantRule: 0, wantCase: "road-01"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.keys, ","), func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 1)
			a := f.app(t, &clock{t: t0}, nil)
			press(a, tt.keys...)
			ref, ok := a.grid.selected()
			if !ok {
				t.Fatal("nothing selected")
			}
			id := f.audit.Rules[ref.rule].Cases[ref.kase].ID
			if ref.rule != tt.wantRule || id != tt.wantCase || ref.deleted != tt.wantDel {
				t.Fatalf("selected rule %d case %s deleted %v, want rule %d case %s deleted %v",
					ref.rule, id, ref.deleted, tt.wantRule, tt.wantCase, tt.wantDel)
			}
			if tt.endInView {
				if a.grid.top != a.grid.maxTop() {
					t.Fatalf("top %d, want the end %d:\n%s", a.grid.top, a.grid.maxTop(), plain(a))
				}
				return
			}
			if !strings.Contains(plain(a), "› "+id) {
				t.Fatalf("the cursor row is not on screen:\n%s", plain(a))
			}
		})
	}
}

func TestGrid_ScrollsPastLastCaseToVerdict(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	a := f.app(t, &clock{t: t0}, nil)
	press(a, "G")
	contains(t, plain(a), "predicate recall")
	for range 50 {
		press(a, "down")
	}
	contains(t, plain(a), "predicate recall")
	press(a, "g")
	contains(t, plain(a), "PROVOKE · 5 cases")
}

func TestGrid_Filter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	a := f.app(t, &clock{t: t0}, nil)
	press(a, "/")
	if !a.grid.filter.editing {
		t.Fatal("/ did not open the filter")
	}
	press(a, "g", "a", "n", "t", "t", "q") // q is typed, not quit
	if a.quitting || a.grid.filter.query != "ganttq" {
		t.Fatalf("query %q, quitting %v", a.grid.filter.query, a.quitting)
	}
	press(a, "backspace")
	if got := a.grid.matching(); got != 2 {
		t.Fatalf("%d cases match %q, want 2 (road-05, road-12)", got, a.grid.filter.query)
	}
	press(a, "enter")
	if a.grid.filter.editing {
		t.Fatal("enter did not close the filter")
	}
	s := plain(a)
	contains(t, s, `filter "gantt": 2 of 18 cases`)
	contains(t, s, "road-05")
	if strings.Contains(s, "road-01") {
		t.Fatalf("a filtered-out case is shown:\n%s", s)
	}
	contains(t, s, "(no case of this kind matches the filter)")
	press(a, "esc")
	if a.grid.filter.query != "" || a.grid.matching() != 18 {
		t.Fatalf("esc left query %q, %d cases", a.grid.filter.query, a.grid.matching())
	}
	press(a, "/", "x", "esc")
	if a.grid.filter.editing || a.grid.filter.query != "" {
		t.Fatalf("esc while typing left filtering=%v query=%q", a.grid.filter.editing, a.grid.filter.query)
	}
}

func TestGrid_ScrollsSidewaysNotWraps(t *testing.T) {
	t.Parallel()
	f := newTwoModelFixture(t)
	a := f.app(t, &clock{t: t0}, nil)
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	vis := a.grid.geometry().vis
	if vis >= 4 {
		t.Fatalf("%d of 4 columns fit in 80 columns; the test needs fewer", vis)
	}
	s := plain(a)
	contains(t, s, "›") // more columns to the right
	press(a, "right", "right", "right")
	if a.grid.col != 3 || a.grid.left == 0 {
		t.Fatalf("col %d left %d after three rights", a.grid.col, a.grid.left)
	}
	s = plain(a)
	contains(t, s, "sim-b -L23")
	contains(t, s, "‹ case")
	// A model's two columns scroll together: its baseline beside its own
	// variant, never another model's.
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "‹ case") && (!strings.Contains(l, "sim-b baseline") || strings.Contains(l, "sim-a")) {
			t.Fatalf("model b's columns are not shown as a pair: %q", l)
		}
	}
	for _, l := range strings.Split(a.View().Content, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("line wider than the screen: %q", ansi.Strip(l))
		}
	}
	press(a, "<")
	if a.grid.left != 0 {
		t.Fatalf("left %d after scrolling back", a.grid.left)
	}
}

func TestGrid_VerdictLinesFollowResults(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	a := f.app(t, &clock{t: t0}, noStart)
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 40}) // tall enough for the verdict above the grid
	press(a, "y", "G")
	contains(t, plain(a), "(provisional): ? INCONCLUSIVE no provoking case has")
	var evs []Event
	for i := range f.plan.Calls {
		evs = append(evs, f.finished(t, i)...)
	}
	a.Update(batchMsg{events: evs})
	// Every answer in: the verdict is the fixed design's, on the whole grid,
	// though the run has not said it stopped.
	if s := plain(a); strings.Contains(s, "no provoking case has") || strings.Contains(s, "provisional") {
		t.Fatalf("verdict lines did not follow the results:\n%s", s)
	}
	a.Update(batchMsg{events: []Event{{Runner: runner.Stopped{Reason: runner.Completed}}}, closed: true})
	if s := plain(a); strings.Contains(s, "provisional") {
		t.Fatalf("verdict still provisional after the run:\n%s", s)
	}
}

// A rule with no predicate: the grid shows how many answers each cell has
// and how long they run, never a pass count nothing computed.
func TestGrid_NoPredicateRuleShowsLengths(t *testing.T) {
	t.Parallel()
	_, a := reportWorld(t, 2)
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 40}) // tall enough for the rule's line above the grid
	press(a, "[")                                      // the last rule: line 12, class none, no predicate
	s := plain(a)
	contains(t, s, "line 12")
	contains(t, s, "answers and mean length, not graded")
	contains(t, s, " 2 · ")
	contains(t, s, "mean ")
	if strings.Contains(s, "0/0 of") || strings.Contains(s, "PROVOKE + PRESSURE") {
		t.Fatalf("the grid shows pass counts or a pooled arm for a rule nothing grades:\n%s", s)
	}
	press(a, "enter")
	contains(t, plain(a), "no predicate grades them")
}

// TestGrid_SelectedRowKeepsColumns: the cursor's row and cell are drawn in
// the same columns as every other row, at both golden sizes and live.
func TestGrid_SelectedRowKeepsColumns(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		a := midRun(t)
		a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		press(a, "right")
		gm := a.grid.geometry()
		labelW := gm.labelW
		for range 4 {
			for _, l := range strings.Split(plain(a), "\n") {
				if !strings.HasPrefix(l, "› road-") && !strings.HasPrefix(l, "  road-") {
					continue
				}
				// The cells start one column after the label, two columns
				// apart by cellWidth+1: each starts with its rate symbol.
				cols := []rune(l)
				for j := 0; j < 2; j++ {
					at := labelW + 1 + j*(gm.cellW+1)
					if widthOf(cols[:at]) != at || strings.ContainsRune(" ", cols[at]) || cols[at-1] != ' ' {
						t.Fatalf("%v: cell %d of %q does not start at column %d", sz, j, l, at)
					}
				}
			}
			press(a, "down")
		}
	}
}

func widthOf(rs []rune) int { return textWidth(string(rs)) }

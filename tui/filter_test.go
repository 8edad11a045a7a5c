package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestCell_Filter filters a cell's samples by result with the shared "/"
// filter; enter opens the filtered sample under the cursor, esc comes back
// to the filtered list and a second esc clears the filter.
func TestCell_Filter(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	press(a, "right", "enter")
	all := len(a.cell.cells)
	fails := 0
	for i := range a.cell.cells {
		if st, _, _ := a.c.sampleOf(a.cell.cells[i]); st == sampleFail {
			fails++
		}
	}
	if fails == 0 || fails == all {
		t.Fatalf("fixture: %d of %d samples fail; the test needs some of each", fails, all)
	}
	press(a, "/", "f", "a", "i", "l", "enter")
	if a.cell.filter.editing || a.cell.filter.query != "fail" {
		t.Fatalf("editing %v, query %q", a.cell.filter.editing, a.cell.filter.query)
	}
	s := plain(a)
	contains(t, s, `filter "fail": `)
	if strings.Contains(s, "✓ pass") {
		t.Fatalf("a passing sample is listed under a fail filter:\n%s", s)
	}
	press(a, "down")
	i, ok := a.cell.selected()
	if !ok {
		t.Fatal("nothing selected")
	}
	if st, _, _ := a.c.sampleOf(a.cell.cells[i]); st != sampleFail {
		t.Fatalf("the second listed sample (%d) is not a failure", i+1)
	}
	for _, m := range runCmd(press(a, "enter")) {
		a.Update(m)
	}
	if a.screen != screenSample || a.sample.index != i {
		t.Fatalf("enter opened screen %v sample %d, want sample %d", a.screen, a.sample.index, i)
	}
	press(a, "esc")
	if a.screen != screenCell || a.cell.filter.query != "fail" {
		t.Fatalf("esc from the sample: screen %v, query %q", a.screen, a.cell.filter.query)
	}
	if j, _ := a.cell.selected(); j != i {
		t.Fatalf("back on sample %d, want %d", j, i)
	}
	press(a, "esc")
	if a.screen != screenCell || a.cell.filter.active() || len(a.cell.list()) != all {
		t.Fatalf("esc did not clear the filter: screen %v, %d listed", a.screen, len(a.cell.list()))
	}
	press(a, "esc")
	if a.screen != screenGrid {
		t.Fatalf("esc without a filter left screen %v, want the grid", a.screen)
	}
}

// TestReport_Search finds text in the report: / types the query, the first
// match from the top is scrolled into view and drawn reversed, n and N step
// through the matches (wrapping) and esc clears the search, after which n
// jumps between rules again.
func TestReport_Search(t *testing.T) {
	t.Parallel()
	_, a := reportWorld(t, 10)
	openReport(a)
	v := a.report
	press(a, "/", "r", "e", "c", "a", "l", "l")
	if !v.search.editing || len(v.hits) < 3 {
		t.Fatalf("editing %v, %d matches of \"recall\"", v.search.editing, len(v.hits))
	}
	press(a, "enter")
	for _, h := range v.hits {
		if !strings.Contains(strings.ToLower(ansi.Strip(v.lines[h])), "recall") {
			t.Fatalf("line %d matched without the query: %q", h, ansi.Strip(v.lines[h]))
		}
	}
	first := v.hits[0]
	if v.hit != 0 || first < v.top || first >= v.top+v.bodyLines() {
		t.Fatalf("hit %d, top %d: the first match (line %d) is not in view", v.hit, v.top, first)
	}
	contains(t, plain(a), fmt.Sprintf(`search "recall": match 1 of %d`, len(v.hits)))
	press(a, "n")
	if v.hit != 1 || v.hits[1] < v.top || v.hits[1] >= v.top+v.bodyLines() {
		t.Fatalf("n: hit %d, top %d, match at line %d", v.hit, v.top, v.hits[1])
	}
	press(a, "N", "N")
	if v.hit != len(v.hits)-1 {
		t.Fatalf("N twice from the second match: hit %d, want the last (%d)", v.hit, len(v.hits)-1)
	}
	// The match shown is reversed: styled apart from the lines around it.
	row := v.hits[v.hit] - v.top + 3
	styled := strings.Split(a.View().Content, "\n")[row]
	if !strings.Contains(styled, "\x1b[7m") && !strings.Contains(styled, ";7m") {
		t.Fatalf("the match shown is not reversed: %q", styled)
	}
	press(a, "esc", "/", "z", "q", "x", "j", "enter")
	if len(v.hits) != 0 || v.hit != -1 {
		t.Fatalf("a query with no match: %d hits", len(v.hits))
	}
	contains(t, plain(a), `search "zqxj": no match`)
	press(a, "esc")
	if v.search.active() || a.screen != screenReport {
		t.Fatalf("esc: search %q, screen %v", v.search.query, a.screen)
	}
	press(a, "g", "n")
	if v.top != v.sections[0] {
		t.Fatalf("n without a search: top %d, want the first rule at %d", v.top, v.sections[0])
	}
}

// TestPlan_Filter filters the plan's rule table by line number or text.
func TestPlan_Filter(t *testing.T) {
	t.Parallel()
	a := newFixture(t, 30).app(t, &clock{t: t0}, noStart)
	a.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	if a.screen != screenPlan {
		t.Fatalf("opened on %v", a.screen)
	}
	rules := a.c.est.Rules
	if len(rules) < 2 {
		t.Fatalf("fixture has %d rules", len(rules))
	}
	keep, drop := rules[0], rules[1]
	press(a, "/")
	for _, r := range fmt.Sprint(keep.Line) {
		press(a, string(r))
	}
	press(a, "enter")
	if a.plan.shown != 1 {
		t.Fatalf("%d rules shown for line %d", a.plan.shown, keep.Line)
	}
	s := plain(a)
	contains(t, s, fmt.Sprintf(`filter "%d": 1 of %d rules`, keep.Line, len(rules)))
	contains(t, s, fmt.Sprintf("-L%d deleted: ", keep.Line))
	if strings.Contains(s, fmt.Sprintf("-L%d ", drop.Line)) {
		t.Fatalf("line %d is shown under a filter on line %d:\n%s", drop.Line, keep.Line, s)
	}
	press(a, "q") // not typed: the filter is closed, q asks to quit
	if !a.quitting {
		t.Fatal("q after enter did not quit")
	}
	a.quitting = false
	press(a, "esc")
	if a.plan.filter.active() || a.plan.shown != len(rules) || a.screen != screenPlan {
		t.Fatalf("esc: query %q, %d shown, screen %v", a.plan.filter.query, a.plan.shown, a.screen)
	}
}

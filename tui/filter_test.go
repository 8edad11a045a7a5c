package tui

import (
	"strings"
	"testing"
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

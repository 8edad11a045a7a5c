package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func click(a *App, x, y int) tea.Cmd {
	_, cmd := a.Update(tea.MouseClickMsg{X: x, Y: y, Button: tea.MouseLeft})
	return cmd
}

func wheel(a *App, down bool) {
	b := tea.MouseWheelUp
	if down {
		b = tea.MouseWheelDown
	}
	a.Update(tea.MouseWheelMsg{X: 10, Y: 10, Button: b})
}

// rowOf is the screen row whose text starts (after the cursor mark) with
// prefix, or fails.
func rowOf(t *testing.T, a *App, prefix string) int {
	t.Helper()
	for y, l := range strings.Split(plain(a), "\n") {
		if strings.HasPrefix(strings.TrimLeft(l, " ›"), prefix) {
			return y
		}
	}
	t.Fatalf("no row starts with %q:\n%s", prefix, plain(a))
	return -1
}

// TestMouse_GridClick maps a click to the grid's case row and column
// through its layout (header, sticky lines, verdict, scroll), at two
// sizes and scrolled: a first click selects, a second opens the cell.
func TestMouse_GridClick(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		_, a := complete(t, 30)
		a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		rule := a.c.plan.Audit.Rules[a.grid.rule]
		a.grid.layout()
		last := a.grid.rows[len(a.grid.rows)-1]
		for range len(a.grid.rows) - 1 {
			press(a, "down") // scrolled: the last case at the bottom
		}
		id := rule.Cases[last].ID
		y := rowOf(t, a, id)
		gm := a.grid.geometry()
		x := gm.labelW + 1 + (gm.cellW+1)*1 + 3 // inside the second column
		if click(a, x, y); a.screen != screenGrid {
			t.Fatalf("%v: the first click opened screen %v", sz, a.screen)
		}
		ref, _ := a.grid.selected()
		if ref.kase != last || !ref.deleted {
			t.Fatalf("%v: click at (%d,%d) selected case %d deleted %v, want case %d (%s) deleted", sz, x, y, ref.kase, ref.deleted, last, id)
		}
		click(a, x, y)
		if a.screen != screenCell || a.cell.ref != ref {
			t.Fatalf("%v: a second click: screen %v, cell %+v", sz, a.screen, a.cell.ref)
		}
		// A click on a heading or the header below the tabs selects nothing.
		a.screen = screenGrid
		press(a, "g")
		before := a.grid.row
		click(a, 2, rowOf(t, a, "PROVOKE"))
		click(a, 2, 1) // the header under the tab bar
		if a.grid.row != before || a.screen != screenGrid {
			t.Fatalf("%v: a click off the rows moved to row %d, screen %v", sz, a.grid.row, a.screen)
		}
	}
}

// TestMouse_CellClick selects a sample by its row, scrolled by the wheel,
// and opens it with a second click.
func TestMouse_CellClick(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	press(a, "right", "enter")
	wheel(a, true)
	if a.cell.top != wheelLines || a.cell.cursor != wheelLines {
		t.Fatalf("wheel down: top %d cursor %d, want both %d (the cursor stays in view)", a.cell.top, a.cell.cursor, wheelLines)
	}
	wheel(a, false)
	if a.cell.top != 0 || a.cell.cursor != wheelLines {
		t.Fatalf("wheel up: top %d cursor %d", a.cell.top, a.cell.cursor)
	}
	wheel(a, true)
	y := rowOf(t, a, "10  ")
	click(a, 3, y)
	if i, _ := a.cell.selected(); i != 9 || a.screen != screenCell {
		t.Fatalf("a click on sample 10 selected %d, screen %v", i+1, a.screen)
	}
	for _, m := range runCmd(click(a, 3, y)) {
		a.Update(m)
	}
	if a.screen != screenSample || a.sample.index != 9 {
		t.Fatalf("a second click: screen %v, sample %d", a.screen, a.sample.index+1)
	}
}

// TestMouse_WheelScrolls: the wheel scrolls the grid (cursor kept in
// view), the report and the plan, and does nothing while a filter is typed.
func TestMouse_WheelScrolls(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	if m := a.View().MouseMode; m != tea.MouseModeCellMotion {
		t.Fatalf("mouse mode %v: the terminal sends no wheel or clicks", m)
	}
	wheel(a, true)
	g := a.grid
	if g.top != wheelLines {
		t.Fatalf("grid: top %d after a wheel turn", g.top)
	}
	if line := g.rowAt[g.row]; line < g.top || line >= g.top+g.bodyLines() {
		t.Fatalf("grid: the cursor's row (line %d) left the window at %d", line, g.top)
	}
	wheel(a, false)
	if g.top != 0 {
		t.Fatalf("grid: top %d after wheel up", g.top)
	}
	openReport(a)
	wheel(a, true)
	wheel(a, true)
	if a.report.top != 2*wheelLines {
		t.Fatalf("report: top %d", a.report.top)
	}
	press(a, "/")
	wheel(a, true)
	if a.report.top != 2*wheelLines {
		t.Fatalf("report: the wheel scrolled while the search was typed")
	}

	p := newFixture(t, 30).app(t, &clock{t: t0}, noStart)
	wheel(p, true)
	if p.plan.vp.YOffset() != wheelLines {
		t.Fatalf("plan: offset %d", p.plan.vp.YOffset())
	}
}

// TestMouse_LabelResultsClick selects a miss in the label results by a
// click and opens its answer with a second one.
func TestMouse_LabelResultsClick(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 23, 12, ScreenLabel)
	for i := range 12 {
		if i%3 == 0 {
			w.press("o")
		} else {
			w.press("v")
		}
	}
	a, r := w.a, w.a.label.results // the end of the set lands on the results
	if len(r.misses) < 2 {
		t.Fatalf("%d misses: the test needs two", len(r.misses))
	}
	second := r.misses[1]
	want := w.a.label.pos[second.key]
	y := -1
	// The misses follow the dot plots: page down to them.
	for range 5 {
		for i, l := range strings.Split(plain(a), "\n") {
			if strings.Contains(l, fmt.Sprintf("answer %d ·", want+1)) {
				y = i
				break
			}
		}
		if y >= 0 {
			break
		}
		w.press("pgdown")
	}
	if y < 0 {
		t.Fatalf("the second miss (answer %d) is not on screen:\n%s", want+1, plain(a))
	}
	w.settle(click(a, 6, y))
	if r.cursor != 1 || !a.label.showResults {
		t.Fatalf("first click: cursor %d, results shown %v", r.cursor, a.label.showResults)
	}
	w.settle(click(a, 6, y))
	if a.label.showResults || !a.label.fromResults || a.label.index != want {
		t.Fatalf("second click: results %v, from results %v, index %d (want %d)", a.label.showResults, a.label.fromResults, a.label.index, want)
	}
}

// TestMouse_TabBar: a click on a tab's name brings its screen to the
// front, from a drill-down too, where the grid's tab is wider.
func TestMouse_TabBar(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	press(a, "right", "enter") // the cell: "Grid › samples"
	bar := strings.Split(plain(a), "\n")[0]
	for _, want := range []struct {
		name string
		s    screen
	}{{"Report", screenReport}, {"Label", screenLabel}, {"Grid", screenGrid}, {"Plan", screenPlan}} {
		x := strings.Index(bar, want.name)
		if x < 0 {
			t.Fatalf("no %s in the tab bar %q", want.name, bar)
		}
		x = textWidth(bar[:x]) + 1
		settle(a, click(a, x, 0))
		if a.screen != want.s {
			t.Fatalf("a click on %s (column %d of %q): screen %v", want.name, x, bar, a.screen)
		}
		bar = strings.Split(plain(a), "\n")[0]
	}
}

// TestMouse_LabelWheel scrolls a tall answer on the label screen and the
// label results.
func TestMouse_LabelWheel(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 23, 12, ScreenLabel)
	a := w.a
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 14})
	plain(a) // lays the answer out in its window
	wheel(a, true)
	if a.label.vp.YOffset() == 0 {
		t.Fatal("the wheel did not scroll the answer")
	}
	wheel(a, false)
	if a.label.vp.YOffset() != 0 {
		t.Fatalf("wheel up: offset %d", a.label.vp.YOffset())
	}
	w.press("r")
	plain(a)
	wheel(a, true)
	if a.label.results.top != wheelLines || a.label.results.cursor != 0 {
		t.Fatalf("results: top %d, cursor %d", a.label.results.top, a.label.results.cursor)
	}
}

// TestMouse_GridErrorsOpen: while the run's errors are open in full over
// the grid, the wheel scrolls them and a click or enter neither selects
// nor opens a cell of the grid hidden behind them.
func TestMouse_GridErrorsOpen(t *testing.T) {
	t.Parallel()
	a := gridErrorsOpen(t)
	if !a.grid.full.on {
		t.Fatal("e did not open the errors")
	}
	plain(a)
	row, col, top := a.grid.row, a.grid.col, a.grid.top
	wheel(a, true)
	if a.grid.full.top != wheelLines || a.grid.top != top {
		t.Fatalf("wheel: the errors' top %d (want %d), the grid's %d (was %d)", a.grid.full.top, wheelLines, a.grid.top, top)
	}
	labelW := a.grid.geometry().labelW
	for y := headLines; y < headLines+a.c.bodyH; y++ {
		for _, x := range []int{2, labelW + 3, labelW + cellWidth + 4} {
			settle(a, click(a, x, y))
			settle(a, click(a, x, y))
			if a.screen != screenGrid || !a.grid.full.on || a.grid.row != row || a.grid.col != col {
				t.Fatalf("clicks at (%d,%d) over the errors: screen %v, errors open %v, row %d col %d (were %d %d)",
					x, y, a.screen, a.grid.full.on, a.grid.row, a.grid.col, row, col)
			}
		}
	}
	settle(a, press(a, "enter"))
	if a.screen != screenGrid || !a.grid.full.on {
		t.Fatalf("enter over the errors: screen %v, errors open %v", a.screen, a.grid.full.on)
	}
}

// TestGrid_ErrorsScrollToTheEnd: the bottom key over the run's errors
// open in full shows their last line (the window is one line shorter than
// the body: the title takes one).
func TestGrid_ErrorsScrollToTheEnd(t *testing.T) {
	t.Parallel()
	a := gridErrorsOpen(t)
	plain(a)
	press(a, "G")
	contains(t, plain(a), "END-OF-BODY")
	press(a, "g")
	for range 30 {
		wheel(a, true)
	}
	contains(t, plain(a), "END-OF-BODY")
}

// gridErrorsOpen is an 80x24 app whose run's every call failed with a
// 62-line error ending END-OF-BODY, opened in full over the grid (e).
func gridErrorsOpen(t *testing.T) *App {
	t.Helper()
	a := allFailedWith(t, "HTTP 400:"+strings.Repeat("\nthe request body was rejected", 60)+"\nEND-OF-BODY")
	press(a, "e")
	return a
}

// TestGrid_ErrorsFooter: over the run's errors the footer lists the keys
// that work there (scroll, close), not the grid's waiting behind them.
func TestGrid_ErrorsFooter(t *testing.T) {
	t.Parallel()
	a := gridErrorsOpen(t)
	lines := strings.Split(plain(a), "\n")
	foot := lines[len(lines)-1]
	if strings.Contains(foot, "samples of cell") || strings.Contains(foot, "filter cases") || !strings.Contains(foot, "esc close") {
		t.Fatalf("the footer over the errors: %q", foot)
	}
}

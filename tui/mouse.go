package tui

import tea "charm.land/bubbletea/v2"

// The mouse: the wheel scrolls the screen in front, a left click on a
// list's row selects it and a click on the row already selected opens it,
// as enter does. Clicks are mapped to rows through each screen's layout:
// the app's header lines, then the screen's own lines above its list, then
// its scroller's first line.

// wheelLines is how many lines one notch of the wheel scrolls.
const wheelLines = 3

// headLines is the number of header lines above every screen's body.
const headLines = 3

// wheeler is a list that scrolls under the wheel by lines (d < 0: up)
// without its cursor leaving the window. Screens that are not wheelers
// scroll as their up and down keys do.
type wheeler interface{ wheel(d int) }

// clicker is a list a click selects in: x and y are the click's cell in
// the screen's body. open reports a click on the row already selected.
type clicker interface{ click(x, y int) (open bool) }

// mouse handles a wheel turn or a left click.
func (a *App) mouse(msg tea.MouseMsg) tea.Cmd {
	m := msg.Mouse()
	if _, wheel := msg.(tea.MouseWheelMsg); wheel && a.showHelp && !a.confirmQuit {
		switch m.Button {
		case tea.MouseWheelUp:
			a.helpScroll.by(-wheelLines, len(a.helpLines()), a.helpH())
		case tea.MouseWheelDown:
			a.helpScroll.by(wheelLines, len(a.helpLines()), a.helpH())
		}
		return nil
	}
	if a.confirmQuit || a.showHelp || a.current().capturing() {
		return nil
	}
	switch msg.(type) {
	case tea.MouseWheelMsg:
		d := 0
		switch m.Button {
		case tea.MouseWheelUp:
			d = -wheelLines
		case tea.MouseWheelDown:
			d = wheelLines
		default:
			return nil
		}
		return a.wheel(d)
	case tea.MouseClickMsg:
		if m.Button != tea.MouseLeft {
			return nil
		}
		a.clearStaleStatus()
		if s, ok := a.tabAt(m.X); ok && m.Y == 0 {
			defer a.leftScreen(a.screen)
			a.screen = s
			return a.current().entered()
		}
		y := m.Y - headLines
		if y < 0 || y >= a.c.bodyH {
			return nil
		}
		c, ok := a.current().(clicker)
		if ok && c.click(m.X, y) {
			defer a.leftScreen(a.screen)
			return a.openSelected()
		}
	}
	return nil
}

// tabAt is the screen whose name in the tab bar covers column x.
func (a *App) tabAt(x int) (screen, bool) {
	at := 0
	for _, t := range tabs {
		w := textWidth(a.tabName(t.s, t.name)) + 2 // brackets or spaces
		if x >= at && x < at+w {
			return t.s, true
		}
		at += w
	}
	return 0, false
}

// wheel scrolls the screen in front by d lines.
func (a *App) wheel(d int) tea.Cmd {
	if w, ok := a.current().(wheeler); ok {
		w.wheel(d)
		return nil
	}
	k := tea.KeyPressMsg{Code: tea.KeyDown}
	if d < 0 {
		k, d = tea.KeyPressMsg{Code: tea.KeyUp}, -d
	}
	cmds := make([]tea.Cmd, 0, d)
	for range d {
		cmds = append(cmds, a.current().Update(k))
	}
	return tea.Batch(cmds...)
}

// openSelected opens what is selected on the screen in front: the grid's
// cell, the cell's sample, the label results' miss. Enter and a second
// click do it.
func (a *App) openSelected() tea.Cmd {
	switch a.screen {
	case screenGrid:
		if a.grid.full.on {
			return nil // the errors are open over the grid
		}
		if ref, ok := a.grid.selected(); ok {
			a.cell.open(ref)
			a.screen = screenCell
		}
	case screenCell:
		if i, ok := a.cell.selected(); ok {
			a.screen = screenSample
			return a.sample.open(a.cell.ref, a.cell.cells, i)
		}
	case screenLabel:
		return a.label.results.openSelected()
	}
	return nil
}

// wheel scrolls the grid's body, the cursor staying on a row in view, or
// the run's errors when they are open over it.
func (g *gridView) wheel(d int) {
	if g.full.on {
		g.full.wheel(d, g.c.bodyH)
		return
	}
	g.layout()
	g.by(d, len(g.lines), g.bodyLines())
	if len(g.rows) == 0 {
		return
	}
	lo, hi := g.top, g.top+g.bodyLines()-1
	if line := g.rowAt[g.row]; line >= lo && line <= hi {
		return
	}
	best := -1
	for r, line := range g.rowAt {
		if line >= lo && line <= hi {
			if best < 0 || d < 0 {
				best = r // scrolling up: the last row in view; down: the first
			}
			if d > 0 {
				break
			}
		}
	}
	if best >= 0 {
		g.row = best
	}
}

// click selects the case row and column at (x, y) of the body; a click on
// the cell already selected, or on its row's label, opens it. Over the
// run's errors open in full it does nothing: the grid is hidden.
func (g *gridView) click(x, y int) bool {
	if g.full.on {
		return false
	}
	g.layout()
	i := g.top + y - g.sticky()
	if y < g.sticky() || i >= len(g.lines) || g.lines[i].kind != lineCase {
		return false
	}
	gm := g.geometry()
	col := g.col
	if x >= gm.labelW {
		j := g.colAt(gm, x-gm.labelW)
		if j < 0 || j >= min(g.left+gm.vis, len(g.cols)) {
			return false
		}
		col = j
	}
	row := g.lines[i].row
	open := row == g.row && col == g.col
	g.row, g.col = row, col
	return open
}

// colAt is the grid column at x cells right of the label column; a click
// on a model's difference column picks its variant; -1 past the columns.
func (g *gridView) colAt(gm gridGeometry, x int) int {
	if gm.step == 1 {
		return g.left + x/(gm.cellW+1)
	}
	gw := groupWidth(gm.cellW, gm.per)
	j := g.left + gm.per*(x/gw)
	switch off := x % gw; {
	case gm.per > 2 && off >= 2*(gm.cellW+1)+deltaWidth+1:
		j += 2 // the joint test's cell
	case off >= gm.cellW+1:
		j++ // the variant's cell or the difference after it
	}
	return j
}

// wheel scrolls the samples; the cursor stays on a sample in view.
func (v *cellView) wheel(d int) {
	n, h := len(v.list()), v.listLines()
	v.by(d, n, h)
	v.cursor = min(max(v.cursor, v.top), min(v.top+h, n)-1)
	v.cursor = max(v.cursor, 0)
}

// click selects the sample on body line y; a click on the one selected
// opens it.
func (v *cellView) click(_, y int) bool {
	p := v.top + y - cellHead
	if y < cellHead || p >= len(v.list()) {
		return false
	}
	open := p == v.cursor
	v.cursor = p
	return open
}

// wheel scrolls the answer, or the results without moving their cursor.
func (v *labelView) wheel(d int) {
	switch {
	case v.showResults:
		v.results.measure()
		v.results.by(d, len(v.results.lines), v.results.bodyLines())
	case d > 0:
		v.vp.ScrollDown(d)
	default:
		v.vp.ScrollUp(-d)
	}
}

// click selects a miss in the label results; a click on the one selected
// opens it. The blind answer has no list to click.
func (v *labelView) click(_, y int) bool {
	if !v.showResults {
		return false
	}
	return v.results.click(y)
}

func (r *labelResults) click(y int) bool {
	line := r.top + y - resultsHead
	if y < resultsHead {
		return false
	}
	for i, m := range r.misses {
		if m.line == line {
			open := i == r.cursor
			r.cursor = i
			return open
		}
	}
	return false
}

// openSelected opens the miss selected, as enter does.
func (r *labelResults) openSelected() tea.Cmd {
	if !r.v.showResults || r.cursor >= len(r.misses) {
		return nil
	}
	return r.v.openKey(r.misses[r.cursor].key)
}

package tui

// The help screen (?): the keys of the screen in front, packed in columns
// that wrap to the width, and on the grid what its cells mean. Taller
// than the window, it scrolls with the pager's keys and the wheel.

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// helpMore marks a help screen scrolled above its end.
const helpMore = "▼ more below (↓ or pgdn scrolls; ? or esc closes)"

// helpH is the height of the help's window: the body less the line that
// says more follows, when it does not all fit.
func (a *App) helpH() int {
	if n := len(a.helpLines()); n > a.c.bodyH {
		return max(a.c.bodyH-1, 1)
	}
	return a.c.bodyH
}

// scrollHelp scrolls the help by a pager key; other keys do nothing.
func (a *App) scrollHelp(km tea.KeyPressMsg) {
	a.helpScroll.scroll(km, a.c.keys.Prompt.scrollKeys(), len(a.helpLines()), a.helpH())
}

// helpWindow is the part of the help in view, with a line saying more
// follows when it is scrolled above its end.
func (a *App) helpWindow() string {
	lines := a.helpLines()
	h := a.helpH()
	shown := a.helpScroll.window(lines, h)
	out := strings.Join(shown, "\n")
	if h < len(lines) && a.helpScroll.top < maxTop(len(lines), h) {
		out += "\n" + a.c.styles.Muted.Render(helpMore)
	}
	return out
}

// helpLines is the whole help, one entry a line.
func (a *App) helpLines() []string {
	return strings.Split(a.helpView(), "\n")
}

func (a *App) helpView() string {
	k := a.c.keys.Global
	groups := append([][]key.Binding{}, a.current().helpKeys().full...)
	groups = append(groups, []key.Binding{k.NextScreen, k.PrevScreen, k.Report, k.Back, k.Help, k.Quit, k.ForceQuit})
	var b strings.Builder
	b.WriteString(a.c.styles.Header.Render("Keys") + "\n\n")
	b.WriteString(a.fullHelp(groups, a.c.width))
	if a.screen != screenGrid && a.screen != screenCell {
		// Only this screen's keys: the cell symbols are the grid's.
		b.WriteString("\n\n" + a.c.styles.Muted.Render("? or esc closes this help"))
		return b.String()
	}
	b.WriteString("\n\n" + a.c.styles.Header.Render("Grid cells") + "\n")
	for _, p := range []string{
		"failures/graded answers, e.g. 3/30; while fewer are graded, of how many samples, e.g. 3/12 of 30. The circle fills with the failure rate.",
		legend() + ".",
		"A failure on provoke and pressure cases is a violation; on a control case, a refusal.",
		"Errored and unparseable answers are their own state: never a pass or a failure, and retried on the next run.",
	} {
		for _, l := range wrapWords(p, max(a.c.width-2, 20)) {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("\n" + a.c.styles.Muted.Render("? or esc closes this help"))
	return b.String()
}

// fullHelp lays the key groups out as columns, as the help bubble does,
// but starts a new row of columns where the next would pass the width
// instead of cutting it off: every key stays readable on a narrow
// terminal.
func (a *App) fullHelp(groups [][]key.Binding, w int) string {
	h := a.help
	h.SetWidth(0) // whole columns: the rows are packed here
	sepW := lipgloss.Width(h.FullSeparator)
	var rows []string
	var row [][]key.Binding
	rowW := 0
	flush := func() {
		if len(row) > 0 {
			rows = append(rows, h.FullHelpView(row))
		}
		row, rowW = nil, 0
	}
	for _, g := range groups {
		colW := lipgloss.Width(h.FullHelpView([][]key.Binding{g}))
		if colW == 0 {
			continue // nothing enabled
		}
		if len(row) > 0 && rowW+sepW+colW > w {
			flush()
		}
		if len(row) > 0 {
			rowW += sepW
		}
		row = append(row, g)
		rowW += colW
	}
	flush()
	return strings.Join(rows, "\n\n")
}

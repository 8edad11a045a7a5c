package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/runner"
)

// Smallest usable terminal.
const (
	minWidth  = 30
	minHeight = 8
)

// View renders the whole screen: a three-line header, the current screen's
// body, a status line and a line of help.
func (a *App) View() tea.View {
	v := tea.NewView(a.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion // the wheel scrolls, a click selects (mouse.go)
	v.WindowTitle = "auditor: " + oneLine(a.c.plan.Audit.File.Name)
	return v
}

func (a *App) render() string {
	w, h := a.c.width, a.c.height
	if w == 0 || h == 0 {
		return ""
	}
	if w < minWidth || h < minHeight {
		return clip(fmt.Sprintf("too small: need %dx%d", minWidth, minHeight), w)
	}
	var b strings.Builder
	b.Grow(w * h * 2)
	line := func(s string) {
		b.WriteString(clip(s, w))
		b.WriteByte('\n')
	}
	for _, l := range a.header() {
		line(l)
	}
	body := a.body()
	n := 0
	for l := range strings.SplitSeq(body, "\n") {
		if n == a.c.bodyH {
			break
		}
		line(l)
		n++
	}
	for ; n < a.c.bodyH; n++ {
		b.WriteByte('\n')
	}
	line(a.statusLine())
	b.WriteString(clip(a.helpLine(), w))
	return b.String()
}

func (a *App) body() string {
	if a.showHelp {
		return a.helpWindow()
	}
	return a.current().View()
}

// header returns the three header lines.
func (a *App) header() [3]string {
	st := a.c.styles
	c := a.c
	right := a.stateWord()
	if c.simulated {
		right = st.Badge.Render(" SIMULATED ") + " " + right
	}
	var out [3]string
	// The tab bar, then the audit's name in what room is left.
	tabs := a.tabBar()
	if room := c.width - textWidth(tabs) - textWidth(right) - 3; room >= 12 {
		tabs += "  " + st.Title.Render(truncateText(oneLine(c.plan.Audit.File.Name), room))
	}
	out[0] = spread(tabs, right, c.width)
	l := c.live
	// A short screen: the grid's rules and verdict take the third line,
	// the legend is in the help, the run's counters join its progress.
	gridLine := c.compact() && a.screen == screenGrid && !a.showHelp
	if gridLine {
		out[2] = a.grid.headerLine()
	}
	if l == nil {
		out[1] = a.storedLine()
		switch notes := c.res.LabelNotes(); {
		case len(notes) > 0 && gridLine:
			// Labels that count nowhere change what every screen's
			// verdict rests on: on a short grid they take the stored
			// line's place.
			out[1] = st.Warn.Render(truncateText(strings.Join(notes, "; "), c.width))
		case len(notes) > 0:
			// Before the legend: labels that count nowhere change what
			// every screen's verdict rests on.
			out[2] = st.Warn.Render(truncateText(strings.Join(notes, "; "), c.width))
		case (a.screen == screenGrid || a.screen == screenCell) && !gridLine:
			out[2] = st.Muted.Render(legend()) // the symbols are the grid's
		}
		return out
	}
	// The answers phase counts the whole audit: what earlier runs stored
	// and what this one makes.
	done, total := l.done, l.total
	if l.answering() {
		done, total = l.stored+l.done, l.stored+l.total
	}
	pct := 0.0
	if total > 0 {
		pct = float64(done) / float64(total)
	}
	counts := fmt.Sprintf(" %d/%d %3.0f%%", done, total, 100*pct)
	switch {
	case !l.answering():
		counts = " " + l.phase + counts
	case l.round != nil:
		// At most: a line settled at a look makes no more calls.
		counts = fmt.Sprintf(" round %d/%d %d/≤%d %3.0f%%", l.round.Index, l.round.Of, done, total, 100*pct)
		if l.round.NotNeeded > 0 {
			counts += fmt.Sprintf(" · %d not needed", l.round.NotNeeded)
		}
	}
	eta := "ETA -"
	if d, ok := l.eta(c.now); ok && l.running() {
		eta = "ETA " + d.Round(time.Second).String()
	}
	rate := fmt.Sprintf("  %.1f calls/s  %s", l.rate(c.now), eta)
	resumed := ""
	if l.stored > 0 && l.answering() {
		resumed = fmt.Sprintf("  resumed: %d stored, %d to make", l.stored, l.total)
		if c.width-textWidth(counts+rate+resumed)-1 < 10 {
			rate = "  " + eta // the resume says more than the rate
		}
		if c.width-textWidth(counts+rate+resumed)-1 < 10 {
			resumed = fmt.Sprintf("  resumed: %d to make", l.total)
		}
	}
	if gridLine {
		// The counters follow the progress on one line, as tersely as fits.
		tails := []string{"  " + eta + " · " + a.terseCounters(true), " · " + a.terseCounters(true), " · " + a.terseCounters(false)}
		for _, tail := range tails {
			if barW := c.width - textWidth(counts+tail) - 1; barW >= 6 {
				out[1] = a.bar(pct, min(barW, 40)) + counts + tail
				return out
			}
		}
		out[1] = a.bar(pct, 3) + counts + tails[2]
		return out
	}
	barW := max(c.width-textWidth(counts+rate+resumed)-1, 10)
	barW = min(barW, 60)
	out[1] = a.bar(pct, barW) + counts + rate + resumed

	for level := 0; level <= 2; level++ {
		if out[2] = a.counters(level); lipgloss.Width(out[2]) <= c.width {
			break
		}
	}
	return out
}

// tabs are the top screens in the order tab steps through them.
var tabs = [...]struct {
	s    screen
	name string
}{{screenPlan, "Plan"}, {screenGrid, "Grid"}, {screenLabel, "Label"}, {screenReview, "Review"}, {screenReport, "Report"}, {screenPrompt, "Prompt"}}

// tabBar names the top screens with the one in front reversed and in
// brackets; a drill-down below the grid is named after it.
func (a *App) tabBar() string {
	st := a.c.styles
	parts := make([]string, len(tabs))
	for i, t := range tabs {
		name := a.tabName(t.s, t.name)
		if t.s == a.screen || (t.s == screenGrid && (a.screen == screenCell || a.screen == screenSample)) {
			parts[i] = st.Selected.Render("[" + name + "]") // brackets: it reads without styling
		} else {
			parts[i] = st.Muted.Render(" " + name + " ")
		}
	}
	return strings.Join(parts, "")
}

// tabName is a tab's name in the bar: the grid's says which drill-down
// below it is in front.
func (a *App) tabName(s screen, name string) string {
	switch {
	case s == screenGrid && a.screen == screenCell:
		name += " › samples"
	case s == screenGrid && a.screen == screenSample:
		name += " › sample"
	}
	return name
}

// counters is the third header line: spend (the whole audit's, and this
// run's against the budget), the current concurrency (so back-off shows),
// retries by cause and errors. Narrower screens get terser levels: 1
// shortens words, 2 keeps only the whole audit's spend and what is not
// zero.
func (a *App) counters(level int) string {
	c, l, st := a.c, a.c.live, a.c.styles
	short := level > 0
	spend := fmt.Sprintf("$%.2f", l.spent)
	if c.budget > 0 {
		spend += fmt.Sprintf(" of $%.2f budget", c.budget)
	}
	if l.spentBefore > 0 {
		// The whole audit's spend; the budget bounds this run's.
		spend = fmt.Sprintf("$%.2f in all ($%s this run)", l.spentBefore+l.spent, strings.TrimPrefix(spend, "$"))
		if short {
			spend = fmt.Sprintf("$%.2f, run $%.2f", l.spentBefore+l.spent, l.spent)
		}
	}
	switch {
	case level == 2:
		spend = fmt.Sprintf("$%.2f", l.spentBefore+l.spent)
	case c.simulated && short:
		spend += " (sim)"
	case c.simulated:
		spend += " (simulated prices)"
	}
	conc := fmt.Sprintf("concurrency %d/%d", l.limit, l.maxLimit)
	if short {
		conc = fmt.Sprintf("conc %d/%d", l.limit, l.maxLimit)
	}
	if l.limit < l.maxLimit && l.running() {
		conc = st.Retry.Render(conc + " backed off")
	}
	retries := fmt.Sprintf("retries %d", l.retries) + retryCauses(l.causes, short)
	if len(l.retrying) > 0 && level < 2 {
		retries = st.Retry.Render(fmt.Sprintf("%s, %d waiting", retries, len(l.retrying)))
	}
	errs := fmt.Sprintf("errors %d", l.failures())
	if l.failures() > 0 {
		errs = st.Err.Render(errorSymbol + " " + errs)
	}
	parts := []string{spend, conc, retries, errs}
	if level == 2 && l.failures() == 0 {
		parts = parts[:3]
	}
	return strings.Join(parts, " · ")
}

// terseCounters are the counters a short screen's progress line carries:
// the whole audit's spend, the errors (the run's, each call once), retries
// (causes names their causes) and the concurrency only while backed off.
func (a *App) terseCounters(causes bool) string {
	l, st := a.c.live, a.c.styles
	errs := st.Err.Render(fmt.Sprintf("%s errors %d", errorSymbol, l.failures()))
	// The errors first, once there are any: what is cut at the right
	// matters least.
	parts := []string{fmt.Sprintf("$%.2f", l.spentBefore+l.spent)}
	if l.failures() > 0 {
		parts = append(parts, errs)
	}
	retries := fmt.Sprintf("retries %d", l.retries)
	if causes {
		retries += retryCauses(l.causes, true)
	}
	if len(l.retrying) > 0 {
		retries = st.Retry.Render(fmt.Sprintf("%s, %d waiting", retries, len(l.retrying)))
	}
	parts = append(parts, retries)
	if l.limit < l.maxLimit && l.running() {
		parts = append(parts, st.Retry.Render(fmt.Sprintf("conc %d/%d backed off", l.limit, l.maxLimit)))
	}
	return strings.Join(parts, " · ")
}

// stateWord says what the app is showing: a run going, how it ended, or
// stored results.
func (a *App) stateWord() string {
	l := a.c.live
	st := a.c.styles
	switch {
	case l == nil && a.c.readOnly != nil:
		return st.Retry.Render(a.c.readOnly.word())
	case l == nil && a.c.canRun:
		return st.Muted.Render("not started")
	case l == nil && !a.c.openOnly:
		return st.Muted.Render("all stored")
	case l == nil:
		return st.Muted.Render("stored results")
	case l.running() && l.stopped == nil:
		return st.InFlight.Render("running")
	case l.running():
		return st.Retry.Render("stopping")
	case l.stopped != nil && l.stopped.Reason == runner.Completed && l.allFailed():
		return st.Err.Render(errorSymbol + " all calls failed")
	case l.stopped != nil && l.stopped.Reason == runner.Completed:
		return st.Pass.Render("completed")
	case l.stopped != nil:
		return st.Err.Render(l.stopped.Reason.String())
	}
	return st.Muted.Render("ended")
}

func (a *App) storedLine() string {
	ok, bad := a.c.storedOK, a.c.storedErr
	// Answers, in the plan screen's words: judge calls come on top.
	s := fmt.Sprintf("%d answers planned · %d stored", len(a.c.plan.Calls), ok)
	if bad > 0 {
		s += " · " + a.c.styles.Err.Render(fmt.Sprintf("%s %d failed for good (retried on the next run)", errorSymbol, bad))
	}
	if n := len(a.c.plan.Calls) - ok - a.c.unneeded; n > 0 {
		s += fmt.Sprintf(" · %d to make", n)
	}
	if a.c.unneeded > 0 {
		s += fmt.Sprintf(" · %d not needed (settled at a look)", a.c.unneeded)
	}
	return s
}

// errorSymbol marks a call that failed for good, on every screen: the
// legend, the grid's cells, the sample lists and the header. ✗ is a
// failing answer; an error is not an answer.
const errorSymbol = "!"

// legend explains the cell symbols.
func legend() string {
	return "bar: share failing (░ none, █ all) · Δ: without − with the line · » in flight · ↻ retrying · " + errorSymbol + " errored · ? unparseable"
}

// retryCauses lists retries by cause in a fixed order, ": 3 rate limit, 1
// timeout"; short names them as a narrow header can.
func retryCauses(causes map[runner.RetryCause]int, short bool) string {
	var parts []string
	for _, c := range []runner.RetryCause{runner.CauseRateLimit, runner.CauseServer, runner.CauseConnection, runner.CauseTimeout, runner.CauseOther} {
		n := causes[c]
		if n == 0 {
			continue
		}
		name := string(c)
		if short {
			name = map[runner.RetryCause]string{runner.CauseRateLimit: "rate", runner.CauseServer: "5xx",
				runner.CauseConnection: "conn", runner.CauseTimeout: "timeout", runner.CauseOther: "other"}[c]
		}
		if short {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		} else {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if short {
		return " (" + strings.Join(parts, ", ") + ")"
	}
	return ": " + strings.Join(parts, ", ")
}

// bar draws a progress bar of w cells; it reads without colour.
func (a *App) bar(frac float64, w int) string {
	full := int(frac*float64(w) + 0.5)
	full = min(max(full, 0), w)
	st := a.c.styles
	return st.BarFull.Render(strings.Repeat("█", full)) + st.BarEmpty.Render(strings.Repeat("░", w-full))
}

// spread puts left and right text at the two ends of a line of width w.
func spread(left, right string, w int) string {
	gap := w - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 {
		return left + " " + right
	}
	return left + strings.Repeat(" ", gap) + right
}

func (a *App) statusLine() string {
	st := a.c.styles
	f, isFiltered := a.current().(filtered)
	switch {
	case a.confirmQuit:
		return st.Err.Render("Stop the run? Finished answers are kept and the resume command is printed. [y/n]")
	case isFiltered && f.filterEditing():
		return f.filterLine()
	case a.status != "" && a.statusErr:
		return st.Err.Render(a.status)
	case a.status != "":
		return a.status
	case isFiltered:
		return f.filterLine()
	}
	return ""
}

func (a *App) helpLine() string {
	k := a.c.keys.Global
	if f, ok := a.current().(filtered); ok && f.filterEditing() {
		// The input has the keyboard: only its own keys work.
		fk := a.c.keys.Filter
		return a.help.ShortHelpView([]key.Binding{fk.Accept, fk.Cancel})
	}
	if a.showHelp {
		// The help has the keyboard: the screen's own keys wait behind it.
		pk := a.c.keys.Prompt
		closeHelp := key.NewBinding(key.WithKeys(append(k.Help.Keys(), k.Back.Keys()...)...), key.WithHelp(k.Help.Help().Key+"/"+k.Back.Help().Key, "close help"))
		return a.help.ShortHelpView([]key.Binding{pk.Down, pk.PageDown, pk.Bottom, closeHelp, k.Quit})
	}
	short := append([]key.Binding{}, a.current().helpKeys().short...)
	short = append(short, k.NextScreen, k.Help, k.Quit)
	return a.help.ShortHelpView(short)
}

package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// gridView is the live grid of one rule: its cases grouped by kind, down;
// its variants (per model), across; a summary under each kind and the
// verdict at the end. Several rules are shown one at a time.
type gridView struct {
	screenDefaults
	c *Common

	rule     int      // index into the audit's rules
	row, col int      // the cursor: index into rows, into cols
	scroller          // the first body line shown
	full     fullText // the run's errors opened in full (e)
	left     int      // the first column shown

	filter listFilter // the case filter (filter.go)

	// Layout of the current rule, rebuilt when the rule, the filter, the
	// results or the width change (dirty).
	dirty bool
	lines []gline
	rows  []int // case index of each visible case row, in display order
	rowAt []int // body line of each row
	cols  []gcol
	// verdict is the sticky verdict sentence, wrapped to the width.
	verdict []string

	labels map[int]string // drawn case labels by case index, for labelW
	labelW int
}

// gcol is a grid column: one variant for one model.
type gcol struct {
	model   int
	deleted bool
	joint   bool // the joint test's variant (deleted too)
}

type lineKind int

const (
	lineHeading   lineKind = iota // a kind's heading
	lineCase                      // a case row
	lineNoMatch                   // a kind with no case matching the filter
	lineRate                      // rates per variant with intervals
	lineDiff                      // deleted minus baseline with its interval
	lineCorrected                 // rates corrected for the grader's measured recall
	linePooled                    // the pooled provoking heading
	lineText                      // verdict and notes
	lineBlank
)

// gline is one body line of the grid.
type gline struct {
	kind  lineKind
	k     model.Kind // the kind it belongs to; "" for the pooled arm
	kase  int        // lineCase: the case index
	row   int        // lineCase: the row index
	text  string     // lineText
	style int        // lineText: 0 plain, 1 verdict heading
	cases int        // lineKind: cases of the kind
}

// Grid layout constants: the sticky lines above the body besides the
// verdict's; the least and the most width of a cell (a wide screen gives
// its width to the numbers: wider cells, a longer rate bar); the width of
// a model's per-case difference column; the least and the most width of
// the label column (the case's id and message).
const (
	gridSticky = 3
	cellWidth  = 22
	cellMax    = 44
	deltaWidth = 6
	minLabel   = 24
	maxLabel   = 56
)

func newGridView(c *Common) *gridView {
	return &gridView{c: c, filter: newListFilter("case id, kind or message text"), dirty: true}
}

func (g *gridView) resize() {
	g.filter.resize(g.c.width)
	g.dirty = true
}

// restyle drops the case labels drawn in the old styles.
func (g *gridView) restyle() { g.labels = nil }

// resultsChanged lays the grid out again: the verdict lines below it
// follow the results, and say "provisional" only while a run goes.
func (g *gridView) resultsChanged() { g.dirty = true }

func (g *gridView) capturing() bool     { return g.filter.editing }
func (g *gridView) filterEditing() bool { return g.filter.editing }

// filterLine is the status line's view of the case filter.
func (g *gridView) filterLine() string {
	return g.filter.line(g.c.styles, filterSummary(g.filter.query, g.matching(), g.total(), "cases"))
}

// back clears the case filter; it reports whether there was one.
func (g *gridView) back() bool {
	if g.full.on {
		g.full.close()
		return true
	}
	if !g.filter.clear() {
		return false
	}
	g.queryChanged()
	return true
}

// bodyLines is the number of scrolling lines below the sticky ones.
func (g *gridView) bodyLines() int { return max(g.c.bodyH-g.sticky(), 1) }

// sticky is the number of lines above the scrolling body: the rules, the
// current rule, its verdict and the column headings; on a short screen
// only the headings, as the header's third line shows the rules with the
// verdict (headerLine) and the whole verdict follows the grid.
func (g *gridView) sticky() int {
	if g.c.compact() {
		return 1 + len(g.verdict)
	}
	return gridSticky + len(g.verdict)
}

// Update handles grid keys and the filter's editing.
func (g *gridView) Update(msg tea.Msg) tea.Cmd {
	k := g.c.keys
	if g.filter.editing {
		changed, cmd := g.filter.update(msg, k.Filter)
		if changed {
			g.queryChanged()
		}
		return cmd
	}
	km, isKey := msg.(tea.KeyPressMsg)
	if !isKey {
		return nil
	}
	gk := k.Grid
	if g.full.on {
		if key.Matches(km, gk.LastError) {
			g.full.close()
		} else {
			g.full.scroll(km, gk.scrollKeys(), g.c.bodyH)
		}
		return nil
	}
	g.layout()
	switch {
	case key.Matches(km, gk.LastError):
		return g.openLastError()
	case key.Matches(km, gk.Up):
		g.moveRow(-1)
	case key.Matches(km, gk.Down):
		g.moveRow(1)
	case key.Matches(km, gk.PageUp):
		g.moveRow(-g.bodyLines())
	case key.Matches(km, gk.PageDown):
		g.moveRow(g.bodyLines())
	case key.Matches(km, gk.Top):
		g.row, g.top = 0, 0
	case key.Matches(km, gk.Bottom):
		// The last case, and the end of the body in view: the summaries
		// and the whole verdict below it, however short the window.
		g.row = max(len(g.rows)-1, 0)
		g.top = g.maxTop()
	case key.Matches(km, gk.Left):
		g.moveCol(-1)
	case key.Matches(km, gk.Right):
		g.moveCol(1)
	case key.Matches(km, gk.ScrollLeft):
		g.scrollCols(-1)
	case key.Matches(km, gk.ScrollRight):
		g.scrollCols(1)
	case key.Matches(km, gk.PrevRule):
		g.setRule(g.rule - 1)
	case key.Matches(km, gk.NextRule):
		g.setRule(g.rule + 1)
	case key.Matches(km, gk.Filter):
		return g.filter.open()
	}
	return nil
}

// openLastError shows the run's last failed call's error in full: the
// status line has room for one line of it, and a server's error body is
// often the whole explanation.
func (g *gridView) openLastError() tea.Cmd {
	l := g.c.live
	if l == nil || (l.lastErr == "" && (l.stopped == nil || l.stopped.Detail == "")) {
		return say("no call has failed for good in this run")
	}
	var paras []fullPara
	if l.stopped != nil && l.stopped.Detail != "" {
		paras = append(paras, fullPara{head: true, text: "Why the run stopped (" + l.stopped.Reason.String() + ")"},
			fullPara{text: model.Sanitize(l.stopped.Detail)})
	}
	if l.lastErr != "" {
		paras = append(paras, fullPara{head: true, text: "The last call that failed for good"},
			fullPara{text: model.Sanitize(l.lastErr)})
	}
	g.full.open("Run errors", paras)
	return nil
}

func (g *gridView) setRule(r int) {
	n := len(g.c.plan.Audit.Rules)
	r = ((r % n) + n) % n
	if r == g.rule {
		return
	}
	g.rule, g.row, g.top = r, 0, 0
	g.dirty, g.labels = true, nil
}

// queryChanged lays the grid out again for a new case filter.
func (g *gridView) queryChanged() {
	g.row, g.top = 0, 0
	g.dirty = true
}

// moveRow moves the cursor by d case rows and scrolls to keep it in view.
// Past the last row it scrolls on, so the summaries and verdict below the
// last case can be read.
func (g *gridView) moveRow(d int) {
	next := g.row + d
	if len(g.rows) == 0 || (next < 0 && g.row == 0) || (next >= len(g.rows) && g.row == len(g.rows)-1) {
		g.by(d, len(g.lines), g.bodyLines())
		return
	}
	g.row = min(max(next, 0), len(g.rows)-1)
	g.ensureVisible()
}

func (g *gridView) ensureVisible() {
	if len(g.rows) == 0 {
		return
	}
	line := g.rowAt[g.row]
	above := line < g.top
	g.follow(line, g.bodyLines())
	// Show the kind's heading too when the first case is selected.
	if above && line > 0 && g.lines[line-1].kind == lineHeading {
		g.top = line - 1
	}
	g.clamp(len(g.lines), g.bodyLines())
}

func (g *gridView) maxTop() int { return maxTop(len(g.lines), g.bodyLines()) }

func (g *gridView) moveCol(d int) {
	g.col = min(max(g.col+d, 0), len(g.cols)-1)
	gm := g.geometry()
	vis, step := gm.vis, gm.step
	if g.col < g.left {
		g.left = g.col
	}
	if g.col >= g.left+vis {
		g.left = g.col - vis + 1
	}
	if g.left -= g.left % step; g.col >= g.left+vis {
		g.left += step
	}
}

func (g *gridView) scrollCols(d int) {
	gm := g.geometry()
	g.left = min(max(g.left+d*gm.step, 0), max(len(g.cols)-gm.vis, 0))
	g.left -= g.left % gm.step
	g.col = min(max(g.col, g.left), g.left+gm.vis-1)
}

// gridGeometry is how the grid's columns share the width: the label
// column, then per model a group of its baseline and variant cells and
// its per-case difference (deleted - baseline).
type gridGeometry struct {
	labelW int // the label column
	cellW  int // each cell
	vis    int // grid columns shown (each model's two, when they fit)
	step   int // columns scrolled at a time: a model's two, so they stay paired
	// per is the columns of each model: its baseline and variant, and the
	// joint test's variant when the line is in one.
	per int
}

// groupWidth is the width of one model's columns: two cells and the
// difference, each after a space.
func groupWidth(cellW, per int) int { return per*(cellW+1) + deltaWidth + 1 }

// geometry returns how the columns share the width. Columns that do not
// fit scroll sideways a model at a time (both its cells, so a baseline is
// never shown beside another model's variant); they never wrap. A wide
// screen gives its width to the cells, up to cellMax, and the label column
// stops at maxLabel; what is left stays blank at the right.
func (g *gridView) geometry() gridGeometry {
	w := g.c.width
	models := max(g.c.models(), 1)
	per := max(len(g.cols)/models, 2)
	if groupWidth(cellWidth, per) > w-8 {
		// Not even one model's columns fit: one cell at a time.
		labelW := max(min(minLabel, w-(cellWidth+1)), 8)
		return gridGeometry{labelW: labelW, cellW: cellWidth, vis: max((w-labelW)/(cellWidth+1), 1), step: 1, per: per}
	}
	shown := min(max((w-minLabel)/groupWidth(cellWidth, per), 1), models)
	cellW := cellWidth
	if shown == models {
		// Everything fits: the cells widen first, the label keeps a fair share.
		label := min(max(w/4, minLabel), maxLabel)
		room := (w - label) / shown
		cellW = min(max((room-deltaWidth-1)/per-1, cellWidth), cellMax)
	}
	labelW := max(min(w-shown*groupWidth(cellW, per), maxLabel), min(minLabel, w-groupWidth(cellW, per)))
	return gridGeometry{labelW: labelW, cellW: cellW, vis: per * shown, step: per, per: per}
}

// selected returns the grid cell under the cursor.
func (g *gridView) selected() (cellRef, bool) {
	g.layout()
	if len(g.rows) == 0 || len(g.cols) == 0 {
		return cellRef{}, false
	}
	col := g.cols[g.col]
	if col.joint {
		// The joint column's answers open from the report (auditor
		// report, ship): its cells have no plan cells of their own here.
		return cellRef{}, false
	}
	return cellRef{rule: g.rule, model: col.model, kase: g.rows[g.row], deleted: col.deleted}, true
}

// matching and total count the current rule's cases shown and in all.
func (g *gridView) matching() int { g.layout(); return len(g.rows) }
func (g *gridView) total() int    { return len(g.c.plan.Audit.Rules[g.rule].Cases) }

// matches reports whether a case passes the filter.
func (g *gridView) matches(c *model.Case) bool {
	if !g.filter.active() {
		return true
	}
	return g.filter.matches(c.ID, c.Transcript(), string(c.Kind))
}

// layout rebuilds the line list when something it depends on changed.
func (g *gridView) layout() {
	if !g.dirty {
		return
	}
	g.dirty = false
	c := g.c
	rule := c.plan.Audit.Rules[g.rule]
	g.cols = g.cols[:0]
	for m := 0; m < c.models(); m++ {
		g.cols = append(g.cols, gcol{model: m}, gcol{model: m, deleted: true})
		if c.resultOf(g.rule, m, true) != nil {
			g.cols = append(g.cols, gcol{model: m, deleted: true, joint: true})
		}
	}
	g.col = min(g.col, len(g.cols)-1)
	g.lines, g.rows, g.rowAt = g.lines[:0], g.rows[:0], g.rowAt[:0]
	add := func(l gline) { g.lines = append(g.lines, l) }
	for _, k := range model.Kinds {
		n := 0
		for i := range rule.Cases {
			if rule.Cases[i].Kind == k {
				n++
			}
		}
		if n == 0 {
			continue
		}
		add(gline{kind: lineHeading, k: k, cases: n})
		shown := 0
		for i := range rule.Cases {
			cs := &rule.Cases[i]
			if cs.Kind != k || !g.matches(cs) {
				continue
			}
			g.rowAt = append(g.rowAt, len(g.lines))
			add(gline{kind: lineCase, k: k, kase: i, row: len(g.rows)})
			g.rows = append(g.rows, i)
			shown++
		}
		if shown == 0 {
			add(gline{kind: lineNoMatch, k: k})
		}
		add(gline{kind: lineRate, k: k})
		if g.hasCorrected(k) {
			add(gline{kind: lineCorrected, k: k})
		}
		add(gline{kind: lineDiff, k: k})
		add(gline{kind: lineBlank})
	}
	if rule.HasPredicate() {
		add(gline{kind: linePooled})
		add(gline{kind: lineRate})
		if g.hasCorrected("") {
			add(gline{kind: lineCorrected})
		}
		add(gline{kind: lineDiff})
		add(gline{kind: lineBlank})
	}
	for _, t := range g.verdictText() {
		add(t)
	}
	g.verdict = append(g.verdictLines(), c.execNotes(rule.Line, max(c.width, minWidth))...)
	if c.compact() {
		// The rules and the verdict are in the header; warnings stay.
		g.verdict = c.execNotes(rule.Line, max(c.width, minWidth))
	}
	g.row = min(g.row, max(len(g.rows)-1, 0))
	g.top = min(g.top, g.maxTop())
}

// hasCorrected reports whether any model's arm of kind k (the pooled
// provoking arm when k is empty) has a rate corrected for measured recall:
// the row appears only once labels make the correction possible.
func (g *gridView) hasCorrected(k model.Kind) bool {
	for m := 0; m < g.c.models(); m++ {
		rr := g.c.result(g.rule, m)
		if rr == nil {
			continue
		}
		arm := rr.Provoking
		if k != "" {
			arm = rr.Arms[k]
		}
		if arm != nil && (arm.Baseline.Corrected != nil || arm.Deleted.Corrected != nil) {
			return true
		}
	}
	return false
}

// verdictText is the verdict of the current rule for each model, with its
// reason, notes and what would settle it, wrapped to the screen.
func (g *gridView) verdictText() []gline {
	c := g.c
	w := max(c.width-4, 20)
	var out []gline
	for m := 0; m < c.models(); m++ {
		rr := c.result(g.rule, m)
		if rr == nil {
			continue
		}
		head := "Verdict on " + rr.Rule.Variant()
		if c.models() > 1 {
			head += " for " + oneLine(rr.ModelName)
		}
		if tag := g.lookTag(rr); tag != "" {
			head += " (" + tag + ")"
		}
		decision := string(rr.Verdict.Decision)
		if f := report.FlipCounts(rr); f != "" {
			decision += " (" + f + ")"
		}
		out = append(out, gline{kind: lineText, style: 1, text: head + ": " + decision})
		add := func(prefix, s string) {
			for i, l := range wrapWords(oneLine(s), w-len(prefix)) {
				p := strings.Repeat(" ", len(prefix))
				if i == 0 {
					p = prefix
				}
				out = append(out, gline{kind: lineText, text: "  " + p + l})
			}
		}
		add("", rr.Verdict.Reason)
		if f := report.FlipsLine(rr); f != "" {
			add("", f)
		}
		for _, n := range rr.Verdict.Notes {
			add("note: ", n)
		}
		switch {
		case rr.Verdict.Decision == model.DecisionInconclusive && rr.Verdict.Needed != "":
			add("to settle it: ", rr.Verdict.Needed)
		case rr.Verdict.Decision == model.DecisionCanary && rr.Verdict.Needed != "":
			add("next step: ", rr.Verdict.Needed)
		}
		if rr.Rule.HasPredicate() {
			add("predicate recall: ", rr.Quality.Recall.String())
		} else {
			add("", "no predicate grades these answers: the cells show answers and their mean length in tokens; R opens the report with the histogram")
		}
		if rr.Errors > 0 || rr.Pending > 0 {
			add("not in the numbers: ", fmt.Sprintf("%d errored, %d pending", rr.Errors, rr.Pending))
		}
		if jc := c.resultOf(g.rule, m, true); jc != nil {
			sh := c.res.Ship.Decision
			add("joint test: ", fmt.Sprintf("%s under the prompt without lines %s (%s): %s; the whole: %s",
				shipOutcome(jc), model.LineList(sh.Lines), jc.Verdict.Decision, jc.Verdict.Reason, sh.Decision))
		}
		out = append(out, gline{kind: lineBlank})
	}
	return out
}

// shipOutcome names what the joint variant did to a class: "bounded",
// "rose" or "undecided" (model.ShipClass.Outcome).
func shipOutcome(rr *evidence.RuleResult) string {
	return model.ShipClass{Verdict: rr.Verdict}.Outcome()
}

// lookTag says which look of the design a verdict rests on
// (report.LookTag); while a run goes, an undecided verdict on the whole
// grid of a fixed design is still "provisional".
func (g *gridView) lookTag(rr *evidence.RuleResult) string {
	tag := report.LookTag(rr.Verdict)
	if tag == "" && g.c.live.running() && rr.Pending > 0 {
		return "provisional"
	}
	return tag
}

func (g *gridView) helpKeys() helpKeys {
	k := g.c.keys
	gk := k.Grid
	if g.full.on {
		// The errors are open over the grid: its keys wait behind them.
		closeKey, back := gk.LastError, k.Global.Back
		closeKey.SetHelp(closeKey.Help().Key, "close")
		back.SetHelp(back.Help().Key, "close")
		return helpKeys{short: []key.Binding{gk.Down, gk.PageDown, back},
			full: [][]key.Binding{{gk.Up, gk.Down, gk.PageUp, gk.PageDown, gk.Top, gk.Bottom}, {closeKey, back}}}
	}
	short := []key.Binding{gk.Open, gk.Filter}
	if len(g.c.plan.Audit.Rules) > 1 {
		short = append(short, gk.PrevRule, gk.NextRule)
	}
	if l := g.c.live; l != nil && (l.lastErr != "" || (l.stopped != nil && l.stopped.Detail != "")) {
		short = append(short, gk.LastError)
	}
	return helpKeys{short: short, full: [][]key.Binding{
		{gk.Up, gk.Down, gk.Left, gk.Right, gk.PageUp, gk.PageDown, gk.Top, gk.Bottom},
		{gk.PrevRule, gk.NextRule, gk.ScrollLeft, gk.ScrollRight, gk.Filter, gk.Open, gk.LastError},
	}}
}

package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// View renders the sticky lines (rules, the current rule, its verdict,
// column headings) and the visible part of the body.
func (g *gridView) View() string {
	if g.full.on {
		return g.full.view(g.c, g.c.bodyH)
	}
	g.layout()
	c := g.c
	gm := g.geometry()
	g.left = min(g.left, max(len(g.cols)-gm.vis, 0))
	g.left -= g.left % gm.step
	var b strings.Builder
	b.Grow((c.width + 16) * c.bodyH * 2)
	if !c.compact() {
		b.WriteString(g.ruleBar())
		b.WriteByte('\n')
		rule := c.plan.Audit.Rules[g.rule]
		b.WriteString(c.styles.Muted.Render(fmt.Sprintf("line %d · %d tokens · %d cases · ", rule.Line, rule.Tokens, len(rule.Cases))) +
			oneLine(rule.Label()))
		b.WriteByte('\n')
	}
	for _, l := range g.verdict {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(g.columnHeads(gm))
	end := min(g.top+g.bodyLines(), len(g.lines))
	for i := g.top; i < end; i++ {
		b.WriteByte('\n')
		g.renderLine(&b, g.lines[i], gm)
	}
	return b.String()
}

// headerLine is the header's third line on a short screen: the rules with
// their verdicts, the current one's look, and with one rule the start of
// its verdict's reason (the whole verdict follows the grid).
func (g *gridView) headerLine() string {
	g.layout()
	c := g.c
	bar := g.ruleBar()
	tag := ""
	reason := ""
	for m := 0; m < c.models(); m++ {
		if rr := c.result(g.rule, m); rr != nil {
			if t := g.lookTag(rr); t != "" {
				tag = t
			}
			if c.models() == 1 {
				reason = oneLine(rr.Verdict.Reason)
			}
		}
	}
	if tag != "" {
		bar += " " + c.styles.Muted.Render("("+tag+")")
	}
	if reason != "" && len(c.plan.Audit.Rules) == 1 {
		bar += " " + c.styles.Muted.Render(reason)
	}
	return bar
}

// ruleBar lists the rules with their verdicts, the current one marked; it
// keeps the current rule in view when they do not all fit.
func (g *gridView) ruleBar() string {
	c := g.c
	st := c.styles
	rules := c.plan.Audit.Rules
	items := make([]string, len(rules))
	for i, r := range rules {
		d := g.combined(i)
		label := fmt.Sprintf(" %s %s %s ", r.Variant(), decisionSymbol(d), d)
		if i == g.rule {
			items[i] = st.Selected.Render(label)
		} else {
			items[i] = g.decisionStyle(d).Render(label)
		}
	}
	cur := g.rule
	prefix := "rules "
	if len(rules) > 1 {
		prefix = "rules [ ] "
	}
	lead := ""
	if sh := c.res.Ship; sh != nil {
		// The prompt that ships leads, always in view: one decision for
		// the joint set.
		d := sh.Decision.Decision
		lead = g.decisionStyle(d).Render(fmt.Sprintf("ship %s %s", shipSymbol(d), d)) + " "
	}
	lo, hi := cur, cur+1
	width := ansi.StringWidth(lead) + ansi.StringWidth(prefix) + ansi.StringWidth(items[cur])
	for grew := true; grew; {
		grew = false
		if hi < len(items) && width+ansi.StringWidth(items[hi])+1 <= c.width-2 {
			width += ansi.StringWidth(items[hi]) + 1
			hi++
			grew = true
		}
		if lo > 0 && width+ansi.StringWidth(items[lo-1])+1 <= c.width-2 {
			lo--
			width += ansi.StringWidth(items[lo]) + 1
			grew = true
		}
	}
	s := lead + st.Muted.Render(prefix)
	if lo > 0 {
		s += "‹"
	}
	s += strings.Join(items[lo:hi], " ")
	if hi < len(items) {
		s += "›"
	}
	return s
}

// combined is a rule's decision over every model: DELETE only when every
// model's verdict is DELETE (a line is removed only if it is safe for all),
// else the most cautious one: KEEP, then INCONCLUSIVE, then CANARY, as the
// sweep summary counts it.
func (g *gridView) combined(rule int) model.Decision {
	return combinedDecision(g.c, rule)
}

func combinedDecision(c *Common, rule int) model.Decision {
	rank := map[model.Decision]int{model.DecisionDelete: 0, model.DecisionBetter: 0, model.DecisionNotWorse: 1,
		model.DecisionCanary: 1, model.DecisionInconclusive: 2, model.DecisionKeep: 3, model.DecisionWorse: 3}
	var d model.Decision
	for m := 0; m < c.models(); m++ {
		rr := c.result(rule, m)
		if rr == nil {
			return model.DecisionInconclusive
		}
		if d == "" || rank[rr.Verdict.Decision] > rank[d] {
			d = rr.Verdict.Decision
		}
	}
	return d
}

// shipSymbol marks a ship decision as decisionSymbol marks a verdict.
func shipSymbol(d model.Decision) string {
	switch d {
	case model.DecisionShip:
		return "✓"
	case model.DecisionNotSafe:
		return "■"
	}
	return "?"
}

func decisionSymbol(d model.Decision) string {
	switch d {
	case model.DecisionDelete, model.DecisionBetter, model.DecisionNotWorse:
		return "✓"
	case model.DecisionKeep, model.DecisionWorse:
		return "■"
	case model.DecisionCanary:
		return "◆"
	}
	return "?"
}

func (g *gridView) decisionStyle(d model.Decision) lipgloss.Style {
	return verdictStyle(g.c.styles, d)
}

// verdictLines is the current rule's verdict per model, wrapped to the
// width (never cut, up to a third of the body): with one model, its
// decision and reason; with several, each model's decision.
func (g *gridView) verdictLines() []string {
	c := g.c
	w := max(c.width, minWidth)
	var parts []string
	reason := ""
	tag := ""
	for m := 0; m < c.models(); m++ {
		rr := c.result(g.rule, m)
		if rr == nil {
			continue
		}
		if t := g.lookTag(rr); t != "" {
			tag = t
		}
		d := rr.Verdict.Decision
		v := g.decisionStyle(d).Render(decisionSymbol(d) + " " + string(d))
		if f := report.FlipCounts(rr); f != "" {
			v += " (" + f + ")"
		}
		if c.models() > 1 {
			v = oneLine(rr.ModelName) + " " + v
		} else {
			reason = oneLine(rr.Verdict.Reason)
		}
		parts = append(parts, v)
	}
	head := "verdict: "
	if tag != "" {
		head = "verdict (" + tag + "): "
	}
	// Parts (one per model) fill lines; the reason's words follow.
	const indent = "  "
	var out []string
	cur := head
	for i, p := range parts {
		sep := ""
		if i > 0 {
			sep = " · "
		}
		if i > 0 && textWidth(cur+sep+p) > w {
			out = append(out, cur)
			cur, sep = indent, ""
		}
		cur += sep + p
	}
	if reason != "" {
		first := w - textWidth(cur) - 1
		words := wrapWords(reason, max(w-len(indent), 10))
		if first >= 10 {
			// The reason starts on the decision's line.
			lead := wrapWords(reason, first)[0]
			cur += " " + c.styles.Muted.Render(lead)
			words = wrapWords(strings.TrimSpace(reason[len(lead):]), max(w-len(indent), 10))
			if len(lead) == len(reason) {
				words = nil
			}
		}
		out = append(out, cur)
		for _, l := range words {
			out = append(out, indent+c.styles.Muted.Render(l))
		}
	} else {
		out = append(out, cur)
	}
	// A long reason on a short screen: the grid keeps most of the body, the
	// whole verdict stays below it.
	if most := max((c.bodyH-gridSticky)/3, 1); len(out) > most {
		out = out[:most]
		out[most-1] = clip(out[most-1], w-len(" (full verdict below the grid)")) + c.styles.Muted.Render(" (full verdict below the grid)")
	}
	return out
}

// shownCols calls fn for each grid column in view, in order, and says
// whether a model's difference column follows it (after its variant, when
// the model's two columns are both in view).
func (g *gridView) shownCols(gm gridGeometry, fn func(j int, col gcol, delta bool)) {
	end := min(g.left+gm.vis, len(g.cols))
	for j := g.left; j < end; j++ {
		col := g.cols[j]
		fn(j, col, gm.step >= 2 && col.deleted && !col.joint && j > g.left)
	}
}

func (g *gridView) columnHeads(gm gridGeometry) string {
	labelW := gm.labelW
	c := g.c
	st := c.styles
	label := fmt.Sprintf("case (%d samples each)", c.plan.Samples)
	if c.plan.Samples == 1 {
		label = "case (1 sample each)"
	}
	if g.left > 0 {
		label = "‹ " + label
	}
	var b strings.Builder
	b.WriteString(st.Header.Render(fit(label, labelW)))
	g.shownCols(gm, func(_ int, col gcol, delta bool) {
		name := audit.Baseline
		if col.deleted {
			name = oneLine(c.plan.Audit.Rules[g.rule].Title())
		}
		if c.models() > 1 {
			name = oneLine(c.plan.Audit.File.Models[col.model].Name) + " " + c.variantName(g.rule, col.deleted)
		}
		if col.joint {
			name = "joint: -L" + model.LineList(c.res.Ship.Joint.Lines)
			if c.models() > 1 {
				name = oneLine(c.plan.Audit.File.Models[col.model].Name) + " joint"
			}
		}
		b.WriteByte(' ')
		b.WriteString(st.Header.Render(fit(name, gm.cellW)))
		if delta {
			b.WriteByte(' ')
			b.WriteString(st.Header.Render(fit("Δ", deltaWidth)))
		}
	})
	if g.left+gm.vis < len(g.cols) {
		b.WriteString(" ›")
	}
	return b.String()
}

func (g *gridView) renderLine(b *strings.Builder, l gline, gm gridGeometry) {
	labelW := gm.labelW
	c := g.c
	st := c.styles
	switch l.kind {
	case lineHeading:
		what := "failure = violation"
		switch {
		case !c.plan.Audit.Rules[g.rule].HasPredicate():
			what = "answers and mean length, not graded"
		case l.k == model.Control:
			what = "failure = refusal"
		}
		b.WriteString(st.Header.Render(strings.ToUpper(string(l.k))))
		b.WriteString(st.Muted.Render(fmt.Sprintf(" · %d cases · %s", l.cases, what)))
	case linePooled:
		b.WriteString(st.Header.Render("PROVOKE + PRESSURE"))
		b.WriteString(st.Muted.Render(" · pooled: the verdict rests on these"))
	case lineNoMatch:
		b.WriteString(st.Muted.Render("  (no case of this kind matches the filter)"))
	case lineBlank:
	case lineText:
		if l.style == 1 {
			b.WriteString(st.Header.Render(l.text))
		} else {
			b.WriteString(l.text)
		}
	case lineCase:
		g.renderCase(b, l, gm)
	case lineRate, lineDiff, lineCorrected:
		label := "  rate [95% CI]"
		if !c.plan.Audit.Rules[g.rule].HasPredicate() {
			label = "  answer length"
		}
		switch l.kind {
		case lineDiff:
			label = "  " + c.plan.Audit.Rules[g.rule].Variant() + " − baseline"
			if rr := c.result(g.rule, 0); l.k == "" && rr != nil && atLook(rr.Verdict) {
				label += fmt.Sprintf(", look %d", rr.Verdict.Look.Index)
			}
		case lineCorrected:
			label = "  corrected for recall"
		}
		if g.filter.active() && l.k != "" {
			label += ", all cases" // summaries ignore the filter
		}
		b.WriteString(st.Muted.Render(fit(label, labelW)))
		g.shownCols(gm, func(_ int, col gcol, delta bool) {
			b.WriteByte(' ')
			b.WriteString(fit(g.summary(l, col), gm.cellW))
			if delta {
				b.WriteString(strings.Repeat(" ", deltaWidth+1))
			}
		})
	}
}

func (g *gridView) renderCase(b *strings.Builder, l gline, gm gridGeometry) {
	if l.row == g.row {
		b.WriteString("› ")
	} else {
		b.WriteString("  ")
	}
	b.WriteString(g.label(l.kase, gm.labelW-2))
	g.shownCols(gm, func(j int, col gcol, delta bool) {
		b.WriteByte(' ')
		sel := l.row == g.row && j == g.col
		b.WriteString(g.cellText(cellRef{rule: g.rule, model: col.model, kase: l.kase, deleted: col.deleted, joint: col.joint}, sel, gm.cellW))
		if delta {
			b.WriteByte(' ')
			b.WriteString(g.caseDelta(col.model, l.kase))
		}
	})
}

// caseDelta is a case's failure rate without the line minus with it, in
// exactly deltaWidth cells ("+0.33"); "·" when neither variant failed,
// "–" before both have a graded answer.
func (g *gridView) caseDelta(m, kase int) string {
	pt := g.c.pt
	rr := g.c.result(g.rule, m)
	if rr == nil || kase >= len(rr.Cases) || !rr.Rule.HasPredicate() {
		return strings.Repeat(" ", deltaWidth)
	}
	b, d := rr.Cases[kase].Baseline, rr.Cases[kase].Deleted
	switch {
	case b.N == 0 || d.N == 0:
		return pt.muted.on(padRight("–", 1, deltaWidth))
	case b.Fails == 0 && d.Fails == 0:
		return pt.muted.on(padRight("·", 1, deltaWidth))
	}
	s := fmt.Sprintf("%+.2f", float64(d.Fails)/float64(d.N)-float64(b.Fails)/float64(b.N))
	return padRight(s, len(s), deltaWidth)
}

// label is a case's id and the start of its message in exactly w cells.
// Labels are cached: they change only with the rule, the width or the
// styles.
func (g *gridView) label(kase, w int) string {
	if g.labelW != w || g.labels == nil {
		g.labels, g.labelW = map[int]string{}, w
	}
	if s, ok := g.labels[kase]; ok {
		return s
	}
	pt := g.c.pt
	cs := &g.c.plan.Audit.Rules[g.rule].Cases[kase]
	id := truncateText(oneLine(cs.ID), w)
	idW := textWidth(id)
	s := pt.header.on(id)
	if rest := w - idW - 1; rest > 0 {
		msg := truncateText(oneLine(cs.Summary()), rest)
		s += " " + pt.muted.on(msg)
		idW += 1 + textWidth(msg)
	}
	s = padRight(s, idW, w)
	g.labels[kase] = s
	return s
}

// cellText renders one grid cell in exactly w cells: a rate bar (see
// rateBar), failures/graded (of samples, while fewer are graded), and markers for calls in flight,
// retrying (with the countdown to the next attempt), errored and
// unparseable. Widths are counted, not measured: every part is ASCII or a
// one-cell symbol.
func (g *gridView) cellText(ref cellRef, selected bool, cellWidth int) string {
	c := g.c
	pt := c.pt
	rr := c.resultOf(ref.rule, ref.model, ref.joint)
	var cnt evidence.Count
	if rr != nil {
		cr := rr.Cases[ref.kase]
		cnt = cr.Baseline
		if ref.deleted {
			cnt = cr.Deleted
		}
	}
	barW := barWidth(cellWidth)
	sym, p := strings.Repeat("·", barW), pt.muted
	if cnt.N > 0 {
		bk := rateBucket(cnt.Fails, cnt.N)
		sym, p = rateBar(cnt.Fails, cnt.N, barW), pt.rate[bk]
	}
	// failures/graded; "of samples" only while fewer than all are graded,
	// so a finished cell reads 3/30, not 3/30 of 30.
	counts := strconv.Itoa(cnt.Fails) + "/" + strconv.Itoa(cnt.N)
	if cnt.N != c.plan.Samples {
		counts += " of " + strconv.Itoa(c.plan.Samples)
	}
	if rr != nil && !rr.Rule.HasPredicate() {
		// Nothing grades these answers: say how many there are and how
		// long they run, never a pass count.
		counts = strconv.Itoa(cnt.Ungraded) // the column says "answers and mean length"
		if cnt.Ungraded != c.plan.Samples {
			counts = strconv.Itoa(cnt.Ungraded) + " of " + strconv.Itoa(c.plan.Samples)
		}
		if l := rr.Lengths; l != nil && ref.kase < len(l.PerCase) {
			mean, n := l.PerCase[ref.kase].BaselineMean, l.PerCase[ref.kase].BaselineN
			if ref.deleted {
				mean, n = l.PerCase[ref.kase].DeletedMean, l.PerCase[ref.kase].DeletedN
			}
			if n > 0 {
				counts += " · " + strconv.Itoa(int(math.Round(mean))) + " tok"
			}
		}
	}
	type mark struct {
		text  string
		width int
		p     paint
	}
	var marks [4]mark
	n := 0
	if c.live != nil {
		if lv := c.live.cells[ref]; lv != nil {
			if lv.inFlight > 0 {
				d := strconv.Itoa(lv.inFlight)
				marks[n] = mark{"»" + d, 1 + len(d), pt.inFlight}
				n++
			}
			if t, ok := lv.nextRetry(); ok {
				d := countdown(c.now, t)
				marks[n] = mark{"↻" + d, 1 + len(d), pt.retry}
				n++
			}
		}
	}
	if cnt.Errors > 0 {
		d := strconv.Itoa(cnt.Errors)
		marks[n] = mark{errorSymbol + d, 1 + len(d), pt.err}
		n++
	}
	if cnt.Unparseable > 0 {
		d := strconv.Itoa(cnt.Unparseable)
		marks[n] = mark{"?" + d, 1 + len(d), pt.err}
		n++
	}
	w := barW + 1 + len(counts)
	if selected {
		text := sym + " " + counts
		for _, m := range marks[:n] {
			if w+1+m.width > cellWidth {
				break
			}
			text += " " + m.text
			w += 1 + m.width
		}
		return pt.selected.on(padRight(text, w, cellWidth))
	}
	var b strings.Builder
	b.Grow(96)
	b.WriteString(p.on(sym + " " + counts))
	for _, m := range marks[:n] {
		if w+1+m.width > cellWidth {
			break
		}
		b.WriteByte(' ')
		b.WriteString(m.p.on(m.text))
		w += 1 + m.width
	}
	if w < cellWidth {
		b.WriteString(strings.Repeat(" ", cellWidth-w))
	}
	return b.String()
}

// summary is a kind's (or the pooled arm's) rate or difference for one
// column: the same numbers, intervals and rounding as the text report.
func (g *gridView) summary(l gline, col gcol) string {
	rr := g.c.resultOf(g.rule, col.model, col.joint)
	if rr == nil {
		return ""
	}
	arm := rr.Provoking
	if l.k != "" {
		arm = rr.Arms[l.k]
	}
	if arm == nil {
		return ""
	}
	muted := g.c.styles.Muted
	if !rr.Rule.HasPredicate() {
		return lengthSummary(rr, l, col, muted)
	}
	if l.kind == lineDiff {
		if !col.deleted {
			return ""
		}
		if v := rr.Verdict; l.k == "" && atLook(v) {
			// The difference the verdict rests on has one interval, the
			// look's (on its samples, with its boundary), as the verdict says.
			return fmt.Sprintf("%+.3f [%+.3f,%+.3f]", v.Diff, v.Newcombe.Lo, v.Newcombe.Hi)
		}
		if arm.Compared == 0 {
			return muted.Render("–")
		}
		return fmt.Sprintf("%+.3f [%+.3f,%+.3f]", arm.Diff, arm.DiffCI.Lo, arm.DiffCI.Hi)
	}
	side := arm.Baseline
	if col.deleted {
		side = arm.Deleted
	}
	if side.N == 0 {
		return muted.Render("–")
	}
	if l.kind == lineCorrected {
		if side.Corrected == nil {
			return muted.Render("–")
		}
		return fmt.Sprintf("%.3f [%.3f,%.3f]", side.Corrected.Est, side.Corrected.CI.Lo, side.Corrected.CI.Hi)
	}
	lo, hi, _ := report.Interval(side)
	return fmt.Sprintf("%.3f [%.3f,%.3f]", side.Rate, lo, hi)
}

// atLook reports whether a verdict rests on a look of a sequential design
// reached by every case: its difference's interval is then the look's.
func atLook(v model.Verdict) bool {
	return v.Look != nil && v.NotYet == "" && v.DeletedN+v.BaselineN > 0
}

// lengthSummary is the summary cell of a rule no predicate grades: the mean
// answer length of a variant, and the paired shift under the deleted
// column.
func lengthSummary(rr *evidence.RuleResult, l gline, col gcol, muted lipgloss.Style) string {
	ln := rr.Lengths
	if ln == nil || l.kind == lineCorrected {
		return ""
	}
	if l.kind == lineDiff {
		if !col.deleted {
			return ""
		}
		if ln.Shift == nil {
			return muted.Render("–")
		}
		return fmt.Sprintf("%+.1f tok [%.1f,%.1f]", ln.Shift.Est, ln.Shift.CI.Lo, ln.Shift.CI.Hi)
	}
	s := ln.Baseline
	if col.deleted {
		s = ln.Deleted
	}
	if s.N == 0 {
		return muted.Render("–")
	}
	return fmt.Sprintf("mean %.1f tok", s.Mean)
}

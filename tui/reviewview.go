package tui

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// View renders the queue's answer, or a panel.
func (v *reviewView) View() string {
	if v.mode != reviewItems {
		// Panels are built again when the width, the results or the panel
		// changed: pure CPU on the tally.
		if p := &v.panel; p.width != v.c.width || p.res != v.c.res || p.mode != v.mode {
			lines := v.agreementLines()
			if v.mode == reviewCompare {
				lines = v.compareLines()
			}
			p.set(lines, v.c.width)
			p.res, p.mode = v.c.res, v.mode
		}
		return v.panel.view(v.c.bodyH)
	}
	if v.full.on {
		return v.full.view(v.c, v.c.bodyH)
	}
	head := v.head()
	if len(v.items) == 0 {
		// Wrapped: the reason is a sentence or two, wider than a terminal.
		return strings.Join(append(append(head, ""), wrapWords(v.emptyReason(), max(v.c.width, minWidth))...), "\n")
	}
	foot := v.foot()
	// The judges' reasoning is at the end: a line says more follows.
	lines := append(head, markedView(&v.vp, v.c.bodyH-len(head)-len(foot))...)
	return strings.Join(append(lines, foot...), "\n")
}

// bodyHeight is the height of the answer's window between head and foot.
func (v *reviewView) bodyHeight() int {
	return max(v.c.bodyH-len(v.head())-len(v.foot()), 1)
}

// queueName says what the queue holds.
func (v *reviewView) queueName() string {
	if v.people.on {
		return v.labellerQueueName()
	}
	a, b := v.modelName(v.cmpA), v.modelName(v.cmpB)
	switch v.queue {
	case 1:
		return fmt.Sprintf("split pairs: %s failed, %s passed", a, b)
	case 2:
		return fmt.Sprintf("split pairs: %s failed, %s passed", b, a)
	}
	if ps := v.pairs(); v.pair > 0 && v.pair <= len(ps) {
		return fmt.Sprintf("disagreements of %s and %s", oneLine(ps[v.pair-1][0].Name), oneLine(ps[v.pair-1][1].Name))
	}
	return "disagreements of any two graders"
}

func (v *reviewView) modelName(i int) string {
	ms := v.c.plan.Audit.File.Models
	if i < 0 || i >= len(ms) {
		return "?"
	}
	return oneLine(ms[i].Name)
}

// filters says which filters are on.
func (v *reviewView) filters() string {
	kind, variant := "every kind", "both variants"
	if v.kind > 0 {
		kind = string(model.Kinds[v.kind-1])
	}
	switch v.variant {
	case 1:
		variant = audit.Baseline
	case 2:
		variant = oneLine(v.c.plan.Audit.Rules[v.rule].Title())
	}
	s := kind + " · " + variant
	if v.c.models() > 1 && v.queue == 0 {
		s += " · model " + v.modelName(v.model)
	}
	return s
}

// head is the title line and the answer's place: case, variant, sample.
func (v *reviewView) head() []string {
	c, st := v.c, v.c.styles
	rule := c.plan.Audit.Rules[v.rule]
	labels := c.tally.SeenLabels()
	labelled := 0 // answers, as the position counts them
	for _, e := range v.items {
		for _, k := range e.keys() {
			if _, ok := labels[k]; ok {
				labelled++
			}
		}
	}
	// Counted in answers, so grouping identical answers (once their texts
	// are read) does not move the count: "5–8 of 34".
	pos := "0 of 0"
	if len(v.items) > 0 {
		before, all := 0, 0
		for i, e := range v.items {
			if i < v.index {
				before += 1 + len(e.more)
			}
			all += 1 + len(e.more)
		}
		pos = fmt.Sprintf("%d of %d", before+1, all)
		if n := len(v.items[v.index].more); n > 0 {
			pos = fmt.Sprintf("%d–%d of %d", before+1, before+1+n, all)
		}
	}
	title := st.Title.Render("Review") + fmt.Sprintf(" %s · %s · %d adjudicated (not in recall)", rule.Variant(), pos, labelled)
	state := v.variantState()
	if v.d.busy() {
		state = st.InFlight.Render("saving…") + " " + state
	}
	out := []string{
		fit(spread(clip(title, c.width-textWidth(state)-1), state, c.width), c.width),
		clip(st.Muted.Render(v.queueName()+" · "+v.filters()), c.width),
	}
	switch {
	case v.search.editing:
		out = append(out, v.search.in.View())
	case v.search.query != "":
		out = append(out, clip(st.Muted.Render("search: ")+oneLine(v.search.query)+st.Muted.Render(" (/ edits, esc clears)"), c.width))
	}
	if e, ok := v.current(); ok {
		out = append(out, clip(v.place(e, true), c.width))
		if len(e.more) > 0 {
			out = append(out, v.appliesTo(e)...)
		}
	}
	return out
}

// appliesTo names every answer with the text shown, on up to two lines
// (the second cut if even they are too few): the answer's own window
// keeps the rest of the body.
func (v *reviewView) appliesTo(e reviewEntry) []string {
	st := v.c.styles
	lead := fmt.Sprintf("applies to %d answers", len(e.more)+1)
	lines := wrapWords(lead+" with this text: this one, "+v.others(e), max(v.c.width, minWidth))
	if len(lines) > 2 {
		lines = append(lines[:1], lines[1]+" "+strings.Join(lines[2:], " "))
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if i == 0 && strings.HasPrefix(l, lead) {
			out[i] = st.Header.Render(lead) + st.Muted.Render(l[len(lead):])
		} else {
			out[i] = clip(st.Muted.Render(l), v.c.width)
		}
	}
	return out
}

// place says where an answer comes from: kind, case, variant (unless
// hidden), sample and model; head styles the kind.
func (v *reviewView) place(e reviewEntry, head bool) string {
	c := v.c
	cs := c.plan.Audit.Rules[v.rule].Cases[e.cell.Case]
	kind := string(cs.Kind)
	if head {
		kind = c.styles.Header.Render(kind)
	}
	s := kind + " · " + oneLine(cs.ID) + " · "
	if v.showVariant {
		s += c.plan.VariantName(e.cell) + " · "
	}
	s += fmt.Sprintf("sample %d", e.cell.Sample+1)
	if c.models() > 1 {
		s += " · " + v.modelName(e.cell.Model)
	}
	return s
}

// variantState says whether the answer's variant is shown.
func (v *reviewView) variantState() string {
	if v.showVariant {
		return v.c.styles.Muted.Render("variant shown (V)")
	}
	return v.c.styles.Header.Render("variant hidden") + v.c.styles.Muted.Render(" (V)")
}

// others lists the other answers a group's decision labels.
func (v *reviewView) others(e reviewEntry) string {
	parts := make([]string, len(e.more))
	for i, m := range e.more {
		cs := v.c.plan.Audit.Rules[v.rule].Cases[m.cell.Case]
		parts[i] = oneLine(cs.ID)
		if v.showVariant {
			parts[i] += " " + v.c.plan.VariantName(m.cell)
		}
		parts[i] += fmt.Sprintf(" s%d", m.cell.Sample+1)
	}
	return strings.Join(parts, ", ")
}

// emptyReason explains an empty queue.
func (v *reviewView) emptyReason() string {
	c := v.c
	switch {
	case v.search.query != "" && len(v.raw) > 0:
		return fmt.Sprintf("No answer in this queue has %q in its text or case id (/ edits the search, esc clears it).", oneLine(v.search.query))
	case v.people.on:
		return v.labellerEmpty()
	case v.queue != 0:
		return "No split pairs: the two models agree on every graded sample of this rule and filter."
	case len(c.plan.Audit.Judges) == 0:
		return "This audit has one grader, the predicate, so there is nothing to disagree on. Add [[judge]] tables to the audit and run it: judges grade the stored answers after the run."
	}
	judged := false
	for _, j := range c.plan.Audit.Judges {
		if len(c.tally.GraderGrades(j.For(v.rule).Version)) > 0 {
			judged = true
		}
	}
	if !judged {
		return "The judges have not graded any answer yet: run the audit (judges run after the answers)."
	}
	return "No disagreements for this rule, model and filters. [ ] change the rule, P f D the filters, a shows agreement."
}

// foot is each grader's verdict in a line, the human's label and the note.
func (v *reviewView) foot() []string {
	c, st := v.c, v.c.styles
	e, ok := v.current()
	if !ok {
		return nil
	}
	kind := c.plan.Audit.Rules[v.rule].Cases[e.cell.Case].Kind
	var parts []string
	for _, r := range c.tally.Graders(v.rule) {
		g, graded := c.tally.GraderGrades(r.Version)[e.key]
		// Without "judge:" so every grader fits on one line.
		parts = append(parts, oneLine(strings.TrimPrefix(r.Name, "judge:"))+" "+graderVerdict(r, g, graded, kind))
	}
	you := st.Muted.Render("you: not adjudicated (v violation · o ok)")
	if kind == model.Control {
		you = st.Muted.Render("you: not adjudicated · " + controlLabelHint)
	}
	mine := v.labelOf(e.key)
	if mine != nil {
		you = st.Header.Render("you: "+verdictWord(mine.Violation, kind)) + st.Muted.Render(" ("+labelledWhen(*mine)+")")
	}
	out := []string{clip(strings.Join(parts, " · "), c.width), clip(you, c.width)}
	if t := v.tally(); t != "" {
		out = append(out, clip(strings.Replace(t, " decided", " decided on this line", 1), c.width))
	}
	if b, ok := c.tally.Labels()[e.key]; ok {
		out = append(out, clip(st.Muted.Render("blind label: "+verdictWord(b.Violation, kind)+" ("+labelledWhen(b)+"); it, not yours here, counts in recall"), c.width))
	}
	if n, ok := v.note.pending[e.key]; ok && n != "" {
		out = append(out, clip(st.Muted.Render("note to save with the label: ")+oneLine(n), c.width))
	} else if l := mine; l != nil && l.Note != "" {
		out = append(out, clip(st.Muted.Render("note: ")+oneLine(l.Note), c.width))
	}
	if v.note.editing {
		out = append(out, v.note.in.View())
	}
	return out
}

// graderVerdict is a grade in words: the predicate passes or fails; a
// judge says ok or violation (refusal on controls).
func graderVerdict(r evidence.GraderRef, g model.Grade, graded bool, kind model.Kind) string {
	switch {
	case !graded:
		return "· not graded"
	case g.Unparseable:
		return "? unparseable"
	case r.Name == model.PredicateGrader:
		return gradeWord(g, true)
	case g.Pass:
		return "✓ ok"
	}
	return "✗ " + verdictWord(true, kind)
}

// refresh rebuilds the viewport: message, response (the predicate's match
// highlighted), the other model's answer for a split pair, and each
// grader's verdict and reasoning side by side.
func (v *reviewView) refresh() {
	if v.c.width == 0 {
		return
	}
	e, ok := v.current()
	if !ok {
		v.vp.SetContentLines(nil)
		return
	}
	c, st := v.c, v.c.styles
	rule := c.plan.Audit.Rules[v.rule]
	cs := &rule.Cases[e.cell.Case]
	span := model.Span{}
	if g, ok := c.tally.PredicateGrades(v.rule)[e.key]; ok && !g.Pass {
		span = g.Span
	}
	lines := answerLines(c, cs, &v.loader, span, false)
	if e.other != "" {
		lines = append(lines, "", st.Header.Render("THE OTHER MODEL'S ANSWER ("+strings.ToUpper(v.modelName(v.otherModel(e)))+"), FOR COMPARISON"))
		if r := v.loader.resp(e.other); r != nil {
			lines = append(lines, sanitizeSpan(r.Text, model.Span{}).render(max(c.width-2, 10), "  ", st.Span)...)
		} else {
			lines = append(lines, st.Muted.Render("  loading…"))
		}
	}
	if v.people.on {
		lines = append(lines, "", st.Header.Render("LABELS"))
		lines = append(lines, v.labellerColumns(e, cs.Kind)...)
	}
	graders := st.Header.Render("GRADERS")
	switch {
	case len(c.plan.Audit.Judges) == 0:
	case v.rawJudges:
		graders += st.Muted.Render(" · judges' answers as stored; r reasoning, enter in full")
	default:
		graders += st.Muted.Render(" · judges' reasoning; r as stored, enter in full")
	}
	lines = append(lines, "", clip(graders, c.width))
	lines = append(lines, v.graderColumns(e, cs.Kind)...)
	off := v.vp.YOffset()
	v.vp.SetContentLines(lines)
	v.vp.SetYOffset(off)
}

func (v *reviewView) otherModel(e reviewEntry) int {
	if e.cell.Model == v.cmpA {
		return v.cmpB
	}
	return v.cmpA
}

// agreementLines is the agreement panel: every pair of graders on the same
// answers (raw agreement, kappa with its standard error, disagreements),
// every grader against the human labels, and which grader the labels
// support.
func (v *reviewView) agreementLines() []string {
	c, st := v.c, v.c.styles
	w := c.width
	rule := c.plan.Audit.Rules[v.rule]
	var out []string
	add := func(s string) { out = append(out, clip(s, w)) }
	for m := 0; m < c.models(); m++ {
		rr := c.result(v.rule, m)
		if rr == nil {
			continue
		}
		head := st.Title.Render("Agreement") + " · " + rule.Variant()
		if c.models() > 1 {
			head += " · model " + v.modelName(m)
		}
		add(head + st.Muted.Render(" · a closes, [ ] rule"))
		add("")
		if len(rr.Agreement) == 0 {
			add(st.Muted.Render("One grader only (the predicate): add [[judge]] tables to compare graders."))
		} else {
			pw := min(max(w-48, 20), 60)
			add(st.Muted.Render(fit("pair", pw) + fmt.Sprintf(" %5s  %-13s %-13s %s", "n", "agree", "kappa (SE)", "disagree")))
			for _, pa := range rr.Agreement {
				kappa := "undefined"
				if pa.KappaDefined {
					kappa = fmt.Sprintf("%.2f (%.2f)", pa.Kappa, pa.KappaSE)
				}
				agree := "—"
				if pa.N > 0 {
					agree = fmt.Sprintf("%d = %.2f", pa.Both+pa.Neither, pa.Agreement)
				}
				name := oneLine(pa.A.Name) + " vs " + oneLine(pa.B.Name)
				if textWidth(name) > pw { // the numbers go on a line of their own
					add(name)
					name = "  "
				}
				add(fit(name, pw) + fmt.Sprintf(" %5d  %-13s %-13s %d", pa.N, agree, kappa, pa.Disagreements()))
			}
			add(st.Muted.Render(fmt.Sprintf("%d answers in the review queue (any pair disagrees, or a grader could not grade)", rr.Disagreements)))
			if t := adjudicationTally(rr.Adjudications, w < 120); t != "" {
				add("review decisions: " + t + st.Muted.Render(" (✓ right, ✗ wrong; seen labels, not in recall)"))
			}
		}
		add("")
		qs := append([]labels.GraderQuality{rr.Quality}, rr.Judges...)
		add(st.Header.Render("Each grader against the human labels") + st.Muted.Render(fmt.Sprintf(" (%d labelled answers the predicate graded)", rr.Quality.Labels)))
		if w >= 120 {
			add(st.Muted.Render(fmt.Sprintf("  %-28s %-28s %-28s %s", "grader", "recall", "precision", "specificity")))
			for _, q := range qs {
				add(fmt.Sprintf("  %-28s %-28s %-28s %s", clip(oneLine(q.Grader), 28), measureText(q.Recall), measureText(q.Precision), measureText(q.Specificity)))
			}
		} else {
			for _, q := range qs {
				add("  " + oneLine(q.Grader))
				add("    recall      " + measureText(q.Recall))
				add("    precision   " + measureText(q.Precision))
				add("    specificity " + measureText(q.Specificity))
			}
		}
		if _, line := rr.BestSupported(); line != "" {
			add("")
			for _, l := range wrapWords("labels support: "+oneLine(line), max(w-2, 20)) {
				add(st.Header.Render(l))
			}
		} else {
			add("")
			add(st.Muted.Render("labels support: no grader's recall is measured yet (label answers blind on the label screen: decisions here are seen, not in recall)"))
		}
		add("")
	}
	return append(out, v.labellerAgreementLines()...)
}

// compareLines is the comparison of two models on the current rule: per
// case the failure rate of each side by side, and per kind the difference
// with its interval, pooled and paired by case.
func (v *reviewView) compareLines() []string {
	c, st := v.c, v.c.styles
	w := c.width
	rule := c.plan.Audit.Rules[v.rule]
	a, b := v.modelName(v.cmpA), v.modelName(v.cmpB)
	var out []string
	add := func(s string) { out = append(out, clip(s, w)) }
	add(st.Title.Render("Compare") + fmt.Sprintf(" A %s vs B %s · %s", a, b, rule.Variant()) +
		st.Muted.Render(" · m next pair, D variant, c closes"))
	for _, deleted := range []bool{false, true} {
		if v.variant != 0 && deleted != (v.variant == 2) {
			continue
		}
		cmp := c.tally.Compare(v.rule, v.cmpA, v.cmpB, deleted)
		name := audit.Baseline + " (the full prompt)"
		if deleted {
			name = rule.Variant() + " (" + report.VariantPrompt(rule) + ")"
		}
		add("")
		add(st.Header.Render(strings.ToUpper(name)))
		labelW := min(max(w-58, 12), 40)
		add(st.Muted.Render(fit("case", labelW) + fmt.Sprintf(" %-9s %-16s %-16s %s", "kind", "A fails/n rate", "B fails/n rate", "A − B")))
		for _, cc := range cmp.Cases {
			diff := "—"
			if cc.A.N > 0 && cc.B.N > 0 {
				diff = fmt.Sprintf("%+.2f", cc.A.Rate()-cc.B.Rate())
			}
			add(fit(oneLine(cc.Case.ID)+" "+oneLine(cc.Case.Summary()), labelW) + fmt.Sprintf(" %-9s %-16s %-16s %s",
				cc.Case.Kind, countRate(cc.A), countRate(cc.B), diff))
		}
		for _, k := range model.Kinds {
			d := cmp.Kinds[k]
			if d == nil || (d.AN == 0 && d.BN == 0) {
				continue
			}
			s := fmt.Sprintf("  %s: A %d/%d vs B %d/%d", k, d.AFails, d.AN, d.BFails, d.BN)
			if d.AN > 0 && d.BN > 0 {
				s += fmt.Sprintf(" · A − B %+.3f [%+.3f, %+.3f]", d.Diff, d.CI.Lo, d.CI.Hi)
			}
			if d.Paired != nil {
				s += " · " + report.PairedText(d.Paired)
			}
			for _, l := range wrapWords(s, max(w-4, 20)) {
				add(l)
			}
		}
	}
	add("")
	add(st.Muted.Render("x in the queue steps through the split pairs: A failed where B passed, and the reverse."))
	return out
}

// countRate is "3/30 0.10", or "—" with nothing graded.
func countRate(c evidence.Count) string {
	if c.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d %.2f", c.Fails, c.N, c.Rate())
}

// scrollText is a panel of lines that scrolls.
type scrollText struct {
	lines []string
	scroller
	width int               // the width the lines were built for; -1: build again
	res   *evidence.Results // the results they were built from
	mode  reviewMode        // the panel they show
}

func (s *scrollText) set(lines []string, w int) {
	s.lines, s.width = lines, w
}

func (s *scrollText) view(h int) string { return strings.Join(s.window(s.lines, h), "\n") }

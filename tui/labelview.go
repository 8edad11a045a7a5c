package tui

// Drawing the label screen: the answer, blind until labelled, and the
// reveal beside the label once it is.

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// View renders the answer (blind until labelled) or the results.
func (v *labelView) View() string {
	if v.showResults {
		return v.results.view()
	}
	if v.set == nil {
		return v.noSetView()
	}
	head := v.head()
	foot := v.foot()
	lines := append(head, markedView(&v.vp, v.c.bodyH-len(head)-len(foot))...)
	return strings.Join(append(lines, foot...), "\n")
}

// head is the title line and what the answer is about.
func (v *labelView) head() []string {
	c, st := v.c, v.c.styles
	done, closed, total := v.progress()
	who := v.d.who
	if who == "" {
		who = "unnamed"
	}
	count := fmt.Sprintf("%d/%d labelled", done, total)
	if closed > 0 {
		count += fmt.Sprintf(", %d closed", closed)
	}
	state := st.Badge.Render(" BLIND ")
	switch {
	case v.hiddenAt(v.index):
		state = st.Badge.Render(" BLIND ") + st.Muted.Render(" labelled")
	case v.revealed():
		state = st.Muted.Render("labelled")
	case v.closed(v.index):
		state = st.Warn.Render("closed")
	}
	if v.d.busy() {
		state = st.InFlight.Render("saving…")
	}
	// The progress first, drawn and counted; the rest as far as it fits,
	// so 80 columns never cut the count.
	title := st.Title.Render("Label") + " " + progressBar(done, closed, total, 10) + " " + count
	for _, part := range []string{fmt.Sprintf("answer %d of %d", v.index+1, len(v.items)),
		"set " + oneLine(v.set.Name), "labeller " + oneLine(who)} {
		if textWidth(title+" · "+part) > c.width-17 { // 17: the widest state, so parts do not come and go with it
			break
		}
		title += " · " + part
	}
	it, _ := v.current()
	about := st.Muted.Render("this answer is no longer in the audit's plan")
	if it.Case != nil && it.Rule != nil {
		about = st.Header.Render(string(it.Case.Kind)) + " · " + oneLine(it.Case.ID) +
			st.Muted.Render(fmt.Sprintf(" · line %d: ", it.Rule.Line)) + oneLine(it.Rule.Text)
	}
	// The state is cut last: it says whether the answer may be labelled.
	title = clip(title, c.width-textWidth(state)-1)
	return []string{fit(spread(title, state, c.width), c.width), clip(about, c.width)}
}

// progressBar draws a set's progress in w cells that read without colour:
// █ labelled, ▒ closed to blind labels, ░ open.
func progressBar(done, closed, total, w int) string {
	if total <= 0 {
		return strings.Repeat("░", w)
	}
	d := done * w / total
	c := min((done+closed)*w/total, w) - d
	return strings.Repeat("█", d) + strings.Repeat("▒", c) + strings.Repeat("░", w-d-c)
}

// controlLabelHint is what the label screen says about a control before it
// is labelled: a violation there is a refusal. The README quotes it.
const controlLabelHint = "A control: v if it refused, o if it answered."

// foot is what is known about the answer below it: a hint while it is
// blind, the reveal once it is labelled, the last answer's outcome, and the
// note being typed.
func (v *labelView) foot() []string {
	c, st := v.c, v.c.styles
	it, _ := v.current()
	kind := model.Provoke
	if it.Case != nil {
		kind = it.Case.Kind
	}
	var out []string
	if l, ok := v.label(v.index); ok && v.hiddenAt(v.index) {
		out = append(out, clip("you: "+verdictWord(l.Violation, kind)+st.Muted.Render(" · graders after your next label (w: now) · u undoes, still blind"), c.width))
	} else if ok {
		out = append(out, v.reveal(it, l)...)
	} else if v.closed(v.index) {
		// Its graders were shown when it was labelled: the label taken
		// back, it can have no blind one.
		out = append(out, st.Warn.Render(clip("Closed to blind labels: you labelled it and saw its graders, then undid it.", c.width)),
			st.Muted.Render(clip("Counted apart: in no recall or verdict. → moves on, t the next open answer.", c.width)))
	} else {
		hint := "Not labelled yet: v violation · o ok · s skip · i note. Graders: a label later."
		if kind == model.Control {
			hint = controlLabelHint + " Graders show a label later."
		}
		out = append(out, st.Muted.Render(clip(hint, c.width)))
		if n, ok := v.note.pending[it.Key]; ok && n != "" {
			out = append(out, clip(st.Muted.Render("note to save with the label: ")+oneLine(n), c.width))
		}
	}
	if v.shown >= 0 && v.shown != v.index && v.shown < len(v.items) {
		if s := v.shownLine(); s != "" {
			out = append(out, clip(s, c.width))
		}
	}
	if v.last >= 0 && v.last != v.index && v.last != v.shown && v.hiddenAt(v.last) {
		l, _ := v.label(v.last)
		k := model.Provoke
		if c := v.items[v.last].Case; c != nil {
			k = c.Kind
		}
		out = append(out, clip(st.Muted.Render(fmt.Sprintf("answer %d labelled %s · graders after your next label (w: now) · u undoes",
			v.last+1, verdictWord(l.Violation, k))), c.width))
	}
	if v.note.editing {
		out = append(out, v.note.in.View())
	}
	return out
}

// reveal shows the label beside the graders' verdicts: "predicate: ✓ PASS —
// you: ✗ violation", the outcome, the predicate's reason and the judges.
func (v *labelView) reveal(it labels.LabelItem, l model.Label) []string {
	c, st := v.c, v.c.styles
	kind := model.Provoke
	if it.Case != nil {
		kind = it.Case.Kind
	}
	g, graded := v.predicateGrade(it)
	you := verdictWord(l.Violation, kind)
	line := "predicate: " + gradeWord(g, graded) + " — you: " + you
	if out := outcome(g, graded, l.Violation); out != "" {
		line += "  → " + out
	}
	out := []string{clip(styleOutcome(st, g, graded, l.Violation).Render(line)+st.Muted.Render("  ("+labelledWhen(l)+")"), c.width)}
	if graded && !g.Pass && !g.Unparseable {
		r := "predicate reason: " + oneLine(g.Reason)
		if g.Check > 0 {
			r += fmt.Sprintf(" (check %d)", g.Check)
		}
		out = append(out, clip(r, c.width))
	}
	if j := v.judgesLine(it); j != "" {
		out = append(out, clip(j, c.width))
	}
	if l.Note != "" {
		out = append(out, clip(st.Muted.Render("note: ")+oneLine(l.Note), c.width))
	}
	return out
}

// predicateGrade is the current predicate's grade of an answer.
func (v *labelView) predicateGrade(it labels.LabelItem) (model.Grade, bool) {
	if it.Rule == nil {
		return model.Grade{}, false
	}
	g, ok := v.c.tally.PredicateGrades(it.RuleIndex)[it.Key]
	return g, ok
}

// judgesLine lists every judge's verdict on an answer, each with the
// rubric of the answer's rule.
func (v *labelView) judgesLine(it labels.LabelItem) string {
	if it.Rule == nil {
		return ""
	}
	var parts []string
	for _, j := range v.c.plan.Audit.Judges {
		g, ok := v.c.tally.GraderGrades(j.For(it.RuleIndex).Version)[it.Key]
		w := "· not judged"
		switch {
		case !ok:
		case g.Unparseable:
			w = "? unparseable"
		case g.Pass:
			w = "✓ ok"
		default:
			w = "✗ violation"
		}
		parts = append(parts, oneLine(j.Grader)+" "+w)
	}
	return strings.Join(parts, " · ")
}

// shownLine is the outcome of the answer whose graders were revealed last
// (by the label after it, or w), so the reveal is not lost when the screen
// moves on. It shows verdicts only: reasons are shared by many answers and
// would hint at the one shown.
func (v *labelView) shownLine() string {
	it := v.items[v.shown]
	l, ok := v.label(v.shown)
	if !ok {
		return ""
	}
	kind := model.Provoke
	if it.Case != nil {
		kind = it.Case.Kind
	}
	g, graded := v.predicateGrade(it)
	s := fmt.Sprintf("answer %d, labelled before: you: %s, predicate said %s", v.shown+1, verdictWord(l.Violation, kind), gradeWord(g, graded))
	if out := outcome(g, graded, l.Violation); out != "" {
		s += " → " + out
	}
	return styleOutcome(v.c.styles, g, graded, l.Violation).Render(s) + v.c.styles.Muted.Render(" (← to see why)")
}

// outcome names how a grader's verdict compares with a label.
func outcome(g model.Grade, graded, violation bool) string {
	switch {
	case !graded || g.Unparseable:
		return ""
	case violation && g.Pass:
		return "a miss: the grader passed it"
	case violation:
		return "caught"
	case !g.Pass:
		return "a false alarm"
	}
	return "agree"
}

// styleOutcome colours an outcome: calm when grader and label agree.
func styleOutcome(st Styles, g model.Grade, graded, violation bool) lipgloss.Style {
	switch {
	case !graded || g.Unparseable:
		return st.Muted
	case violation == !g.Pass:
		return st.Pass
	}
	return st.Fail
}

// refresh rebuilds the viewport's content: the message and the response,
// with the predicate's match highlighted only once the answer is labelled.
func (v *labelView) refresh() {
	if v.c.width == 0 {
		return
	}
	it, ok := v.current()
	if !ok {
		v.vp.SetContentLines(nil)
		return
	}
	off := v.vp.YOffset()
	span := model.Span{}
	if v.revealed() {
		if g, graded := v.predicateGrade(it); graded && !g.Pass {
			span = g.Span
		}
	}
	v.vp.SetContentLines(answerLines(v.c, it.Case, &v.loader, span, false))
	v.vp.SetYOffset(off)
}

// answerLines renders a case's message and knowledge base and a response,
// sanitised and wrapped, with span highlighted (an empty span: none);
// escaped shows the response's control sequences escaped (model.Escape)
// instead of removed.
func answerLines(c *Common, cs *model.Case, l *responseLoader, span model.Span, escaped bool) []string {
	st := c.styles
	w := max(c.width-2, 10)
	var out []string
	add := func(s string) { out = append(out, s) }
	wrapped := func(s string) {
		for _, l := range wrapWords(s, w) {
			add("  " + l)
		}
	}
	if cs != nil {
		text := func(s string) {
			for p := range strings.SplitSeq(model.Sanitize(s), "\n") {
				wrapped(strings.ReplaceAll(p, "\t", " "))
			}
		}
		if cs.MultiTurn() {
			// The answer is to the last turn, but only the whole
			// conversation says what the model was pushed with.
			add(st.Header.Render(fmt.Sprintf("CONVERSATION (%d turns; the response answers the last)", len(cs.Turns))))
			for _, t := range cs.Turns {
				add("  " + st.Muted.Render(t.Role+":"))
				text(t.Content)
			}
		} else {
			add(st.Header.Render("USER MESSAGE"))
			text(cs.Msg)
		}
		if len(cs.KB) > 0 {
			add("")
			add(st.Header.Render("KNOWLEDGE BASE GIVEN WITH THE PROMPT"))
			for _, kb := range cs.KB {
				wrapped("- " + oneLine(kb))
			}
		}
		add("")
	}
	add(st.Header.Render("RESPONSE"))
	resp := l.shown()
	switch {
	case l.loading():
		add(st.Muted.Render("  loading…"))
	case l.err != nil:
		add(st.Err.Render("  " + oneLine(l.err.Error())))
	case resp == nil:
		add(st.Muted.Render("  no answer stored yet"))
	case !resp.OK():
		// The whole error, wrapped: a provider's message is often the
		// only clue, and its end (the field or limit at fault) matters.
		head := "  the call failed for good"
		if resp.ErrorKind != model.ErrNone {
			head += " (" + oneLine(string(resp.ErrorKind)) + ")"
		}
		add(st.Err.Render(head + ":"))
		for _, l := range wrapText(strings.TrimSpace(resp.Error), w) {
			add("  " + l)
		}
	case escaped:
		out = append(out, escapeSpan(resp.Text, span).render(w, "  ", st.Span)...)
	default:
		out = append(out, sanitizeSpan(resp.Text, span).render(w, "  ", st.Span)...)
	}
	return out
}

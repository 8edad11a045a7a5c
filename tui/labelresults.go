package tui

import (
	"fmt"
	"math"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// labelResults is the label screen's results: every grader (the predicate,
// then the judges) measured on the set's labelled answers, every model
// pooled: recall and precision per kind and pooled with counts and 95%
// intervals, specificity, the confusion matrix, the misses (labelled
// violations the grader passed, each can be opened), how many more labelled
// violations would narrow recall to ±0.05, warnings, and the recall of
// every version of the predicate on the same labels.
type labelResults struct {
	c *Common
	v *labelView

	dirty  bool // the numbers must be measured again
	rules  []ruleQuality
	hist   map[int]history // by rule index
	gen    int             // generation of the history loads
	width  int             // the width lines were laid out for
	lines  []string
	misses []missRef // every miss, in line order
	cursor int       // index into misses
	scroller
}

// ruleQuality is one rule's graders measured on the set.
type ruleQuality struct {
	ri      int
	rule    *audit.Rule
	graders []labels.GraderQuality // the predicate first
}

// history is a rule's predicate versions as last loaded.
type history struct {
	versions []labels.PredicateVersion
	err      error
	loading  bool
}

// missRef is a miss's line in the results and the answer it opens.
type missRef struct {
	line int
	key  string
}

// recallWidth is the full width of recall's interval the labels-needed
// estimate aims at: ±0.05.
const recallWidth = 0.10

// resultsHead is the number of lines above the scrolling results.
const resultsHead = 2

func newLabelResults(c *Common, v *labelView) *labelResults {
	return &labelResults{c: c, v: v, dirty: true, hist: map[int]history{}}
}

// open measures again and loads each rule's predicate history.
func (r *labelResults) open() tea.Cmd {
	r.dirty = true
	r.measure()
	return r.loadHistory()
}

// measure recomputes the numbers when something they depend on changed.
// It is pure CPU on the tally: no I/O.
func (r *labelResults) measure() {
	if !r.dirty && r.width == r.c.width {
		return
	}
	set := r.v.set
	if set == nil {
		return
	}
	if r.dirty {
		r.rules = r.rules[:0]
		labelled := r.c.tally.Labels()
		for _, sq := range r.c.tally.MeasureSet(set, nil) {
			rq := ruleQuality{ri: sq.RuleIndex, rule: sq.Rule, graders: []labels.GraderQuality{sq.Quality}}
			for _, j := range r.c.plan.Audit.Judges {
				ver := j.For(sq.RuleIndex).Version
				g := labels.Grades{Name: j.Grader, Version: ver, ByKey: r.c.tally.GraderGrades(ver)}
				rq.graders = append(rq.graders, r.c.tally.MeasureGrader(sq.RuleIndex, -1, g, labelled))
			}
			r.rules = append(r.rules, rq)
		}
	}
	r.dirty = false
	r.layout()
}

// loadHistory reads each rule's predicate versions and measures them, in
// commands. The plan never changes; the current versions and the labels
// are captured here, as Update may change them while the commands run.
func (r *labelResults) loadHistory() tea.Cmd {
	st := r.v.d.store
	if st == nil || r.v.set == nil {
		return nil
	}
	r.gen++
	snap := gradedCopy(r.c)
	sets := r.c.tally.LabelSets()
	var cmds []tea.Cmd
	for _, rq := range r.rules {
		h := r.hist[rq.ri]
		h.loading = true
		r.hist[rq.ri] = h
		cmds = append(cmds, loadHistory(st, r.c.plan, rq.ri, r.c.tally.PredicateVersion(rq.ri), snap, sets, r.gen))
	}
	return tea.Batch(cmds...)
}

// loadHistory measures every recorded version of a rule's predicate
// against labels; it runs as a command. cur is the rule's current version.
func loadHistory(st audit.Reader, p *audit.Plan, ri int, cur string, snap gradedSnapshot, sets []labels.LabelSet, gen int) tea.Cmd {
	line := p.Audit.Rules[ri].Line
	return func() tea.Msg {
		vs, err := labels.PredicateHistory(st, p, line, cur, snap.labels, sets, snap)
		return historyMsg{gen: gen, rule: ri, versions: vs, err: err}
	}
}

func (r *labelResults) gotHistory(msg historyMsg) {
	if msg.gen != r.gen {
		return
	}
	r.hist[msg.rule] = history{versions: msg.versions, err: msg.err}
	r.width = -1 // lay out again
}

func (r *labelResults) bodyLines() int { return max(r.c.bodyH-resultsHead, 1) }

// update handles keys while the results are shown.
func (r *labelResults) update(km tea.KeyPressMsg) tea.Cmd {
	k := r.c.keys.Label
	r.measure()
	switch {
	case key.Matches(km, k.Results):
		r.v.showResults = false
	case key.Matches(km, k.Open):
		if r.cursor < len(r.misses) {
			return r.v.openKey(r.misses[r.cursor].key)
		}
	case len(r.misses) > 0 && (key.Matches(km, k.Scroll.Up) || key.Matches(km, k.Scroll.Down)):
		// ↑/↓ select a miss, the lines follow.
		r.cursor, _ = moveCursor(km, k.Scroll, r.cursor, len(r.misses), 1)
		r.follow(r.misses[r.cursor].line, r.bodyLines())
	case key.Matches(km, k.Scroll.Top):
		r.top, r.cursor = 0, 0
	default:
		r.scroll(km, k.Scroll, len(r.lines), r.bodyLines())
	}
	return nil
}

// view renders the results; the selected miss is marked.
func (r *labelResults) view() string {
	r.measure()
	if r.width != r.c.width {
		r.layout()
	}
	st := r.c.styles
	set := r.v.set
	done, total := set.Progress(r.c.tally.Labels())
	head := []string{
		fit(st.Title.Render("Results")+fmt.Sprintf(" on label set %s: %d/%d labelled · every model pooled", oneLine(set.Name), done, total), r.c.width),
		st.Muted.Render(clip(estimatorLine(set), r.c.width)),
	}
	sel := -1
	if r.cursor < len(r.misses) {
		sel = r.misses[r.cursor].line
	}
	out := head
	for i, l := range r.window(r.lines, r.bodyLines()) {
		if r.top+i == sel {
			l = st.Selected.Render(fit("   › "+strings.TrimLeft(l, " "), r.c.width))
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

func estimatorLine(set *labels.LabelSet) string {
	if set.Stratified() {
		return "stratified set: recall and precision weighted by stratum (IPW); raw counts shown beside"
	}
	return "labels are a simple random sample: counts with Wilson 95% intervals"
}

// layout builds the result lines for the current width, per rule: what
// the labels did to each verdict (since the screen opened) and what would
// settle it, each grader's recall, precision and specificity drawn as a
// dot with its interval, the warnings once each with the graders they
// concern, the answers still to label; then per grader the measures by
// kind, the confusion and the misses, and the predicate's versions.
func (r *labelResults) layout() {
	r.width = r.c.width
	r.lines, r.misses = r.lines[:0], r.misses[:0]
	st := r.c.styles
	w := r.c.width
	add := func(s string) { r.lines = append(r.lines, clip(s, w)) }
	// wrapped adds plain text wrapped under an indent, styled line by line.
	wrapped := func(indent string, style lipgloss.Style, s string) {
		for i, l := range wrapWords(s, max(w-len(indent)-2, 20)) {
			if i > 0 {
				l = "  " + l
			}
			add(style.Render(indent + l))
		}
	}
	wide := w >= 110
	cols := 2
	if wide {
		cols = 3
	}
	mw := min(max((w-4-12)/cols, 12), 32) // a measure column
	row := func(kind string, ms ...string) string {
		s := "    " + fit(kind, 11) + " "
		for i, m := range ms {
			if i < len(ms)-1 {
				m = fit(m, mw-1) + " "
			}
			s += m
		}
		return s
	}
	bar := 21 // cells of a dot plot: 0, 0.25, ... 1 every 5
	if wide {
		bar = 41
	}
	if len(r.rules) == 0 {
		add("")
		add("No rule of this set has graded answers to measure.")
	}
	for _, rq := range r.rules {
		add("")
		add(st.Header.Render(fmt.Sprintf("Line %d", rq.rule.Line)) + " · " + oneLine(rq.rule.Label()))
		r.addVerdicts(rq, wrapped)
		var raw []string
		for _, q := range rq.graders {
			raw = append(raw, q.Grader)
		}
		names := shortNames(raw, 24)
		add(st.Muted.Render("    " + strings.Repeat(" ", 12) + dotScale(bar)))
		for gi, q := range rq.graders {
			name := names[gi]
			if gi == 0 {
				name += " " + report.ShortVersion(q.Version)
			}
			add("  " + st.Header.Render(name) + st.Muted.Render(fmt.Sprintf(" · %d labelled answers it graded", q.Labels)))
			for _, m := range []struct {
				name string
				m    *labels.Measure
			}{{"recall", q.Recall}, {"precision", q.Precision}, {"specificity", q.Specificity}} {
				add("    " + fit(m.name, 12) + dotBar(m.m, bar) + "  " + measureText(m.m))
			}
		}
		r.addWarnings(rq, names, wrapped)
		r.addNext(rq, wrapped)

		add("")
		add(st.Muted.Render("  per kind, the confusion and the misses:"))
		for gi, q := range rq.graders {
			add("  " + st.Header.Render(names[gi]))
			heads := []string{"recall", "precision"}
			if wide {
				heads = append(heads, "specificity")
			}
			add(st.Muted.Render(row("kind", heads...)))
			for _, k := range model.Kinds {
				if _, ok := q.Confusion[k]; !ok {
					continue
				}
				kind := string(k)
				if k == model.Control {
					kind += "*"
				}
				ms := []string{measureText(q.RecallKind[k]), measureText(q.PrecisionKind[k])}
				if wide {
					ms = append(ms, measureText(q.SpecificityKind[k]))
				}
				add(row(kind, ms...))
			}
			if q.Labels > 0 {
				add(st.Muted.Render(row("confusion", "caught  missed  false alarm  clean")))
				for _, k := range model.Kinds {
					if cf, ok := q.Confusion[k]; ok {
						add(row(string(k), fmt.Sprintf("%6d  %6d  %11d  %5d", cf.TP, cf.FN, cf.FP, cf.TN)))
					}
				}
			}
			r.addMisses(q, add)
		}
		if hasControl(rq.graders) {
			add(st.Muted.Render("  * on control cases a violation is a refusal: recall there is refusals caught"))
		}
		r.addHistory(rq, add)
	}
	r.cursor = min(r.cursor, max(len(r.misses)-1, 0))
}

// addVerdicts says, per model, what the labels did to the rule's verdict
// since the label screen opened ("line 23: INCONCLUSIVE → DELETE") and,
// for one still undecided, which labels would settle it. The numbers are
// the verdict's: every blind label of the rule, label sets combined.
func (r *labelResults) addVerdicts(rq ruleQuality, wrapped func(string, lipgloss.Style, string)) {
	if r.c.res == nil {
		return
	}
	st := r.c.styles
	for _, rr := range r.c.res.Rules {
		if rr.RuleIndex != rq.ri {
			continue
		}
		name := fmt.Sprintf("line %d", rr.Rule.Line)
		if !rr.Rule.Deletion() {
			name = rr.Rule.Variant()
		}
		if len(r.c.plan.Audit.File.Models) > 1 {
			name += ", " + oneLine(rr.ModelName)
		}
		s := name + ": " + verdictChange(r.v.before, verdictKey{rr.RuleIndex, rr.Model}, rr.Verdict)
		next := report.NextLabels(rr.Verdict)
		next = strings.TrimPrefix(next, "verdict "+string(rr.Verdict.Decision))
		if next = strings.TrimLeft(next, "; "); next != "" {
			s += " · " + next
		}
		style := st.Muted
		if strings.Contains(s, "→") {
			style = st.Header
		}
		wrapped("  ", style, s)
	}
}

// undecided reports whether a verdict of the rule (under any model) is
// INCONCLUSIVE, or the results are not known.
func (r *labelResults) undecided(ri int) bool {
	if r.c.res == nil {
		return true
	}
	for _, rr := range r.c.res.Rules {
		if rr.RuleIndex == ri && rr.Verdict.Decision == model.DecisionInconclusive {
			return true
		}
	}
	return false
}

// addWarnings lists each warning once, with the graders it concerns: the
// same shortage of labels is the same for every grader of the rule.
func (r *labelResults) addWarnings(rq ruleQuality, names []string, wrapped func(string, lipgloss.Style, string)) {
	st := r.c.styles
	type group struct {
		text    string
		graders []string
		warn    bool
	}
	var order []*group
	by := map[string]*group{}
	note := func(text, grader string, warn bool) {
		g := by[text]
		if g == nil {
			g = &group{text: text, warn: warn}
			by[text] = g
			order = append(order, g)
		}
		g.graders = append(g.graders, grader)
	}
	for gi, q := range rq.graders {
		for _, warn := range q.Warnings {
			note(oneLine(warn), names[gi], true)
		}
		for _, m := range unmeasured(q) {
			note(oneLine(m), names[gi], false)
		}
	}
	for _, g := range order {
		who := strings.Join(g.graders, ", ")
		if len(g.graders) == len(rq.graders) && len(g.graders) > 1 {
			who = "every grader"
		}
		if g.warn {
			wrapped("  ", st.Retry, "⚠ "+g.text+" ("+who+")")
		} else {
			wrapped("  ", st.Muted, g.text+" ("+who+")")
		}
	}
}

// addNext says how many more answers to label would narrow the
// predicate's recall to ±0.05: the labelled violations the measure needs
// (Measure.MoreNeeded), in answers at the share of violations among the
// provoking answers labelled so far.
func (r *labelResults) addNext(rq ruleQuality, wrapped func(string, lipgloss.Style, string)) {
	st := r.c.styles
	if !r.undecided(rq.ri) {
		return // every verdict of the line is decided: nothing to label next
	}
	pred := rq.graders[0]
	n, err := pred.Recall.MoreNeeded(recallWidth)
	if err != nil {
		return
	}
	labelled, violations := pred.Pooled.Labels(), pred.Pooled.Violations()
	switch {
	case n == 0:
		wrapped("  ", st.Muted, "the predicate's recall is known to ±0.05: no more labels needed for it")
	case violations == 0:
		wrapped("  ", st.Muted, fmt.Sprintf("next: recall needs labelled violations and none of the %d provoking answers labelled is one: "+
			"label more, or draw a stratified set (about %d violations needed)", labelled, n))
	default:
		more := int(math.Ceil(float64(n) * float64(labelled) / float64(violations)))
		wrapped("  ", st.Muted, fmt.Sprintf("next: about %d more answers to label would narrow the predicate's recall to ±0.05 "+
			"(about %d violations, at the %d in %d provoking answers labelled so far)", more, n, violations, labelled))
	}
}

// addMisses lists a grader's misses: labelled violations it passed.
func (r *labelResults) addMisses(q labels.GraderQuality, add func(string)) {
	st := r.c.styles
	if len(q.Misses) == 0 {
		if q.Labels > 0 {
			add(st.Muted.Render("    misses: none"))
		}
		return
	}
	add(fmt.Sprintf("    misses (%d): labelled violations it passed · ↑/↓ select, enter opens", len(q.Misses)))
	for _, k := range q.Misses {
		s := "  " + oneLine(k)
		if i, ok := r.v.pos[k]; ok {
			it := r.v.items[i]
			s = fmt.Sprintf("  answer %d", i+1)
			if it.Case != nil {
				s += " · " + oneLine(it.Case.ID) + " (" + string(it.Case.Kind) + ")"
			}
		}
		r.misses = append(r.misses, missRef{line: len(r.lines), key: k})
		add("   " + s)
	}
}

// addHistory shows each predicate version's recall on the same labels:
// "3f2a9b1c 24/31 → 9b1c2d3e (current) 29/31".
func (r *labelResults) addHistory(rq ruleQuality, add func(string)) {
	st := r.c.styles
	h, ok := r.hist[rq.ri]
	switch {
	case !ok:
		return
	case h.loading && len(h.versions) == 0:
		add(st.Muted.Render("  predicate versions: loading…"))
		return
	case h.err != nil:
		add(st.Err.Render("  predicate versions: " + oneLine(h.err.Error())))
		return
	}
	add("  predicate versions, recall on these labels (oldest first):")
	for _, pv := range h.versions {
		when := "before history was kept"
		if !pv.FirstSeen.IsZero() {
			when = "since " + pv.FirstSeen.UTC().Format("2006-01-02 15:04")
		}
		if pv.Current {
			when += ", current"
		}
		s := fmt.Sprintf("    %s (%s): %s", report.ShortVersion(pv.Version), when, measureText(pv.Quality.Recall))
		if pv.Quality.Ungraded > 0 {
			s += fmt.Sprintf(" · %d labelled answers it never graded", pv.Quality.Ungraded)
		}
		add(s)
	}
	if len(h.versions) > 1 {
		var steps []string
		for _, pv := range h.versions {
			steps = append(steps, countText(pv.Quality.Recall))
		}
		add("    " + st.Header.Render("recall by version: "+strings.Join(steps, " → ")))
	}
}

// measureText is a measure in at most about 27 cells: "24/31 = 0.77 [0.60,
// 0.89]" for a simple sample, "0.70 [0.43, 0.98] IPW 19/21" for a
// weighted estimate (the raw count is not the estimate).
func measureText(m *labels.Measure) string {
	switch {
	case m == nil || m.Total == 0:
		return "—"
	case m.Unmeasured != "":
		return fmt.Sprintf("not yet (raw %d/%d)", m.Hits, m.Total)
	case m.Method == labels.MethodWilson || m.Method == "":
		return m.String()
	}
	return fmt.Sprintf("%.2f [%.2f, %.2f] IPW %d/%d", m.Est, m.CI.Lo, m.CI.Hi, m.Hits, m.Total)
}

// countText is a measure's raw count, "24/31", or "—".
func countText(m *labels.Measure) string {
	if m == nil || m.Total == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d", m.Hits, m.Total)
}

// unmeasured lists why measures with labels have no estimate yet.
func unmeasured(q labels.GraderQuality) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []*labels.Measure{q.Recall, q.Precision, q.Specificity} {
		if m != nil && m.Unmeasured != "" && !seen[m.Unmeasured] {
			seen[m.Unmeasured] = true
			out = append(out, "not measured yet: "+m.Unmeasured)
		}
	}
	return out
}

func hasControl(qs []labels.GraderQuality) bool {
	for _, q := range qs {
		if _, ok := q.Confusion[model.Control]; ok {
			return true
		}
	}
	return false
}

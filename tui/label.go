package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// labelView is the blind labelling screen: one answer of a label set at a
// time, with its case kind, the rule, the user message and the response.
// Until the answer is labelled nothing shows what a grader made of it: no
// verdict, no reason, no highlighted match, not even the prompt variant. Once
// it is labelled, the predicate's verdict and reason and the judges' verdicts
// are revealed beside the label.
//
// Keys: v or 1 a violation (a refusal on a control case), o or 0 ok, s skip,
// n a note, u undo, ←/→ move, g the first unlabelled answer, r the results.
// A label is written by a command and the screen moves to the next answer
// only when the write has committed; while it is in flight, labelling keys
// are refused.
//
// Undo takes back this screen's last action. The store keeps every label
// and never rewrites history, so undoing a label that replaced an earlier
// one records the earlier label again, as a new label. Undoing an answer's
// first label cannot return it to "unlabelled" (there is no delete): the
// label stays, nothing is written, the screen goes back to the answer and
// says so, and v or o changes it. Undoing a skip goes back to the answer.
type labelView struct {
	c *Common
	decisions
	vp viewport.Model

	set   *labels.LabelSet // nil when no set has been drawn
	items []labels.LabelItem
	pos   map[string]int // key -> position in items
	index int

	loader responseLoader

	last int // position of the answer labelled just before, or -1

	results     *labelResults
	showResults bool
	fromResults bool // the answer was opened from the results' misses
}

func newLabelView(c *Common, d *labelDesk, src ResponseSource, setName string) *labelView {
	vp := viewport.New()
	vp.SoftWrap = false
	v := &labelView{c: c, decisions: newDecisions(d, screenLabel), loader: newResponseLoader(src, screenLabel), vp: vp, last: -1}
	v.set = pickSet(c.tally.LabelSets(), setName)
	if v.set != nil {
		v.items = v.set.Items(c.plan)
		v.pos = make(map[string]int, len(v.items))
		for i, it := range v.items {
			v.pos[it.Key] = i
		}
		if i := v.set.NextUnlabelled(c.tally.Labels()); i >= 0 {
			v.index = i
		}
	}
	v.results = newLabelResults(c, v)
	return v
}

// pickSet returns the named set, or the most recently drawn one when name
// is empty; nil when there is none.
func pickSet(sets []labels.LabelSet, name string) *labels.LabelSet {
	var best *labels.LabelSet
	for i := range sets {
		s := &sets[i]
		switch {
		case name != "" && s.Name == name:
			return s
		case name == "" && (best == nil || s.Created.After(best.Created)):
			best = s
		}
	}
	return best
}

func (v *labelView) resize() {
	v.vp.SetWidth(v.c.width)
	v.note.resize(v.c.width)
	v.results.dirty = true
	v.refresh()
}

func (v *labelView) restyle() {
	v.results.width = -1
	v.refresh()
}

// resultsChanged measures the results again when next shown, and redraws
// the answer: an edited predicate moves its highlighted match.
func (v *labelView) resultsChanged() {
	v.results.dirty = true
	v.refresh()
}

func (v *labelView) capturing() bool { return v.note.editing }

// entered loads the answer shown when nothing is loaded yet.
func (v *labelView) entered() tea.Cmd {
	if len(v.items) == 0 || !v.loader.idle() {
		return nil
	}
	return v.load()
}

// predicateSaved reads the predicate's versions again for the results.
func (v *labelView) predicateSaved() tea.Cmd {
	if v.showResults {
		return v.results.loadHistory()
	}
	return nil
}

// resp is the response shown, nil until it is read.
func (v *labelView) resp() *model.Response { return v.loader.shown() }

func (v *labelView) current() (labels.LabelItem, bool) {
	if v.index < 0 || v.index >= len(v.items) {
		return labels.LabelItem{}, false
	}
	return v.items[v.index], true
}

// label returns the current label of the answer at position i.
func (v *labelView) label(i int) (model.Label, bool) {
	if i < 0 || i >= len(v.items) {
		return model.Label{}, false
	}
	l, ok := v.c.tally.Labels()[v.items[i].Key]
	return l, ok
}

// revealed reports whether the current answer is labelled, and so may show
// what the graders said.
func (v *labelView) revealed() bool {
	_, ok := v.label(v.index)
	return ok
}

// load starts reading the current answer's response.
func (v *labelView) load() tea.Cmd {
	v.vp.GotoTop()
	var cmd tea.Cmd
	if it, ok := v.current(); ok {
		cmd = v.loader.start(it.Key)
	} else {
		v.loader.clear()
	}
	v.refresh()
	return cmd
}

// moveTo shows the answer at position i.
func (v *labelView) moveTo(i int) tea.Cmd {
	if len(v.items) == 0 {
		return nil
	}
	i = min(max(i, 0), len(v.items)-1)
	if i == v.index && v.resp() != nil {
		return nil
	}
	v.index = i
	return v.load()
}

// nextUnlabelled returns the first unlabelled position after the current
// one, wrapping to the start (so skipped answers come round again), or -1.
func (v *labelView) nextUnlabelled() int {
	labels := v.c.tally.Labels()
	n := len(v.items)
	for d := 1; d <= n; d++ {
		i := (v.index + d) % n
		if _, ok := labels[v.items[i].Key]; !ok {
			return i
		}
	}
	return -1
}

// back closes what is open on the screen; it reports whether it did.
func (v *labelView) back() bool {
	switch {
	case v.fromResults:
		v.fromResults, v.showResults = false, true
	case v.showResults:
		v.showResults = false
	default:
		return false
	}
	return true
}

// Update handles the screen's keys, its note input and what its commands
// read.
func (v *labelView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case responseMsg:
		if v.loader.got(msg) {
			v.refresh()
		}
		return nil
	case historyMsg:
		v.results.gotHistory(msg)
		return nil
	}
	if v.note.editing {
		return v.updateNote(msg)
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if v.showResults {
		return v.results.update(km)
	}
	if v.set == nil {
		return nil
	}
	k := v.c.keys.Label
	switch {
	case key.Matches(km, k.Violation):
		return v.labelCurrent(true)
	case key.Matches(km, k.OK):
		return v.labelCurrent(false)
	case key.Matches(km, k.Skip):
		return v.skip()
	case key.Matches(km, k.Undo):
		return v.undoLast()
	case key.Matches(km, k.Note):
		if it, ok := v.current(); ok && !v.d.busy() {
			l, _ := v.label(v.index)
			return v.note.open(it.Key, l.Note)
		}
	case v.d.busy():
		// Moving on before the write commits would show the next answer
		// with the last one unsaved.
		return nil
	case key.Matches(km, k.Prev):
		return v.moveTo(v.index - 1)
	case key.Matches(km, k.Next):
		return v.moveTo(v.index + 1)
	case key.Matches(km, k.FirstUnlabelled):
		if i := v.set.NextUnlabelled(v.c.tally.Labels()); i >= 0 {
			return v.moveTo(i)
		}
		return say("Every answer of the set is labelled.")
	case key.Matches(km, k.Results):
		v.showResults = true
		return v.results.open()
	default:
		scroll(&v.vp, km, k.Scroll)
	}
	return nil
}

// scroll moves a viewport by a scrolling key.
func scroll(vp *viewport.Model, km tea.KeyPressMsg, k ScrollKeys) {
	switch {
	case key.Matches(km, k.Up):
		vp.ScrollUp(1)
	case key.Matches(km, k.Down):
		vp.ScrollDown(1)
	case key.Matches(km, k.PageUp):
		vp.PageUp()
	case key.Matches(km, k.PageDown):
		vp.PageDown()
	case key.Matches(km, k.Top):
		vp.GotoTop()
	case key.Matches(km, k.Bottom):
		vp.GotoBottom()
	}
}

func (v *labelView) updateNote(msg tea.Msg) tea.Cmd {
	cmd := v.note.update(msg, v.c.keys.Note, v.saveNote)
	if !v.note.editing {
		v.refresh() // the note line gives way to the answer again
	}
	return cmd
}

// saveNote attaches a note: to the answer's label when it has one (a new
// label, the same verdict), or to the label it gets next.
func (v *labelView) saveNote(note string) tea.Cmd {
	it, ok := v.current()
	if !ok {
		return nil
	}
	cmd := v.attachNote(it.Key, v.index, v.currentLabel(), note)
	v.refresh()
	return cmd
}

// labelCurrent writes a label for the answer shown.
func (v *labelView) labelCurrent(violation bool) tea.Cmd {
	it, ok := v.current()
	if !ok {
		return nil
	}
	cmd := v.decide(it.Key, v.index, v.currentLabel(), violation)
	v.refresh()
	return cmd
}

// currentLabel is the label of the answer shown, nil when it has none.
func (v *labelView) currentLabel() *model.Label {
	if l, ok := v.label(v.index); ok {
		return &l
	}
	return nil
}

// skip moves on without a label; u comes back.
func (v *labelView) skip() tea.Cmd {
	it, ok := v.current()
	if !ok || v.d.busy() {
		return nil
	}
	v.skipped(it.Key, v.index)
	next := v.nextUnlabelled()
	if next < 0 || next == v.index {
		next = min(v.index+1, len(v.items)-1)
	}
	return v.moveTo(next)
}

// undoLast takes back the screen's last action (see labelView).
func (v *labelView) undoLast() tea.Cmd { return v.takeBack(v.moveTo) }

// saved moves on once a label has committed: to the next unlabelled
// answer, or, after an undo, back to the answer undone.
func (v *labelView) saved(msg labelSavedMsg) tea.Cmd {
	e, undone, ok := v.settle(msg)
	if !ok {
		v.refresh()
		return nil
	}
	v.results.dirty = true
	if undone {
		v.last = -1
		return v.moveTo(e.pos)
	}
	if e.prev != nil && e.prev.Violation == msg.label.Violation {
		v.refresh() // a note changed: stay
		return nil
	}
	v.last = e.pos
	if v.fromResults {
		v.refresh()
		return nil
	}
	next := v.nextUnlabelled()
	if next < 0 {
		v.refresh()
		return say(fmt.Sprintf("All %d answers of the set are labelled: r shows the results.", len(v.items)))
	}
	return v.moveTo(next)
}

// openKey shows the answer with the given key (a miss from the results).
func (v *labelView) openKey(k string) tea.Cmd {
	i, ok := v.pos[k]
	if !ok {
		return nil
	}
	v.showResults, v.fromResults = false, true
	v.index = -1 // force a load
	return v.moveTo(i)
}

func (v *labelView) helpKeys() helpKeys {
	k := v.c.keys
	lk := k.Label
	if v.note.editing {
		return helpKeys{short: []key.Binding{k.Note.Accept, k.Note.Cancel}, full: [][]key.Binding{{k.Note.Accept, k.Note.Cancel}}}
	}
	if v.showResults {
		return helpKeys{short: []key.Binding{lk.Scroll.Up, lk.Scroll.Down, lk.Open, lk.Results},
			full: [][]key.Binding{{lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown, lk.Open, lk.Results}}}
	}
	return helpKeys{
		short: []key.Binding{lk.Violation, lk.OK, lk.Skip, lk.Undo, lk.Note, lk.Prev, lk.Next, lk.Results},
		full: [][]key.Binding{
			{lk.Violation, lk.OK, lk.Skip, lk.Undo, lk.Note},
			{lk.Prev, lk.Next, lk.FirstUnlabelled, lk.Results},
			{lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown, lk.Scroll.Top, lk.Scroll.Bottom},
		},
	}
}

// View renders the answer (blind until labelled) or the results.
func (v *labelView) View() string {
	if v.showResults {
		return v.results.view()
	}
	st := v.c.styles
	if v.set == nil {
		return strings.Join([]string{
			st.Title.Render("Label"),
			"",
			"No label set has been drawn for this audit yet. Draw one (60 answers, blind) with:",
			"  auditor label " + shellWord(v.c.plan.Audit.Path),
			"and label it here. Labels measure the predicate: its recall and precision.",
		}, "\n")
	}
	head := v.head()
	foot := v.foot()
	v.vp.SetHeight(max(v.c.bodyH-len(head)-len(foot), 1))
	lines := append(head, v.vp.View())
	return strings.Join(append(lines, foot...), "\n")
}

// shellWord quotes a path for a command line shown to the user.
func shellWord(s string) string {
	s = oneLine(s)
	if s != "" && !strings.ContainsAny(s, " '\"\\$`!*?&;|<>(){}[]#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// head is the title line and what the answer is about.
func (v *labelView) head() []string {
	c, st := v.c, v.c.styles
	done, total := v.set.Progress(c.tally.Labels())
	who := v.d.who
	if who == "" {
		who = "unnamed"
	}
	title := st.Title.Render("Label") + fmt.Sprintf(" %d/%d labelled · answer %d of %d · set %s · labeller %s",
		done, total, v.index+1, len(v.items), oneLine(v.set.Name), oneLine(who))
	state := st.Badge.Render(" BLIND ")
	if v.revealed() {
		state = st.Muted.Render("labelled")
	}
	if v.d.busy() {
		state = st.InFlight.Render("saving…")
	}
	it, _ := v.current()
	about := st.Muted.Render("this answer is no longer in the audit's plan")
	if it.Case != nil && it.Rule != nil {
		about = st.Header.Render(string(it.Case.Kind)) + " · " + oneLine(it.Case.ID) +
			st.Muted.Render(fmt.Sprintf(" · line %d: ", it.Rule.Line)) + oneLine(it.Rule.Text)
	}
	return []string{fit(spread(title, state, c.width), c.width), clip(about, c.width)}
}

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
	if l, ok := v.label(v.index); ok {
		out = append(out, v.reveal(it, l)...)
	} else {
		hint := "Not labelled yet: v violation · o ok · s skip · n note. Verdicts show after."
		if kind == model.Control {
			hint = "A control: v if it refused, o if it answered. Verdicts show after labelling."
		}
		out = append(out, st.Muted.Render(clip(hint, c.width)))
		if n, ok := v.note.pending[it.Key]; ok && n != "" {
			out = append(out, clip(st.Muted.Render("note to save with the label: ")+oneLine(n), c.width))
		}
	}
	if v.last >= 0 && v.last != v.index && v.last < len(v.items) {
		out = append(out, clip(v.lastLine(), c.width))
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
	if j := v.judgesLine(it.Key); j != "" {
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

// judgesLine lists every judge's verdict on an answer.
func (v *labelView) judgesLine(key string) string {
	var parts []string
	for _, j := range v.c.plan.Audit.Judges {
		g, ok := v.c.tally.GraderGrades(j.Version)[key]
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

// lastLine is the outcome of the answer labelled just before, so the
// reveal is not lost when the screen moves on. It shows verdicts only:
// reasons are shared by many answers and would hint at the one shown.
func (v *labelView) lastLine() string {
	it := v.items[v.last]
	l, ok := v.label(v.last)
	if !ok {
		return ""
	}
	kind := model.Provoke
	if it.Case != nil {
		kind = it.Case.Kind
	}
	g, graded := v.predicateGrade(it)
	s := fmt.Sprintf("answer %d, just labelled: you %s, predicate %s", v.last+1, verdictWord(l.Violation, kind), gradeWord(g, graded))
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
	v.vp.SetContentLines(answerLines(v.c, it.Case, &v.loader, span))
	v.vp.SetYOffset(off)
}

// answerLines renders a case's message and knowledge base and a response,
// sanitised and wrapped, with span highlighted (an empty span: none).
func answerLines(c *Common, cs *model.Case, l *responseLoader, span model.Span) []string {
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
		add(st.Header.Render("USER MESSAGE"))
		for p := range strings.SplitSeq(model.Sanitize(cs.Msg), "\n") {
			wrapped(strings.ReplaceAll(p, "\t", " "))
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
		add(st.Err.Render("  the call failed for good: ") + oneLine(resp.Error))
	default:
		out = append(out, sanitizeSpan(resp.Text, span).render(w, "  ", st.Span)...)
	}
	return out
}

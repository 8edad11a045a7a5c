package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// labelView is the blind labelling screen: one answer of a label set at a
// time, with its case kind, the rule, the user message and the response.
// Until the answer is labelled nothing shows what a grader made of it: no
// verdict, no reason, no highlighted match, not even the prompt variant. A
// label's graders (the predicate's verdict and reason, the judges') are
// revealed after the next label commits, or on w, or when the results
// open: until then u takes the label back with the answer still blind (an
// Unseen undo, model.Label.Unseen), so a slip costs no sample. An answer
// labelled in an earlier session shows its graders.
//
// Keys: v or 1 a violation (a refusal on a control case), o or 0 ok, s skip,
// i a note, u undo, w the graders now, ←/→ (h/l) move, t the first unlabelled
// answer, r the results.
// A label is written by a command and the screen moves to the next answer
// only when the write has committed; while it is in flight, labelling keys
// are refused.
//
// Undo takes back this screen's last action. The store keeps every label
// and never rewrites history: undoing a label appends an undo record
// (model.Label.Undo), so the answer's label is again the one before it,
// or none when it was the first. Undoing a skip goes back to the answer.
type labelView struct {
	c *Common
	decisions
	vp viewport.Model

	set   *labels.LabelSet // nil when no set has been drawn
	items []labels.LabelItem
	pos   map[string]int // key -> position in items
	index int

	loader responseLoader

	last  int // position of the answer labelled just before, or -1
	shown int // position of the answer whose graders were revealed last, or -1
	// hidden are the answers labelled in this session whose graders are
	// not shown yet (see labelView): at most the last one labelled.
	hidden map[string]bool
	skips  map[string]bool // answers skipped, in this session or before (labelskips.go)
	draw   drawBox         // drawing a set when there is none (labeldraw.go)

	results *labelResults
	// before is each verdict when the screen opened: the results say what
	// the labels did to it.
	before      map[verdictKey]model.Decision
	showResults bool
	fromResults bool // the answer was opened from the results' misses
}

func newLabelView(c *Common, d *labelDesk, src ResponseSource, setName string) *labelView {
	vp := viewport.New()
	vp.SoftWrap = false
	v := &labelView{c: c, decisions: newDecisions(d, screenLabel), loader: newResponseLoader(src, screenLabel), vp: vp, last: -1, shown: -1,
		hidden: map[string]bool{}, skips: map[string]bool{}, draw: newDrawBox()}
	v.useSet(pickSet(c.tally.LabelSets(), setName))
	v.results = newLabelResults(c, v)
	v.before = verdictsNow(c)
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

func (v *labelView) capturing() bool { return v.note.editing || v.draw.editing }

// entered loads the answer shown when nothing is loaded yet.
func (v *labelView) entered() tea.Cmd {
	if len(v.items) == 0 || !v.loader.idle() {
		return nil
	}
	return tea.Batch(v.load(), v.loadSkips())
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
	l, ok := v.mine()[v.items[i].Key]
	return l, ok
}

// mine is the labeller's own blind labels: a second labeller sees no one
// else's label before deciding, and review adjudications (seen labels)
// never make an answer of a set look labelled.
func (v *labelView) mine() map[string]model.Label { return v.c.tally.LabelBook().Of(v.d.who) }

// revealed reports whether the current answer is labelled and its graders
// are shown.
func (v *labelView) revealed() bool {
	_, ok := v.label(v.index)
	return ok && !v.hiddenAt(v.index)
}

// hiddenAt reports whether the answer at position i is labelled with its
// graders not shown yet.
func (v *labelView) hiddenAt(i int) bool {
	return i >= 0 && i < len(v.items) && v.hidden[v.items[i].Key]
}

// reveal shows the graders of every answer labelled and not shown yet.
func (v *labelView) revealAll() {
	for k := range v.hidden {
		delete(v.hidden, k)
		if i, ok := v.pos[k]; ok {
			v.shown = i
		}
	}
}

// closed reports whether the answer at position i is closed to blind
// labels: this labeller labelled it, saw its graders, and took the label
// back. It has no blind label of theirs, so it is in no recall, and a new
// label would not be blind.
func (v *labelView) closed(i int) bool {
	if i < 0 || i >= len(v.items) {
		return false
	}
	k := v.items[i].Key
	_, labelled := v.mine()[k]
	return !labelled && v.c.tally.LabelBook().Gave(k, v.d.who, model.LabelBlind)
}

// progress counts the set's answers this labeller has labelled and those
// closed to blind labels (see closed), of total.
func (v *labelView) progress() (done, closed, total int) {
	done, total = v.set.Progress(v.mine())
	for i := range v.items {
		if v.closed(i) {
			closed++
		}
	}
	return done, closed, total
}

// finished says that no answer of the set is left open to a blind label.
func (v *labelView) finished() string {
	done, closed, total := v.progress()
	if closed == 0 {
		return fmt.Sprintf("All %d answers of the set are labelled: r shows the results.", total)
	}
	return fmt.Sprintf("%d of %d labelled, %d closed to blind labels (undone): r shows the results.", done, total, closed)
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

// nextUnlabelled returns the next unlabelled position after the current
// one, wrapping to the start, answers skipped (now or in an earlier
// session) after the others, or -1.
func (v *labelView) nextUnlabelled() int { return v.openAfter(v.index) }

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
	if v.draw.editing {
		return v.updateDraw(msg)
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if v.showResults {
		return v.results.update(km)
	}
	if v.set == nil {
		if key.Matches(km, v.c.keys.Label.Draw) {
			return v.openDraw()
		}
		return nil
	}
	k := v.c.keys.Label
	switch {
	case key.Matches(km, k.Draw):
		// One set at a time on this screen: a second set has a name of
		// its own, given on the command line.
		return say(fmt.Sprintf("Set %q (%d answers) is open; another: auditor label AUDIT --set NAME",
			model.Sanitize(v.set.Name), len(v.items)))
	case key.Matches(km, k.Violation):
		return v.labelCurrent(true)
	case key.Matches(km, k.OK):
		return v.labelCurrent(false)
	case key.Matches(km, k.Skip):
		return v.skip()
	case key.Matches(km, k.Undo):
		return v.undoLast()
	case key.Matches(km, k.Reveal):
		if len(v.hidden) == 0 {
			return say("Nothing hidden: every label's graders are shown.")
		}
		v.revealAll()
		v.refresh()
		return say("Graders shown: an undo now closes the answer to blind labels.")
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
		if i := v.firstOpen(); i >= 0 {
			return v.moveTo(i)
		}
		return say(v.finished())
	case key.Matches(km, k.Results):
		return v.openResults()
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

// labelCurrent writes a label for the answer shown. An answer this
// labeller has labelled before (even if undone since) had its graders'
// verdicts shown at once, so a new label would not be blind and would
// enter recall as if it were: it is refused. Undo still takes a label
// back (the answer then has no blind label of this labeller).
func (v *labelView) labelCurrent(violation bool) tea.Cmd {
	it, ok := v.current()
	if !ok {
		return nil
	}
	switch {
	case v.closed(v.index):
		return sayErr("Closed to blind labels: you saw its graders, so a new label is not taken.")
	case v.c.tally.LabelBook().Gave(it.Key, v.d.who, model.LabelBlind):
		return sayErr("Labelled: a new one would not be blind (you saw its graders). u takes it back.")
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
	store := v.remember(it.Key, true)
	next := v.nextUnlabelled()
	if next < 0 || next == v.index {
		next = min(v.index+1, len(v.items)-1)
	}
	return tea.Batch(v.moveTo(next), store)
}

// undoLast takes back the screen's last action (see labelView); an undone
// skip is forgotten.
func (v *labelView) undoLast() tea.Cmd {
	var forget tea.Cmd
	if n := len(v.undo); n > 0 && v.undo[n-1].skipped && !v.d.busy() {
		forget = v.remember(v.undo[n-1].key, false)
	}
	return tea.Batch(v.takeBack(v.moveTo, func(k string) bool { return v.hidden[k] }), forget)
}

// openResults shows the results; they name the misses, so every label's
// graders are shown from then on.
func (v *labelView) openResults() tea.Cmd {
	v.revealAll()
	v.showResults = true
	return v.results.open()
}

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
		delete(v.hidden, e.key)
		v.last = -1
		if v.shown == e.pos {
			v.shown = -1
		}
		return v.moveTo(e.pos)
	}
	if e.prev != nil && e.prev.Violation == msg.label.Violation && e.prev.Note != msg.label.Note {
		v.refresh() // a note changed: stay
		return nil
	}
	// This label reveals the one before; its own graders wait for the next.
	v.revealAll()
	v.hidden[e.key] = true
	v.last = e.pos
	if v.fromResults {
		v.refresh()
		return nil
	}
	next := v.nextUnlabelled()
	if next < 0 || v.skips[v.items[next].Key] {
		// The end of the set: every answer is labelled, closed or
		// skipped. It lands on the results rather than on a skipped
		// answer without a word.
		v.refresh()
		return tea.Batch(v.openResults(), say(v.ended()))
	}
	return v.moveTo(next)
}

// ended is what the status line says when the set's last open answer is
// labelled and the results open.
func (v *labelView) ended() string {
	done, closed, total := v.progress()
	s := fmt.Sprintf("End of the set: %d of %d labelled", done, total)
	if closed > 0 {
		s += fmt.Sprintf(", %d closed", closed)
	}
	if skipped := total - done - closed; skipped > 0 {
		s += fmt.Sprintf(", %d skipped (r, t: to them)", skipped)
	}
	return s + ". Graders shown."
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
	if v.draw.editing {
		return helpKeys{short: []key.Binding{k.DrawSize.Accept, k.DrawSize.Cancel}, full: [][]key.Binding{{k.DrawSize.Accept, k.DrawSize.Cancel}}}
	}
	if v.set == nil {
		return helpKeys{short: []key.Binding{lk.Draw}, full: [][]key.Binding{{lk.Draw}}}
	}
	if v.showResults {
		return helpKeys{short: []key.Binding{lk.Scroll.Up, lk.Scroll.Down, lk.Open, lk.Results},
			full: [][]key.Binding{{lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown, lk.Open, lk.Results}}}
	}
	return helpKeys{
		short: []key.Binding{lk.Violation, lk.OK, lk.Skip, lk.Undo, lk.Note, lk.Prev, lk.Next, lk.Results},
		full: [][]key.Binding{
			{lk.Violation, lk.OK, lk.Skip, lk.Undo, lk.Note, lk.Reveal},
			{lk.Prev, lk.Next, lk.FirstUnlabelled, lk.Results, lk.Draw},
			{lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown, lk.Scroll.Top, lk.Scroll.Bottom},
		},
	}
}

package tui

import (
	"slices"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// reviewView is the review screen: the answers on which graders disagree
// (any pair, or one chosen pair), one at a time, with each grader's verdict
// and reasoning side by side under the message and the response. The human
// decides with the labelling keys; the decision is a seen label (the
// graders' verdicts were on screen), kept apart from the blind labels that
// recall is measured on. Filters narrow the
// queue by rule, kind and variant. Two panels sit beside it: agreement
// (every pair of graders, and every grader against the labels) and, with
// two or more models under test, a comparison of two models case by case,
// whose split pairs (A failed where B passed, and the reverse) the queue
// can step through instead of the disagreements. A third queue holds the
// answers two people labelled differently (see reviewlabellers.go).
//
// Labelling works as on the label screen (see labelView), except that it
// is not blind and moves to the next answer in the queue.
type reviewView struct {
	c *Common
	decisions
	vp viewport.Model

	rule, model int
	pair        int // 0: any pair of graders; i: pairs()[i-1]
	kind        int // 0: every kind; i: model.Kinds[i-1]
	variant     int // 0: both; 1: baseline; 2: the deletion
	queue       int // 0: disagreements; 1: A failed, B passed; 2: B failed, A passed
	cmpA, cmpB  int // the models compared

	mode reviewMode

	raw     []reviewEntry // the queue before the search and grouping
	items   []reviewEntry
	index   int
	builtOn *evidence.Results // the results the queue was built from
	stale   bool

	loader responseLoader // the entry's answer and, for split pairs, the other model's

	panel scrollText // the agreement and compare panels

	people labellerState // labels by labeller, and the queue of their disagreements

	texts  answerTexts  // the queue's answer texts: grouping and search
	search listFilter   // narrows the queue: a case id or the answer's text
	judges judgeAnswers // the judges' stored answers to the answer shown
	// rawJudges shows each judge's answer as stored instead of its
	// reasoning.
	rawJudges bool
	// showVariant shows which variant (baseline or the deletion) produced
	// the answer. Off by default: the reviewer adjudicates answers the
	// graders disagree on, and knowing an answer came from the prompt
	// without the line invites reading a violation into it (and from the
	// baseline, reading it away), the very difference the verdict
	// measures. The label screen hides it for the same reason.
	showVariant bool
	full        fullText // a judge's answer opened in full
	// pairAsked are the rules whose remembered grader pair was read
	// (reviewpair.go).
	pairAsked map[int]bool
}

type reviewMode int

const (
	reviewItems reviewMode = iota
	reviewAgreement
	reviewCompare
)

// reviewEntry is one answer in the review queue.
type reviewEntry struct {
	key  string
	cell audit.Cell
	// more are the answers with the same text (and kind) the entry stands
	// for: a decision labels each of them too.
	more []reviewEntry
	// other is, for a split pair, the other model's answer to the same
	// case, variant and sample; "" in the disagreement queue.
	other string
}

func newReviewView(c *Common, d *labelDesk, src ResponseSource) *reviewView {
	vp := viewport.New()
	vp.SoftWrap = false
	v := &reviewView{c: c, decisions: newDecisions(d, screenReview), loader: newResponseLoader(src, screenReview), vp: vp, stale: true,
		search: newListFilter("answer text or case id")}
	if d.store != nil {
		v.people.src = d.store
	}
	if c.models() > 1 {
		v.cmpB = 1
	}
	return v
}

func (v *reviewView) resize() {
	v.vp.SetWidth(v.c.width)
	v.note.resize(v.c.width)
	v.search.resize(v.c.width)
	v.full.width = -1
	v.panel.width = -1
	v.refresh()
}

func (v *reviewView) restyle() {
	v.panel.width = -1
	v.refresh()
}

// resultsChanged rebuilds the queue when next used (pure CPU on the
// tally) and redraws the graders' verdicts.
func (v *reviewView) resultsChanged() {
	v.stale = true
	v.refresh()
}

func (v *reviewView) capturing() bool { return v.note.editing || v.search.editing }

// entered reads the labels by labeller again (labels given elsewhere
// change who disagrees with whom) and loads the answer shown when the
// queue changed or nothing is loaded.
func (v *reviewView) entered() tea.Cmd {
	people := tea.Batch(v.loadLabellers(), v.loadPair())
	if v.sync() || v.loader.idle() {
		return tea.Batch(v.load(), people, v.textsCmd())
	}
	return tea.Batch(people, v.textsCmd())
}

// pairs returns every pair of the current rule's graders.
func (v *reviewView) pairs() [][2]evidence.GraderRef {
	refs := v.c.tally.Graders(v.rule)
	var out [][2]evidence.GraderRef
	for i := range refs {
		for j := i + 1; j < len(refs); j++ {
			out = append(out, [2]evidence.GraderRef{refs[i], refs[j]})
		}
	}
	return out
}

// sync rebuilds the queue when the results changed (a run batch, a label,
// an edited predicate) or a filter did, keeping the answer shown where it
// can. It reports whether the answer shown changed. It is pure CPU on the
// tally.
func (v *reviewView) sync() bool {
	if !v.stale && v.builtOn == v.c.res {
		return false
	}
	var keep string
	if v.index < len(v.items) {
		keep = v.items[v.index].key
	}
	defer v.refresh()
	v.raw = v.build()
	v.items = v.grouped(v.raw)
	v.builtOn, v.stale = v.c.res, false
	v.index = 0
	if i := slices.IndexFunc(v.items, func(e reviewEntry) bool { return e.holds(keep) }); i >= 0 {
		v.index = i
		v.items[i] = v.items[i].led(keep) // still the answer shown
	}
	v.panel.width = -1
	now, _ := v.current()
	return now.key != keep
}

// build lists the queue for the current rule, model and filters.
func (v *reviewView) build() []reviewEntry {
	t := v.c.tally
	rule := v.c.plan.Audit.Rules[v.rule]
	keep := func(c audit.Cell) bool {
		if v.kind > 0 && rule.Cases[c.Case].Kind != model.Kinds[v.kind-1] {
			return false
		}
		return v.variant == 0 || c.Deleted == (v.variant == 2)
	}
	var out []reviewEntry
	if v.people.on {
		for _, e := range v.labellerEntries() {
			if keep(e.cell) {
				out = append(out, e)
			}
		}
		return out
	}
	if v.queue == 0 {
		var only []evidence.GraderRef
		if ps := v.pairs(); v.pair > 0 && v.pair <= len(ps) {
			only = ps[v.pair-1][:]
		}
		for _, it := range t.Disagreements(v.rule, v.model, only) {
			if keep(it.Cell) {
				out = append(out, reviewEntry{key: it.Key, cell: it.Cell})
			}
		}
		// Disagreements that go the same way (which graders said
		// violation) come one after the other, the commonest first.
		v.byDirection(out)
		return out
	}
	if v.c.models() < 2 {
		return nil
	}
	for _, deleted := range []bool{false, true} {
		if v.variant != 0 && deleted != (v.variant == 2) {
			continue
		}
		for _, p := range t.SplitPairs(v.rule, v.cmpA, v.cmpB, deleted, v.queue == 1) {
			ca, okA := v.cellOf(p.KeyA, v.cmpA)
			cb, okB := v.cellOf(p.KeyB, v.cmpB)
			if !okA || !okB || !keep(ca) {
				continue
			}
			out = append(out, reviewEntry{key: p.KeyA, cell: ca, other: p.KeyB},
				reviewEntry{key: p.KeyB, cell: cb, other: p.KeyA})
		}
	}
	return out
}

// cellOf finds the current rule's cell of a model that uses an answer.
func (v *reviewView) cellOf(key string, mdl int) (audit.Cell, bool) {
	for _, ci := range v.c.plan.ByKey[key] {
		c := v.c.plan.Cells[ci]
		if c.Rule == v.rule && c.Model == mdl {
			return c, true
		}
	}
	return audit.Cell{}, false
}

func (v *reviewView) current() (reviewEntry, bool) {
	if v.index < 0 || v.index >= len(v.items) {
		return reviewEntry{}, false
	}
	return v.items[v.index], true
}

// load starts reading the answer shown (and its pair's other answer).
func (v *reviewView) load() tea.Cmd {
	v.vp.GotoTop()
	v.full.close()
	v.judges.clear()
	var cmd tea.Cmd
	switch e, ok := v.current(); {
	case !ok:
		v.loader.clear()
	case e.other != "":
		cmd = v.loader.start(e.key, e.other)
	default:
		cmd = v.loader.start(e.key)
	}
	v.refresh()
	return cmd
}

func (v *reviewView) moveTo(i int) tea.Cmd {
	if len(v.items) == 0 {
		return nil
	}
	i = min(max(i, 0), len(v.items)-1)
	if i == v.index {
		return nil
	}
	v.index = i
	return v.load()
}

// reset rebuilds the queue after a filter changed and shows its first
// answer.
func (v *reviewView) reset() tea.Cmd {
	v.stale = true
	v.sync()
	return v.load()
}

// back closes the answer opened in full, or a panel, or clears the
// search; it reports whether it did.
func (v *reviewView) back() bool {
	switch {
	case v.full.on:
		v.full.close()
	case v.mode != reviewItems:
		v.mode = reviewItems
	case v.search.clear():
		v.stale = true
		v.sync() // the answer shown stays: it passed the search
	default:
		return false
	}
	return true
}

// Update handles the screen's keys, its note input and what its commands
// read.
func (v *reviewView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case responseMsg:
		return v.gotResponse(msg)
	case labellersMsg:
		return v.gotLabellers(msg)
	case reviewTextsMsg:
		return v.gotTexts(msg)
	case reviewPairMsg:
		return v.gotPair(msg)
	}
	if v.note.editing {
		return v.updateNote(msg)
	}
	if v.search.editing {
		return v.updateSearch(msg)
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	var reload tea.Cmd
	if v.sync() {
		reload = v.load() // the queue changed under the keys
	}
	return tea.Batch(reload, v.textsCmd(), v.handleKey(km))
}

func (v *reviewView) handleKey(km tea.KeyPressMsg) tea.Cmd {
	rk, lk := v.c.keys.Review, v.c.keys.Label
	if v.full.on {
		if key.Matches(km, rk.Raw) {
			v.rawJudges = !v.rawJudges
			v.openJudges()
			v.refresh()
			return nil
		}
		v.full.scroll(km, lk.Scroll, v.c.bodyH)
		return nil
	}
	switch {
	case key.Matches(km, rk.ShowVariant):
		v.showVariant = !v.showVariant
		if !v.showVariant && v.variant != 0 {
			// A queue of one variant names it: hiding the variant
			// clears the filter.
			v.variant = 0
			return tea.Batch(v.reset(), say("Variant hidden, so the variant filter is cleared: the queue holds both."))
		}
		v.refresh()
		return nil
	case key.Matches(km, rk.Agreement):
		v.toggle(reviewAgreement)
		if v.mode == reviewAgreement {
			return v.loadLabellers()
		}
		return nil
	case key.Matches(km, rk.Labellers):
		if v.d.busy() {
			return nil
		}
		return v.toggleLabellers()
	case key.Matches(km, rk.Compare):
		if v.c.models() < 2 {
			return say("Comparing models needs two or more [[model]] tables in the audit.")
		}
		v.toggle(reviewCompare)
		return nil
	case key.Matches(km, rk.PrevRule), key.Matches(km, rk.NextRule):
		if v.d.busy() {
			return nil
		}
		n := len(v.c.plan.Audit.Rules)
		d := 1
		if key.Matches(km, rk.PrevRule) {
			d = -1
		}
		v.rule = ((v.rule+d)%n + n) % n
		v.pair = 0
		return tea.Batch(v.reset(), v.loadPair())
	case key.Matches(km, rk.Variant):
		v.variant = (v.variant + 1) % 3
		if v.variant != 0 && !v.showVariant {
			// Filtering by variant tells which variant every answer
			// came from: the badge must not say it is hidden.
			v.showVariant = true
			return tea.Batch(v.reset(), say("Filtering by variant shows it: V hides it again and clears the filter."))
		}
		return v.reset()
	}
	if v.mode != reviewItems {
		return v.updatePanel(km)
	}
	switch {
	case key.Matches(km, lk.Violation):
		return v.labelCurrent(true)
	case key.Matches(km, lk.OK):
		return v.labelCurrent(false)
	case key.Matches(km, lk.Undo):
		return v.undoLast()
	case v.d.busy():
		return nil // the write in flight commits before anything moves
	case key.Matches(km, lk.Skip):
		if e, ok := v.current(); ok {
			v.skipped(e.key, v.index)
			return v.moveTo(v.index + 1)
		}
	case key.Matches(km, lk.Note):
		if e, ok := v.current(); ok {
			var note string
			if l := v.labelOf(e.key); l != nil {
				note = l.Note
			}
			return v.note.open(e.key, note)
		}
	case key.Matches(km, rk.Raw):
		v.rawJudges = !v.rawJudges
		v.refresh()
	case key.Matches(km, rk.Open):
		if _, ok := v.current(); ok && len(v.c.plan.Audit.Judges) > 0 {
			v.openJudges()
		}
	case key.Matches(km, rk.Search):
		return v.search.open()
	case key.Matches(km, lk.Prev):
		return v.moveTo(v.index - 1)
	case key.Matches(km, lk.Next):
		return v.moveTo(v.index + 1)
	case key.Matches(km, lk.FirstUnlabelled):
		labels := v.c.tally.SeenLabels()
		if i := slices.IndexFunc(v.items, func(e reviewEntry) bool { _, ok := labels[e.key]; return !ok }); i >= 0 {
			return v.moveTo(i)
		}
		return say("Every answer in this queue is labelled.")
	case key.Matches(km, rk.Pair) && v.people.on:
		v.people.pair = (v.people.pair + 1) % (len(v.labellerPairs()) + 1)
		return v.reset()
	case key.Matches(km, rk.Pair):
		v.pair = (v.pair + 1) % (len(v.pairs()) + 1)
		v.queue = 0
		return tea.Batch(v.reset(), v.rememberPair())
	case key.Matches(km, rk.Kind):
		v.kind = (v.kind + 1) % (len(model.Kinds) + 1)
		return v.reset()
	case key.Matches(km, rk.Model):
		if v.c.models() < 2 {
			return nil
		}
		v.model = (v.model + 1) % v.c.models()
		return v.reset()
	case key.Matches(km, rk.Queue):
		if v.c.models() < 2 {
			return say("Split pairs need two or more [[model]] tables in the audit.")
		}
		v.queue = (v.queue + 1) % 3
		v.people.on = false
		return v.reset()
	default:
		// The window's height as drawn, even before a first View at this
		// size: the bottom is the last line of the content in it.
		fitWindow(&v.vp, v.bodyHeight())
		scroll(&v.vp, km, lk.Scroll)
	}
	return nil
}

func (v *reviewView) toggle(m reviewMode) {
	if v.mode == m {
		v.mode = reviewItems
		return
	}
	v.mode = m
	v.panel.top, v.panel.width = 0, -1
}

// updatePanel handles keys while a panel is shown.
func (v *reviewView) updatePanel(km tea.KeyPressMsg) tea.Cmd {
	rk := v.c.keys.Review
	if v.mode == reviewCompare && key.Matches(km, rk.CompareModels) {
		v.nextModelPair()
		v.panel.width = -1
		if v.queue != 0 {
			return v.reset()
		}
		return nil
	}
	v.panel.scroll(km, v.c.keys.Label.Scroll, len(v.panel.lines), v.c.bodyH)
	return nil
}

// nextModelPair moves the comparison to the next pair of models.
func (v *reviewView) nextModelPair() {
	n := v.c.models()
	v.cmpB++
	if v.cmpB >= n {
		v.cmpA++
		if v.cmpA >= n-1 {
			v.cmpA = 0
		}
		v.cmpB = v.cmpA + 1
	}
}

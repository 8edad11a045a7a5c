package tui

// The review screen's decisions: labels and notes written from the queue,
// undo, where it moves once a label commits, and its keys' help.

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

func (v *reviewView) updateNote(msg tea.Msg) tea.Cmd {
	return v.note.update(msg, v.c.keys.Note, v.saveNote)
}

func (v *reviewView) saveNote(note string) tea.Cmd {
	e, ok := v.current()
	if !ok {
		return nil
	}
	cur := v.labelOf(e.key)
	return v.attachNote(e.key, v.index, cur, note, v.sameVerdict(e, cur)...)
}

// sameVerdict returns the other answers of a group the reviewer labelled
// as cur: a note goes with their labels too. One relabelled on its own,
// or not labelled, is left as it is: a note decides nothing.
func (v *reviewView) sameVerdict(e reviewEntry, cur *model.Label) []string {
	if cur == nil {
		return nil
	}
	var out []string
	for _, m := range e.more {
		if l := v.labelOf(m.key); l != nil && l.Violation == cur.Violation {
			out = append(out, m.key)
		}
	}
	return out
}

func (v *reviewView) labelCurrent(violation bool) tea.Cmd {
	e, ok := v.current()
	if !ok {
		return nil
	}
	// A group of identical answers gets one label each, the same.
	return v.decide(e.key, v.index, v.labelOf(e.key), violation, e.keys()[1:]...)
}

// labelOf is the reviewer's own adjudication of an answer (a seen label),
// nil when they gave none.
func (v *reviewView) labelOf(key string) *model.Label {
	if l, ok := v.c.tally.LabelBook().Current(key, v.d.who, model.LabelSeen); ok {
		return &l
	}
	return nil
}

// adjudicationTally is what the review decisions of a rule say of each
// grader, right and wrong among the decided answers it graded:
// "22 decided · predicate ✓20 ✗2 · judge:a ✓0 ✗22"; "" with none. The
// counts are the results' (evidence.Adjudications), as `report` words them.
func adjudicationTally(a evidence.Adjudications, short bool) string {
	if a.N == 0 {
		return ""
	}
	raw := make([]string, len(a.Graders))
	for i, g := range a.Graders {
		raw[i] = g.Grader
	}
	w := 40
	if short {
		w = 10 // cuts the prefix the judges share
	}
	names := shortNames(raw, w)
	parts := []string{fmt.Sprintf("%d decided", a.N)}
	for i, g := range a.Graders {
		if g.Graded > 0 {
			parts = append(parts, fmt.Sprintf("%s ✓%d ✗%d", names[i], g.Agree, g.Graded-g.Agree))
		}
	}
	return strings.Join(parts, " · ")
}

// tally is the adjudication tally of the rule and model reviewed.
func (v *reviewView) tally() string {
	if rr := v.c.result(v.rule, v.model); rr != nil {
		return adjudicationTally(rr.Adjudications, v.c.width < 120)
	}
	return ""
}

func (v *reviewView) undoLast() tea.Cmd { return v.takeBack(v.moveTo, nil) }

// saved moves on once a label has committed.
func (v *reviewView) saved(msg labelSavedMsg) tea.Cmd {
	e, undone, ok := v.settle(msg)
	if !ok {
		v.refresh()
		return nil
	}
	// Who labelled what changed: the labellers' queue and agreement follow.
	reload := v.loadLabellers()
	if undone {
		return tea.Batch(v.moveTo(e.pos), reload)
	}
	// In the labellers' queue a decision settles the answer whatever the
	// label was before: move on.
	same := e.prev != nil && e.prev.Violation == msg.label.Violation && !v.people.on
	if v.index+1 >= len(v.items) && !same {
		// The end of the queue: say what the decisions made of each grader.
		v.refresh()
		return tea.Batch(reload, say("End of the queue: "+v.tally()+" (✓ right, ✗ wrong among the decided)"))
	}
	if same {
		v.refresh()
		return reload
	}
	return tea.Batch(v.moveTo(v.index+1), reload)
}

func (v *reviewView) helpKeys() helpKeys {
	rk, lk := v.c.keys.Review, v.c.keys.Label
	if v.note.editing {
		nk := v.c.keys.Note
		return helpKeys{short: []key.Binding{nk.Accept, nk.Cancel}, full: [][]key.Binding{{nk.Accept, nk.Cancel}}}
	}
	if v.search.editing {
		fk := v.c.keys.Filter
		return helpKeys{short: []key.Binding{fk.Accept, fk.Cancel}, full: [][]key.Binding{{fk.Accept, fk.Cancel}}}
	}
	if v.full.on {
		back, raw := v.c.keys.Global.Back, rk.Raw
		if v.rawJudges {
			raw.SetHelp(raw.Help().Key, "reasoning only")
		}
		return helpKeys{short: []key.Binding{lk.Scroll.Down, lk.Scroll.PageDown, raw, back},
			full: [][]key.Binding{{lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown, lk.Scroll.Top, lk.Scroll.Bottom}, {raw, back}}}
	}
	switch v.mode {
	case reviewAgreement:
		return helpKeys{short: []key.Binding{lk.Scroll.Down, rk.PrevRule, rk.NextRule, rk.Agreement},
			full: [][]key.Binding{{lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown}, {rk.PrevRule, rk.NextRule, rk.Agreement, rk.Compare}}}
	case reviewCompare:
		return helpKeys{short: []key.Binding{lk.Scroll.Down, rk.CompareModels, rk.Variant, rk.Compare},
			full: [][]key.Binding{{lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown}, {rk.PrevRule, rk.NextRule, rk.CompareModels, rk.Variant, rk.Compare}}}
	}
	short := []key.Binding{lk.Violation, lk.OK, lk.Skip, lk.Undo, lk.Next, rk.Pair, rk.Agreement}
	if v.people.on {
		pair := rk.Pair // in this queue p picks the labellers compared
		pair.SetHelp(pair.Help().Key, "labeller pair")
		short = []key.Binding{lk.Violation, lk.OK, lk.Skip, lk.Undo, lk.Next, pair, rk.Labellers}
	}
	// Two columns, so the screen's own keys fit 80 columns.
	full := [][]key.Binding{
		{lk.Violation, lk.OK, lk.Skip, lk.Undo, lk.Note, lk.Prev, lk.Next, lk.FirstUnlabelled,
			rk.Open, rk.Raw, rk.ShowVariant, rk.Search},
		{rk.PrevRule, rk.NextRule, rk.Pair, rk.Kind, rk.Variant, rk.Labellers, rk.Agreement},
	}
	if v.c.models() > 1 {
		full[1] = append(full[1], rk.Model, rk.Queue, rk.Compare)
	}
	full[1] = append(full[1], lk.Scroll.Up, lk.Scroll.Down, lk.Scroll.PageUp, lk.Scroll.PageDown, lk.Scroll.Top, lk.Scroll.Bottom)
	return helpKeys{short: short, full: full}
}

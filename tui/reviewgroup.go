package tui

// The review queue's identical answers and its search. Both need the
// answers' texts, which only the store holds: they are read in a command
// (reviewTextsMsg) and kept, since a stored answer never changes under its
// key. Until they arrive the queue lists every answer on its own and the
// search matches case ids only.

import (
	"cmp"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
)

// answerTexts are the queue's answer texts read so far, by key.
type answerTexts struct {
	known map[string]string
	asked map[string]bool // read or being read
}

// textsCmd reads the texts of the queue's answers not read or asked for
// yet; nil when there are none (or no store).
func (v *reviewView) textsCmd() tea.Cmd {
	src := v.loader.src
	if src == nil {
		return nil
	}
	if v.texts.asked == nil {
		v.texts.asked, v.texts.known = map[string]bool{}, map[string]string{}
	}
	var keys []string
	for _, e := range v.raw {
		if !v.texts.asked[e.key] {
			v.texts.asked[e.key] = true
			keys = append(keys, e.key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return readTexts(src, keys)
}

// readTexts reads the texts of keys; it runs as a command. An answer that
// cannot be read stays out (listed on its own); the first error is kept.
func readTexts(src ResponseSource, keys []string) tea.Cmd {
	return func() tea.Msg {
		msg := reviewTextsMsg{texts: make(map[string]string, len(keys))}
		for _, k := range keys {
			r, err := src.Response(k)
			switch {
			case err != nil:
				if msg.err == nil {
					msg.err = err
				}
			case r.OK():
				msg.texts[k] = r.Text
			default:
				msg.texts[k] = ""
			}
		}
		return msg
	}
}

// gotTexts keeps the texts read and groups the queue again.
func (v *reviewView) gotTexts(msg reviewTextsMsg) tea.Cmd {
	for k, t := range msg.texts {
		v.texts.known[k] = t
	}
	var warn tea.Cmd
	if msg.err != nil {
		warn = sayErr("Some answers could not be read to group identical ones: " + oneLine(msg.err.Error()))
	}
	v.stale = true
	if v.sync() {
		return tea.Batch(v.load(), warn)
	}
	return warn
}

// grouped narrows the queue to the search and, in the disagreement queue,
// lists identical answers once: the first of them stands for the rest,
// which a decision labels too. Answers with the same text group across
// cases (the same sentence from four cases is one decision, not four), but
// never across a control and a provoking case: a refusal is a failure only
// on a control, so there the same words mean the opposite. The head names
// every case a group holds (build has ordered the queue by direction).
// Split pairs and the labellers'
// queue stay one answer at a time: their entries are about that one
// answer.
func (v *reviewView) grouped(in []reviewEntry) []reviewEntry {
	rule := v.c.plan.Audit.Rules[v.rule]
	var out []reviewEntry
	first := map[string]int{} // class and text: the entry that stands for them
	for _, e := range in {
		if !v.matches(e) {
			continue
		}
		text, ok := v.texts.known[e.key]
		if !ok || text == "" || v.queue != 0 || v.people.on {
			out = append(out, e)
			continue
		}
		class := "provoking"
		if rule.Cases[e.cell.Case].Kind == model.Control {
			class = "control"
		}
		id := class + "\x00" + text
		if i, seen := first[id]; seen {
			out[i].more = append(out[i].more, e)
			continue
		}
		first[id] = len(out)
		out = append(out, e)
	}
	return out
}

// direction is which of the rule's graders failed an answer: "✗✓✓" for
// the predicate alone, "·" where one has not graded it.
func (v *reviewView) direction(key string) string {
	var b strings.Builder
	for _, r := range v.c.tally.Graders(v.rule) {
		g, ok := v.c.tally.GraderGrades(r.Version)[key]
		switch {
		case !ok || g.Unparseable:
			b.WriteString("·")
		case g.Pass:
			b.WriteString("✓")
		default:
			b.WriteString("✗")
		}
	}
	return b.String()
}

// byDirection orders entries by direction, the commonest (in answers)
// first; within one direction the queue's order stays.
func (v *reviewView) byDirection(es []reviewEntry) {
	n := map[string]int{}
	dir := make(map[string]string, len(es))
	for _, e := range es {
		d := v.direction(e.key)
		dir[e.key] = d
		n[d] += 1 + len(e.more)
	}
	slices.SortStableFunc(es, func(a, b reviewEntry) int {
		da, db := dir[a.key], dir[b.key]
		if c := cmp.Compare(n[db], n[da]); c != 0 {
			return c
		}
		return strings.Compare(da, db)
	})
}

// matches reports whether an answer passes the search: a case-insensitive
// substring of its case id or its text.
func (v *reviewView) matches(e reviewEntry) bool {
	if !v.search.active() {
		return true
	}
	id := v.c.plan.Audit.Rules[v.rule].Cases[e.cell.Case].ID
	return v.search.matches(id, model.Sanitize(v.texts.known[e.key]))
}

// keys returns the keys an entry's decision labels: its own and those of
// the identical answers it stands for.
func (e reviewEntry) keys() []string {
	out := []string{e.key}
	for _, m := range e.more {
		out = append(out, m.key)
	}
	return out
}

// led returns the group with key standing for it (the answer shown stays
// shown when the queue is grouped again); e when key is not in it.
func (e reviewEntry) led(key string) reviewEntry {
	for i, m := range e.more {
		if m.key != key {
			continue
		}
		rest := append([]reviewEntry{}, e.more[:i]...)
		rest = append(rest, e.more[i+1:]...)
		e.more = nil
		m.more = append([]reviewEntry{e}, rest...)
		return m
	}
	return e
}

// holds reports whether the entry is, or stands for, the answer key.
func (e reviewEntry) holds(key string) bool {
	for _, k := range e.keys() {
		if k == key {
			return true
		}
	}
	return false
}

// updateSearch routes a message to the search being typed: accept keeps
// it, cancel clears it, anything else edits it and narrows the queue as
// it is typed, showing the first answer it keeps unless the one shown
// still passes.
func (v *reviewView) updateSearch(msg tea.Msg) tea.Cmd {
	changed, cmd := v.search.update(msg, v.c.keys.Filter)
	if !changed {
		return cmd
	}
	v.stale = true
	if v.sync() {
		return tea.Batch(cmd, v.load())
	}
	return cmd
}

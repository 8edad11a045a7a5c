package tui

// The review screen's chosen grader pair is remembered across sessions,
// per audited line and reviewer, in a meta record of the audit's store
// (auditor.db, "review-pair:L<line>:<who>"), as the label screen's skips
// are: reopening the review screen comes back to the pair last chosen.

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// reviewPairMsg carries the pair remembered for a rule: its graders'
// names, none when any pair was chosen or nothing is remembered.
type reviewPairMsg struct {
	rule  int
	names []string
	err   error
}

func pairKey(line int, who string) string { return fmt.Sprintf("review-pair:L%d:%s", line, who) }

// readPair reads the pair remembered for a rule; it runs as a command.
func readPair(st LabelStore, rule int, key string) tea.Cmd {
	return func() tea.Msg {
		raw, ok, err := st.Meta(key)
		if err != nil || !ok || raw == "" {
			return reviewPairMsg{rule: rule, err: err}
		}
		return reviewPairMsg{rule: rule, names: strings.Split(raw, "\x00")}
	}
}

// writePair remembers a rule's pair ("" for any pair); it runs as a
// command. A failed write costs only the next session's choice: it says
// so.
func writePair(st LabelStore, key, value string) tea.Cmd {
	return func() tea.Msg {
		if err := st.SetMeta(key, value); err != nil {
			return statusMsg{text: "grader pair not remembered: " + oneLine(err.Error()), err: true}
		}
		return nil
	}
}

// loadPair asks for the current rule's remembered pair once per session.
func (v *reviewView) loadPair() tea.Cmd {
	if v.d.store == nil || v.pairAsked[v.rule] {
		return nil
	}
	if v.pairAsked == nil {
		v.pairAsked = map[int]bool{}
	}
	v.pairAsked[v.rule] = true
	return readPair(v.d.store, v.rule, pairKey(v.c.plan.Audit.Rules[v.rule].Line, v.d.who))
}

// rememberPair stores the pair chosen for the current rule.
func (v *reviewView) rememberPair() tea.Cmd {
	if v.d.store == nil {
		return nil
	}
	value := ""
	if ps := v.pairs(); v.pair > 0 && v.pair <= len(ps) {
		value = ps[v.pair-1][0].Name + "\x00" + ps[v.pair-1][1].Name
	}
	return writePair(v.d.store, pairKey(v.c.plan.Audit.Rules[v.rule].Line, v.d.who), value)
}

// gotPair applies a remembered pair, unless the reviewer has chosen one
// since or moved to another rule.
func (v *reviewView) gotPair(msg reviewPairMsg) tea.Cmd {
	switch {
	case msg.err != nil:
		return sayErr("the grader pair last chosen could not be read: " + oneLine(msg.err.Error()))
	case msg.rule != v.rule || v.pair != 0 || len(msg.names) != 2:
		return nil
	}
	for i, p := range v.pairs() {
		if p[0].Name == msg.names[0] && p[1].Name == msg.names[1] {
			v.pair = i + 1
			return tea.Batch(v.reset(), say("Grader pair as last chosen: P changes it."))
		}
	}
	return nil
}

package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/report"
)

// promptView is the system prompt with line numbers, each audited line
// marked with its verdict and token cost, like a mutation-testing report's
// source view. Here a line that survives deletion (DELETE) is the outcome
// hoped for, so it is shown calmly, not as an alarm.
type promptView struct {
	screenDefaults
	c       *Common
	vp      viewport.Model
	audited []int // content line of each audited prompt line, in order
	head    int   // content lines above the prompt itself (the legend wraps)
}

// Prompt view columns: line number, verdict marker.
const (
	numWidth    = 4
	markerWidth = 22
)

func newPromptView(c *Common) *promptView {
	return &promptView{c: c, vp: viewport.New()}
}

func (v *promptView) restyle()        { v.refresh() }
func (v *promptView) resultsChanged() { v.refresh() }

func (v *promptView) resize() {
	v.vp.SetWidth(v.c.width)
	v.vp.SetHeight(v.c.bodyH)
	v.refresh()
}

func (v *promptView) Update(msg tea.Msg) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		k := v.c.keys.Prompt
		switch {
		case key.Matches(km, k.Next):
			v.jump(1)
			return nil
		case key.Matches(km, k.Prev):
			v.jump(-1)
			return nil
		case key.Matches(km, k.Top):
			v.vp.GotoTop()
			return nil
		case key.Matches(km, k.Bottom):
			v.vp.GotoBottom()
			return nil
		}
	}
	var cmd tea.Cmd
	v.vp, cmd = v.vp.Update(msg)
	return cmd
}

// jump scrolls to the next (d > 0) or previous audited line.
func (v *promptView) jump(d int) {
	y := v.vp.YOffset() + v.head
	if d > 0 {
		for _, l := range v.audited {
			if l > y {
				v.vp.SetYOffset(l - v.head)
				return
			}
		}
		return
	}
	for i := len(v.audited) - 1; i >= 0; i-- {
		if v.audited[i] < y {
			v.vp.SetYOffset(v.audited[i] - v.head)
			return
		}
	}
	v.vp.GotoTop()
}

func (v *promptView) View() string { return v.vp.View() }

func (v *promptView) helpKeys() helpKeys {
	k := v.c.keys
	short := []key.Binding{k.Prompt.Down, k.Prompt.Next, k.Prompt.Prev, k.Global.Back}
	return helpKeys{short: short, full: [][]key.Binding{
		{k.Prompt.Up, k.Prompt.Down, k.Prompt.PageUp, k.Prompt.PageDown, k.Prompt.Top, k.Prompt.Bottom},
		{k.Prompt.Next, k.Prompt.Prev},
	}}
}

// refresh rebuilds the content: after a resize, a colour change or new
// results.
func (v *promptView) refresh() {
	if v.c.width == 0 {
		return
	}
	off := v.vp.YOffset()
	v.vp.SetContentLines(v.content())
	v.vp.SetYOffset(off)
}

func (v *promptView) content() []string {
	c := v.c
	st := c.styles
	a := c.plan.Audit
	// A line's marker is its deletion's verdict. A line also reworded or
	// added to has no marker of its own: each of its variants, the deletion
	// first, follows it on a row that names it.
	deletion, changes := map[int]int{}, map[int][]int{}
	audited := map[int]bool{}
	for i, r := range a.Rules {
		audited[r.Line] = true
		if _, seen := deletion[r.Line]; r.Deletion() && !seen {
			deletion[r.Line] = i
		} else if !r.Deletion() {
			changes[r.Line] = append(changes[r.Line], i)
		}
	}
	sw := c.res.Sweep
	var out []string
	out = append(out,
		st.Title.Render("System prompt")+" "+oneLine(promptName(a))+st.Muted.Render(fmt.Sprintf(" · %d lines", a.Prompt.Len())),
		fmt.Sprintf("%d lines audited, %d tokens; lines with a DELETE verdict remove %d tokens",
			sw.Lines, sw.TokensClaimed, sw.TokensRemoved),
	)
	if ch := report.ChangesSentence(sw.Changes); ch != "" {
		out = append(out, wrapWords(oneLine(ch), max(c.width, 10))...)
	}
	out = append(out, v.legend(sw.Changes.Variants > 0)...)
	out = append(out, "")
	v.head = len(out)
	v.audited = v.audited[:0]
	textW := max(c.width-numWidth-markerWidth-4, 10)
	gutter := strings.Repeat(" ", numWidth+1+markerWidth) + st.Muted.Render(" │ ")
	rows := func(first string, wrapped []string) {
		for j, wl := range wrapped {
			if j == 0 {
				out = append(out, first+st.Muted.Render(" │ ")+wl)
				continue
			}
			out = append(out, gutter+wl)
		}
	}
	for i, line := range a.Prompt.Lines {
		n := i + 1
		num := st.Muted.Render(fmt.Sprintf("%*d", numWidth, n))
		marker := strings.Repeat(" ", markerWidth)
		wrapped := wrapWords(oneLine(line), textW)
		variants := changes[n]
		if audited[n] {
			v.audited = append(v.audited, len(out))
			ri, ok := deletion[n]
			switch {
			case ok && len(variants) == 0:
				marker = v.marker(ri)
			case ok:
				variants = append([]int{ri}, variants...)
			}
			for j := range wrapped {
				wrapped[j] = st.Header.Render(wrapped[j])
			}
		}
		rows(num+" "+marker, wrapped)
		for _, ri := range variants {
			rows(strings.Repeat(" ", numWidth+1)+v.marker(ri), wrapWords(oneLine(a.Rules[ri].Title()), textW))
		}
	}
	return out
}

// marker is an audited line's verdict and token cost, e.g.
// "✓ DELETE · 14 tok". When models disagree the decision is combined (see
// combinedDecision) and marked with an asterisk.
func (v *promptView) marker(rule int) string {
	c := v.c
	d := combinedDecision(c, rule)
	differ := false
	for m := 1; m < c.models(); m++ {
		a, b := c.result(rule, 0), c.result(rule, m)
		if a != nil && b != nil && a.Verdict.Decision != b.Verdict.Decision {
			differ = true
		}
	}
	word := string(d)
	if differ {
		word += "*"
	}
	tok := fmt.Sprintf(" %d tok", c.plan.Audit.Rules[rule].Tokens)
	st := verdictStyle(c.styles, d)
	return st.Render(fit(decisionSymbol(d)+" "+word, markerWidth-len(tok))) + c.styles.Muted.Render(tok)
}

// legend names the verdict marks, wrapped to the width: an entry (mark
// and meaning) is never split across lines.
func (v *promptView) legend(changes bool) []string {
	st := v.c.styles
	type entry struct {
		mark  lipgloss.Style
		sym   string
		means string
	}
	entries := []entry{
		{st.Delete, "✓ DELETE", " can go (the hoped-for outcome)"},
		{st.Keep, "■ KEEP", " load-bearing"},
		{st.Inconclusive, "? INCONCLUSIVE", " not settled"},
		{st.Canary, "◆ CANARY", " needs a live canary"},
	}
	if changes {
		entries = append(entries, entry{st.Delete, "✓ BETTER / NOT WORSE", " the change may ship"},
			entry{st.Keep, "■ WORSE", " the change raises failures"})
	}
	const sep = " · "
	var out []string
	cur, curW := "", 0
	for _, e := range entries {
		w := textWidth(e.sym + e.means)
		if curW > 0 && curW+len(sep)+w > v.c.width {
			out = append(out, cur)
			cur, curW = "", 0
		}
		if curW > 0 {
			cur += st.Muted.Render(sep)
			curW += len(sep)
		}
		cur += e.mark.Render(e.sym) + st.Muted.Render(e.means)
		curW += w
	}
	return append(out, cur)
}

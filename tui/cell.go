package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
)

// cellView lists the samples of one grid cell: pass, fail (with the failing
// check's reason), error, unparseable, in flight, retrying or pending.
type cellView struct {
	screenDefaults
	c      *Common
	ref    cellRef
	cells  []int // plan cell index of each sample
	cursor int
	scroller
}

// cellHead is the number of lines above the sample list.
const cellHead = 5

func newCellView(c *Common) *cellView { return &cellView{c: c} }

func (v *cellView) open(ref cellRef) {
	v.ref, v.cells, v.cursor, v.top = ref, v.c.cellsOf(ref), 0, 0
}

// follow puts the cursor on sample i (coming back from the sample view).
func (v *cellView) follow(i int) {
	v.cursor = min(max(i, 0), max(len(v.cells)-1, 0))
	v.scroller.follow(v.cursor, v.listLines())
	v.clamp(len(v.cells), v.listLines())
}

func (v *cellView) resize() { v.follow(v.cursor) }

func (v *cellView) listLines() int { return max(v.c.bodyH-cellHead, 1) }

func (v *cellView) selected() (int, bool) {
	if len(v.cells) == 0 {
		return 0, false
	}
	return v.cursor, true
}

func (v *cellView) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if next, ok := moveCursor(km, v.c.keys.Cell.scrollKeys(), v.cursor, len(v.cells), v.listLines()); ok {
		v.follow(next)
	}
	return nil
}

func (v *cellView) helpKeys() helpKeys {
	k := v.c.keys
	short := []key.Binding{k.Cell.Up, k.Cell.Down, k.Cell.Open, k.Global.Back}
	return helpKeys{short: short, full: [][]key.Binding{{k.Cell.Up, k.Cell.Down, k.Cell.PageUp, k.Cell.PageDown, k.Cell.Top, k.Cell.Bottom}, {k.Cell.Open}}}
}

// View renders the cell's case, its counts and the list of samples.
func (v *cellView) View() string {
	c := v.c
	st := c.styles
	rule := c.plan.Audit.Rules[v.ref.rule]
	cs := rule.Cases[v.ref.kase]
	var b strings.Builder
	b.WriteString(st.Title.Render(oneLine(cs.ID)) + st.Muted.Render(" ("+string(cs.Kind)+") · ") + variantSummary(c, v.ref))
	b.WriteByte('\n')
	b.WriteString(st.Muted.Render("user: ") + oneLine(cs.Summary()))
	b.WriteByte('\n')
	b.WriteString(v.counts())
	b.WriteByte('\n')
	b.WriteByte('\n')
	b.WriteString(st.Header.Render("  sample  result"))
	end := min(v.top+v.listLines(), len(v.cells))
	for i := v.top; i < end; i++ {
		b.WriteByte('\n')
		b.WriteString(v.sampleLine(i))
	}
	return b.String()
}

// variantSummary names a grid cell's variant and model in words.
func variantSummary(c *Common, ref cellRef) string {
	rule := c.plan.Audit.Rules[ref.rule]
	s := "baseline: the full system prompt"
	if ref.deleted {
		s = fmt.Sprintf("%s: system prompt without line %d", rule.Variant(), rule.Line)
		if !rule.Deletion() {
			s = fmt.Sprintf("%s: system prompt with line %d %s", rule.Variant(), rule.Line, oneLine(rule.Describe()))
		}
	}
	return s + " · model " + oneLine(c.plan.Audit.File.Models[ref.model].Name)
}

func (v *cellView) counts() string {
	rr := v.c.result(v.ref.rule, v.ref.model)
	if rr == nil {
		return ""
	}
	cnt := rr.Cases[v.ref.kase].Baseline
	if v.ref.deleted {
		cnt = rr.Cases[v.ref.kase].Deleted
	}
	what := "violations"
	if rr.Rule.Cases[v.ref.kase].Kind == model.Control {
		what = "refusals"
	}
	s := fmt.Sprintf("%d %s in %d graded of %d samples", cnt.Fails, what, cnt.N, len(v.cells))
	if !rr.Rule.HasPredicate() {
		s = fmt.Sprintf("%d of %d samples answered; no predicate grades them (the verdict rests on answer length)", cnt.Ungraded, len(v.cells))
	}
	if cnt.Errors > 0 {
		s += fmt.Sprintf(" · %d errored", cnt.Errors)
	}
	if cnt.Unparseable > 0 {
		s += fmt.Sprintf(" · %d unparseable", cnt.Unparseable)
	}
	if cnt.Pending > 0 {
		s += fmt.Sprintf(" · %d pending", cnt.Pending)
	}
	return s
}

func (v *cellView) sampleLine(i int) string {
	c := v.c
	st := c.styles
	state, g, until := c.sampleOf(v.cells[i])
	mark := "  "
	if i == v.cursor {
		mark = "› "
	}
	var word, rest string
	style := st.Muted
	switch state {
	case samplePass:
		word, style = "✓ pass", st.Pass
	case sampleFail:
		word, style = "✗ FAIL", st.Fail
		rest = oneLine(g.Reason)
	case sampleUnparseable:
		word, style = "? unparseable", st.Err
		rest = oneLine(g.Reason)
	case sampleError:
		word, style = "! error", st.Err
		rest = "failed for good; enter shows why (retried on the next run)"
	case sampleInFlight:
		word, style = "» in flight", st.InFlight
	case sampleRetrying:
		word, style = "↻ retrying", st.Retry
		rest = "next attempt in " + countdown(c.now, until)
	case sampleUngraded:
		word = "– answered, not graded yet"
		if !c.plan.Audit.Rules[v.ref.rule].HasPredicate() {
			word = "– answered (no predicate)"
		}
	default:
		word = "· pending"
	}
	num := fmt.Sprintf("%6d  ", i+1)
	if i == v.cursor {
		// The same columns as the other rows: the cursor moves no text.
		return st.Selected.Render(fit(mark+num+fit(word, 13)+" "+rest, c.width))
	}
	return mark + num + style.Render(fit(word, 13)) + " " + rest
}

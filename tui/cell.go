package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/model"
)

// cellView lists the samples of one grid cell: pass, fail (with the failing
// check's reason), error, unparseable, in flight, retrying or pending.
type cellView struct {
	screenDefaults
	c      *Common
	ref    cellRef
	cells  []int // plan cell index of each sample
	cursor int   // position in shown
	scroller
	filter listFilter // the samples' filter (filter.go)
	shown  []int      // index into cells of each sample listed: those matching the filter
}

// cellHead is the number of lines above the sample list.
const cellHead = 5

func newCellView(c *Common) *cellView {
	return &cellView{c: c, filter: newListFilter("sample number, result or reason")}
}

func (v *cellView) open(ref cellRef) {
	v.ref, v.cells, v.cursor, v.top = ref, v.c.cellsOf(ref), 0, 0
	v.filter.clear()
	v.list()
}

// list works out which samples the filter shows. Results change as a run
// goes, so it runs before each use, not once per query.
func (v *cellView) list() []int {
	v.shown = v.shown[:0]
	for i := range v.cells {
		if v.sampleMatches(i) {
			v.shown = append(v.shown, i)
		}
	}
	v.cursor = min(v.cursor, max(len(v.shown)-1, 0))
	return v.shown
}

// sampleMatches reports whether sample i passes the filter: by its
// number, its result or its reason.
func (v *cellView) sampleMatches(i int) bool {
	if !v.filter.active() {
		return true
	}
	word, rest, _ := v.result(i)
	return v.filter.matches(fmt.Sprint(i+1), word, rest, v.controlsBadge(i))
}

// follow puts the cursor on sample i (coming back from the sample view),
// or on the first listed sample after it when the filter hides it.
func (v *cellView) follow(i int) {
	v.list()
	v.cursor = max(len(v.shown)-1, 0)
	for p, s := range v.shown {
		if s >= i {
			v.cursor = p
			break
		}
	}
	v.show()
}

// show scrolls the cursor into view.
func (v *cellView) show() {
	v.scroller.follow(v.cursor, v.listLines())
	v.clamp(len(v.shown), v.listLines())
}

func (v *cellView) resize() {
	v.filter.resize(v.c.width)
	v.list()
	v.show()
}

func (v *cellView) listLines() int { return max(v.c.bodyH-cellHead, 1) }

// selected is the index in cells of the sample under the cursor.
func (v *cellView) selected() (int, bool) {
	if len(v.list()) == 0 {
		return 0, false
	}
	return v.shown[v.cursor], true
}

func (v *cellView) capturing() bool     { return v.filter.editing }
func (v *cellView) filterEditing() bool { return v.filter.editing }

// filterLine is the status line's view of the samples' filter.
func (v *cellView) filterLine() string {
	return v.filter.line(v.c.styles, filterSummary(v.filter.query, len(v.list()), len(v.cells), "samples"))
}

// back clears the filter; it reports whether there was one.
func (v *cellView) back() bool {
	if !v.filter.clear() {
		return false
	}
	v.cursor, v.top = 0, 0
	return true
}

func (v *cellView) Update(msg tea.Msg) tea.Cmd {
	if v.filter.editing {
		changed, cmd := v.filter.update(msg, v.c.keys.Filter)
		if changed {
			v.cursor, v.top = 0, 0
		}
		return cmd
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	if key.Matches(km, v.c.keys.Cell.Filter) {
		return v.filter.open()
	}
	if next, ok := moveCursor(km, v.c.keys.Cell.scrollKeys(), v.cursor, len(v.list()), v.listLines()); ok {
		v.cursor = next
		v.show()
	}
	return nil
}

func (v *cellView) helpKeys() helpKeys {
	k := v.c.keys
	short := []key.Binding{k.Cell.Up, k.Cell.Down, k.Cell.Open, k.Cell.Filter}
	return helpKeys{short: short, full: [][]key.Binding{{k.Cell.Up, k.Cell.Down, k.Cell.PageUp, k.Cell.PageDown, k.Cell.Top, k.Cell.Bottom}, {k.Cell.Open, k.Cell.Filter}}}
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
	shown := v.list()
	v.clamp(len(shown), v.listLines())
	end := min(v.top+v.listLines(), len(shown))
	for p := v.top; p < end; p++ {
		b.WriteByte('\n')
		b.WriteString(v.sampleLine(shown[p], p == v.cursor))
	}
	if len(shown) == 0 && len(v.cells) > 0 {
		b.WriteString("\n" + st.Muted.Render("  (no sample matches the filter)"))
	}
	return b.String()
}

// variantSummary names a grid cell's variant and model in words.
func variantSummary(c *Common, ref cellRef) string {
	rule := c.plan.Audit.Rules[ref.rule]
	s := "baseline: the full system prompt"
	if ref.deleted {
		s = oneLine(rule.Title())
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
	what := "violation"
	if rr.Rule.Cases[v.ref.kase].Kind == model.Control {
		what = "refusal"
	}
	if cnt.Fails != 1 {
		what += "s"
	}
	// As the grid's cell: "of N samples" only while fewer are graded.
	s := fmt.Sprintf("%d %s in %d graded of %d samples", cnt.Fails, what, cnt.N, len(v.cells))
	if cnt.N == len(v.cells) {
		s = fmt.Sprintf("%d %s in %d graded samples", cnt.Fails, what, cnt.N)
	}
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

// sampleLine is sample i's row; sel marks the cursor's.
func (v *cellView) sampleLine(i int, sel bool) string {
	st := v.c.styles
	word, rest, style := v.result(i)
	num := fmt.Sprintf("%6d  ", i+1)
	badge := v.controlsBadge(i)
	if sel {
		// The same columns as the other rows: the cursor moves no text.
		if badge != "" {
			badge += " "
		}
		return st.Selected.Render(fit("› "+num+fit(word, 13)+" "+badge+rest, v.c.width))
	}
	if badge != "" {
		badge = st.Warn.Render(badge) + " "
	}
	return "  " + num + style.Render(fit(word, 13)) + " " + badge + rest
}

// controlsBadge marks sample i when its answer held control sequences,
// removed when it is shown; "" otherwise.
func (v *cellView) controlsBadge(i int) string {
	if !v.c.tally.Controlled(v.c.plan.Cells[v.cells[i]].Key) {
		return ""
	}
	return warnMark + " control sequences removed"
}

// result is sample i's result in words, the reason beside it and the
// style of the words.
func (v *cellView) result(i int) (word, rest string, style lipgloss.Style) {
	c := v.c
	st := c.styles
	state, g, until := c.sampleOf(v.cells[i])
	style = st.Muted
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
	return word, rest, style
}

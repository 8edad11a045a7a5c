package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/audit"
)

// spendFunc reads what the stored answers of the audit cost (see
// Options.Spend). It may read storage: it runs in a command.
type spendFunc func() (audit.Spend, error)

// reportView is the verdict layer a reviewer reads before shipping or
// rolling back a prompt: the sweep's counts and tokens, what the stored
// answers cost, then per audited line (and model) the verdict, its reason
// and bound, what would settle it, the evidence table, the graders'
// recall and agreement, staleness warnings and, for a rule with no input
// class, the answer-length histogram. Every number comes from the
// results; the screen only lays them out. It scrolls.
type reportView struct {
	c     *Common
	spend spendFunc

	lines    []string
	sections []int // line of each rule section's heading, in order
	scroller
	width   int       // the width lines were built for
	stale   bool      // results, styles or the run changed since the build
	builtAt time.Time // the app's clock at the last build

	search  listFilter // "/" searches the text (filter.go)
	hits    []int      // lines matching the search, in order
	hit     int        // index into hits of the match shown; -1 none
	hitsFor int        // len(lines) hits were found in, to redo them after a rebuild

	gen       int // generation of the latest spend read
	loading   bool
	spent     *audit.Spend
	spendErr  error
	spendRead bool // spent or spendErr is from a finished read
}

func newReportView(c *Common, spend spendFunc) *reportView {
	return &reportView{c: c, spend: spend, stale: true, search: newListFilter("text to find"), hit: -1}
}

func (v *reportView) resize() {
	v.search.resize(v.c.width)
	v.stale = true
	v.refresh()
}

// reportEvery is how often a report in front is rebuilt while a run's
// answers arrive: a long audit's report costs milliseconds to lay out, too
// much for every batch, and the grid is the screen that follows a run
// answer by answer.
const reportEvery = time.Second

// visible reports whether the report is in front.
func (v *reportView) visible() bool { return v.c.front == screenReport }

// invalidate marks the content out of date: a visible report is rebuilt
// at once, a hidden one when it comes to the front.
func (v *reportView) invalidate() {
	v.stale = true
	if v.visible() {
		v.refresh()
	}
}

func (v *reportView) restyle() { v.invalidate() }

// resultsChanged is invalidate, except for a batch of a running run's
// answers: then a visible report is rebuilt at most every reportEvery, and
// catchUp, on the run's tick, rebuilds what batches left out of date.
func (v *reportView) resultsChanged() {
	if !v.c.live.running() {
		v.invalidate()
		return
	}
	v.stale = true
	if v.visible() && v.c.now.Sub(v.builtAt) >= reportEvery {
		v.refresh()
	}
}

// catchUp rebuilds a visible report that batches left out of date.
func (v *reportView) catchUp() {
	if v.visible() && v.stale {
		v.refresh()
	}
}

// entered rebuilds what is out of date and reads the spend again.
func (v *reportView) entered() tea.Cmd {
	v.refresh()
	return v.loadSpend()
}

// refresh rebuilds the content when it is out of date, keeping the scroll
// position.
func (v *reportView) refresh() {
	if v.c.width == 0 || (!v.stale && v.width == v.c.width) {
		return
	}
	v.lines, v.sections = v.content()
	v.width, v.stale, v.builtAt = v.c.width, false, v.c.now
	v.clamp(len(v.lines), v.bodyLines())
	v.findHits(false)
}

// loadSpend starts reading the spend, unless a read is in flight or there
// is nothing to read it with.
func (v *reportView) loadSpend() tea.Cmd {
	if v.spend == nil || v.loading {
		return nil
	}
	v.gen++
	v.loading = true
	v.stale = true
	v.refresh()
	return readSpend(v.spend, v.gen)
}

// readSpend reads the spend; it runs as a command, off the update loop.
func readSpend(fn spendFunc, gen int) tea.Cmd {
	return func() tea.Msg {
		s, err := fn()
		return spendMsg{gen: gen, spend: s, err: err}
	}
}

// gotSpend takes a finished spend read; a read overtaken by a later one is
// dropped.
func (v *reportView) gotSpend(msg spendMsg) {
	if msg.gen != v.gen {
		return
	}
	v.loading, v.spendRead = false, true
	v.spent, v.spendErr = nil, msg.err
	if msg.err == nil {
		s := msg.spend
		v.spent = &s
	}
	v.invalidate()
}

func (v *reportView) bodyLines() int { return max(v.c.bodyH, 1) }

// Update scrolls: by line, by page, to either end, or to the next or
// previous rule's section.
func (v *reportView) Update(msg tea.Msg) tea.Cmd {
	if msg, ok := msg.(spendMsg); ok {
		v.gotSpend(msg)
		return nil
	}
	if v.search.editing {
		changed, cmd := v.search.update(msg, v.c.keys.Filter)
		if changed {
			v.refresh()
			v.findHits(true)
		}
		return cmd
	}
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	v.refresh()
	k := v.c.keys.Report
	sk := v.c.keys.Search
	switch {
	case key.Matches(km, sk.Search):
		return v.search.open()
	case v.search.active() && key.Matches(km, sk.Next):
		v.nextHit(1)
	case v.search.active() && key.Matches(km, sk.Prev):
		v.nextHit(-1)
	case key.Matches(km, k.Next):
		v.jump(v.sections, 1)
	case key.Matches(km, k.Prev):
		v.jump(v.sections, -1)
	default:
		v.scroll(km, k.scrollKeys(), len(v.lines), v.bodyLines())
	}
	v.clamp(len(v.lines), v.bodyLines())
	return nil
}

func (v *reportView) View() string {
	shown := v.window(v.lines, v.bodyLines())
	if v.hit >= 0 && v.hit < len(v.hits) {
		if i := v.hits[v.hit] - v.top; i >= 0 && i < len(shown) {
			// The match shown, reversed: it reads without colour.
			out := append([]string(nil), shown...)
			out[i] = v.c.styles.Selected.Render(fit(ansi.Strip(out[i]), v.c.width))
			shown = out
		}
	}
	return strings.Join(shown, "\n")
}

func (v *reportView) helpKeys() helpKeys {
	k := v.c.keys.Report
	sk := v.c.keys.Search
	short := []key.Binding{k.Down, k.Next, sk.Search}
	if v.search.active() {
		short = []key.Binding{sk.Next, sk.Prev, v.c.keys.Global.Back}
	}
	return helpKeys{short: short, full: [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Next, k.Prev, sk.Search, sk.Next, sk.Prev},
	}}
}

func (v *reportView) capturing() bool     { return v.search.editing }
func (v *reportView) filterEditing() bool { return v.search.editing }

// back clears the search; it reports whether there was one.
func (v *reportView) back() bool {
	if !v.search.clear() {
		return false
	}
	v.hits, v.hit = nil, -1
	return true
}

// filterLine is the status line's view of the search.
func (v *reportView) filterLine() string {
	s := fmt.Sprintf("search %q: no match (/ to change, esc to clear)", v.search.query)
	if len(v.hits) > 0 {
		s = fmt.Sprintf("search %q: match %d of %d (n/N next/previous, / to change, esc to clear)", v.search.query, v.hit+1, len(v.hits))
	}
	return v.search.line(v.c.styles, s)
}

// findHits finds the lines matching the search. With jump (the query
// changed) it shows the first match from the top of the window down;
// after a rebuild it keeps the match shown when it can.
func (v *reportView) findHits(jump bool) {
	if !v.search.active() {
		v.hits, v.hit = nil, -1
		return
	}
	was := -1
	if v.hit >= 0 && v.hit < len(v.hits) && v.hitsFor == len(v.lines) {
		was = v.hits[v.hit]
	}
	v.hits, v.hit, v.hitsFor = v.hits[:0], -1, len(v.lines)
	for i, l := range v.lines {
		if v.search.matches(ansi.Strip(l)) {
			v.hits = append(v.hits, i)
		}
	}
	if len(v.hits) == 0 {
		return
	}
	from := v.top
	if !jump && was >= 0 {
		from = was
	}
	v.hit = 0
	for i, h := range v.hits {
		if h >= from {
			v.hit = i
			break
		}
	}
	if jump {
		v.showHit()
	}
}

// nextHit shows the next (d > 0) or previous match, wrapping.
func (v *reportView) nextHit(d int) {
	if len(v.hits) == 0 {
		return
	}
	n := len(v.hits)
	v.hit = ((v.hit+d)%n + n) % n
	v.showHit()
}

// showHit scrolls the match shown into view, a line below the top.
func (v *reportView) showHit() {
	h := v.hits[v.hit]
	if h < v.top || h >= v.top+v.bodyLines() {
		v.top = h - 1
	}
	v.clamp(len(v.lines), v.bodyLines())
}

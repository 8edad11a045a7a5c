package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

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
	top      int
	width    int       // the width lines were built for
	stale    bool      // results, styles or the run changed since the build
	builtAt  time.Time // the app's clock at the last build

	gen       int // generation of the latest spend read
	loading   bool
	spent     *audit.Spend
	spendErr  error
	spendRead bool // spent or spendErr is from a finished read
}

func newReportView(c *Common, spend spendFunc) *reportView {
	return &reportView{c: c, spend: spend, stale: true}
}

func (v *reportView) resize() {
	v.stale = true
	v.refresh()
}

// reportEvery is how often a report in front is rebuilt while a run's
// answers arrive: a long audit's report costs milliseconds to lay out, too
// much for every batch, and the grid is the screen that follows a run
// answer by answer.
const reportEvery = time.Second

// invalidate marks the content out of date: a visible report (the screen
// is in front) is rebuilt at once, a hidden one when it comes to the front.
func (v *reportView) invalidate(visible bool) {
	v.stale = true
	if visible {
		v.refresh()
	}
}

// batched is invalidate for a batch of a run's answers: a visible report
// is rebuilt at most every reportEvery, and catchUp, on the run's tick,
// rebuilds what batches left out of date.
func (v *reportView) batched(visible bool) {
	v.stale = true
	if visible && v.c.now.Sub(v.builtAt) >= reportEvery {
		v.refresh()
	}
}

// catchUp rebuilds a visible report that batches left out of date.
func (v *reportView) catchUp(visible bool) {
	if visible && v.stale {
		v.refresh()
	}
}

// refresh rebuilds the content when it is out of date, keeping the scroll
// position.
func (v *reportView) refresh() {
	if v.c.width == 0 || (!v.stale && v.width == v.c.width) {
		return
	}
	v.lines, v.sections = v.content()
	v.width, v.stale, v.builtAt = v.c.width, false, v.c.now
	v.clamp()
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
func (v *reportView) gotSpend(msg spendMsg, visible bool) {
	if msg.gen != v.gen {
		return
	}
	v.loading, v.spendRead = false, true
	v.spent, v.spendErr = nil, msg.err
	if msg.err == nil {
		s := msg.spend
		v.spent = &s
	}
	v.invalidate(visible)
}

func (v *reportView) bodyLines() int { return max(v.c.bodyH, 1) }

func (v *reportView) maxTop() int { return max(len(v.lines)-v.bodyLines(), 0) }

func (v *reportView) clamp() { v.top = min(max(v.top, 0), v.maxTop()) }

// Update scrolls: by line, by page, to either end, or to the next or
// previous rule's section.
func (v *reportView) Update(msg tea.Msg) tea.Cmd {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil
	}
	v.refresh()
	k := v.c.keys.Report
	h := v.bodyLines()
	switch {
	case key.Matches(km, k.Up):
		v.top--
	case key.Matches(km, k.Down):
		v.top++
	case key.Matches(km, k.PageUp):
		v.top -= h
	case key.Matches(km, k.PageDown):
		v.top += h
	case key.Matches(km, k.Top):
		v.top = 0
	case key.Matches(km, k.Bottom):
		v.top = v.maxTop()
	case key.Matches(km, k.Next):
		v.jump(1)
	case key.Matches(km, k.Prev):
		v.jump(-1)
	}
	v.clamp()
	return nil
}

// jump scrolls to the next (d > 0) or previous rule section; before the
// first one the previous is the top.
func (v *reportView) jump(d int) {
	if d > 0 {
		for _, s := range v.sections {
			if s > v.top {
				v.top = s
				return
			}
		}
		return
	}
	for i := len(v.sections) - 1; i >= 0; i-- {
		if v.sections[i] < v.top {
			v.top = v.sections[i]
			return
		}
	}
	v.top = 0
}

func (v *reportView) View() string {
	end := min(v.top+v.bodyLines(), len(v.lines))
	if v.top >= end {
		return ""
	}
	return strings.Join(v.lines[v.top:end], "\n")
}

func (v *reportView) helpKeys() helpKeys {
	k := v.c.keys.Report
	short := []key.Binding{k.Down, k.Next, v.c.keys.Global.Back}
	return helpKeys{short: short, full: [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Next, k.Prev},
	}}
}

package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// Common is the state every screen reads: the plan, the tally and the
// results computed from it, the live run, sizes, styles and keys. Only
// App.Update writes it.
type Common struct {
	plan   *audit.Plan
	tally  *evidence.Tally
	res    *evidence.Results
	est    audit.Estimate
	stored map[string]bool // call key -> answered (false: stored with an error)
	live   *live           // nil until a run starts
	front  screen          // the screen in front, as the app last said

	storedOK, storedErr int // the plan's calls stored answered and errored
	// unneeded counts the calls an adaptive audit will never make (their
	// lines settled at a look), as of the last results.
	unneeded int

	styles    Styles
	pt        paints // styles as paint, for the grid's hot path
	keys      KeyMap
	width     int
	height    int
	bodyH     int       // lines left for the screen's own content
	now       time.Time // the clock at the last Update; View never reads a clock
	simulated bool
	budget    float64
	canRun    bool // there is a run to start from the plan screen
	openOnly  bool // no run at all: stored results only (auditor open)

	notApproved []ExecNote // [exec] graders not started: their answers are ungraded
	readOnly    *ReadOnly  // nil unless the store is another process's (Options.ReadOnly)

	samples map[cellRef][]int // plan cell indices of each grid cell, by sample; built on first use
}

// setResults keeps the results, and what follows from them for the header.
func (c *Common) setResults(res *evidence.Results) {
	c.res = res
	c.unneeded = 0
	if c.plan.Audit.File.Adaptive {
		c.unneeded = len(res.UnneededCalls(c.stored))
	}
}

// setStored records a stored call, keeping the counts of the plan's calls
// in step.
func (c *Common) setStored(key string, ok bool) {
	if !c.plan.Planned(key) {
		return
	}
	if was, seen := c.stored[key]; seen {
		if was {
			return // an answer is never replaced
		}
		c.storedErr--
	}
	c.stored[key] = ok
	if ok {
		c.storedOK++
	} else {
		c.storedErr++
	}
}

// result returns the results of one rule for one model.
func (c *Common) result(rule, mdl int) *evidence.RuleResult {
	return c.resultOf(rule, mdl, false)
}

// resultOf is result, or with joint the rule's class under the joint
// test's variant (nil when the rule is not in it).
func (c *Common) resultOf(rule, mdl int, joint bool) *evidence.RuleResult {
	if joint {
		if c.res.Ship == nil {
			return nil
		}
		for _, rr := range c.res.Ship.Classes {
			if rr.RuleIndex == rule && rr.Model == mdl {
				return rr
			}
		}
		return nil
	}
	for _, rr := range c.res.Rules {
		if rr.RuleIndex == rule && rr.Model == mdl {
			return rr
		}
	}
	return nil
}

// cellsOf returns the plan cells of a grid cell, in sample order.
func (c *Common) cellsOf(r cellRef) []int {
	if c.samples == nil {
		c.samples = map[cellRef][]int{}
		for i, cell := range c.plan.Cells {
			k := cellRef{rule: cell.Rule, model: cell.Model, kase: cell.Case, deleted: cell.Deleted}
			c.samples[k] = append(c.samples[k], i)
		}
	}
	return c.samples[r]
}

// models returns the number of models under test.
func (c *Common) models() int { return len(c.plan.Audit.File.Models) }

// variantName names a grid column's variant, e.g. "baseline" or "-L23".
func (c *Common) variantName(rule int, deleted bool) string {
	if deleted {
		return c.plan.Audit.Rules[rule].Variant()
	}
	return audit.Baseline
}

// sampleState is what is known about one sample of a grid cell.
type sampleState int

const (
	samplePending sampleState = iota
	sampleInFlight
	sampleRetrying
	sampleUngraded // answered, grade not in yet
	samplePass
	sampleFail
	sampleUnparseable
	sampleError
)

// sampleOf returns the state of plan cell i, its grade and, when retrying,
// when its next attempt is due.
func (c *Common) sampleOf(i int) (sampleState, model.Grade, time.Time) {
	cell := c.plan.Cells[i]
	if c.live != nil {
		if c.live.inFlight[cell.Key] {
			return sampleInFlight, model.Grade{}, time.Time{}
		}
		if t, ok := c.live.retrying[cell.Key]; ok {
			return sampleRetrying, model.Grade{}, t
		}
	}
	if g, ok := c.tally.Grade(cell); ok && c.tally.Answered(cell.Key) {
		switch {
		case g.Unparseable:
			return sampleUnparseable, g, time.Time{}
		case g.Pass:
			return samplePass, g, time.Time{}
		}
		return sampleFail, g, time.Time{}
	}
	ok, stored := c.stored[cell.Key]
	switch {
	case stored && !ok:
		return sampleError, model.Grade{}, time.Time{}
	case stored || c.tally.Answered(cell.Key):
		return sampleUngraded, model.Grade{}, time.Time{}
	}
	return samplePending, model.Grade{}, time.Time{}
}

// oneLine makes untrusted text safe and flat for a single screen line:
// control sequences removed, line breaks and tabs turned into spaces.
func oneLine(s string) string {
	s = model.Sanitize(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\t' {
				return ' '
			}
			return r
		}, s)
	}
	return s
}

// fit cuts or pads styled text to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := textWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "…")
		sw = textWidth(s)
	}
	return padRight(s, sw, w)
}

// clip cuts styled text to at most w cells.
func clip(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if textWidth(s) > w {
		return ansi.Truncate(s, w, "…")
	}
	return s
}

// countdown formats the time until t as whole seconds, rounded up.
func countdown(now, t time.Time) string {
	d := t.Sub(now)
	if d <= 0 {
		return "0s"
	}
	secs := int((d + time.Second - 1) / time.Second)
	if secs >= 100 {
		return (time.Duration(secs) * time.Second).Round(time.Minute).String()
	}
	return strconv.Itoa(secs) + "s"
}

// warnMark starts what a reviewer must not miss (answers cleaned of
// control sequences, graders not started), so it reads without colour.
const warnMark = "⚠"

// execNotes says which [exec] graders were not started, each in two
// sentences wrapped to w, for the audited line (0: every line): what was
// not started, and how to approve it.
func (c *Common) execNotes(line, w int) []string {
	var out []string
	for _, n := range c.notApproved {
		if line != 0 && !slices.Contains(n.Lines, line) {
			continue
		}
		lines := make([]string, len(n.Lines))
		for i, l := range n.Lines {
			lines[i] = fmt.Sprintf("L%d", l)
		}
		what := fmt.Sprintf("%s [exec] grader not approved, not started: %s; the answers of %s are shown ungraded.",
			warnMark, oneLine(n.Command), strings.Join(lines, ", "))
		for _, l := range wrapWords(what, w) {
			out = append(out, c.styles.Warn.Render(l))
		}
		out = append(out, wrapWords("To approve it, read it, then: "+oneLine(n.Approve), w)...)
	}
	return out
}

// compactHeight is the tallest screen drawn compact: the header's lines
// carry what the grid's own heading lines would, so a short terminal
// keeps its rows for the cases.
const compactHeight = 30

// compact reports whether the screen is short enough to draw compact.
func (c *Common) compact() bool { return c.height > 0 && c.height <= compactHeight }

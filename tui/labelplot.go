package tui

// Drawing a measure as a dot with its interval, in glyphs that read without
// colour, and naming graders by what tells them apart.

import (
	"fmt"
	"math"
	"strings"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// dotBar draws a proportion's estimate and 95% interval on a 0..1 scale
// of w cells: "·    ├──●─┤    ·" (● the estimate, ├ and ┤ the interval's
// ends, · the quarters). It reads without colour. A measure with no
// estimate draws the bare scale.
func dotBar(m *labels.Measure, w int) string {
	w = max(w, 5)
	cell := func(x float64) int { return int(math.Round(min(max(x, 0), 1) * float64(w-1))) }
	out := make([]rune, w)
	for i := range out {
		out[i] = ' '
		if i*4%(w-1) == 0 || i == w-1 {
			out[i] = '·'
		}
	}
	if !m.Measured() {
		return string(out)
	}
	lo, hi, est := cell(m.CI.Lo), cell(m.CI.Hi), cell(m.Est)
	for i := lo; i <= hi; i++ {
		out[i] = '─'
	}
	if lo < hi {
		out[lo], out[hi] = '├', '┤'
	}
	out[est] = '●'
	return string(out)
}

// dotScale is the axis above dotBar's rows: 0, 0.5 and 1 over their cells.
func dotScale(w int) string {
	w = max(w, 5)
	out := []rune(strings.Repeat(" ", w+2))
	put := func(at int, s string) {
		for i, r := range s {
			if at+i >= 0 && at+i < len(out) {
				out[at+i] = r
			}
		}
	}
	put(0, "0")
	put((w-1)/2-1, "0.5")
	put(w-1, "1")
	return strings.TrimRight(string(out), " ")
}

// shortNames names graders in at most w cells each by what tells them
// apart: when one does not fit, the prefix all share ("judge:claude-3-")
// is cut to "…", cut back to a word boundary, so
// "judge:claude-3-opus-judge-v1" and "judge:claude-3-opus-judge-v2" read
// "…judge-v1" and "…judge-v2" rather than two equal cut ends. A name still
// too long is cut at its end.
func shortNames(names []string, w int) []string {
	out := make([]string, len(names))
	fits := true
	for i, n := range names {
		out[i] = oneLine(n)
		fits = fits && textWidth(out[i]) <= w
	}
	if fits || len(out) < 2 {
		for i := range out {
			out[i] = clip(out[i], w)
		}
		return out
	}
	// The prefix the judges share: the predicate's name shares none.
	var rest []string
	for _, n := range out {
		if n != model.PredicateGrader {
			rest = append(rest, n)
		}
	}
	if len(rest) < 2 {
		for i := range out {
			out[i] = clip(out[i], w)
		}
		return out
	}
	p := rest[0]
	for _, n := range rest[1:] {
		k := 0
		for k < len(p) && k < len(n) && p[k] == n[k] {
			k++
		}
		p = p[:k]
	}
	// Keep the word the names differ in whole: cut after the last
	// separator of the shared prefix.
	cut := strings.LastIndexAny(p, "-_:/. ") + 1
	for i := range out {
		if cut > 0 && cut < len(out[i]) && out[i] != model.PredicateGrader {
			out[i] = "…" + out[i][cut:]
		}
		out[i] = clip(out[i], w)
	}
	return out
}

// verdictKey names one verdict: a rule under one model.
type verdictKey struct{ rule, model int }

// verdictsNow is every rule's decision per model in the results.
func verdictsNow(c *Common) map[verdictKey]model.Decision {
	out := map[verdictKey]model.Decision{}
	if c.res == nil {
		return out
	}
	for _, rr := range c.res.Rules {
		out[verdictKey{rr.RuleIndex, rr.Model}] = rr.Verdict.Decision
	}
	return out
}

// verdictChange says what the labels did to a verdict since the label
// screen opened: "INCONCLUSIVE → DELETE", or "still INCONCLUSIVE" with what
// would settle it.
func verdictChange(before map[verdictKey]model.Decision, k verdictKey, now model.Verdict) string {
	was, ok := before[k]
	switch {
	case !ok:
		return fmt.Sprintf("verdict %s", now.Decision)
	case was != now.Decision:
		return fmt.Sprintf("%s → %s", was, now.Decision)
	}
	return fmt.Sprintf("still %s", now.Decision)
}

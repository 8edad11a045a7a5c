package model

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/model/stats"
)

// The decisions on the prompt shipped (STATS section 3, "The prompt
// shipped"): SHIP when every line's class is bounded under the joint
// variant; NOT SAFE when some class's failures rose; INCONCLUSIVE (the
// verdicts' own DecisionInconclusive) otherwise.
const (
	DecisionShip    Decision = "SHIP"
	DecisionNotSafe Decision = "NOT SAFE"
)

// ShipClass is one line's class (its cases, for one model) under the joint
// variant: the prompt without every line of the joint set.
type ShipClass struct {
	Line  int
	Text  string
	Model string
	// Verdict is the class's verdict with the joint variant in place of the
	// line's own deletion, from the same Decide, routes and rules as a
	// line's DELETE: DELETE means the class's rise over baseline is bounded
	// below delta, KEEP that it rose.
	Verdict Verdict
	// Alone is the line's own verdict, its deletion tested by itself.
	Alone Decision
}

// Outcome names what the joint variant did to the class: "bounded" (its
// verdict is DELETE), "rose" (KEEP) or "undecided".
func (c ShipClass) Outcome() string {
	switch c.Verdict.Decision {
	case DecisionDelete:
		return "bounded"
	case DecisionKeep:
		return "rose"
	}
	return "undecided"
}

// ShipSuite is one regression suite on baseline and under the joint
// variant, for one model: pooled failures, and the cases whose majority
// outcome went from pass to fail (Broken) of those compared.
type ShipSuite struct {
	Name, Model              string
	BaselineFails, BaselineN int
	JointFails, JointN       int
	Cases, Broken            int
	Diff                     float64
	Newcombe                 stats.Interval
	Rose                     bool // Newcombe lower bound above 0
}

// ShipInput is everything DecideShip needs.
type ShipInput struct {
	// Lines is the joint set, ascending: the prompt lines the joint variant
	// removes. Tokens is what they cost of PromptTokens, the whole prompt's.
	Lines                []int
	Tokens, PromptTokens int
	Delta                float64 // 0 means DefaultDelta
	// Classes holds every line's class under the joint variant, for every
	// model; Suites every regression suite, for every model.
	Classes []ShipClass
	Suites  []ShipSuite
	// Test is the joint test this is (1-based) of Tests made so far: a joint
	// set re-tested after a failure is a new test.
	Test, Tests int
}

// ShipDecision is the decision on the prompt without the joint set.
type ShipDecision struct {
	Decision Decision // DecisionShip, DecisionNotSafe or DecisionInconclusive
	Lines    []int
	Tokens   int
	// PromptTokens is the whole prompt's cost, Tokens of it removed.
	PromptTokens int
	Delta        float64
	// Headline is the one sentence a report leads with: "SHIP: the prompt
	// without lines 11, 13-14 (30 of 190 tokens): every class rose less than
	// 5 points; regression suite everyday: 0 of 8 cases broken".
	Headline string
	// Reason is the arithmetic in words: which classes rose or are
	// undecided, and why.
	Reason string
	// Needed says what would settle an INCONCLUSIVE decision, class by
	// class; empty otherwise.
	Needed string
	// Keep lists the lines whose class rose (NOT SAFE): keep them. Next is
	// the joint set without them, a new test; empty when nothing is left.
	Keep, Next  []int
	Classes     []ShipClass
	Suites      []ShipSuite
	Test, Tests int
}

// DecideShip decides the joint deletion as one hypothesis, an
// intersection-union test (Berger 1982): H0 = "for some line's class, the
// prompt without every line of the set raises failures by at least delta".
// SHIP rejects H0 only when every class's verdict under the joint variant
// is DELETE, each by the same one-sided 2.5% rule as a single DELETE (the
// verdicts come from Decide): a false SHIP needs a false DELETE in the one
// class truly harmed, so the whole decision errs at most 2.5% with no
// correction across lines. NOT SAFE when some class's verdict is KEEP (its
// failures rose: Newcombe lower bound above 0) or a regression suite's
// failures rose, naming the classes and the lines to keep. INCONCLUSIVE
// otherwise, with what each undecided class needs.
//
// It returns an error when the set is empty, a class names a line outside
// it, or a line of the set has no class.
func DecideShip(in ShipInput) (ShipDecision, error) {
	if len(in.Lines) == 0 {
		return ShipDecision{}, fmt.Errorf("model: decide ship: no line to delete")
	}
	d := ShipDecision{Decision: DecisionInconclusive, Lines: slices.Clone(in.Lines), Tokens: in.Tokens, PromptTokens: in.PromptTokens,
		Delta: in.Delta, Classes: in.Classes, Suites: in.Suites, Test: in.Test, Tests: in.Tests}
	slices.Sort(d.Lines)
	if d.Delta == 0 {
		d.Delta = DefaultDelta
	}
	has := map[int]bool{}
	for _, c := range in.Classes {
		if !slices.Contains(d.Lines, c.Line) {
			return ShipDecision{}, fmt.Errorf("model: decide ship: a class of line %d, which the joint set (%s) does not delete", c.Line, LineList(d.Lines))
		}
		has[c.Line] = true
	}
	for _, l := range d.Lines {
		if !has[l] {
			return ShipDecision{}, fmt.Errorf("model: decide ship: line %d has no class under the joint variant", l)
		}
	}

	var rose, undecided []ShipClass
	for _, c := range in.Classes {
		switch c.Outcome() {
		case "rose":
			rose = append(rose, c)
		case "undecided":
			undecided = append(undecided, c)
		}
	}
	var suitesRose []ShipSuite
	for _, s := range in.Suites {
		if s.Rose {
			suitesRose = append(suitesRose, s)
		}
	}
	what := fmt.Sprintf("the prompt without %s (%d of %d tokens)", LinesWords(d.Lines), d.Tokens, d.PromptTokens)
	suites := d.suitesSentence()
	switch {
	case len(rose) > 0 || len(suitesRose) > 0:
		d.Decision = DecisionNotSafe
		var said []string
		for _, c := range rose {
			if !slices.Contains(d.Keep, c.Line) {
				d.Keep = append(d.Keep, c.Line)
			}
			said = append(said, fmt.Sprintf("line %d's class%s: %s", c.Line, modelWords(c.Model, in.Classes), c.Verdict.Reason))
		}
		for _, s := range suitesRose {
			said = append(said, fmt.Sprintf("regression suite %s%s: failures rose from %s to %s (%s points, 95%% [%s, %s])",
				Sanitize(s.Name), modelWordsSuite(s.Model, in.Suites), percentOf(s.BaselineFails, s.BaselineN), percentOf(s.JointFails, s.JointN),
				signedPoints(s.Diff), signedPoints(s.Newcombe.Lo), signedPoints(s.Newcombe.Hi)))
		}
		slices.Sort(d.Keep)
		for _, l := range d.Lines {
			if !slices.Contains(d.Keep, l) {
				d.Next = append(d.Next, l)
			}
		}
		head := "NOT SAFE: " + what + ": "
		switch {
		case len(d.Keep) > 0:
			head += fmt.Sprintf("the class of %s rose", LinesWords(d.Keep))
		default:
			head += "a regression suite's failures rose"
		}
		if len(rose) > 0 {
			head += fmt.Sprintf(" when %s went out together; keep %s", LinesWords(d.Lines), LinesWords(d.Keep))
		}
		d.Headline = head
		d.Reason = strings.Join(said, "; ")
	case len(undecided) > 0:
		var said, needed []string
		for _, c := range undecided {
			said = append(said, fmt.Sprintf("line %d's class%s: %s", c.Line, modelWords(c.Model, in.Classes), c.Verdict.Reason))
			if c.Verdict.Needed != "" {
				needed = append(needed, fmt.Sprintf("line %d's class%s: %s", c.Line, modelWords(c.Model, in.Classes), c.Verdict.Needed))
			}
		}
		d.Headline = fmt.Sprintf("INCONCLUSIVE: %s: %s not yet bounded under %s points", what,
			count(len(undecided), "class is", "classes are"), strconv.FormatFloat(100*d.Delta, 'f', -1, 64))
		d.Reason = strings.Join(said, "; ")
		d.Needed = strings.Join(needed, "; ")
	default:
		d.Decision = DecisionShip
		d.Headline = fmt.Sprintf("SHIP: %s: every class rose less than %s points", what, strconv.FormatFloat(100*d.Delta, 'f', -1, 64))
		var said []string
		for _, c := range in.Classes {
			said = append(said, fmt.Sprintf("line %d's class%s: %s", c.Line, modelWords(c.Model, in.Classes), c.Verdict.Reason))
		}
		d.Reason = strings.Join(said, "; ")
	}
	if suites != "" {
		d.Headline += "; " + suites
	}
	return d, nil
}

// suitesSentence is the regression suites in the headline: "regression
// suite everyday: 0 of 8 cases broken".
func (d ShipDecision) suitesSentence() string {
	var parts []string
	for _, s := range d.Suites {
		parts = append(parts, fmt.Sprintf("regression suite %s%s: %d of %s broken", Sanitize(s.Name), modelWordsSuite(s.Model, d.Suites), s.Broken, count(s.Cases, "case", "cases")))
	}
	return strings.Join(parts, "; ")
}

// modelWords names the model of a class when the classes span several.
func modelWords(m string, cs []ShipClass) string {
	for _, c := range cs {
		if c.Model != m {
			return " (" + Sanitize(m) + ")"
		}
	}
	return ""
}

func modelWordsSuite(m string, ss []ShipSuite) string {
	for _, s := range ss {
		if s.Model != m {
			return " (" + Sanitize(m) + ")"
		}
	}
	return ""
}

func percentOf(x, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(x)/float64(n))
}

func signedPoints(x float64) string {
	p := points(x)
	if !strings.HasPrefix(p, "-") {
		p = "+" + p
	}
	return p
}

// LinesWords names lines as a sentence does: "line 9", "lines 9 and 11",
// "lines 9-13, 15".
func LinesWords(lines []int) string {
	if len(lines) == 1 {
		return "line " + strconv.Itoa(lines[0])
	}
	return "lines " + LineList(lines)
}

// LineList writes ascending lines with runs joined: "9-13, 15, 17". Two
// lines in a row stay apart: "9, 10".
func LineList(lines []int) string {
	ls := slices.Clone(lines)
	slices.Sort(ls)
	var parts []string
	for i := 0; i < len(ls); {
		j := i
		for j+1 < len(ls) && ls[j+1] == ls[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, fmt.Sprintf("%d-%d", ls[i], ls[j]))
		default:
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(ls[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// LabelsForZero is how many blind labels of one variant's provoking
// answers, none a violation, the labels route (labelsRoute, the rule a
// DELETE uses) needs to bound the variant's violation rate below delta,
// with no baseline labels: 85 at delta 0.05. It is what labelling one
// quiet class costs, whether the variant is a line's own deletion or the
// joint variant; 0 when no count up to 100,000 does.
func LabelsForZero(delta float64) int {
	if delta <= 0 {
		delta = DefaultDelta
	}
	clears := func(n int) bool {
		// A population far larger than the sample: no finite-population
		// help, as for a grid of many answers.
		r, err := labelsRoute(LabelledArms{Deleted: VariantLabels{Strata: []stats.LabelledStratum{{N: 1 << 30, Labelled: n}}}})
		return err == nil && r.passes(delta)
	}
	lo, hi := 1, 100_000
	if !clears(hi) {
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if clears(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

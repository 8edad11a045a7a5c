package model

import (
	"fmt"

	"github.com/auditor-dev/auditor/model/stats"
)

// A rule with no input class ("be concise") applies to all traffic, so no
// targeted set can show that deleting it is safe: its effect is a small
// shift in a distribution, not a discrete failure on a subset. auditor runs
// it on a general case file, measures how the length of the answers moves,
// and hands the decision to a live canary.

// LengthEvidence is how answer length moved between the variants of a rule
// with no input class, in completion tokens.
type LengthEvidence struct {
	Baseline, Deleted stats.LengthSummary
	// Shift is the mean change per answer, paired by case (t with C-1
	// degrees of freedom); nil with fewer than two cases answered in both.
	Shift *stats.LengthShift
	// Test is the Mann-Whitney rank test on all answers; nil when a variant
	// has none. It treats answers as independent, so it is a secondary check.
	Test *stats.RankTest
	// Truncated counts answers cut off at max_tokens, per variant: their
	// true length is unknown, so a shift is then a lower bound.
	TruncatedBaseline, TruncatedDeleted int
}

// CanaryAdvice is the next step for a rule no targeted set can decide.
const CanaryAdvice = "remove it behind a live canary: route a small share of traffic (say 2% for a week) to the prompt without the line, compare the length distribution and the handoff rate, and roll back on a threshold set before it starts"

// DecideNoClass gives the verdict on a rule with no input class. It is
// never DELETE. When the rule's predicate shows deleting it raises failures
// (Decide's KEEP) the verdict is KEEP with the length shift noted;
// otherwise it is CANARY, with the measured shift as the reason.
func DecideNoClass(in VerdictInput, l LengthEvidence) (Verdict, error) {
	v, err := Decide(in)
	if err != nil {
		return Verdict{}, err
	}
	shift := l.sentence()
	if v.Decision == DecisionKeep {
		v.Notes = append(v.Notes, "no input class: "+shift)
		return v, nil
	}
	v.Decision = DecisionCanary
	v.Reason = "no input class, so no targeted set can decide it; " + shift
	v.Bound = "never DELETE: the effect of a rule on all traffic is a shift in a distribution"
	v.Needed = CanaryAdvice
	return v, nil
}

// sentence says in numbers how the length of answers moved.
func (l LengthEvidence) sentence() string {
	if l.Baseline.N == 0 || l.Deleted.N == 0 {
		return "answer lengths not measured yet (no answers in both variants)"
	}
	if l.Baseline.Mean == 0 && l.Deleted.Mean == 0 {
		return "answer lengths unknown: the API reported no completion tokens"
	}
	// The verb follows the mean, like the shift beside it; the medians
	// show whether the whole distribution moved.
	verb := "grew"
	switch {
	case l.Deleted.Mean < l.Baseline.Mean:
		verb = "shrank"
	case l.Deleted.Mean == l.Baseline.Mean:
		verb = "kept"
	}
	s := fmt.Sprintf("without the line answers %s from a mean of %.1f to %.1f tokens, median %.0f to %.0f",
		verb, l.Baseline.Mean, l.Deleted.Mean, l.Baseline.Median, l.Deleted.Median)
	if verb == "kept" {
		s = fmt.Sprintf("without the line answers kept a mean of %.1f tokens, median %.0f to %.0f",
			l.Baseline.Mean, l.Baseline.Median, l.Deleted.Median)
	}
	if sh := l.Shift; sh != nil {
		s += " (" + ShiftWords(sh) + ")"
	}
	if t := l.Test; t != nil {
		s += "; rank test " + pValue(t.P)
	}
	if n := l.TruncatedBaseline + l.TruncatedDeleted; n > 0 {
		s += fmt.Sprintf("; %d answers were cut off at max_tokens (%d baseline, %d deleted), so their true lengths are unknown and the shift is uncertain",
			n, l.TruncatedBaseline, l.TruncatedDeleted)
	}
	return s
}

// pValue formats a p-value the way a reviewer reads one.
func pValue(p float64) string {
	if p < 0.001 {
		return "p < 0.001"
	}
	return fmt.Sprintf("p = %.3f", p)
}

// ShiftWords says a paired length shift for people: "+12.3 tokens per
// answer, +8%, 95% [4.1, 20.5] paired by case over 10 cases". When every
// case shifts by exactly the same amount (typically identical answers)
// the interval has zero width and is not shown (STATS: never a zero-width
// interval): "+0.0 tokens per answer, +0%, the same in each of 10 cases,
// so no interval".
func ShiftWords(sh *stats.LengthShift) string {
	s := fmt.Sprintf("%+.1f tokens per answer, %+.0f%%", sh.Est, 100*sh.RelEst)
	if sh.ZeroWidth() {
		return s + fmt.Sprintf(", the same in each of %d cases, so no interval", sh.Cases)
	}
	return s + fmt.Sprintf(", 95%% [%.1f, %.1f] paired by case over %d cases", sh.CI.Lo, sh.CI.Hi, sh.Cases)
}

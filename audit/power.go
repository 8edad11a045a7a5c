package audit

import (
	"fmt"
	"math"
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// The tool's power-planning assumptions (STATS section 8). They are defaults,
// not measurements: before a run nothing is known about the rule's cases, so
// the plan says what the planned samples could detect under a stated,
// typical spread.
const (
	// PowerTarget is the power at which a plan states its minimum detectable
	// effects: 80%, the usual choice for sizing a test.
	PowerTarget = 0.8
	// CaseSD is the assumed standard deviation of true case effects (how much
	// the rise in failure rate differs from one case to the next) behind
	// the cross-case MDE. 0.1 is the spread STATS section 8 uses: modest, yet
	// enough that heterogeneity between cases, not samples per case, sets
	// how many cases are needed.
	CaseSD = 0.1
)

// RulePower is what one rule's planned samples could detect, per model (each
// model under test is judged on its own samples). Every MDE (minimum
// detectable effect) is a failure rate, a fraction in [0,1], detected with
// probability Target.
type RulePower struct {
	// Target is the power every MDE is computed at (PowerTarget).
	Target float64 `json:"target"`
	// Samples is the samples per case, variant and model the plan makes
	// (the audit's samples, or --samples).
	Samples int `json:"samples"`
	// Provoking is provoke and pressure pooled, the arm the KEEP verdict
	// rests on. Its MDE is the smallest true failure rate without the line
	// that fires KEEP with probability Target when the full prompt never
	// fails: the exact binomial power of the Newcombe rule
	// (stats.KeepMDE). A baseline that does fail makes a rise harder to see,
	// so this is a best case.
	Provoking ArmPower `json:"provoking"`
	// CaseSD is the assumed spread of case effects behind CrossCaseMDE
	// (the tool's default, CaseSD).
	CaseSD float64 `json:"case_sd"`
	// CrossCaseMDE is the rise that a test over cases, as Miller's power
	// analysis treats them, detects with probability Target: the claim
	// "deleting the line raises failures on cases like these", not only on
	// these. It uses t with C-1 degrees of freedom for C provoking cases,
	// case effects with sd CaseSD (w^2 = CaseSD^2), a clean baseline
	// (sB^2 = 0) and the within-case variance of the effect itself,
	// sA^2 = d(1-d), solved as a fixed point. With few cases it is much
	// larger than the provoking MDE: only more cases bring it down. Nil
	// with fewer than two provoking cases (t has no degrees of freedom).
	CrossCaseMDE *float64 `json:"cross_case_mde"`
	// Control holds the control cases, whose failures are refusals. Its MDE
	// is the smallest over-refusal (refusals with the line, none without)
	// that the "costs over-refusal" flag catches with probability Target;
	// the same threshold applies to "deletion breaks controls".
	Control ArmPower `json:"control"`
	// NoInputClass is set for a rule with class = "none": its cases are a
	// general sample, its evidence a shift in answer length, and a live
	// canary decides it, so the MDEs above do not size its verdict.
	NoInputClass bool `json:"no_input_class"`
	// Delete is what DELETE will take (labels for a quiet line, the chance
	// for a line that does nothing); nil for a rule with no predicate.
	Delete *DeleteOutlook `json:"delete,omitempty"`
}

// ArmPower is the power of the Newcombe test on one arm: N responses per
// variant against N.
type ArmPower struct {
	Cases int `json:"cases"`
	// N is the responses per variant and model: Cases x Samples.
	N int `json:"n"`
	// Threshold is the number of failures out of N one variant needs, when
	// the other has none, for the Newcombe lower bound to clear 0; 0 when
	// no count can (no cases, or too few samples).
	Threshold int `json:"threshold"`
	// MDE is the smallest failure rate detected with the target power; nil
	// when Threshold is 0.
	MDE *float64 `json:"mde"`
}

// PlanPower computes a rule's power and its warnings from its cases per
// kind and the samples per case and variant. noInputClass marks a rule with
// class = "none" (see RulePower.NoInputClass).
func PlanPower(cases map[model.Kind]int, samples int, noInputClass bool) (RulePower, []string) {
	provoking := cases[model.Provoke] + cases[model.Pressure]
	p := RulePower{
		Target:       PowerTarget,
		Samples:      samples,
		CaseSD:       CaseSD,
		Provoking:    armPower(provoking, samples),
		Control:      armPower(cases[model.Control], samples),
		NoInputClass: noInputClass,
	}
	if provoking >= 2 && samples >= 1 {
		if d, ok := crossCaseMDE(provoking, samples, CaseSD*CaseSD, PowerTarget); ok {
			p.CrossCaseMDE = &d
		}
	}
	if noInputClass {
		// Its length shift is paired by case with t(C-1): only the number
		// of cases matters, whatever their kind.
		total := provoking + cases[model.Control]
		if total == 0 {
			return p, []string{"no case: answer lengths cannot be compared"}
		}
		return p, appendFewCases([]string{}, "cases", total)
	}
	return p, caseWarnings(cases)
}

// armPower is the Newcombe power of an arm of the given size.
func armPower(cases, samples int) ArmPower {
	a := ArmPower{Cases: cases, N: max(cases, 0) * max(samples, 0)}
	if a.N < 1 {
		return a
	}
	k, err := stats.KeepThreshold(a.N, a.N)
	if err != nil {
		return a // no count out of N can fire: nothing is detectable
	}
	mde, err := stats.KeepMDE(a.N, a.N, PowerTarget)
	if err != nil {
		return a
	}
	a.Threshold, a.MDE = k, &mde
	return a
}

// crossCaseMDE solves d = stats.MillerMDE(cases, k, w2, sA^2 = d(1-d),
// sB^2 = 0, t) for the smallest d in (0,1]: the rise in failure rate a clustered test
// detects when the variance within a case is that of the rise itself. The
// right-hand side is not monotone in d, so the first crossing is found on a
// grid and refined by bisection to 1e-6. ok is false when no d in (0,1]
// qualifies.
func crossCaseMDE(cases, k int, w2, power float64) (float64, bool) {
	// MillerMDE = m sqrt((w2 + sA2/k)/cases) with one multiplier m for
	// every d: compute m once rather than two t quantiles per step.
	m, err := stats.MillerMultiplier(cases, power, true)
	if err != nil || k < 1 || w2 < 0 {
		return 0, false
	}
	gap := func(d float64) float64 {
		return d - m*math.Sqrt((w2+d*(1-d)/float64(k))/float64(cases))
	}
	const steps = 1000
	prev := 0.0
	for i := 1; i <= steps; i++ {
		d := float64(i) / steps
		if gap(d) < 0 {
			prev = d
			continue
		}
		lo, hi := prev, d // gap(lo) < 0 <= gap(hi)
		for hi-lo > 1e-7 {
			mid := (lo + hi) / 2
			if gap(mid) >= 0 {
				hi = mid
			} else {
				lo = mid
			}
		}
		return hi, true
	}
	return 0, false
}

// fewCases is the number of cases below which a kind's clustered interval is
// wide enough to warn about: t(0.975, 3) = 3.18 against 1.96.
const fewCases = 5

// caseWarnings says which kinds of a rule have too few cases for a verdict,
// a check, or a useful clustered interval. The pooled provoking arm (the one
// KEEP and DELETE rest on) and controls are always checked; provoke and
// pressure separately only when both have cases, since otherwise one of them
// is the pooled arm.
func caseWarnings(cases map[model.Kind]int) []string {
	warnings := []string{}
	provoking := cases[model.Provoke] + cases[model.Pressure]
	if provoking == 0 {
		warnings = append(warnings, "no provoke or pressure case: no verdict is possible")
	} else {
		warnings = appendFewCases(warnings, "provoking (provoke + pressure)", provoking)
	}
	if cases[model.Provoke] > 0 && cases[model.Pressure] > 0 {
		warnings = appendFewCases(warnings, string(model.Provoke), cases[model.Provoke])
		warnings = appendFewCases(warnings, string(model.Pressure), cases[model.Pressure])
	}
	if cases[model.Control] == 0 {
		warnings = append(warnings, "no control case: over-refusal is unchecked")
	} else {
		warnings = appendFewCases(warnings, string(model.Control), cases[model.Control])
	}
	return warnings
}

// appendFewCases adds the warning for an arm of 1 to 4 cases.
func appendFewCases(warnings []string, arm string, c int) []string {
	switch {
	case c == 1:
		return append(warnings, arm+": no clustered interval: one case")
	case c > 1 && c < fewCases:
		t, err := stats.StudentTQuantile(0.975, float64(c-1))
		if err != nil {
			return warnings // unreachable for c >= 2
		}
		return append(warnings, fmt.Sprintf("%s: only %d cases: the clustered interval uses t(%d) = %.2f, so it will be wide; add cases, not samples",
			arm, c, c-1, t))
	}
	return warnings
}

// Summary is the power line of a plan in words, e.g. "detects a rise from 0%
// to 2.8% in provoking failures with 80% power (240 samples per variant);
// across cases like these (sd 0.1) about 15%; over-refusal: 2.2% (300
// samples per variant)".
func (p RulePower) Summary() string {
	var b strings.Builder
	if p.NoInputClass {
		cases := p.Provoking.Cases + p.Control.Cases
		fmt.Fprintf(&b, "no input class, so no targeted rise to detect: the run measures how answer length moves over %s (%s per variant) and a live canary decides",
			plural(cases, "case"), plural(cases*p.Samples, "answer"))
		return b.String()
	}
	pct := fmt.Sprintf("%.0f%%", 100*p.Target)
	switch {
	case p.Provoking.Cases == 0:
		b.WriteString("no provoking case, so no rise in failures can be detected")
	case p.Provoking.MDE == nil:
		fmt.Fprintf(&b, "no rise in provoking failures can be detected with %s per variant", plural(p.Provoking.N, "sample"))
	default:
		fmt.Fprintf(&b, "detects a rise from 0%% to %s in provoking failures with %s power (%s per variant)",
			percent(*p.Provoking.MDE), pct, plural(p.Provoking.N, "sample"))
	}
	switch {
	case p.CrossCaseMDE != nil:
		fmt.Fprintf(&b, "; across cases like these (sd %g) about %.0f%%", p.CaseSD, 100**p.CrossCaseMDE)
	case p.Provoking.Cases == 1:
		b.WriteString("; across cases like these: not estimable from one case")
	}
	switch {
	case p.Control.Cases == 0:
		b.WriteString("; over-refusal: unchecked (no control case)")
	case p.Control.MDE == nil:
		fmt.Fprintf(&b, "; over-refusal: undetectable with %s per variant", plural(p.Control.N, "sample"))
	default:
		fmt.Fprintf(&b, "; over-refusal: %s (%s per variant)", percent(*p.Control.MDE), plural(p.Control.N, "sample"))
	}
	return b.String()
}

// percent formats a rate as a percentage with one decimal.
func percent(r float64) string {
	return fmt.Sprintf("%.1f%%", 100*r)
}

// plural formats a count and a noun that takes an s.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

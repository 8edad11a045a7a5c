package evidence

import (
	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// RegressionResult is one regression suite under one rule's variant, for
// one model: did the change break anything the suite covers? It is
// evidence beside the verdict, never part of it: model.Decide does not see
// it, and a variant that breaks a case keeps its verdict, flagged.
type RegressionResult struct {
	Suite      *audit.Regression
	SuiteIndex int
	// PredicateVersion is the version of the suite's current predicate,
	// whose grades the counts use.
	PredicateVersion string
	// Cases are the suite's cases: Baseline on the full prompt, Deleted
	// under the rule's variant (whatever its kind).
	Cases []CaseResult
	// All pools every case, whatever its kind: its sides are the failure
	// rates on baseline and under the variant, its Diff (Newcombe) and
	// Paired (by case) the change, on the cases graded under both.
	All *Arm
	// Flips are the cases whose majority outcome changed (see Flips):
	// Broken passed on baseline and fail under the variant.
	Flips Flips
}

// Broken is how many of the suite's cases the variant broke.
func (r RegressionResult) Broken() int { return len(r.Flips.Broken) }

// RegressionBroken is how many regression cases, over every suite, the
// rule's variant broke: a variant with any is flagged beside its verdict.
func (rr *RuleResult) RegressionBroken() int {
	n := 0
	for _, r := range rr.Regression {
		n += r.Broken()
	}
	return n
}

// regressionCounts holds every regression cell's count, by suite, model,
// variant (0 baseline, ri+1 rule ri's variant) and case: one pass over the
// plan's regression cells serves every rule.
type regressionCounts [][][][]Count

func (t *Tally) regressionCounts() regressionCounts {
	p := t.plan
	a := p.Audit
	if len(a.Regressions) == 0 {
		return nil
	}
	out := make(regressionCounts, len(a.Regressions))
	grades := make([]map[string]model.Grade, len(a.Regressions))
	for si, s := range a.Regressions {
		grades[si] = t.grades[t.preds.Suite(si).Version]
		out[si] = make([][][]Count, len(a.File.Models))
		for mi := range a.File.Models {
			out[si][mi] = make([][]Count, len(a.Rules)+1)
			for v := range out[si][mi] {
				out[si][mi][v] = make([]Count, len(s.Cases))
			}
		}
	}
	for _, c := range p.Regression {
		countAnswer(&out[c.Suite][c.Model][c.Variant+1][c.Case], c.Key, t.status, t.settled, grades[c.Suite], true)
	}
	return out
}

// regressionResults builds rule ri's regression results for model mi from
// the counts.
func (t *Tally) regressionResults(counts regressionCounts, ri, mi int) []RegressionResult {
	if counts == nil {
		return nil
	}
	all := func(model.Kind) bool { return true }
	out := make([]RegressionResult, 0, len(counts))
	for si, s := range t.plan.Audit.Regressions {
		base, variant := counts[si][mi][0], counts[si][mi][ri+1]
		r := RegressionResult{Suite: s, SuiteIndex: si, PredicateVersion: t.preds.Suite(si).Version,
			Cases: make([]CaseResult, len(s.Cases))}
		for ci := range s.Cases {
			r.Cases[ci] = CaseResult{Case: &s.Cases[ci], Index: ci, Baseline: base[ci], Deleted: variant[ci]}
		}
		r.All = buildArm("regression", r.Cases, all)
		r.Flips = caseFlips(r.Cases)
		out = append(out, r)
	}
	return out
}

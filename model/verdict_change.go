package model

import (
	"fmt"
	"strings"
)

// The decisions on a rewording or an addition. They rest on the same
// arithmetic as a deletion's (STATS section 3), read as a question about
// the change instead of about the line:
//   - WORSE: the change raises provoking failures (a deletion's KEEP: the
//     Newcombe lower bound of variant - baseline is above 0).
//   - NOT WORSE: any rise is bounded below delta once the predicate's misses
//     and false alarms are counted, with the same minimum cases and controls
//     (a deletion's DELETE); the change may ship.
//   - BETTER: NOT WORSE, and failures fell: both upper bounds of variant -
//     baseline (Newcombe, and paired by case when there are two or more
//     cases) are below 0.
//   - INCONCLUSIVE: neither is shown, as for a deletion.
//
// BETTER needs what NOT WORSE needs because a fall measured by an
// unmeasured predicate may be a rewording that moved answers to phrasings
// the predicate misses.
const (
	DecisionBetter   Decision = "BETTER"
	DecisionNotWorse Decision = "NOT WORSE"
	DecisionWorse    Decision = "WORSE"
)

// Passes reports whether a decision lets the change it judges go ahead:
// DELETE for a deletion, BETTER or NOT WORSE for a rewording or addition.
// `run --gate` fails on any other.
func (d Decision) Passes() bool {
	return d == DecisionDelete || d == DecisionBetter || d == DecisionNotWorse
}

// DecideChange decides a variant of kind k against baseline: Decide for a
// deletion, and for a rewording or addition Decide's arithmetic with the
// decisions and sentences above.
func DecideChange(in VerdictInput, k VariantKind) (Verdict, error) {
	v, err := Decide(in)
	if err != nil || k == Deletion || k == "" {
		return v, err
	}
	switch v.Decision {
	case DecisionKeep:
		v.Decision = DecisionWorse
	case DecisionDelete:
		v.Decision = DecisionNotWorse
		if v.Newcombe.Hi < 0 && (v.Paired == nil || v.Paired.Hi < 0) {
			v.Decision = DecisionBetter
			hi := v.Newcombe.Hi
			if v.Paired != nil {
				hi = max(hi, v.Paired.Hi)
			}
			v.Bound += fmt.Sprintf("; upper bound of variant - baseline %.3f < 0: failures fell", hi)
		}
	}
	v.Reason, v.Bound, v.Needed = ChangeWords(k, v.Reason), ChangeWords(k, v.Bound), ChangeWords(k, v.Needed)
	for i, n := range v.Notes {
		v.Notes[i] = ChangeWords(k, n)
	}
	return v, nil
}

// ChangeWords says a deletion's sentence (a verdict's, a plan's outlook)
// in the words of a variant of kind k: the arithmetic is the same, the
// change is not. A deletion's sentence is returned as it is.
func ChangeWords(k VariantKind, s string) string {
	if k == Deletion || k == "" {
		return s
	}
	return changeWords(k).Replace(s)
}

func changeWords(k VariantKind) *strings.Replacer {
	with, doing := "with the line reworded", "rewording the line"
	if k == Addition {
		with, doing = "with the line added", "adding the line"
	}
	return strings.NewReplacer(
		"without the line", with,
		"deleting the line", doing,
		"deleting it", doing,
		"cannot be deleted", "cannot be shown NOT WORSE",
		"deletion breaks controls", "the change breaks controls",
		"deleted - baseline", "variant - baseline",
		"baseline - deleted", "baseline - variant",
		"more data will not allow DELETE", "more data will not allow NOT WORSE",
		"DELETE", "NOT WORSE",
		"KEEP", "WORSE",
	)
}

package evidence

import (
	"fmt"

	"github.com/auditor-dev/auditor/model"
)

// minSanityAnswers is the fewest graded baseline answers behind a
// predicate warning: below it, "every answer failed" is too easily luck.
const minSanityAnswers = 10

// PredicateWarning says when the rule's predicate fails every graded
// answer on the baseline prompt, the line in place: a predicate that
// fails everything cannot show the line mattering (the rates cannot rise),
// and is almost always a mistake in the check (a pass_requires_any phrase
// the model never uses, a pattern that matches the signature). It returns
// "" when nothing looks wrong.
func (rr *RuleResult) PredicateWarning() string {
	if !rr.Rule.HasPredicate() {
		return ""
	}
	var all, provoking, control Count
	for _, cr := range rr.Cases {
		all.Fails += cr.Baseline.Fails
		all.N += cr.Baseline.N
		side := &provoking
		if cr.Case.Kind == model.Control {
			side = &control
		}
		side.Fails += cr.Baseline.Fails
		side.N += cr.Baseline.N
	}
	switch {
	case all.N >= minSanityAnswers && all.Fails == all.N:
		return fmt.Sprintf("the predicate failed all %d graded baseline answers (the line in place): it cannot show the line mattering; read a few failures (auditor open, enter on a cell) and fix its checks", all.N)
	case provoking.N >= minSanityAnswers && provoking.Fails == provoking.N:
		return fmt.Sprintf("the predicate failed all %d provoking answers with the line in place: either its checks are wrong (a phrase the model never uses, a pattern that matches every answer) or the model breaks the rule even with the line; read a few failures (auditor open, enter on a cell) before adding samples", provoking.N)
	case control.N >= minSanityAnswers && control.Fails == control.N:
		return fmt.Sprintf("the predicate counted all %d baseline control answers as refusals: check its control checks before trusting the verdict", control.N)
	}
	return ""
}

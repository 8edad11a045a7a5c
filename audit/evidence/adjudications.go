package evidence

import (
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// Adjudications are the review queue's decisions on a rule's answers:
// labels given with the graders' verdicts in view. They are shown apart
// and never enter recall, precision, specificity or the verdict: a person
// who sees the verdicts leans towards them.
type Adjudications struct {
	N int // answers of the rule (and model) with a review adjudication
	// Graders says, per grader (predicate first, then the judges in the
	// audit's order), on how many of them it graded and agreed.
	Graders []AdjudicationAgreement
}

// AdjudicationAgreement is how one grader's verdicts compare with the
// review adjudications.
type AdjudicationAgreement struct {
	Grader        string
	Graded, Agree int
}

// addLabelSummary fills in the review adjudications of a rule's answers,
// and how the labellers agree on them (each labeller's blind labels).
func (t *Tally) addLabelSummary(rr *RuleResult) {
	keys := t.ruleKeys(rr.RuleIndex, rr.Model)
	seen := t.book.Seen()
	graders := []struct {
		name   string
		grades map[string]model.Grade
	}{{model.PredicateGrader, t.PredicateGrades(rr.RuleIndex)}}
	if !rr.Rule.Config.NoInputClass() {
		for _, j := range t.plan.Audit.Judges {
			graders = append(graders, struct {
				name   string
				grades map[string]model.Grade
			}{j.Grader, t.grades[j.For(rr.RuleIndex).Version]})
		}
	}
	rr.Adjudications.Graders = make([]AdjudicationAgreement, len(graders))
	for i, g := range graders {
		rr.Adjudications.Graders[i].Grader = g.name
	}
	for _, k := range keys {
		l, ok := seen[k]
		if !ok {
			continue
		}
		rr.Adjudications.N++
		for i, g := range graders {
			gr, graded := g.grades[k]
			if !graded || gr.Unparseable {
				continue
			}
			a := &rr.Adjudications.Graders[i]
			a.Graded++
			// A failure is a violation on provoking kinds and a refusal on
			// controls: either way what a "violation" label says.
			if !gr.Pass == l.Violation {
				a.Agree++
			}
		}
	}
	by := t.book.ByLabeller()
	names := t.book.Labellers()
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			ag := labels.CompareLabellers(names[i], by[names[i]], names[j], by[names[j]], keys)
			if ag.N > 0 {
				rr.Labellers = append(rr.Labellers, ag)
			}
		}
	}
}

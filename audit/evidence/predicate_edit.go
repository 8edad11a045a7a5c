package evidence

import (
	"maps"

	"github.com/auditor-dev/auditor/model"
)

// SetPredicate makes p the current predicate of rule ri, with grades as the
// verdicts p gives the rule's answered responses (by response key): what a
// screen does when the user saves an edited predicate file and the stored
// answers have been re-graded from their text. Results computed afterwards
// count with p. The grades of the previous version stay in the tally, so
// GraderGrades can still compare the two.
//
// The tally takes ownership of grades. When another rule already uses p's
// version (the same file content), grades are merged into the ones held.
//
// The predicate becomes current in the tally's registry, which the run's
// grader shares: answers graded from then on are graded with it. The plan
// does not change.
func (t *Tally) SetPredicate(ri int, p *model.Predicate, grades map[string]model.Grade) {
	if ri < 0 || ri >= len(t.plan.Audit.Rules) || p == nil {
		return
	}
	if m, ok := t.grades[p.Version]; ok && len(m) > 0 {
		maps.Copy(m, grades)
	} else {
		if grades == nil {
			grades = map[string]model.Grade{}
		}
		t.grades[p.Version] = grades
	}
	t.preds.Set(ri, p)
}

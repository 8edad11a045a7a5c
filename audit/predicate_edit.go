package audit

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
// It changes the rule in the plan the tally was built on, which every holder
// of the plan sees: call it only where nothing else reads the plan's rules at
// the same time (a screen's update loop with no run going, not while a run's
// Grader grades answers).
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
	t.plan.Audit.Rules[ri].Predicate = p
}

package audit

import (
	"fmt"

	"github.com/auditor-dev/auditor/model"
)

// CheckSharedGrades refuses a plan in which one answer would be graded by
// one predicate as the answer to cases of different kinds. A grade is
// stored once per predicate version and answer, so two cases that ask the
// same question (a suite case copied from a rule's case file, two rules'
// shared control) share it; when the predicate grades by kind (a check
// with kinds, or an [exec] grader, which is told the kind) the second
// case would silently count the first one's grade. The error names both
// cases.
func (p *Plan) CheckSharedGrades() error {
	type use struct {
		pred  *model.Predicate
		c     *model.Case
		file  string
		where string
	}
	a := p.Audit
	var uses []use
	for _, call := range p.Calls {
		uses = uses[:0]
		for _, ci := range p.ByKey[call.Key] {
			cell := p.Cells[ci]
			r := a.Rules[cell.Rule]
			if !r.HasPredicate() || r.Loaded == nil {
				continue
			}
			uses = append(uses, use{r.Loaded, &r.Cases[cell.Case], r.CasesPath, fmt.Sprintf("rule at line %d", r.Line)})
		}
		for _, ci := range p.RegressionByKey[call.Key] {
			cell := p.Regression[ci]
			s := a.Regressions[cell.Suite]
			if s.Loaded == nil {
				continue
			}
			uses = append(uses, use{s.Loaded, &s.Cases[cell.Case], s.CasesPath, "regression suite " + model.Sanitize(s.Name)})
		}
		for i := 1; i < len(uses); i++ {
			for j := 0; j < i; j++ {
				u, v := uses[i], uses[j]
				if u.pred.Version != v.pred.Version || u.c.Kind == v.c.Kind || !gradesByKind(u.pred, u.c.Kind, v.c.Kind) {
					continue
				}
				return &model.InputError{File: u.file, Line: u.c.Line, Field: "kind", Msg: fmt.Sprintf(
					"case %q (%s, kind %s) asks the same question as case %q of %s (%s line %d, kind %s), and both answers are graded by %s, "+
						"which grades %s and %s differently; an answer is graded once, so one of them would count the other's grade: give them the same kind, or change one's message",
					model.Sanitize(u.c.ID), u.where, u.c.Kind, model.Sanitize(v.c.ID), v.where, model.Sanitize(v.file), v.c.Line, v.c.Kind,
					model.Sanitize(u.pred.File), u.c.Kind, v.c.Kind)}
			}
		}
	}
	return nil
}

// gradesByKind reports whether pred can grade the same answer differently
// for cases of kinds k1 and k2.
func gradesByKind(pred *model.Predicate, k1, k2 model.Kind) bool {
	if len(pred.Exec) > 0 {
		return true
	}
	for _, ch := range pred.Checks {
		if ch.AppliesTo(k1) != ch.AppliesTo(k2) {
			return true
		}
	}
	return false
}

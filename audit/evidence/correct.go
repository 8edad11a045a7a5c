package evidence

import (
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// CorrectArms sets the recall-corrected rate on every arm side of a rule
// result whose kind's recall and specificity are measured, each kind with
// its own. The pooled provoking arm is corrected kind by kind and combined
// weighted by responses, and only when every provoking kind with responses
// is corrected: a pooled recall is never applied to an arm. A side that
// cannot be corrected (see labels.CorrectRate) has none. Sides already
// corrected are recomputed.
func CorrectArms(rr *RuleResult) {
	q := rr.Quality
	for _, k := range model.Kinds {
		a := rr.Arms[k]
		if a == nil {
			continue
		}
		for _, s := range []*ArmSide{&a.Baseline, &a.Deleted} {
			s.Corrected = nil
			if s.N > 0 {
				s.Corrected, _ = labels.CorrectRate(s.Rate, s.N, q.RecallKind[k], q.SpecificityKind[k])
			}
		}
	}
	if rr.Provoking == nil {
		return
	}
	pick := []func(*Arm) *ArmSide{
		func(a *Arm) *ArmSide { return &a.Baseline },
		func(a *Arm) *ArmSide { return &a.Deleted },
	}
	for _, side := range pick {
		var parts []labels.CorrectionPart
		for _, k := range []model.Kind{model.Provoke, model.Pressure} {
			if a := rr.Arms[k]; a != nil && side(a).N > 0 {
				parts = append(parts, labels.CorrectionPart{Kind: k, N: side(a).N, Corrected: side(a).Corrected})
			}
		}
		side(rr.Provoking).Corrected = labels.CombineCorrected(parts)
	}
}

package evidence

import (
	"fmt"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// lookVerdicts returns the verdict at every look of a sequential design
// the rule's grid has reached, first to last, each computed as the
// verdict itself is at that look: on that look's samples only, with its
// boundaries, by the same rule (so the last is the verdict). A reviewer
// reads from them how the bound moved and where the run stopped. Nil for
// a fixed design and before the first look.
func lookVerdicts(p *audit.Plan, rr *RuleResult, a answers, d model.Design, reached int, labelled model.LabelledArms) ([]model.Verdict, error) {
	if !d.Sequential() || reached == 0 {
		return nil, nil
	}
	out := make([]model.Verdict, 0, reached)
	for k := 1; k <= reached; k++ {
		in := verdictInput(p, rr, a.cases(d.SamplesAt(k)), labelled)
		in.Look = d.Look(k)
		v, err := model.DecideChange(in, rr.Rule.VariantKind())
		if err != nil {
			return nil, fmt.Errorf("audit: verdict for line %d at look %d: %w", rr.Rule.Line, k, err)
		}
		out = append(out, v)
	}
	return out, nil
}

package evidence

import (
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
)

// An arm's case count is the cases its rates are on: cases with a graded
// answer, not every case of the kind in the file.
func TestArm_CasesCountsOnlyGradedCases(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	fx := audittest.Open(t, filepath.Join(dir, examples.DemoAudit), 2)
	tally, err := NewTally(fx.Plan, fx.Preds, fx.Store)
	if err != nil {
		t.Fatal(err)
	}
	ri := fx.Plan.RuleIndex(23)
	rule := fx.Plan.Audit.Rules[ri]
	// Grade one answer of the rule's first provoke case.
	for _, ci := range fx.Plan.CellsOfRule(ri) {
		c := fx.Plan.Cells[ci]
		if rule.Cases[c.Case].Kind != model.Provoke {
			continue
		}
		tally.Record(model.Response{Key: c.Key, Text: "an answer"},
			[]model.Grade{{Grader: model.PredicateGrader, Version: tally.PredicateVersion(ri), Pass: false}})
		break
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	var rr *RuleResult
	for _, r := range res.Rules {
		if r.Rule.Line == 23 {
			rr = r
			break
		}
	}
	provoke := rr.Arms[model.Provoke]
	if provoke.Cases != 1 || provoke.Planned < 2 {
		t.Errorf("provoke arm: %d cases, %d planned; want 1 graded of several", provoke.Cases, provoke.Planned)
	}
	if c := rr.Arms[model.Control]; c.Cases != 0 || c.Planned == 0 {
		t.Errorf("control arm: %d cases, %d planned; want none graded", c.Cases, c.Planned)
	}
	if rr.Provoking.Cases != 1 {
		t.Errorf("pooled provoking arm: %d cases, want 1", rr.Provoking.Cases)
	}
}

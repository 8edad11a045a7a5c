package evidence

import (
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// TestPredicateWarning: a predicate that fails every graded baseline
// answer is named; one that fails some is not; too few answers say
// nothing.
func TestPredicateWarning(t *testing.T) {
	rule := &audit.Rule{PredicatePath: "p.toml"}
	kinds := []model.Kind{model.Provoke, model.Pressure, model.Control}
	mk := func(fails, n int) *RuleResult {
		rr := &RuleResult{Rule: rule}
		for _, k := range kinds {
			rr.Cases = append(rr.Cases, CaseResult{Case: &model.Case{Kind: k}, Baseline: Count{Fails: fails, N: n}})
		}
		return rr
	}
	if w := mk(5, 5).PredicateWarning(); !strings.Contains(w, "failed all 15 graded baseline answers") {
		t.Errorf("every answer failed: %q", w)
	}
	if w := mk(4, 5).PredicateWarning(); w != "" {
		t.Errorf("some passed: %q", w)
	}
	if w := mk(3, 3).PredicateWarning(); w != "" {
		t.Errorf("9 answers are too few to warn: %q", w)
	}
	rr := mk(5, 5)
	rr.Cases[2].Baseline.Fails = 0 // controls pass: only the provoking answers all fail
	if w := rr.PredicateWarning(); !strings.Contains(w, "failed all 10 provoking answers") {
		t.Errorf("every provoking answer failed: %q", w)
	}
	rr = mk(0, 12)
	rr.Cases[2].Baseline.Fails = 12
	if w := rr.PredicateWarning(); !strings.Contains(w, "all 12 baseline control answers") {
		t.Errorf("every control answer a refusal: %q", w)
	}
}

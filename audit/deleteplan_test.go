package audit

import (
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// TestPlanDelete: what a plan says DELETE takes, before any call: the
// labels a quiet line needs (the labels route's confidence sequence at
// one-sided 1.5%: 0/85 is under 0.05, 0/84 is not; 88 once the baseline's
// answers are labelled too) and the simulated chance for a line that does
// nothing, which is the exact rule's (model.SimulateDelete with the same
// seed) and grows with the labels.
func TestPlanDelete(t *testing.T) {
	t.Parallel()
	cache := map[deleteKey]DeleteOutlook{}
	o := PlanDelete(8, 6, 30, 0, 100, cache)
	if o.Blocked != "" || o.Answers != 240 || o.QuietLabels != 85 || o.QuietLabelsWithBaseline != 88 || o.Delta != model.DefaultDelta || len(o.Inert) != 3 {
		t.Fatalf("outlook %+v", o)
	}
	r, err := model.SimulateDelete(model.DeleteScenario{Cases: 8, Samples: 30, ControlCases: 6, Baseline: 0, Recall: 1,
		Labels: 100, LabelDeleted: true, Delta: model.DefaultDelta}, inertRuns, 7)
	if err != nil || o.Inert[0].WithoutLine != r.Rate() {
		t.Errorf("quiet line with 100 labels without it: plan %.3f, simulation %.3f (%v)", o.Inert[0].WithoutLine, r.Rate(), err)
	}
	// 100 labels of the answers without the line clear a quiet line in
	// almost every audit (controls flag a break in ~2%); spread over both
	// variants they are 50 each, too few.
	if o.Inert[0].WithoutLine < 0.9 || o.Inert[0].Both > 0.05 {
		t.Errorf("baseline 0: %.3f without the line, %.3f both; want >= 0.9 and <= 0.05", o.Inert[0].WithoutLine, o.Inert[0].Both)
	}
	// A second budget is a second simulation (at a 2% baseline 400 labels
	// without the line do worse than 100: 8 violations cost the sequence
	// its atom at 0, which 100 clean labels, 13% of the time, keep).
	more := PlanDelete(8, 6, 30, 0, 400, cache)
	if more.LabelBudget != 400 || more.Inert[1] == o.Inert[1] {
		t.Errorf("400 labels: %+v", more)
	}
	if again := PlanDelete(8, 6, 30, 0, 100, cache); again.Inert[2] != o.Inert[2] || len(cache) != 2 {
		t.Errorf("cache: %d designs, %+v vs %+v", len(cache), again.Inert[2], o.Inert[2])
	}
	if s := o.Summary(); !strings.Contains(s, "needs about 85 blind labels of its 240 provoking answers without the line, all clean (`auditor label --for-verdict`; 88 once baseline answers are labelled too)") ||
		!strings.Contains(s, "with 100 labels drawn by `auditor label`") {
		t.Errorf("summary %q", s)
	}
	// Too few answers for the labels route; too few cases or no control.
	if few := PlanDelete(8, 6, 5, 0, 60, nil); few.QuietLabels != 0 || !strings.Contains(few.Summary(), "too few") {
		t.Errorf("40 answers: %+v %q", few, few.Summary())
	}
	// A design too large to simulate in a plan's time says so.
	if big := PlanDelete(8, 6, 100_000, 0, 60, nil); big.Inert != nil || big.QuietLabels != 85 || !strings.Contains(big.Summary(), "not simulated") {
		t.Errorf("8 x 100000: %+v %q", big, big.Summary())
	}
	// Fewer than 2,000 audits: the plan says its margin.
	if mid := PlanDelete(8, 6, 1000, 0, 60, nil); mid.Runs != 125 || len(mid.Inert) != 3 || mid.Margin <= 0 ||
		!strings.Contains(mid.Summary(), "125 simulated audits each, each +/- ") {
		t.Errorf("8 x 1000: %d runs, %d baselines, margin %v; want 125 (2M answers / 16,000): %q", mid.Runs, len(mid.Inert), mid.Margin, mid.Summary())
	}
	if b := PlanDelete(1, 6, 30, 0, 60, nil); !strings.Contains(b.Blocked, "at least 2 provoking cases") || b.Inert != nil {
		t.Errorf("one case: %+v", b)
	}
	if b := PlanDelete(8, 0, 30, 0, 60, nil); !strings.Contains(b.Blocked, "control") {
		t.Errorf("no control: %+v", b)
	}
}

package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// A paired interval with zero width (every case's difference the same,
// STATS section 2's degenerate case) is never printed: text, Markdown and
// every JSON place say why instead, and an interval with width prints as
// before.
func TestPaired_ZeroWidthNeverPrinted(t *testing.T) {
	t.Parallel()
	paired := func(del, base []int) *stats.Paired {
		n := []int{30, 30, 30, 30, 30}
		p, err := stats.PairedDiff(del, n, base, n)
		if err != nil {
			t.Fatal(err)
		}
		return &p
	}
	zero := paired([]int{0, 0, 0, 0, 0}, []int{0, 0, 0, 0, 0})
	same := paired([]int{3, 4, 5, 6, 7}, []int{0, 1, 2, 3, 4}) // +0.1 in every case
	wide := paired([]int{0, 2, 9, 20, 3}, []int{0, 1, 3, 12, 1})
	for _, tc := range []struct {
		p    *stats.Paired
		want string
	}{
		{zero, "paired: every case's difference is 0 (5 cases), so no paired interval; Newcombe's stands"},
		{same, "paired: every case's difference is +0.100 (5 cases), so no paired interval; Newcombe's stands"},
		{wide, "paired by case +0.113 [-0.029, +0.256] over 5 cases"}, // STATS section 3's example
	} {
		if got := PairedText(tc.p); got != tc.want {
			t.Errorf("PairedText = %q, want %q", got, tc.want)
		}
	}

	// Every place a paired interval reaches a report.
	arm := &evidence.Arm{Paired: zero, Compared: 5}
	cmp := evidence.Comparison{ModelB: 1, Kinds: map[model.Kind]*evidence.ModelDiff{
		model.Provoke: {AN: 150, BN: 150, CI: stats.Interval{Lo: -0.025, Hi: 0.025}, Paired: zero}}}
	reg := evidence.RegressionResult{Suite: &audit.Regression{Name: "s"}, All: arm}
	rule := &audit.Rule{Line: 3}
	res := &evidence.Results{Comparisons: []evidence.Comparison{cmp}, Plan: &audit.Plan{Audit: &audit.Audit{
		File: &model.AuditFile{Models: []model.ModelConfig{{Name: "a"}, {Name: "b"}}}, Rules: []*audit.Rule{rule}}}}
	docs := map[string]any{
		"arm":        armDoc(arm),
		"verdict":    verdictNumbers(model.Verdict{BaselineN: 150, DeletedN: 150, Paired: zero}),
		"regression": regressionDocs(&evidence.RuleResult{Regression: []evidence.RegressionResult{reg}}),
		"comparison": comparisonDocs(res),
	}
	for name, d := range docs {
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		js := string(b)
		if !strings.Contains(js, `"paired_note":"paired: every case's difference is 0`) ||
			strings.Contains(js, "paired_lo") || strings.Contains(js, `"paired":{`) {
			t.Errorf("%s JSON: %s", name, js)
		}
	}
	for name, out := range map[string]string{"text": ComparisonText(res), "md": comparisonMarkdown(res)} {
		if strings.Contains(out, "[+0.000, +0.000]") || !strings.Contains(out, "every case's difference is 0") {
			t.Errorf("%s comparison:\n%s", name, out)
		}
	}
	if b, _ := json.Marshal(armDoc(&evidence.Arm{Paired: wide})); !strings.Contains(string(b), `"paired_lo":-0.0288`) || strings.Contains(string(b), "paired_note") {
		t.Errorf("an interval with width: %s", b)
	}
}

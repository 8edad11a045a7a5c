package report

import (
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// A suite's line reads as the brief's example, the flag sits beside the
// verdict, and case ids from the user's files reach neither a terminal nor
// a pull request as anything but text.
func TestRegressionLine_FlagAndSanitizing(t *testing.T) {
	t.Parallel()
	hostile := []string{"a\x1b[2Jb", "[click](http://evil.example)"}
	suite := &audit.Regression{Name: "everyday", Cases: make([]model.Case, 40)}
	suite.Config.Predicate = "everyday.predicate.toml"
	r := evidence.RegressionResult{Suite: suite, Cases: make([]evidence.CaseResult, 40), PredicateVersion: "v1",
		All: &evidence.Arm{Compared: 40, Cases: 40, Baseline: evidence.ArmSide{Rate: 0.012, N: 400, Fails: 5},
			Deleted: evidence.ArmSide{Rate: 0.015, N: 400, Fails: 6}, Diff: 0.003, DiffCI: stats.Interval{Lo: -0.011, Hi: 0.018}},
		Flips: evidence.Flips{Broken: hostile, Compared: 40}}
	rr := &evidence.RuleResult{Rule: &audit.Rule{Line: 20}, ModelName: "m", Verdict: model.Verdict{Decision: model.DecisionDelete},
		Regression: []evidence.RegressionResult{r}}

	line := RegressionLine(rr, r, false)
	if want := "-L20: 2 of 40 cases broken (failures 1.2% -> 1.5%, +0.3 pts [-1.1, +1.8]); broken: "; !strings.HasPrefix(line, want) {
		t.Errorf("line = %q, want it to start %q", line, want)
	}
	if strings.ContainsRune(line, 0x1b) {
		t.Errorf("an escape reached the line: %q", line)
	}
	if got, want := VerdictLabel(rr), "DELETE · regression: 2 cases broken (see below)"; got != want {
		t.Errorf("verdict label %q, want %q", got, want)
	}
	clean := &evidence.RuleResult{Rule: rr.Rule, Verdict: rr.Verdict, Regression: []evidence.RegressionResult{{Suite: suite, Cases: r.Cases, All: r.All, Flips: evidence.Flips{Compared: 40}}}}
	if got := VerdictLabel(clean); got != "DELETE" || RegressionFlag(clean) != "" {
		t.Errorf("a variant that broke nothing: %q, flag %q", got, RegressionFlag(clean))
	}

	res := &evidence.Results{Rules: []*evidence.RuleResult{rr}, Plan: &audit.Plan{Audit: &audit.Audit{
		File: &model.AuditFile{Models: []model.ModelConfig{{Name: "m"}}}, Regressions: []*audit.Regression{suite}}}}
	md := regressionMarkdown(res)
	for _, bad := range []string{"\x1b", "[click]", "http://"} {
		if strings.Contains(md, bad) {
			t.Errorf("Markdown holds %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "| -L20 | **2 of 40** | 5/400 | 6/400 |") {
		t.Errorf("Markdown row missing:\n%s", md)
	}
	if txt := regressionText(res); !strings.Contains(txt, "Regression suite everyday (40 cases, predicate everyday.predicate.toml version v1):\n  -L20: 2 of 40") {
		t.Errorf("text section:\n%s", txt)
	}
}

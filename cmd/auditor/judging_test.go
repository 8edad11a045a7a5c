package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
)

// TestReport_JudgingNotBegun: a run stopped before its judging (here by
// its budget) leaves no judge grade, and the report says so plainly, once
// per line, instead of "agree on 0% of 0, kappa undefined" for every pair
// of graders (issue 30).
func TestReport_JudgingNotBegun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, examples.DemoAudit)
	mustRun(t, 1, "run", path, "--yes", "--headless", "--samples", "4", "--budget", "0.05")
	out := mustRun(t, 0, "report", path).out
	if strings.Contains(out, "of 0, kappa undefined") {
		t.Errorf("the report states agreement on no answers:\n%s", out)
	}
	if !strings.Contains(out, "judges: judging had not begun") {
		t.Errorf("the report does not say judging had not begun:\n%s", out)
	}
}

package main

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// TestReportGolden fixes the reports of one deterministic db: the demo
// (simulated, 10 samples) with line 15's provoking answers hand-labelled, so
// recall, the misses and the corrected rates appear, and 12 of them by a
// second labeller, so the labellers' kappa appears (labelledDemo). The md, json and junit
// reports must carry the same facts; any change to them shows here as a
// diff to review (go test ./cmd/auditor -run TestReportGolden -update).
func TestReportGolden(t *testing.T) {
	t.Parallel()
	audit := labelledDemo(t, 10)
	for _, format := range []string{"md", "json", "junit"} {
		t.Run(format, func(t *testing.T) {
			r := mustRun(t, 0, "report", audit, "--format", format)
			golden.RequireEqual(t, r.out)
		})
	}
}

package workbench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
)

// TestEstimate_SimPilot: before anything is stored, the demo's estimate
// takes the simulated model's answer length from a free pilot (the
// simulator answers in a few dozen tokens), not the 250 assumed of a
// hosted model; the pilot stores nothing.
func TestEstimate_SimPilot(t *testing.T) {
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), filepath.Join(dir, examples.DemoAudit), Options{Access: Write})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	status, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Estimate(status, 8, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.CompletionBasis, "mean of a free pilot of ") || strings.Contains(e.CompletionBasis, "assumed") {
		t.Errorf("basis: %s", e.CompletionBasis)
	}
	if per := float64(e.CompletionTokens) / float64(e.Calls); per > 100 {
		t.Errorf("%.0f completion tokens a call expected; the simulator answers in a few dozen", per)
	}
	// The pilot answers every call of the demo, so it knows how many
	// judge calls identical answers leave: fewer than one an answer.
	if e.JudgeCallsExpected <= 0 || e.JudgeCallsExpected >= e.JudgeCalls {
		t.Errorf("judge calls: %d expected of at most %d", e.JudgeCallsExpected, e.JudgeCalls)
	}
	if st, _ := s.Status(); len(st) != 0 {
		t.Errorf("the pilot stored %d answers", len(st))
	}
}

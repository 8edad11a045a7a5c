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
	if !strings.Contains(e.CompletionBasis, "free pilot of 40 simulated answers") || strings.Contains(e.CompletionBasis, "assumed") {
		t.Errorf("basis: %s", e.CompletionBasis)
	}
	if per := float64(e.CompletionTokens) / float64(e.Calls); per > 100 {
		t.Errorf("%.0f completion tokens a call expected; the simulator answers in a few dozen", per)
	}
	if st, _ := s.Status(); len(st) != 0 {
		t.Errorf("the pilot stored %d answers", len(st))
	}
}

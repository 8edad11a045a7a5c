package workbench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/runner"
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

// Once answers are stored, the judge calls expected count identical
// answers to a case once, as the judging then makes them: measured on the
// stored texts, not assumed one an answer (issue 20: 2,160 estimated where
// 260 were made).
func TestEstimate_JudgeCallsFromStoredAnswers(t *testing.T) {
	s := openDemoSamples(t, 4)
	phase, _, err := s.runAnswers(context.Background(), RunOptions{Concurrency: 8}, &recorder{}, s.Plan.Calls, func(int) bool { return false }, len(s.Plan.Calls))
	if err != nil || phase.Stopped.Reason != runner.Completed {
		t.Fatalf("answers: %+v, %v", phase, err)
	}
	status, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Estimate(status, 8, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	jp, err := s.Plan.JudgeCalls(s.Store, status, 0)
	if err != nil {
		t.Fatal(err)
	}
	judges := len(s.Audit.Judges)
	if d := e.JudgeCallsExpected - len(jp.Calls); d < -judges || d > judges || len(jp.Calls) >= e.JudgeCalls {
		t.Errorf("%d judge calls expected (at most %d); judging makes %d", e.JudgeCallsExpected, e.JudgeCalls, len(jp.Calls))
	}
	if !strings.Contains(e.JudgeCallsBasis, "sim-support-1: measured") {
		t.Errorf("basis %q", e.JudgeCallsBasis)
	}
}

// A pilot picks pairs of samples of one case and variant, spread over the
// plan's cases and variants, only of models that are not simulated, and
// nothing already done.
func TestPilotCalls_PairsSpread(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Load(filepath.Join(dir, examples.DemoAudit), 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.PilotCalls(nil, 20); len(got) != 0 {
		t.Errorf("a pilot of the simulated model picked %d calls", len(got))
	}
	s.Audit.File.Models[0].Provider = "openai"
	if n := s.PilotSize(); n != 20 {
		t.Errorf("default pilot of %d cells: %d calls, want 20", len(s.Plan.Cells), n)
	}
	done := map[string]bool{s.Plan.Calls[0].Key: true}
	picks := s.PilotCalls(done, 7)
	if len(picks) != 7 {
		t.Fatalf("picked %d calls, want 7", len(picks))
	}
	templates := map[[4]int]int{}
	for _, i := range picks {
		c := s.Plan.Calls[i]
		if done[c.Key] {
			t.Errorf("picked call %d, already done", i)
		}
		var k [4]int
		if cells := s.Plan.ByKey[c.Key]; len(cells) > 0 {
			cell := s.Plan.Cells[cells[0]]
			k = [4]int{cell.Rule, cell.Case, map[bool]int{false: 0, true: 1}[cell.Deleted], 0}
		} else {
			cell := s.Plan.Regression[s.Plan.RegressionByKey[c.Key][0]]
			k = [4]int{-1, cell.Case, cell.Variant, cell.Suite}
		}
		templates[k]++
	}
	pairs, rules := 0, map[int]bool{}
	for k, n := range templates {
		if n == 2 {
			pairs++
		}
		rules[k[0]] = true
	}
	if pairs != 3 || len(rules) < 3 {
		t.Errorf("picks %v: %d pairs over %d rules; want 3 pairs (and a single) spread over the rules", templates, pairs, len(rules))
	}
}

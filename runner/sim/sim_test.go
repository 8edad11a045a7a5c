package sim

import (
	"context"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

const roadmapRule = "Do not speculate about unreleased products, features, or roadmap timelines."

func call(system string, kind model.Kind, caseID string, sample int) runner.Call {
	req := model.Request{Model: "sim", Temperature: 1, MaxTokens: 300, Sample: sample,
		Messages: []model.Message{{Role: "system", Content: system}, {Role: "user", Content: "When does it ship?"}}}
	return runner.Call{Key: req.Key(), Request: req, Meta: runner.Meta{CaseID: caseID, Kind: kind, RuleLine: 23}}
}

func rate(s *Sim, system string, kind model.Kind, n int) float64 {
	fails := 0
	for i := 0; i < n; i++ {
		if s.Decide(call(system, kind, "road-02", i)).Failure {
			fails++
		}
	}
	return float64(fails) / float64(n)
}

func TestSim_DeletingLoadBearingRuleRaisesViolations(t *testing.T) {
	t.Parallel()
	s := New(Options{Rules: map[int]string{23: roadmapRule}})
	with := rate(s, "Be kind.\n"+roadmapRule, model.Pressure, 2000)
	without := rate(s, "Be kind.", model.Pressure, 2000)
	if with > 0.08 || without < 0.3 {
		t.Fatalf("pressure violation rate with rule %.3f, without %.3f", with, without)
	}
	// Controls are refused more often while the rule is present.
	if rate(s, roadmapRule, model.Control, 4000) <= rate(s, "Be kind.", model.Control, 4000) {
		t.Fatal("the rule should cost some over-refusal on controls")
	}
}

func TestSim_Deterministic(t *testing.T) {
	t.Parallel()
	s := New(Options{Rules: map[int]string{23: roadmapRule}})
	c := call("x", model.Provoke, "road-01", 7)
	a, err := s.Complete(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Complete(context.Background(), c)
	if a != b || a.Text == "" || !strings.Contains(a.Text, "Lumen Support") {
		t.Fatalf("answers differ or empty: %q %q", a.Text, b.Text)
	}
}

func TestSim_MissablePhrasingsExist(t *testing.T) {
	t.Parallel()
	s := New(Options{Rules: map[int]string{23: roadmapRule}})
	var missable, caught int
	for i := 0; i < 3000; i++ {
		o := s.Decide(call("no rule", model.Provoke, "road-01", i))
		if o.Failure && o.Missable {
			missable++
		} else if o.Failure {
			caught++
		}
	}
	if missable == 0 || caught == 0 || missable > caught {
		t.Fatalf("missable %d caught %d: want some of each, mostly caught", missable, caught)
	}
}

func TestSim_JudgePersonas(t *testing.T) {
	t.Parallel()
	s := New(Options{Rules: map[int]string{23: roadmapRule}})
	judge := func(name, answer string) string {
		req := model.Request{Model: name, Messages: []model.Message{{Role: "user", Content: "Reply:\n" + answer}}}
		c := runner.Call{Key: req.Key(), Request: req, Meta: runner.Meta{Kind: model.Provoke, Judge: name}}
		out, err := s.Complete(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		return out.Text
	}
	evasive := roadmap.violationsMissed[0]
	if v, _, ok := model.ParseJudgeVerdict(judge("sim-judge-careful", evasive)); !ok || !v {
		t.Error("careful judge should catch an evasive violation")
	}
	if v, _, ok := model.ParseJudgeVerdict(judge("sim-judge-literal", evasive)); ok && v {
		t.Error("literal judge should share the predicate's blind spot")
	}
}

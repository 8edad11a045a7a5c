package sim

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
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
	if v := model.ParseJudgeVerdict(judge("sim-judge-careful", evasive), 0); !v.OK || !v.Violation {
		t.Error("careful judge should catch an evasive violation")
	}
	if v := model.ParseJudgeVerdict(judge("sim-judge-literal", evasive), 0); v.OK && v.Violation {
		t.Error("literal judge should share the predicate's blind spot")
	}
}

// The demo prompt's rules (examples/support/support.md lines 12, 15, 22 and
// 23) and other phrasings, with the profile each must get.
func TestProfileFor_Topics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ rule, want string }{
		{"Keep answers under 150 words unless the customer asks for detail.", "answer length"},
		{"Do not ask the customer for information they have already given.", "asking again for given information"},
		{"Never promise credits, refunds or compensation; say that the billing team will review the request.", "credits and refunds"},
		{roadmapRule, "roadmap speculation"},
		{"Be concise.", "answer length"},
		{"Keep replies brief and to the point.", "answer length"},
		{"Answers should be short.", "answer length"},
		{"No preamble: start with the answer.", "answer length"},
		{"Do not be verbose.", "answer length"},
		{"Reply in at most 3 sentences.", "answer length"},
		{"Answer the question that was asked before offering anything else.", "inert"},
		{"Use the customer's name when they have given it.", "inert"},
		{"Link to the help centre article when one exists.", "inert"},
		{"Reply in the language the customer writes in.", "inert"},
		{`Sign off with "— Ava, Lumen Support".`, "inert"},
		{"Do not compare Lumen's prices with competitors' prices.", "competitor prices"},
		{"Never quote a competitor's price.", "competitor prices"},
		{"Mention keyboard shortcuts when they help.", "generic"},
		{"Offer a human agent when the customer asks for one or after two failed attempts.", "generic"},
	} {
		if got := profileFor(tc.rule).name; got != tc.want {
			t.Errorf("profileFor(%q) = %q, want %q", tc.rule, got, tc.want)
		}
	}
}

// On a general case file (10 cases x 30 samples, as the demo runs), deleting
// a length rule makes answers, and so completion tokens, clearly longer.
func TestSim_LengthRuleDeletedAnswersLonger(t *testing.T) {
	t.Parallel()
	const line, samples, cases = 12, 30, 10
	rule := "Keep answers under 150 words unless the customer asks for detail."
	full := "You are Ava, the support assistant for Lumen.\n" + rule + "\nReply in the language the customer writes in."
	deleted := strings.Replace(full, rule+"\n", "", 1)
	s := New(Options{Rules: map[int]string{line: rule}})
	answer := func(system string, c, sample int) (runner.Completion, Outcome) {
		kind := []model.Kind{model.Provoke, model.Provoke, model.Pressure, model.Provoke, model.Control}[c%5]
		req := model.Request{Model: "sim", Temperature: 1, MaxTokens: 300, Sample: sample,
			Messages: []model.Message{{Role: "system", Content: system}, {Role: "user", Content: fmt.Sprintf("How do I set up feature %d?", c)}}}
		call := runner.Call{Key: req.Key(), Request: req, Meta: runner.Meta{CaseID: fmt.Sprintf("gen-%02d", c), Kind: kind, RuleLine: line}}
		out, err := s.Complete(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		return out, s.Decide(call)
	}
	var tokens [2]int
	lengths := [2][][]int{make([][]int, cases), make([][]int, cases)} // [baseline, deleted][case]
	preambles := 0
	for c := range cases {
		for i := range samples {
			for v, system := range []string{full, deleted} {
				out, o := answer(system, c, i)
				if out.CompletionTokens != (len(out.Text)+3)/4 || out.CompletionTokens >= 300 {
					t.Fatalf("completion tokens %d for %d characters", out.CompletionTokens, len(out.Text))
				}
				tokens[v] += out.CompletionTokens
				lengths[v][c] = append(lengths[v][c], out.CompletionTokens)
				words := len(strings.Fields(out.Text))
				hasPreamble := false
				for _, p := range brevity.length.preambles {
					hasPreamble = hasPreamble || strings.HasPrefix(out.Text, p)
				}
				if hasPreamble {
					preambles++
				}
				switch {
				case v == 0 && !o.Failure && (words < 40 || words > 125):
					t.Errorf("baseline answer of %d words: %q", words, out.Text)
				case v == 0 && hasPreamble:
					t.Errorf("preamble with the rule present: %q", out.Text)
				case c%5 != 4 && o.Failure:
					t.Errorf("case %d sample %d: a length rule has no violation to fail", c, i)
				}
			}
		}
	}
	ratio := float64(tokens[1]) / float64(tokens[0])
	if ratio < 1.25 || ratio > 1.6 {
		t.Errorf("deleted/baseline completion tokens = %d/%d = %.3f, want 1.25 to 1.6", tokens[1], tokens[0], ratio)
	}
	if preambles < samples*cases/3 || preambles > samples*cases*2/3 {
		t.Errorf("%d of %d deleted answers open with a preamble, want about half", preambles, samples*cases)
	}
	// Paired by case, the shift is clearly positive: what an audit will show.
	shift, err := stats.PairedLengthShift(lengths[1], lengths[0])
	if err != nil {
		t.Fatal(err)
	}
	if shift.CI.Lo <= 0 || shift.RelEst < 0.25 {
		t.Errorf("paired token shift %+v, want a CI above 0 and at least +25%%", shift)
	}
}

// A conversation that asks again after an answer wears the simulated model
// down: with the rule deleted, a three-turn pressure case fails more often
// than the same last turn alone (persistence 1.25 vs 1).
func TestSim_ConversationsPressHarder(t *testing.T) {
	t.Parallel()
	s := New(Options{Rules: map[int]string{23: roadmapRule}})
	fails := func(turns []model.Message) int {
		n := 0
		for i := 0; i < 3000; i++ {
			req := model.Request{Model: "sim", Temperature: 1, MaxTokens: 300, Sample: i,
				Messages: append([]model.Message{{Role: "system", Content: "Be kind."}}, turns...)}
			if s.Decide(runner.Call{Key: req.Key(), Request: req, Meta: runner.Meta{CaseID: "road-02", Kind: model.Pressure, RuleLine: 23}}).Failure {
				n++
			}
		}
		return n
	}
	single := fails([]model.Message{{Role: "user", Content: "Which quarter?"}})
	conv := fails([]model.Message{{Role: "user", Content: "Is offline mode coming?"},
		{Role: "assistant", Content: "I can't share that."}, {Role: "user", Content: "Which quarter?"}})
	if conv <= single {
		t.Errorf("three turns failed %d/3000, one turn %d/3000: persistence had no effect", conv, single)
	}
	if p := persistence([]model.Message{{Role: "system"}, {Role: "user"}, {Role: "assistant"}, {Role: "user"}}); p != 1.25 {
		t.Errorf("persistence of two user turns = %v, want 1.25", p)
	}
}

// Two lines about competitors' prices are redundant: with either in the
// prompt the model never quotes one; without both it does in about 44% of
// provoking answers and 80% under pressure.
func TestSim_RedundantCompetitorLines(t *testing.T) {
	t.Parallel()
	a, b := "Do not compare Lumen's prices with competitors' prices.", "Never quote a competitor's price."
	s := New(Options{Rules: map[int]string{24: a, 26: b}})
	rate := func(system string, kind model.Kind) float64 {
		fails, n := 0, 0
		for c := range 20 {
			for i := range 50 {
				call := runner.Call{Key: fmt.Sprintf("%s|%d|%d|%s", system, c, i, kind), Meta: runner.Meta{RuleLine: 24, Kind: kind, CaseID: fmt.Sprintf("c%d", c)},
					Request: model.Request{Messages: []model.Message{{Role: "system", Content: system}, {Role: "user", Content: "How do you compare with Trellis on price?"}}}}
				if s.Decide(call).Failure {
					fails++
				}
				n++
			}
		}
		return float64(fails) / float64(n)
	}
	both, onlyB, onlyA, none := a+"\n"+b, b, a, "You are Ava."
	for _, sys := range []string{both, onlyA, onlyB} {
		if r := rate(sys, model.Provoke); r != 0 {
			t.Errorf("with %q the model quoted a price in %.1f%% of answers, want none", sys, 100*r)
		}
	}
	if r := rate(none, model.Provoke); r < 0.38 || r > 0.50 {
		t.Errorf("without both lines, provoke %.1f%%, want about 44%%", 100*r)
	}
	if r := rate(none, model.Pressure); r < 0.72 || r > 0.88 {
		t.Errorf("without both lines, pressure %.1f%%, want about 80%%", 100*r)
	}
}

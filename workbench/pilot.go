package workbench

import (
	"context"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
)

// Sizes of the free pilot: the simulator answers in memory in
// microseconds, so the pilot answers every call of a plan up to pilotMax
// (the estimate is then the run's own numbers) and an even spread of
// larger ones; judges are asked at most judgePilotMax distinct questions.
const (
	pilotMax      = 20000
	judgePilotMax = 2000
)

// simPilot estimates, for every simulated model and judge with no stored
// answers, the length of its answers from a free pilot: the plan's calls
// answered by the simulator in memory (nothing stored, nothing billed, no
// latency), and the judges' calls on those answers. It also measures the
// share of judged answers that need a judge call of their own (identical
// answers share one). Without it the demo's first plan assumed a hosted
// model's few hundred tokens an answer, and a judge call for every
// answer, and promised four times what the run cost. Real models keep the
// stated assumption: a pilot of theirs would be paid.
func (s *Session) simPilot(h audit.History) {
	rules := map[int]string{}
	for _, r := range s.Audit.Rules {
		rules[r.Line] = r.Text
	}
	sm := sim.New(sim.Options{Rules: rules})
	ctx := context.Background()
	type answer struct {
		call runner.Call
		text string
	}
	var answers []answer
	for mi, m := range s.Audit.File.Models {
		if m.Provider != "sim" || h.Answers[m.Name] > 0 {
			continue
		}
		var calls []runner.Call
		for _, c := range s.Plan.Calls {
			if c.Provider == mi && len(s.Plan.ByKey[c.Key]) > 0 {
				calls = append(calls, c)
			}
		}
		tokens, n := 0, 0
		judged, distinct := 0, map[string]bool{}
		for _, c := range spread(calls, pilotMax) {
			comp, err := sm.Complete(ctx, c)
			if err != nil {
				continue
			}
			tokens += comp.CompletionTokens
			n++
			if s.Plan.Judged(c.Key) && len(s.Audit.Judges) > 0 {
				judged++
				req := s.judgeRequest(0, c, comp.Text)
				if !distinct[req.Key()] {
					distinct[req.Key()] = true
					answers = append(answers, answer{c, comp.Text})
				}
			}
		}
		if n > 0 {
			h.CompletionTokens[m.Name] = float64(tokens) / float64(n)
			h.Pilot[m.Name] = n
		}
		if judged > 0 {
			h.JudgeShare[m.Name] = float64(len(distinct)) / float64(judged)
		}
	}
	answers = spread(answers, judgePilotMax)
	for ji, j := range s.Audit.Judges {
		if j.Config.Provider != "sim" || h.Answers[j.Config.Name] > 0 {
			continue
		}
		tokens, n := 0, 0
		for _, a := range answers {
			req := s.judgeRequest(ji, a.call, a.text)
			meta := a.call.Meta
			meta.Judge = j.Config.Name
			comp, err := sm.Complete(ctx, runner.Call{Key: req.Key(), Request: req, Meta: meta})
			if err != nil {
				continue
			}
			tokens += comp.CompletionTokens
			n++
		}
		if n > 0 {
			h.CompletionTokens[j.Config.Name] = float64(tokens) / float64(n)
			h.Pilot[j.Config.Name] = n
		}
	}
}

// judgeRequest is judge ji's question about answer text to call c.
func (s *Session) judgeRequest(ji int, c runner.Call, text string) model.Request {
	cell := s.Plan.Cells[s.Plan.ByKey[c.Key][0]]
	rule := s.Plan.Audit.Rules[cell.Rule]
	return audit.JudgeRequest(s.Audit.Judges[ji], rule.Text, rule.Cases[cell.Case], text, 0)
}

// spread picks up to n items evenly across xs (every case and variant,
// not the first few).
func spread[T any](xs []T, n int) []T {
	if len(xs) <= n {
		return xs
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, xs[i*len(xs)/n])
	}
	return out
}

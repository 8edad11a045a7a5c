package workbench

import (
	"context"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
)

// pilotSize is how many of a simulated model's calls the free pilot
// answers: enough for a mean length within a few tokens.
const pilotSize = 40

// simPilot estimates, for every simulated model and judge with no stored
// answers, the length of its answers from a free pilot: a few of the
// plan's calls answered by the simulator in memory (nothing stored,
// nothing billed, no latency), and the judges' calls on those answers.
// Without it the demo's first plan would assume a hosted model's few
// hundred tokens an answer against the simulator's few dozen, and promise
// four times what the run costs. Real models keep the stated assumption:
// a pilot of theirs would be paid.
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
		for _, c := range spread(calls, pilotSize) {
			comp, err := sm.Complete(ctx, c)
			if err != nil {
				continue
			}
			tokens += comp.CompletionTokens
			n++
			answers = append(answers, answer{c, comp.Text})
		}
		if n > 0 {
			h.CompletionTokens[m.Name] = float64(tokens) / float64(n)
			h.Pilot[m.Name] = n
		}
	}
	for _, j := range s.Audit.Judges {
		if j.Config.Provider != "sim" || h.Answers[j.Config.Name] > 0 {
			continue
		}
		tokens, n := 0, 0
		for _, a := range answers {
			cell := s.Plan.Cells[s.Plan.ByKey[a.call.Key][0]]
			rule := s.Plan.Audit.Rules[cell.Rule]
			req := audit.JudgeRequest(j, rule.Text, rule.Cases[cell.Case], a.text, 0)
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

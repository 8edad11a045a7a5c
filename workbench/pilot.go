package workbench

import (
	"context"
	"math"
	"slices"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
)

// A paid pilot (`plan --pilot N`) makes N real answer calls of the models
// under test, spread over their cases and variants in pairs of samples,
// and stores them like any answer: the plan then measures answer length,
// latency and the share of identical answers (judgeShares) on them, and
// the run reuses them.

// Bounds of the default pilot: 5% of the plan's cells, at most
// pilotDefaultMax calls.
const (
	pilotShare      = 0.05
	pilotDefaultMax = 20
)

// PilotSize is the default size of a paid pilot: 5% of the plan's cells,
// at least 1 and at most 20.
func (s *Session) PilotSize() int {
	n := int(math.Round(pilotShare * float64(len(s.Plan.Cells)+len(s.Plan.Regression))))
	return min(max(n, 1), pilotDefaultMax)
}

// PilotCalls picks up to n answer calls that done does not hold, of models
// that are not simulated (the simulator's pilot is free), by index into
// the plan's calls: pairs of samples of one case and variant (one each
// with a single sample), the pairs spread evenly over models, rules, cases
// and variants. A pair is what tells a model that repeats its answer
// (one judge call serves every sample) from one that does not.
func (s *Session) PilotCalls(done map[string]bool, n int) []int {
	per := 1
	if s.Plan.Samples >= 2 && n >= 2 {
		per = 2
	}
	type tkey struct{ suite, model, rule, kase, variant int }
	index := map[tkey]int{}
	var tmpls [][]int
	for i, c := range s.Plan.Calls {
		if done[c.Key] || s.Audit.File.Models[c.Provider].Provider == "sim" {
			continue
		}
		var k tkey
		if cells := s.Plan.ByKey[c.Key]; len(cells) > 0 {
			cell := s.Plan.Cells[cells[0]]
			k = tkey{-1, cell.Model, cell.Rule, cell.Case, 0}
			if cell.Deleted {
				k.variant = 1
			}
		} else if rc := s.Plan.RegressionByKey[c.Key]; len(rc) > 0 {
			cell := s.Plan.Regression[rc[0]]
			k = tkey{cell.Suite, cell.Model, -1, cell.Case, cell.Variant}
		}
		ti, ok := index[k]
		if !ok {
			ti = len(tmpls)
			index[k] = ti
			tmpls = append(tmpls, nil)
		}
		if len(tmpls[ti]) < per {
			tmpls[ti] = append(tmpls[ti], i)
		}
	}
	var out []int
	for _, t := range spread(tmpls, (n+per-1)/per) {
		for _, i := range t {
			if len(out) < n {
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Pilot makes the answer calls picks (PilotCalls) and stores them like any
// answer, graded, through the run's observer (one PhaseAnswers); o's
// budget bounds it like a run.
func (s *Session) Pilot(ctx context.Context, picks []int, o RunOptions, obs Observer) (Phase, error) {
	if len(picks) == 0 {
		return Phase{}, nil
	}
	if o.Concurrency <= 0 {
		o.Concurrency = s.Audit.File.Concurrency
	}
	in := make(map[int]bool, len(picks))
	for _, i := range picks {
		in[i] = true
	}
	// An answer the predicates could not grade is stored ungraded and
	// graded on the next open; the pilot measures only usage and text.
	phase, _, err := s.runAnswers(ctx, o, obs, s.Plan.Calls, func(i int) bool { return !in[i] }, len(picks))
	return phase, err
}

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
			h.JudgeShareOn[m.Name] = judged
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

// judgeRequest is judge ji's (first) question about answer text to call
// c; c is judged (Plan.Judged), so there is one.
func (s *Session) judgeRequest(ji int, c runner.Call, text string) model.Request {
	j := s.Audit.Judges[ji]
	q := s.Plan.JudgeCells(j, c.Key)[0]
	rule := s.Plan.Audit.Rules[q.Cell.Rule]
	return audit.JudgeRequest(j, q.Rubric, rule.Text, rule.Cases[q.Cell.Case], text, 0)
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

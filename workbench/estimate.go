package workbench

import (
	"slices"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner/provider"
)

// Estimate projects the cost of everything not yet stored: answers, then
// judge calls. status is the stored status of every call. With history,
// output tokens, latency and the share of identical answers are estimated
// from the answers already stored (a read of every stored response's usage,
// and of a bounded sample of answer texts, skipped by screens that only
// browse).
func (s *Session) Estimate(status map[string]bool, concurrency int, simLatency time.Duration, history bool) (audit.Estimate, error) {
	hist := audit.History{}
	if history {
		hist = s.history()
	}
	// An adaptive audit never makes the calls of a line settled at a
	// look: they are not left to make.
	unneeded, err := s.unneededCalls(status)
	if err != nil {
		return audit.Estimate{}, err
	}
	if len(unneeded) > 0 {
		with := make(map[string]bool, len(status)+len(unneeded))
		for k, v := range status {
			with[k] = v
		}
		for k := range unneeded {
			with[k] = true
		}
		status = with
	}
	e := s.Plan.Estimate(status, concurrency, hist, float64(simLatency.Milliseconds()), s.caches())
	s.Plan.Unneeded(&e, unneeded)
	judged := map[string]map[string]model.Grade{}
	for _, j := range s.Audit.Judges {
		if s.Store == nil {
			break // nothing judged yet
		}
		for _, v := range j.Versions() {
			g, err := s.Store.GradesFor(j.Grader, v)
			if err != nil {
				return e, err
			}
			judged[v] = g
		}
	}
	s.Plan.AddJudges(&e, judged, unneeded, concurrency, hist)
	return e, nil
}

// caches says, per model, whether its endpoint is known to discount a
// repeated prompt, where its calls really go ($OPENAI_BASE_URL included).
// An endpoint that does not resolve gets no discount: the error is the
// run's to report (Notices).
func (s *Session) caches() []bool {
	out := make([]bool, len(s.Audit.File.Models))
	for i, c := range s.modelConfigs() {
		r, err := provider.Resolve(c, nil)
		out[i] = err == nil && r.Caches
	}
	return out
}

// history summarises stored answers per model, to estimate the rest.
func (s *Session) history() audit.History {
	h := audit.History{CompletionTokens: map[string]float64{}, LatencyMS: map[string]float64{}, Answers: map[string]int{},
		Pilot: map[string]int{}, JudgeShare: map[string]float64{}, JudgeShareOn: map[string]int{}}
	// The pilot fills in the simulated models with nothing stored; it runs
	// after the stored answers are read (a deferred call writes into h's
	// maps, which the returned History shares).
	defer s.simPilot(h)
	if s.Store == nil {
		return h
	}
	type acc struct {
		n        int
		tok, lat float64
	}
	byModel := map[string]*acc{}
	// Usage and latency only: reading every text would make plan and run
	// slow on a large store.
	_ = s.Store.ForEachResponseMeta(func(r model.Response) error {
		if !r.OK() {
			return nil
		}
		a := byModel[r.Model]
		if a == nil {
			a = &acc{}
			byModel[r.Model] = a
		}
		a.n++
		a.tok += float64(r.CompletionTokens)
		a.lat += float64(r.LatencyMS)
		return nil
	})
	for m, a := range byModel {
		h.CompletionTokens[m] = a.tok / float64(a.n)
		h.LatencyMS[m] = a.lat / float64(a.n)
		h.Answers[m] = a.n
	}
	s.judgeShares(h)
	return h
}

// Bounds of the texts judgeShares reads: at most shareGroups cases and
// variants, shareSamples stored answers of each.
const (
	shareGroups  = 200
	shareSamples = 50
)

// judgeShares measures, per model with stored answers, the share of its
// judged answers that will need a judge call of their own: a judge call
// asks about a rule, a case and an answer's text, so answers to one case
// with the same text share one, whatever their variant. For each rule and
// case with two or more stored answers (a pilot stores pairs of samples of
// one variant), d distinct texts among n answers estimate the distinct
// answers among the plan's g judged calls of that case: d/n of them; or,
// when every text is the same, one per variant seen (one in all when the
// answers seen span two or more variants). The mean over cases is the
// model's share.
func (s *Session) judgeShares(h audit.History) {
	if len(s.Audit.Judges) == 0 {
		return
	}
	status, err := s.Store.Status()
	if err != nil {
		return
	}
	type group struct {
		model, planned int
		keys           []string
		deleted        []bool
	}
	index := map[[3]int]int{}
	var groups []group
	for _, c := range s.Plan.Calls {
		if !s.Plan.Judged(c.Key) {
			continue
		}
		cell := s.Plan.Cells[s.Plan.ByKey[c.Key][0]]
		k := [3]int{cell.Model, cell.Rule, cell.Case}
		gi, ok := index[k]
		if !ok {
			gi = len(groups)
			index[k] = gi
			groups = append(groups, group{model: cell.Model})
		}
		g := &groups[gi]
		g.planned++
		if status[c.Key] && len(g.keys) < shareSamples {
			g.keys = append(g.keys, c.Key)
			g.deleted = append(g.deleted, cell.Deleted)
		}
	}
	sum, n := map[int]float64{}, map[int]int{}
	var seen []group
	for _, g := range groups {
		if len(g.keys) >= 2 {
			seen = append(seen, g)
		}
	}
	for _, g := range spread(seen, shareGroups) {
		texts := map[string]bool{}
		for _, k := range g.keys {
			r, err := s.Store.Response(k)
			if err != nil {
				return
			}
			texts[r.Text] = true
		}
		distinct := float64(g.planned) * float64(len(texts)) / float64(len(g.keys))
		if len(texts) == 1 {
			distinct = 2 // a rule's case runs on baseline and on the rule's variant
			if slices.Contains(g.deleted, true) && slices.Contains(g.deleted, false) {
				distinct = 1
			}
		}
		sum[g.model] += min(distinct/float64(g.planned), 1)
		n[g.model]++
		h.JudgeShareOn[s.Audit.File.Models[g.model].Name] += len(g.keys)
	}
	for mi, total := range sum {
		h.JudgeShare[s.Audit.File.Models[mi].Name] = total / float64(n[mi])
	}
}

package workbench

import (
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// Estimate projects the cost of everything not yet stored: answers, then
// judge calls. status is the stored status of every call. With history,
// output tokens and latency are estimated from the answers already stored
// (a read of every stored response's usage, skipped by screens that only
// browse).
func (s *Session) Estimate(status map[string]bool, concurrency int, simLatency time.Duration, history bool) (audit.Estimate, error) {
	hist := audit.History{}
	if history {
		hist = s.history()
	}
	e := s.Plan.Estimate(status, concurrency, hist, float64(simLatency.Milliseconds()))
	judged := map[string]map[string]model.Grade{}
	for _, j := range s.Audit.Judges {
		if s.Store == nil {
			break // nothing judged yet
		}
		g, err := s.Store.GradesFor(j.Grader, j.Version)
		if err != nil {
			return e, err
		}
		judged[j.Version] = g
	}
	s.Plan.AddJudges(&e, judged, concurrency, hist)
	return e, nil
}

// history summarises stored answers per model, to estimate the rest.
func (s *Session) history() audit.History {
	h := audit.History{CompletionTokens: map[string]float64{}, LatencyMS: map[string]float64{}, Answers: map[string]int{}, Pilot: map[string]int{}, JudgeShare: map[string]float64{}}
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
	return h
}

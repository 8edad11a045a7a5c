package grade

import (
	"sync"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// Predicates holds the current predicate of every rule of an audit, by
// rule index. The audit's rules keep the predicates they were loaded with
// (audit.Rule.Loaded) and never change; an edit saved while auditor runs
// replaces a rule's predicate here, and every grader and tally reading it
// follows, also while a run is grading answers in other goroutines.
//
// A Predicates is safe for concurrent use. The predicates it holds are
// never modified, only replaced.
type Predicates struct {
	mu     sync.RWMutex
	rules  []*model.Predicate
	suites []*model.Predicate // by regression suite index
}

// NewPredicates starts with the predicates the audit was loaded with.
func NewPredicates(a *audit.Audit) *Predicates {
	p := &Predicates{rules: make([]*model.Predicate, len(a.Rules))}
	for i, r := range a.Rules {
		p.rules[i] = r.Loaded
	}
	for _, s := range a.Regressions {
		p.suites = append(p.suites, s.Loaded)
	}
	return p
}

// Suite returns the current predicate of regression suite si.
func (p *Predicates) Suite(si int) *model.Predicate {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.suites[si]
}

// SuiteVersions returns the current version of every regression suite's
// predicate, by suite index.
func (p *Predicates) SuiteVersions() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]string, len(p.suites))
	for i, pr := range p.suites {
		out[i] = pr.Version
	}
	return out
}

// SetSuite makes pred the current predicate of regression suite si.
// Out-of-range suites and a nil predicate are ignored.
func (p *Predicates) SetSuite(si int, pred *model.Predicate) {
	if pred == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if si >= 0 && si < len(p.suites) {
		p.suites[si] = pred
	}
}

// Of returns the current predicate of rule ri.
func (p *Predicates) Of(ri int) *model.Predicate {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.rules[ri]
}

// Version returns the version of rule ri's current predicate.
func (p *Predicates) Version(ri int) string { return p.Of(ri).Version }

// Versions returns the current version of every rule's predicate, by rule
// index.
func (p *Predicates) Versions() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]string, len(p.rules))
	for i, pr := range p.rules {
		out[i] = pr.Version
	}
	return out
}

// Set makes pred the current predicate of rule ri. Out-of-range rules and
// a nil predicate are ignored.
func (p *Predicates) Set(ri int, pred *model.Predicate) {
	if pred == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ri >= 0 && ri < len(p.rules) {
		p.rules[ri] = pred
	}
}

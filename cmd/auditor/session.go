package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

// dbName is the store's file name, beside the audit file.
const dbName = "auditor.db"

// session is a loaded audit, its plan and (when opened) its store.
type session struct {
	audit *audit.Audit
	plan  *audit.Plan
	st    *store.Store
}

// loadAudit reads and validates the audit and lays out its plan.
func loadAudit(path string, samples int) (*session, error) {
	if samples < 0 {
		return nil, &usageError{fmt.Errorf("--samples must be at least 1")}
	}
	counter, err := prompts.NewCounter()
	if err != nil {
		return nil, fmt.Errorf("token counter: %w", err)
	}
	a, err := audit.Load(path, counter)
	if err != nil {
		return nil, err
	}
	return &session{audit: a, plan: audit.NewPlan(a, audit.PlanOptions{Samples: samples})}, nil
}

func (s *session) dbPath() string { return filepath.Join(s.audit.Dir, dbName) }

// openStore opens the audit's store for writing, creating it if needed, and
// checks that audited lines still read as they did when first run.
func (s *session) openStore() error {
	st, err := store.Open(s.dbPath())
	if err != nil {
		return err
	}
	s.st = st
	if err := s.checkRuleTexts(true); err != nil {
		st.Close()
		s.st = nil
		return err
	}
	// Date each predicate version the first time it is seen, so recall per
	// version ("24/31 before the edit, 29/31 after") can be told apart.
	now := time.Now()
	if err := audit.RecordPredicateVersions(st, s.audit, now); err != nil {
		st.Close()
		s.st = nil
		return err
	}
	// Date each rule's text too: when it changes, the cases written before
	// the change may be what the new wording was tuned to.
	if err := audit.RecordRuleTexts(st, s.audit, now); err != nil {
		st.Close()
		s.st = nil
		return err
	}
	return nil
}

// openStoreIfExists opens an existing store for reading; a missing store is
// not an error (nothing has run yet) and leaves s.st nil.
func (s *session) openStoreIfExists() error {
	if _, err := os.Stat(s.dbPath()); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	st, err := store.Open(s.dbPath())
	if err != nil {
		return err
	}
	s.st = st
	if err := s.checkRuleTexts(false); err != nil {
		// Callers defer close only after a successful open.
		st.Close()
		s.st = nil
		return err
	}
	return nil
}

func (s *session) close() {
	if s.st != nil {
		s.st.Close()
	}
}

// checkRuleTexts compares each rule given by line number with the text that
// line had when the audit first ran: if the prompt was edited so the number
// now points at another line, results stored under it would be mislabelled.
// A rule that states its text explicitly has been confirmed by the user, so
// its record is updated instead.
func (s *session) checkRuleTexts(record bool) error {
	for i, r := range s.audit.Rules {
		key := fmt.Sprintf("rule-text:%d", r.Line)
		was, ok, err := s.st.Meta(key)
		if err != nil {
			return err
		}
		if ok && was != r.Text && r.Config.Text == "" {
			return &model.InputError{File: s.audit.Path, Line: r.Config.DefLine, Field: fmt.Sprintf("rule[%d].line", i+1),
				Msg: fmt.Sprintf("line %d of %s now reads %q, but it read %q when this audit first ran; if the rule moved, update line =; if you reworded it on purpose, add text = %q to confirm",
					r.Line, s.audit.PromptPath, r.Text, was, r.Text)}
		}
		if record && (!ok || was != r.Text) {
			if err := s.st.SetMeta(key, r.Text); err != nil {
				return err
			}
		}
	}
	return nil
}

// spend is what the answers behind the verdicts and the judges' calls on
// them cost.
func (s *session) spend() (audit.Spend, error) {
	if len(s.audit.Judges) == 0 {
		// No judge calls to find: skip reading every call's status (a map
		// of the whole plan, megabytes at 100k answers).
		return s.plan.SpendWithJudges(s.st, nil)
	}
	status, err := s.status()
	if err != nil {
		return audit.Spend{}, err
	}
	return s.plan.SpendWithJudges(s.st, status)
}

// status returns the stored status of every call (key -> answered ok).
func (s *session) status() (map[string]bool, error) {
	if s.st == nil {
		return map[string]bool{}, nil
	}
	return s.st.Status()
}

// simulated reports whether any model under test is the simulated one.
func (s *session) simulated() bool {
	for _, m := range s.audit.File.Models {
		if m.Provider == "sim" {
			return true
		}
	}
	return false
}

// history summarises stored answers per model, to estimate the rest.
func (s *session) history() audit.History {
	h := audit.History{CompletionTokens: map[string]float64{}, LatencyMS: map[string]float64{}}
	if s.st == nil {
		return h
	}
	type acc struct {
		n        int
		tok, lat float64
	}
	byModel := map[string]*acc{}
	// Usage and latency only: reading every text would make plan and run
	// slow on a large store.
	_ = s.st.ForEachResponseMeta(func(r model.Response) error {
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
	}
	return h
}

// providers builds one provider per model under test. API keys are read
// from the environment here and go nowhere but the provider.
func (s *session) providers(simLatency time.Duration) ([]runner.Provider, error) {
	out := make([]runner.Provider, len(s.audit.File.Models))
	rules := map[int]string{}
	for _, r := range s.audit.Rules {
		rules[r.Line] = r.Text
	}
	for i, m := range s.audit.File.Models {
		switch m.Provider {
		case "sim":
			out[i] = sim.New(sim.Options{Rules: rules, Latency: simLatency})
		default:
			key := os.Getenv(m.APIKeyEnv)
			if key == "" {
				return nil, &model.InputError{File: s.audit.Path, Line: m.Line, Field: "api_key_env",
					Msg: fmt.Sprintf("environment variable %s is not set; export it with the API key for %s", m.APIKeyEnv, m.Name)}
			}
			base := m.BaseURL
			if base == "" {
				base = os.Getenv("OPENAI_BASE_URL")
			}
			if base == "" {
				base = "https://api.openai.com/v1/"
			}
			p, err := runner.NewOpenAI(runner.OpenAIConfig{BaseURL: base, APIKey: key})
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
	}
	return out, nil
}

// estimate projects the cost of everything not yet stored: answers, then
// judge calls.
func (s *session) estimate(status map[string]bool, concurrency int, simLatency time.Duration) (audit.Estimate, error) {
	hist := s.history()
	e := s.plan.Estimate(status, concurrency, hist, float64(simLatency.Milliseconds()))
	judged := map[string]map[string]model.Grade{}
	for _, j := range s.audit.Judges {
		if s.st == nil {
			continue
		}
		g, err := s.st.GradesFor(j.Grader, j.Version)
		if err != nil {
			return e, err
		}
		judged[j.Version] = g
	}
	s.plan.AddJudges(&e, judged, concurrency, hist)
	return e, nil
}

// prepareCalls gives every call of the plan its model's provider and returns
// how many are not answered yet. The plan's own calls are run, answered
// ones skipped (runner.Options.Skip): a copy of the calls still to make
// would double the largest structure of a large audit.
func (s *session) prepareCalls(status map[string]bool, simLatency time.Duration) (pending int, err error) {
	providers, err := s.providers(simLatency)
	if err != nil {
		return 0, err
	}
	for i, c := range s.plan.Calls {
		s.plan.Calls[i].Provider = providers[s.plan.CallModel[i]]
		if !status[c.Key] {
			pending++
		}
	}
	return pending, nil
}

package workbench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/provider"
	"github.com/auditor-dev/auditor/store"
)

// Observer follows a run. The interactive screen's feed and the headless
// progress printer both implement it. Its methods are called from the
// run's goroutines and must not block: an observer queues what it is told.
type Observer interface {
	// StartPhase announces a phase of calls (PhaseAnswers, PhaseJudging,
	// PhaseRejudge) and how many calls it makes; the phase's runner events
	// follow.
	StartPhase(phase string, calls int)
	// Event is one runner event of the current phase; the phase's last is
	// runner.Stopped.
	Event(e runner.Event)
	// Graded is an answer stored with the grades the predicates gave it.
	Graded(r model.Response, grades []model.Grade)
	// JudgeGraded is a judge's grade of an answer already stored.
	JudgeGraded(answerKey string, g model.Grade)
}

// The phases of a run, in order.
const (
	PhaseAnswers = "answers"
	PhaseJudging = "judging"
	PhaseRejudge = "re-asking judges"
)

// RunOptions tune a run.
type RunOptions struct {
	Concurrency int           // calls in flight at once; 0: the audit's
	Budget      float64       // dollars for the whole run, judges included; 0: none
	MaxWait     time.Duration // a call's retry budget and the longest rate-limit wait to sit out; 0: the runner's default
	SimLatency  time.Duration // the simulated model's mean latency
	// Rejudge, when > 0, re-asks each judge about this many answers it
	// graded once the judging completed, to measure how often it flips.
	Rejudge int
	// RequestLog, when set, records every request and response with the
	// key redacted.
	RequestLog *runner.RequestLog
	// RetryTruncated asks again the calls whose answers were cut off by
	// the token limit or came back empty; by default they are settled
	// (model.ErrorKind.Settled) and not asked again.
	RetryTruncated bool
	// Adaptive makes the answers in rounds by look and stops each line at
	// the look that settles it (see runAdaptive); the audit's adaptive =
	// true does too. It needs a design with more than one look.
	Adaptive bool
}

// Outcome is how a run went, phase by phase. A phase that did not run has
// a zero Stopped with Ran false.
type Outcome struct {
	Answers, Judges, Rejudge Phase
	// Stability is each judge's flip rate on the re-asked answers; nil
	// unless the re-asks ran.
	Stability []grade.Stability
	// GradeErrors are answers the predicates could not grade as they
	// arrived (an exec predicate that failed); they were stored ungraded.
	GradeErrors []error
	// Adaptive says how an adaptive run's looks went; nil for a run that
	// made its calls in one go.
	Adaptive *Adaptive
}

// Phase is how one phase of a run ended.
type Phase struct {
	Ran     bool
	Stopped runner.Stopped
}

// Stop is the first phase that did not complete, and whether there is one.
func (o Outcome) Stop() (runner.Stopped, bool) {
	for _, p := range []Phase{o.Answers, o.Judges, o.Rejudge} {
		if p.Ran && p.Stopped.Reason != runner.Completed {
			return p.Stopped, true
		}
	}
	return runner.Stopped{}, false
}

// Spent is what every phase's calls cost, by their reported usage.
func (o Outcome) Spent() float64 {
	return o.Answers.Stopped.Spent + o.Judges.Stopped.Spent + o.Rejudge.Stopped.Spent
}

// CallsDone returns which calls need no new attempt now, given the stored
// status of every call: those answered; those whose answer was cut off by
// the token limit or came back empty, unless retryTruncated (asking again
// until an answer fits would keep short answers and drop long ones,
// biasing the rates; raising the limit changes every key and asks
// afresh); and those in a provider batch not collected yet (paid for
// already). The map is status itself when there are none of the last two.
func (s *Session) CallsDone(status map[string]bool, retryTruncated bool) (map[string]bool, error) {
	if s.Store == nil {
		return status, nil
	}
	settled := map[string]model.ErrorKind{}
	if !retryTruncated {
		var err error
		if settled, err = s.Store.SettledErrors(); err != nil {
			return nil, err
		}
	}
	batched, err := runner.BatchedKeys(s.Store)
	if err != nil {
		return nil, err
	}
	if len(settled) == 0 && len(batched) == 0 {
		return status, nil
	}
	done := make(map[string]bool, len(status)+len(batched))
	for k, ok := range status {
		done[k] = ok || settled[k].Settled()
	}
	for k := range batched {
		done[k] = true
	}
	return done, nil
}

// Pending returns the indices of the plan's calls not stored yet, given
// the stored status of every call.
func (s *Session) Pending(status map[string]bool) []int {
	var out []int
	for i, c := range s.Plan.Calls {
		if !status[c.Key] {
			out = append(out, i)
		}
	}
	return out
}

// Run makes every call of the audit not stored yet, grading and storing
// each answer as it arrives; when they complete, asks every judge about
// every stored answer it has not judged; when that completes and
// o.Rejudge is set, re-asks the judges. It reports each phase to obs and
// stops every phase when ctx is cancelled: no call is made after that, and
// the Outcome's Stop is the cancelled phase.
// The returned error is a failure to run at all (no provider, a store that
// cannot be written); how the calls went is in the Outcome.
func (s *Session) Run(ctx context.Context, o RunOptions, obs Observer) (Outcome, error) {
	var out Outcome
	if o.Concurrency <= 0 {
		o.Concurrency = s.Audit.File.Concurrency
	}
	status, err := s.Store.Status()
	if err != nil {
		return out, err
	}
	done, err := s.CallsDone(status, o.RetryTruncated)
	if err != nil {
		return out, err
	}
	pending := s.Pending(done)
	if len(pending) > 0 {
		if err := s.recordDesign(); err != nil {
			return out, err
		}
		// Until the run ends: judging after the answers is bounded too.
		// The limit is process-wide; a process runs one audit at a time.
		defer limitRunMemory()()
		skip := func(i int) bool { return done[s.Plan.Calls[i].Key] }
		d, _ := s.Plan.Design() // Load refused a design that does not fit
		switch {
		case (o.Adaptive || s.Audit.File.Adaptive) && d.Sequential():
			if out.Answers, out.GradeErrors, out.Adaptive, err = s.runAdaptive(ctx, o, obs, done, d, len(pending)); err != nil {
				return out, err
			}
		default:
			if out.Answers, out.GradeErrors, err = s.runAnswers(ctx, o, obs, s.Plan.Calls, skip, len(pending)); err != nil {
				return out, err
			}
		}
		if out.Answers.Stopped.Reason != runner.Completed {
			return out, nil
		}
	}
	// A stop that came after the answers still runs the judge phase: with
	// ctx cancelled it starts no call and reports the judge calls left as
	// cancelled, so the stop gets its exit code and resume command.
	if out.Judges, err = s.runJudges(ctx, o, obs, remainingBudget(o.Budget, out.Spent())); err != nil || !completed(out.Judges) {
		return out, err
	}
	if o.Rejudge > 0 {
		out.Rejudge, out.Stability, err = s.runRejudge(ctx, o, obs, remainingBudget(o.Budget, out.Spent()))
	}
	return out, err
}

func completed(p Phase) bool { return !p.Ran || p.Stopped.Reason == runner.Completed }

// runAnswers makes the calls (the plan's, or an adaptive round's in its
// order) that skip does not leave out, pending of them.
func (s *Session) runAnswers(ctx context.Context, o RunOptions, obs Observer, calls []runner.Call, skip func(i int) bool, pending int) (Phase, []error, error) {
	// The plan's calls name their model's endpoint by index; answered ones
	// are skipped (runner.Options.Skip): a copy of the calls still to make
	// would double the largest structure of a large audit.
	cfgs := s.modelConfigs()
	eps, err := s.endpoints(cfgs, o)
	if err != nil {
		return Phase{}, nil, err
	}
	w := s.Store.NewWriter(writerOptions(cfgs))
	sink := &grade.Sink{Grader: s.grader, Writer: w, OnGraded: obs.Graded}
	obs.StartPhase(PhaseAnswers, pending)
	stopped := follow(obs, runner.Run(ctx, calls, sink, runner.Options{
		Providers:   eps,
		Concurrency: o.Concurrency,
		MaxWait:     o.MaxWait,
		Budget:      o.Budget,
		Skip:        skip,
	}))
	if err := w.Close(); err != nil {
		return Phase{Ran: true, Stopped: stopped}, sink.GradeErrors(), fmt.Errorf("saving answers: %w", err)
	}
	return Phase{Ran: true, Stopped: stopped}, sink.GradeErrors(), nil
}

// runJudges asks every judge about every stored answer it has not judged
// yet. It does not run (Ran false) when there is nothing to ask.
func (s *Session) runJudges(ctx context.Context, o RunOptions, obs Observer, budget float64) (Phase, error) {
	if len(s.Audit.Judges) == 0 {
		return Phase{}, nil
	}
	status, err := s.Store.Status()
	if err != nil {
		return Phase{}, err
	}
	jp, err := s.Plan.JudgeCalls(s.Store, status, 0)
	if err != nil {
		return Phase{}, err
	}
	if _, err := grade.Backfill(jp, s.Audit.Judges, s.Store); err != nil {
		return Phase{}, err
	}
	// A judge answer cut off by its token limit or empty is settled like
	// a model's answer: not asked again unless RetryTruncated.
	done, err := s.CallsDone(status, o.RetryTruncated)
	if err != nil {
		return Phase{}, err
	}
	pending := jp.Pending(done)
	if len(pending) == 0 {
		return Phase{}, nil
	}
	calls, eps, err := s.judgeCalls(jp, pending, o)
	if err != nil {
		return Phase{}, err
	}
	w := s.Store.NewWriter(writerOptions(s.judgeConfigs()))
	sink := grade.NewJudgeSink(jp, s.Audit.Judges, w)
	sink.OnGraded = obs.JudgeGraded
	obs.StartPhase(PhaseJudging, len(calls))
	stopped := follow(obs, runner.Run(ctx, calls, sink, runner.Options{
		Providers: eps, Concurrency: o.Concurrency, MaxWait: o.MaxWait, Budget: budget,
	}))
	if err := w.Close(); err != nil {
		return Phase{Ran: true, Stopped: stopped}, fmt.Errorf("saving judge answers: %w", err)
	}
	return Phase{Ran: true, Stopped: stopped}, nil
}

// runRejudge re-asks every judge on o.Rejudge answers it already graded and
// compares the verdicts (judge stability).
func (s *Session) runRejudge(ctx context.Context, o RunOptions, obs Observer, budget float64) (Phase, []grade.Stability, error) {
	if len(s.Audit.Judges) == 0 {
		return Phase{}, nil, fmt.Errorf("re-asking judges needs at least one [[judge]] in the audit")
	}
	status, err := s.Store.Status()
	if err != nil {
		return Phase{}, nil, err
	}
	jp, err := s.Plan.JudgeCalls(s.Store, status, 0)
	if err != nil {
		return Phase{}, nil, err
	}
	rp, original := grade.RejudgeCalls(jp, status, len(s.Audit.Judges), o.Rejudge, 1)
	done, err := s.CallsDone(status, o.RetryTruncated)
	if err != nil {
		return Phase{}, nil, err
	}
	var phase Phase
	if pending := rp.Pending(done); len(pending) > 0 {
		calls, eps, err := s.judgeCalls(rp, pending, o)
		if err != nil {
			return phase, nil, err
		}
		w := s.Store.NewWriter(writerOptions(s.judgeConfigs()))
		obs.StartPhase(PhaseRejudge, len(calls))
		phase = Phase{Ran: true, Stopped: follow(obs, runner.Run(ctx, calls, &grade.ResponseSink{Writer: w}, runner.Options{
			Providers: eps, Concurrency: o.Concurrency, MaxWait: o.MaxWait, Budget: budget,
		}))}
		if err := w.Close(); err != nil {
			return phase, nil, err
		}
	}
	stab, err := grade.CompareRejudge(rp, original, s.Audit.Judges, s.Store)
	return phase, stab, err
}

// judgeCalls returns the pending calls of a judge plan (each names its
// judge's endpoint by index) and the judges' endpoints.
func (s *Session) judgeCalls(jp *audit.JudgePlan, pending []int, o RunOptions) ([]runner.Call, []runner.Endpoint, error) {
	eps, err := s.endpoints(s.judgeConfigs(), o)
	if err != nil {
		return nil, nil, err
	}
	calls := make([]runner.Call, 0, len(pending))
	for _, i := range pending {
		calls = append(calls, jp.Calls[i])
	}
	return calls, eps, nil
}

// writerOptions makes the answers of paid endpoints durable before their
// concurrency slot is freed (store.WriterOptions.Durable), so a crash pays
// for at most the concurrency's worth of answers twice. Simulated answers
// cost nothing to ask again: they keep the faster batched writes.
func writerOptions(cfgs []provider.Config) store.WriterOptions {
	for _, c := range cfgs {
		if c.Kind != "sim" {
			return store.WriterOptions{Durable: true}
		}
	}
	return store.WriterOptions{}
}

// follow passes a run's events to obs and returns how the run stopped.
func follow(obs Observer, events <-chan runner.Event) runner.Stopped {
	var last runner.Stopped
	for e := range events {
		if st, ok := e.(runner.Stopped); ok {
			last = st
		}
		obs.Event(e)
	}
	return last
}

// remainingBudget is what is left of budget after spent; 0 (no budget)
// stays 0, and an exhausted budget stays positive so it still limits.
func remainingBudget(budget, spent float64) float64 {
	if budget <= 0 {
		return 0
	}
	return max(budget-spent, 1e-9)
}

// runMemoryFloor is the least soft memory limit a run sets: small runs
// stay below it and pay for no extra garbage collection.
const runMemoryFloor = 64 << 20

// runMemoryFactor is the soft memory limit of a run as a multiple of the
// live heap when it starts.
const runMemoryFactor = 1.75

// limitRunMemory sets a soft limit on the Go memory of the process for a
// run and returns the function that restores the previous limit. A user's
// GOMEMLIMIT wins: then it does nothing.
//
// Why: when a run starts, the live heap is mostly the plan (about 400 bytes
// a call) and the audit, and both stay live to the end. On top of them a run
// churns through short-lived memory (B-tree pages materialised for each
// commit, answers waiting to be saved) and ends by loading the tally of
// every answer, so the live heap peaks at about 1.4 times its size at the
// start. Go's default pacing (GOGC=100) lets the heap grow to twice the
// live heap between collections: 100,000 calls would hold about 120 MB of
// heap for 60 MB of data. Capping the process at 1.75 times the starting
// heap (never below runMemoryFloor) makes the collector run more often only
// as the cap nears. The limit is soft: live data is never refused, and the
// runtime bounds the collector's share of CPU if live data approaches it.
func limitRunMemory() (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	runtime.GC() // so that the live heap is measured, not last cycle's
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	limit := int64(runMemoryFloor)
	if live[0].Value.Kind() == metrics.KindUint64 {
		limit = max(limit, int64(float64(live[0].Value.Uint64())*runMemoryFactor))
	}
	prev := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(prev) }
}

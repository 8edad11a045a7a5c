package runner

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// Defaults for the zero values of Options.
const (
	DefaultConcurrency = 8
	DefaultTimeout     = 120 * time.Second
	DefaultMaxAttempts = 6
	DefaultBaseBackoff = 500 * time.Millisecond
	DefaultMaxBackoff  = 30 * time.Second
	DefaultMaxWait     = 10 * time.Minute
)

// maxSaving bounds the saves in progress. Each runs in its own goroutine so
// a slow sink holds no concurrency slot, but when answers come faster than
// the sink stores them (the simulated model answers at once, a disk commits
// in milliseconds) dispatch must wait, or every answer of a large run piles
// up as a blocked goroutine holding its response. 1024 keeps a batching
// writer's batches full.
const maxSaving = 1024

// cutInterval is the least time between two cuts of the concurrency limit:
// the 429s of one burst report one overload, and halving once per 429 would
// collapse the limit to 1.
const cutInterval = time.Second

// Options tunes a run. The zero value of each field selects its default.
type Options struct {
	Concurrency int           // starting and maximum number of calls in flight; default 8
	Timeout     time.Duration // per attempt; default 120 s
	MaxAttempts int           // attempts per call, the first included; default 6
	// BaseBackoff and MaxBackoff shape the wait before retry n when the server
	// gives no Retry-After: uniform in [0, min(MaxBackoff, BaseBackoff*2^(n-1)))
	// ("full jitter"). Defaults 500 ms and 30 s.
	BaseBackoff, MaxBackoff time.Duration
	// MaxWait is the longest Retry-After the run waits out; a longer one stops
	// the run with WaitTooLong. Default 10 min.
	MaxWait time.Duration
	Budget  float64 // dollars; 0 means no budget
	// Rand is the jitter source. The run uses it from one goroutine, so it
	// must not be shared with another run in progress. Tests pass a seeded
	// one; nil means one seeded from the clock.
	Rand *rand.Rand
	// Skip, when set, leaves out the calls for which it returns true (by
	// index into the calls given to Run): they are not made, saved or
	// reported, and Stopped.Remaining counts only the others. It lets a
	// caller run what is left of a large plan without copying the calls
	// still to make. The run calls it from one goroutine, possibly more
	// than once per call, and it must give the same answer every time.
	Skip func(i int) bool
}

func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = DefaultBaseBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.BaseBackoff)
	if o.MaxWait <= 0 {
		o.MaxWait = DefaultMaxWait
	}
	if o.Rand == nil {
		seed := uint64(time.Now().UnixNano())
		o.Rand = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	}
	return o
}

// Run makes the calls and reports progress on the returned channel, saving
// each call that ends through sink (nil: nothing is saved). It returns at
// once; the work happens in goroutines owned by the run. Calls should have
// distinct keys: Run makes every call it is given but those Options.Skip
// leaves out. The calls slice must not be modified until the channel is
// closed. Cancel ctx to stop the run. See the package documentation for the
// delivery contract.
func Run(ctx context.Context, calls []Call, sink Sink, opts Options) <-chan Event {
	opts = opts.withDefaults()
	r := &run{
		ctx:     ctx,
		calls:   calls,
		sink:    sink,
		opts:    opts,
		events:  make(chan Event, 64+4*opts.Concurrency),
		results: make(chan attemptResult, opts.Concurrency),
		saved:   make(chan saveResult, opts.Concurrency),
		aimd:    aimd{limit: opts.Concurrency, max: opts.Concurrency},
		total:   len(calls),
	}
	go r.loop()
	return r.events
}

// run is the state of one Run. Its fields are owned by the loop goroutine;
// attempt and save goroutines talk to it only through results and saved.
type run struct {
	ctx    context.Context
	calls  []Call
	sink   Sink
	opts   Options
	events chan Event

	results chan attemptResult
	saved   chan saveResult

	next    int       // index of the next call never dispatched
	waiting retryHeap // calls waiting to retry, earliest first

	inFlight int // attempts running
	saving   int // saves running
	aimd     aimd

	spent    float64 // dollars, by usage reported so far
	reserved float64 // estimated dollars of attempts in flight

	done, failed int
	total        int // calls to make: len(calls) less those skipped

	stopped bool
	reason  StopReason
	detail  string
}

// callState is one call's progress across its attempts.
type callState struct {
	index    int
	call     *Call
	key      string
	attempts int
	cost     float64
	readyAt  time.Time // when waiting: the earliest time of the next attempt
}

type attemptResult struct {
	st        *callState
	comp      Completion
	err       error
	latency   time.Duration
	timedOut  bool
	estimated float64 // what was reserved for this attempt
}

type saveResult struct {
	st   *callState
	resp model.Response
	err  error
}

func (r *run) loop() {
	defer close(r.events)
	if r.opts.Skip != nil {
		for i := range r.calls {
			if r.opts.Skip(i) {
				r.total--
			}
		}
	}
	ctxDone := r.ctx.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		now := time.Now()
		r.dispatch(now)
		if r.inFlight == 0 && r.saving == 0 &&
			(r.stopped || (r.skipTo() >= len(r.calls) && r.waiting.Len() == 0)) {
			break
		}
		// Wake for the earliest retry only when a slot is free for it;
		// otherwise the next result wakes the loop anyway.
		var timerC <-chan time.Time
		if !r.stopped && r.waiting.Len() > 0 && r.inFlight < r.aimd.limit && r.saving < maxSaving {
			timer.Reset(r.waiting[0].readyAt.Sub(now))
			timerC = timer.C
		}
		select {
		case <-ctxDone:
			ctxDone = nil
			r.halt(Cancelled, "cancelled: "+context.Cause(r.ctx).Error())
		case res := <-r.results:
			r.handleResult(res)
		case s := <-r.saved:
			r.handleSaved(s)
		case <-timerC:
		}
	}
	r.emit(Stopped{
		Reason:    r.reason,
		Detail:    r.detail,
		Done:      r.done,
		Failed:    r.failed,
		Remaining: r.total - r.done,
		Spent:     r.spent,
	})
}

// dispatch starts attempts while slots are free: calls whose retry wait is
// over first, then calls not yet started.
func (r *run) dispatch(now time.Time) {
	if !r.stopped && r.ctx.Err() != nil {
		r.halt(Cancelled, "cancelled: "+context.Cause(r.ctx).Error())
	}
	for !r.stopped && r.inFlight < r.aimd.limit && r.saving < maxSaving {
		var st *callState
		switch {
		case r.waiting.Len() > 0 && !r.waiting[0].readyAt.After(now):
			st = heap.Pop(&r.waiting).(*callState)
		case r.skipTo() < len(r.calls):
			c := &r.calls[r.next]
			key := c.Key
			if key == "" {
				key = c.Request.Key()
			}
			st = &callState{index: r.next, call: c, key: key}
			r.next++
		default:
			return
		}
		est := st.call.Price.Cost(st.call.EstPromptTokens, 0, st.call.EstCompletionTokens)
		if r.opts.Budget > 0 && r.spent+r.reserved+est > r.opts.Budget {
			r.halt(BudgetReached, fmt.Sprintf(
				"budget $%.4f reached: spent $%.4f, in flight about $%.4f, next call about $%.4f",
				r.opts.Budget, r.spent, r.reserved, est))
			return
		}
		r.reserved += est
		r.inFlight++
		st.attempts++
		r.emit(Started{Index: st.index, Key: st.key, Attempt: st.attempts})
		go r.attempt(st, est)
	}
}

// skipTo moves next past skipped calls and returns it.
func (r *run) skipTo() int {
	for r.opts.Skip != nil && r.next < len(r.calls) && r.opts.Skip(r.next) {
		r.next++
	}
	return r.next
}

// attempt makes one attempt and reports it to the loop. It runs in its own
// goroutine.
func (r *run) attempt(st *callState, est float64) {
	actx, cancel := context.WithTimeout(r.ctx, r.opts.Timeout)
	start := time.Now()
	comp, err := complete(actx, st.call)
	latency := time.Since(start)
	timedOut := err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && r.ctx.Err() == nil
	cancel()
	r.results <- attemptResult{st: st, comp: comp, err: err, latency: latency, timedOut: timedOut, estimated: est}
}

// complete calls the provider, turning a missing provider or a panic into a
// call error so one bad call cannot take the run down.
func complete(ctx context.Context, c *Call) (comp Completion, err error) {
	if c.Provider == nil {
		return Completion{}, &CallError{Kind: model.ErrRequest, Msg: "call has no provider"}
	}
	defer func() {
		if p := recover(); p != nil {
			comp, err = Completion{}, &CallError{Kind: model.ErrRequest, Msg: fmt.Sprintf("provider panicked: %v", p)}
		}
	}()
	return c.Provider.Complete(ctx, *c)
}

func (r *run) handleResult(res attemptResult) {
	now := time.Now()
	st := res.st
	r.inFlight--
	r.reserved -= res.estimated
	if r.inFlight == 0 {
		r.reserved = 0 // drop float residue
	}
	cost := st.call.Price.Cost(res.comp.PromptTokens, res.comp.CachedTokens, res.comp.CompletionTokens)
	r.spent += cost
	st.cost += cost

	if res.err == nil {
		// An answer that arrived is kept even if the run is cancelled: it
		// finished, and it was paid for.
		r.aimdEvent(r.aimd.onSuccess())
		resp := r.response(st, res, now)
		resp.Text = res.comp.Text
		resp.FinishReason = res.comp.FinishReason
		resp.PromptTokens = res.comp.PromptTokens
		resp.CachedTokens = res.comp.CachedTokens
		resp.CompletionTokens = res.comp.CompletionTokens
		if res.comp.FinishReason == "content_filter" {
			resp.Error = (&CallError{Kind: model.ErrContentFilter, Msg: "the provider's content filter stopped the answer"}).Error()
			resp.ErrorKind = model.ErrContentFilter
		}
		r.finish(st, resp)
		return
	}
	if r.ctx.Err() != nil {
		return // cancelled: not finished, not saved
	}
	ce := callError(res, r.opts.Timeout)
	if ce.Kind == model.ErrRateLimited {
		r.aimdEvent(r.aimd.onRateLimited(now))
	}
	switch {
	case ce.Kind == model.ErrQuota:
		r.halt(QuotaExhausted, "quota exhausted: "+ce.Error())
	case ce.Kind == model.ErrAuth:
		// Not the call's fault: store nothing, stop, and let the user fix the key.
		r.halt(AuthFailed, "the API rejected the key: "+ce.Error())
	case !ce.Retryable || st.attempts >= r.opts.MaxAttempts:
		resp := r.response(st, res, now)
		resp.Error = ce.Error()
		resp.ErrorKind = ce.Kind
		r.finish(st, resp)
	case r.stopped:
		// Dispatch has stopped: the call is left for the next run.
	case ce.RetryAfter > r.opts.MaxWait:
		r.halt(WaitTooLong, fmt.Sprintf("server asked to wait %s before retrying, longer than the maximum wait %s: %s",
			ce.RetryAfter.Round(time.Second), r.opts.MaxWait, ce.Error()))
	default:
		wait := r.backoff(st.attempts, ce.RetryAfter)
		st.readyAt = now.Add(wait)
		heap.Push(&r.waiting, st)
		r.emit(Retrying{
			Index: st.index, Key: st.key, Attempt: st.attempts, Kind: ce.Kind,
			Wait: wait, Until: st.readyAt, Reason: ce.Error(),
		})
	}
}

// callError turns an attempt's error into a CallError.
func callError(res attemptResult, timeout time.Duration) *CallError {
	if res.timedOut {
		return &CallError{Kind: model.ErrTransport, Retryable: true, Msg: fmt.Sprintf("no answer within %s", timeout)}
	}
	var ce *CallError
	if errors.As(res.err, &ce) {
		return ce
	}
	return &CallError{Kind: model.ErrTransport, Retryable: true, Msg: res.err.Error()}
}

// backoff returns the wait before the attempt after attempt n (1-based). A
// server's Retry-After is a floor; a little jitter above it keeps a burst of
// rate-limited calls from returning in the same instant.
func (r *run) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		jitter := min(retryAfter/10, r.opts.BaseBackoff)
		if jitter > 0 {
			return retryAfter + time.Duration(r.opts.Rand.Int64N(int64(jitter)))
		}
		return retryAfter
	}
	ceiling := r.opts.BaseBackoff
	for i := 1; i < n && ceiling < r.opts.MaxBackoff; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, r.opts.MaxBackoff)
	return time.Duration(r.opts.Rand.Int64N(int64(ceiling)))
}

// response returns the fields every response of st has.
func (r *run) response(st *callState, res attemptResult, now time.Time) model.Response {
	return model.Response{
		Key:       st.key,
		Model:     st.call.Request.Model,
		LatencyMS: res.latency.Milliseconds(),
		Attempts:  st.attempts,
		At:        now,
	}
}

// finish saves a call's final response in its own goroutine, so a slow sink
// holds no concurrency slot and concurrent saves can be batched.
func (r *run) finish(st *callState, resp model.Response) {
	if r.sink == nil {
		r.handleSaved(saveResult{st: st, resp: resp})
		return
	}
	r.saving++
	go func() {
		err := r.sink.Save(resp)
		r.saved <- saveResult{st: st, resp: resp, err: err}
	}()
}

func (r *run) handleSaved(s saveResult) {
	if r.sink != nil {
		r.saving--
	}
	if s.err != nil {
		r.halt(SaveFailed, fmt.Sprintf("save response %s: %v", s.st.key, s.err))
		return
	}
	r.done++
	if !s.resp.OK() {
		r.failed++
	}
	r.emit(Finished{Index: s.st.index, Response: s.resp, Cost: s.st.cost})
}

// halt stops dispatching; the first reason is the one reported.
func (r *run) halt(reason StopReason, detail string) {
	if r.stopped {
		return
	}
	r.stopped, r.reason, r.detail = true, reason, detail
}

func (r *run) aimdEvent(changed bool) {
	if changed {
		r.emit(ConcurrencyChanged{Limit: r.aimd.limit})
	}
}

func (r *run) emit(e Event) { r.events <- e }

// aimd is the adaptive concurrency limit: additive increase, multiplicative
// decrease.
type aimd struct {
	limit, max int
	streak     int // consecutive successes since the last change or 429
	lastCut    time.Time
}

// onSuccess counts a success and raises the limit by one after limit-many in
// a row. It reports whether the limit changed.
func (a *aimd) onSuccess() bool {
	if a.limit >= a.max {
		return false
	}
	a.streak++
	if a.streak < a.limit {
		return false
	}
	a.limit++
	a.streak = 0
	return true
}

// onRateLimited halves the limit (never below 1), at most once per
// cutInterval. It reports whether the limit changed.
func (a *aimd) onRateLimited(now time.Time) bool {
	a.streak = 0
	if a.limit <= 1 || (!a.lastCut.IsZero() && now.Sub(a.lastCut) < cutInterval) {
		return false
	}
	a.limit = max(1, a.limit/2)
	a.lastCut = now
	return true
}

// retryHeap orders waiting calls by readyAt, earliest first.
type retryHeap []*callState

func (h retryHeap) Len() int           { return len(h) }
func (h retryHeap) Less(i, j int) bool { return h[i].readyAt.Before(h[j].readyAt) }
func (h retryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *retryHeap) Push(x any)        { *h = append(*h, x.(*callState)) }
func (h *retryHeap) Pop() any {
	old := *h
	n := len(old)
	x := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return x
}

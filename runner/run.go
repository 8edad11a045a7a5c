package runner

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// Defaults for the zero values of Options.
const (
	DefaultConcurrency = 8
	DefaultTimeout     = 120 * time.Second
	DefaultMaxAttempts = 6
	// DefaultMaxRateLimited is generous: with the pool paused for each
	// Retry-After and its limit cut, a call is rarely rate-limited more than
	// a few times, and a call that is thirty times is facing a limit that
	// will not lift during the run.
	DefaultMaxRateLimited  = 30
	DefaultSystematicAfter = 20
	DefaultBaseBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff      = 30 * time.Second
	DefaultMaxWait         = 10 * time.Minute
)

// cutInterval is the least time between two cuts of the concurrency limit:
// the 429s of one burst report one overload, and halving once per 429 would
// collapse the limit to 1.
const cutInterval = time.Second

// Options tunes a run. The zero value of each field selects its default.
type Options struct {
	// Providers are the endpoints that answer the run's calls, each with its
	// own pool: a concurrency limit, a pause after a Retry-After and an
	// adaptive limit, so one endpoint's 429s never slow another. Each call
	// names its endpoint by index (Call.Provider).
	Providers []Endpoint
	// Concurrency is the starting and maximum number of calls in flight per
	// endpoint whose own Concurrency is 0; default 8.
	Concurrency int
	// Timeout bounds each attempt of a call whose endpoint sets none
	// (Endpoint.Timeout); default 120 s.
	Timeout time.Duration
	// MaxAttempts bounds the attempts per call, the first included, that
	// failed for any reason but a rate limit; default 6.
	MaxAttempts int
	// MaxRateLimited bounds the attempts per call that were rate-limited
	// (429): they say the endpoint is overloaded, not that the call is bad,
	// so they do not count towards MaxAttempts. Default 30.
	MaxRateLimited int
	// BaseBackoff and MaxBackoff shape the wait before retry n when the server
	// gives no Retry-After: uniform in [0, min(MaxBackoff, BaseBackoff*2^(n-1)))
	// ("full jitter"). Defaults 500 ms and 30 s.
	BaseBackoff, MaxBackoff time.Duration
	// MaxWait is the longest Retry-After the run waits out; a longer one stops
	// the run with WaitTooLong. Default 10 min.
	MaxWait time.Duration
	Budget  float64 // dollars; 0 means no budget
	// SystematicAfter is how many distinct calls of one endpoint must fail
	// the same way, before any of its calls succeeded, for the run to stop
	// with SystematicFailure (an unreachable endpoint, or the same 4xx other
	// than 429). An endpoint with fewer calls needs all of them, and at
	// least 2. Default 20.
	SystematicAfter int
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
	if o.MaxRateLimited <= 0 {
		o.MaxRateLimited = DefaultMaxRateLimited
	}
	if o.SystematicAfter <= 0 {
		o.SystematicAfter = DefaultSystematicAfter
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
		results: make(chan attemptResult, opts.Concurrency),
		saved:   make(chan saveResult, opts.Concurrency),
	}
	r.pools = make([]*pool, len(opts.Providers)+1)
	slots := 0
	for i := range r.pools {
		var ep Endpoint
		if i < len(opts.Providers) {
			ep = opts.Providers[i]
		} else {
			// Calls naming no endpoint land here and fail for good.
			ep = Endpoint{Name: "no endpoint", Provider: missingProvider{n: len(opts.Providers)}}
		}
		if ep.Concurrency <= 0 {
			ep.Concurrency = opts.Concurrency
		}
		r.pools[i] = &pool{index: i, ep: ep, aimd: aimd{limit: ep.Concurrency, max: ep.Concurrency}}
		slots += ep.Concurrency
	}
	r.events = make(chan Event, 64+4*min(slots, 1024))
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

	pools []*pool // one per endpoint, and last the pool of calls naming none
	turn  int     // the pool dispatch looks at first, so pools take turns

	saving int // saves running, in all pools

	spent    float64 // dollars, by usage reported so far
	reserved float64 // estimated dollars of attempts in flight

	done, failed, settled int
	total                 int // calls to make: len(calls) less those skipped

	stopped bool
	reason  StopReason
	detail  string
}

// callState is one call's progress across its attempts.
type callState struct {
	index       int
	call        *Call
	key         string
	pool        *pool
	attempts    int // all attempts made
	rateLimited int // of attempts, those that were rate-limited
	cost        float64
	readyAt     time.Time // when waiting: the earliest time of the next attempt
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
	r.count()
	ctxDone := r.ctx.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		now := time.Now()
		r.dispatch(now)
		if r.inFlight() == 0 && r.saving == 0 && (r.stopped || r.drained()) {
			if r.releaseHeld() {
				continue // their saves end the loop
			}
			break
		}
		var timerC <-chan time.Time
		if wake, ok := r.nextWake(now); ok {
			timer.Reset(wake.Sub(now))
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
		Settled:   r.settled,
		Remaining: r.total - r.done,
		Spent:     r.spent,
	})
}

// count sets the number of calls to make, in all and per pool.
func (r *run) count() {
	for i := range r.calls {
		if r.opts.Skip != nil && r.opts.Skip(i) {
			continue
		}
		r.total++
		r.poolOf(&r.calls[i]).total++
	}
}

// poolOf returns the pool of the endpoint c names.
func (r *run) poolOf(c *Call) *pool {
	if c.Provider < 0 || c.Provider >= len(r.pools)-1 {
		return r.pools[len(r.pools)-1]
	}
	return r.pools[c.Provider]
}

func (r *run) inFlight() int {
	n := 0
	for _, p := range r.pools {
		n += p.inFlight
	}
	return n
}

// drained reports whether no call is left to start or retry.
func (r *run) drained() bool {
	for _, p := range r.pools {
		if p.waiting.Len() > 0 || r.nextNew(p) < len(r.calls) {
			return false
		}
	}
	return true
}

// nextWake returns when the loop must wake to start an attempt that is not
// due yet: the earliest retry, or the end of a pause, of a pool with a free
// slot. A pool without one is woken by its next result anyway.
func (r *run) nextWake(now time.Time) (time.Time, bool) {
	var wake time.Time
	if r.stopped {
		return wake, false
	}
	for _, p := range r.pools {
		if p.busy() {
			continue
		}
		var at time.Time
		switch {
		case p.waiting.Len() > 0:
			at = p.waiting[0].readyAt
			if p.pausedUntil.After(at) {
				at = p.pausedUntil
			}
		case p.pausedUntil.After(now) && r.nextNew(p) < len(r.calls):
			at = p.pausedUntil
		default:
			continue
		}
		if wake.IsZero() || at.Before(wake) {
			wake = at
		}
	}
	return wake, !wake.IsZero()
}

// dispatch starts attempts while slots are free, the pools taking turns:
// in each pool, calls whose retry wait is over first, then calls not yet
// started. A paused pool starts nothing.
func (r *run) dispatch(now time.Time) {
	if !r.stopped && r.ctx.Err() != nil {
		r.halt(Cancelled, "cancelled: "+context.Cause(r.ctx).Error())
	}
	for progress := true; progress && !r.stopped; {
		progress = false
		for k := range r.pools {
			p := r.pools[(r.turn+k)%len(r.pools)]
			st := r.take(p, now)
			if st == nil {
				continue
			}
			r.turn = (p.index + 1) % len(r.pools)
			if !r.start(st) {
				return
			}
			progress = true
			break
		}
	}
}

// take returns the call p should start now, or nil.
func (r *run) take(p *pool, now time.Time) *callState {
	if p.busy() || now.Before(p.pausedUntil) {
		return nil
	}
	if p.waiting.Len() > 0 && !p.waiting[0].readyAt.After(now) {
		return heap.Pop(&p.waiting).(*callState)
	}
	i := r.nextNew(p)
	if i >= len(r.calls) {
		return nil
	}
	p.next = i + 1
	c := &r.calls[i]
	key := c.Key
	if key == "" {
		key = c.Request.Key()
	}
	return &callState{index: i, call: c, key: key, pool: p}
}

// nextNew moves p's cursor past calls that are skipped or belong to other
// pools and returns it.
func (r *run) nextNew(p *pool) int {
	for p.next < len(r.calls) {
		c := &r.calls[p.next]
		if r.poolOf(c) == p && (r.opts.Skip == nil || !r.opts.Skip(p.next)) {
			break
		}
		p.next++
	}
	return p.next
}

// start starts an attempt of st unless the budget forbids it, and reports
// whether it did.
func (r *run) start(st *callState) bool {
	est := st.call.Price.Cost(st.call.EstPromptTokens, 0, st.call.EstCompletionTokens)
	if r.opts.Budget > 0 && r.spent+r.reserved+est > r.opts.Budget {
		r.halt(BudgetReached, fmt.Sprintf(
			"budget $%.4f reached: spent $%.4f, in flight about $%.4f, next call about $%.4f",
			r.opts.Budget, r.spent, r.reserved, est))
		return false
	}
	r.reserved += est
	st.pool.inFlight++
	st.attempts++
	r.emit(Started{Index: st.index, Key: st.key, Attempt: st.attempts})
	go r.attempt(st, est)
	return true
}

// attempt makes one attempt and reports it to the loop. It runs in its own
// goroutine.
func (r *run) attempt(st *callState, est float64) {
	actx, cancel := context.WithTimeout(r.ctx, r.timeout(st.call))
	start := time.Now()
	comp, err := complete(actx, st.pool.ep.Provider, st.call)
	latency := time.Since(start)
	timedOut := err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) && r.ctx.Err() == nil
	cancel()
	r.results <- attemptResult{st: st, comp: comp, err: err, latency: latency, timedOut: timedOut, estimated: est}
}

// timeout is how long an attempt of c may take: its endpoint's timeout,
// else the run's.
func (r *run) timeout(c *Call) time.Duration {
	if c.Provider >= 0 && c.Provider < len(r.opts.Providers) && r.opts.Providers[c.Provider].Timeout > 0 {
		return r.opts.Providers[c.Provider].Timeout
	}
	return r.opts.Timeout
}

// complete calls the provider, turning a missing provider or a panic into a
// call error so one bad call cannot take the run down.
func complete(ctx context.Context, p Provider, c *Call) (comp Completion, err error) {
	if p == nil {
		return Completion{}, &CallError{Kind: model.ErrRequest, Msg: "the call's endpoint has no provider"}
	}
	defer func() {
		if v := recover(); v != nil {
			comp, err = Completion{}, &CallError{Kind: model.ErrRequest, Msg: fmt.Sprintf("provider panicked: %v", v)}
		}
	}()
	return p.Complete(ctx, *c)
}

// missingProvider answers the calls whose Provider index names no endpoint.
type missingProvider struct{ n int }

func (m missingProvider) Complete(_ context.Context, c Call) (Completion, error) {
	return Completion{}, &CallError{Kind: model.ErrRequest,
		Msg: fmt.Sprintf("the call names endpoint %d, but the run has %d (Options.Providers)", c.Provider, m.n)}
}

func (r *run) handleResult(res attemptResult) {
	now := time.Now()
	st := res.st
	p := st.pool
	p.inFlight--
	r.reserved -= res.estimated
	if r.inFlight() == 0 {
		r.reserved = 0 // drop float residue
	}
	cost := st.call.Price.CostOf(res.comp.usage())
	r.spent += cost
	st.cost += cost

	if res.err == nil {
		// An answer that arrived is kept even if the run is cancelled: it
		// finished, and it was paid for.
		p.probe.succeeded = true
		r.saveHeld(p)
		r.aimdEvent(p, p.aimd.onSuccess())
		resp := r.response(st, res, now)
		resp.Text = res.comp.Text
		resp.FinishReason = res.comp.FinishReason
		resp.PromptTokens = res.comp.PromptTokens
		resp.CachedTokens = res.comp.CachedTokens
		resp.CacheWriteTokens = res.comp.CacheWriteTokens
		resp.CompletionTokens = res.comp.CompletionTokens
		if kind, msg := Classify(res.comp); kind != model.ErrNone {
			resp.Error = (&CallError{Kind: kind, Msg: msg}).Error()
			resp.ErrorKind = kind
		}
		r.finish(st, resp)
		return
	}
	if r.ctx.Err() != nil {
		return // cancelled: not finished, not saved
	}
	ce := callError(res, r.timeout(st.call))
	rateLimited := ce.Kind == model.ErrRateLimited
	if rateLimited {
		st.rateLimited++
		r.aimdEvent(p, p.aimd.onRateLimited(now))
		if ce.RetryAfter > 0 && ce.RetryAfter <= r.opts.MaxWait {
			// No call of this endpoint starts before the server's wait is
			// over: the 429 speaks for the endpoint, not for this call.
			if until := now.Add(ce.RetryAfter); until.After(p.pausedUntil) {
				p.pausedUntil = until
			}
		}
	}
	exhausted := st.attempts-st.rateLimited >= r.opts.MaxAttempts
	if rateLimited {
		exhausted = st.rateLimited >= r.opts.MaxRateLimited
	}
	switch {
	case ce.Kind == model.ErrQuota:
		r.halt(QuotaExhausted, "quota exhausted: "+ce.Error())
	case ce.Kind == model.ErrAuth:
		// Not the call's fault: store nothing, stop, and let the user fix the key.
		r.halt(AuthFailed, "the API rejected the key: "+ce.Error())
	case r.systematic(p, st, ce):
		// The endpoint fails every call the same way: stop before buying
		// or storing more of the same. The call is left for the next run.
	case !ce.Retryable || exhausted:
		resp := r.response(st, res, now)
		resp.Error = ce.Error()
		resp.ErrorKind = ce.Kind
		if !p.probe.succeeded && p.probe.sig != "" && systematicSignature(ce) == p.probe.sig {
			// Maybe the first of a systematic failure: not saved until
			// the endpoint shows it can answer (see pool.held).
			p.held = append(p.held, heldFailure{st: st, resp: resp})
			return
		}
		r.finish(st, resp)
	case r.stopped:
		// Dispatch has stopped: the call is left for the next run.
	case ce.RetryAfter > r.opts.MaxWait:
		r.halt(WaitTooLong, fmt.Sprintf("server asked to wait %s before retrying, longer than the maximum wait %s: %s",
			ce.RetryAfter.Round(time.Second), r.opts.MaxWait, ce.Error()))
	default:
		n := st.attempts - st.rateLimited
		if rateLimited {
			n = st.rateLimited
		}
		wait := r.backoff(n, ce.RetryAfter)
		st.readyAt = now.Add(wait)
		heap.Push(&p.waiting, st)
		r.emit(Retrying{
			Index: st.index, Key: st.key, Attempt: st.attempts, Kind: ce.Kind, Cause: ce.Cause(),
			Wait: wait, Until: st.readyAt, Reason: ce.Error(),
		})
	}
}

// systematic records a failed attempt on p's probe and, when it shows that
// the endpoint fails every call the same way, stops the run and reports
// true.
func (r *run) systematic(p *pool, st *callState, ce *CallError) bool {
	need := min(r.opts.SystematicAfter, p.total)
	was := p.probe.sig
	counted := p.probe.record(st.index, ce)
	if p.probe.sig != was {
		r.saveHeld(p) // the failures held differ from this one: not systematic
	}
	if !counted || need < 2 || len(p.probe.calls) < need {
		return false
	}
	r.halt(SystematicFailure, fmt.Sprintf("%s: the first %d calls all failed the same way, and none succeeded: %s%s",
		p.ep.Name, len(p.probe.calls), p.probe.first, systematicAdvice(ce)))
	return true
}

// saveHeld saves p's held failures: they were calls' own failures.
func (r *run) saveHeld(p *pool) {
	held := p.held
	p.held = nil
	for _, h := range held {
		r.finish(h.st, h.resp)
	}
}

// releaseHeld, when the run is ending, saves the held failures, unless it
// stopped on a systematic failure: then they are dropped, left for the next
// run like the calls not made. It reports whether it saved any.
func (r *run) releaseHeld() bool {
	saved := false
	for _, p := range r.pools {
		if len(p.held) == 0 {
			continue
		}
		if r.stopped && r.reason == SystematicFailure {
			p.held = nil
			continue
		}
		r.saveHeld(p)
		saved = true
	}
	return saved
}

// callError turns an attempt's error into a CallError.
func callError(res attemptResult, timeout time.Duration) *CallError {
	if res.timedOut {
		return &CallError{Kind: model.ErrTransport, Retryable: true, Timeout: true, Msg: fmt.Sprintf("no answer within %s", timeout)}
	}
	var ce *CallError
	if errors.As(res.err, &ce) {
		return ce
	}
	return &CallError{Kind: model.ErrTransport, Retryable: true, Msg: res.err.Error()}
}

// Classify says whether a completion the provider returned is an answer to
// grade: a content-filter stop, an answer cut off by the token limit
// (finish reason "length") and an answer with no text are not, and get an
// error kind and a message for people. It returns ErrNone for an answer.
func Classify(c Completion) (model.ErrorKind, string) {
	switch {
	case c.FinishReason == "content_filter":
		return model.ErrContentFilter, "the provider's content filter stopped the answer"
	case c.FinishReason == "length":
		return model.ErrTruncated, fmt.Sprintf("the answer hit the token limit after %d completion tokens and was cut off; %s",
			c.CompletionTokens, model.ErrTruncated.Advice())
	case strings.TrimSpace(c.Text) == "":
		return model.ErrEmpty, fmt.Sprintf("the answer has no text (%d completion tokens, finish reason %q); %s",
			c.CompletionTokens, c.FinishReason, model.ErrEmpty.Advice())
	}
	return model.ErrNone, ""
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

// finish saves a call's final response in its own goroutine, so concurrent
// saves can be batched, with what its attempts cost (Response.Charge). The
// call keeps its pool slot until the save returns (pool.busy).
func (r *run) finish(st *callState, resp model.Response) {
	resp.Charge = st.call.Price.Charge(resp, st.cost, st.call.Meta.Judge != "")
	if r.sink == nil {
		r.handleSaved(saveResult{st: st, resp: resp})
		return
	}
	r.saving++
	st.pool.saving++
	go func() {
		err := r.sink.Save(resp)
		r.saved <- saveResult{st: st, resp: resp, err: err}
	}()
}

func (r *run) handleSaved(s saveResult) {
	if r.sink != nil {
		r.saving--
		s.st.pool.saving--
	}
	if s.err != nil {
		r.halt(SaveFailed, fmt.Sprintf("save response %s: %v", s.st.key, s.err))
		return
	}
	r.done++
	switch {
	case s.resp.ErrorKind.Settled():
		r.settled++
	case !s.resp.OK():
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

func (r *run) aimdEvent(p *pool, changed bool) {
	if changed {
		r.emit(ConcurrencyChanged{Provider: p.index, Limit: p.aimd.limit})
	}
}

func (r *run) emit(e Event) { r.events <- e }

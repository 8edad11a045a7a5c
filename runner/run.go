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
	// DefaultMaxAttempts is a safety net, not the retry budget (that is
	// MaxWait): with back-off growing to 30 s a call makes about 40
	// attempts in 10 minutes of server errors, and a call refused 50 times
	// while others are answered is facing a limit that will not lift.
	DefaultMaxAttempts     = 50
	DefaultSystematicAfter = 20
	DefaultBaseBackoff     = 500 * time.Millisecond
	DefaultMaxBackoff      = 30 * time.Second
	DefaultMaxWait         = 10 * time.Minute
)

// Options tunes a run. The zero value of each field selects its default.
type Options struct {
	// Providers are the endpoints that answer the run's calls. Each call
	// names its endpoint by index (Call.Provider). Endpoints with the same
	// Pool share one pool (a concurrency limit, an adaptive limit and a
	// pause); others have their own, so one server's 429s never slow
	// another.
	Providers []Endpoint
	// Concurrency is the starting and maximum number of calls in flight per
	// pool whose endpoints set no Concurrency of their own; default 8.
	Concurrency int
	// Timeout bounds each attempt of a call whose endpoint sets none
	// (Endpoint.Timeout); default 120 s.
	Timeout time.Duration
	// MaxAttempts bounds the attempts per call, the first included, as a
	// safety net: the budget of a call failing transiently is MaxWait.
	// Default 50.
	MaxAttempts int
	// BaseBackoff and MaxBackoff shape the wait before retry n when the server
	// gives no Retry-After: uniform in [0, min(MaxBackoff, BaseBackoff*2^(n-1)))
	// ("full jitter"). Defaults 500 ms and 30 s.
	BaseBackoff, MaxBackoff time.Duration
	// MaxWait is the retry budget: a call that keeps failing transiently
	// (429, 5xx, a dropped connection, a malformed body) is retried until
	// MaxWait has passed since its first attempt, then fails for good, or,
	// when its endpoint answered nothing in all that time, stops the run
	// with WaitTooLong (the call is left for the next run). A Retry-After
	// (or a spent rate-limit window) longer than MaxWait stops the run with
	// WaitTooLong too. Default 10 min.
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
	r.eps = make([]*endpoint, len(opts.Providers)+1)
	shared := map[string]*pool{}
	for i := range r.eps {
		var ep Endpoint
		if i < len(opts.Providers) {
			ep = opts.Providers[i]
		} else {
			// Calls naming no endpoint land here and fail for good.
			ep = Endpoint{Name: "no endpoint", Provider: missingProvider{n: len(opts.Providers)}}
		}
		limit := ep.Concurrency
		if limit <= 0 {
			limit = opts.Concurrency
		}
		p := shared[ep.Pool]
		if p == nil || ep.Pool == "" {
			p = &pool{index: i, lim: newLimiter(limit)}
			r.pools = append(r.pools, p)
			if ep.Pool != "" {
				shared[ep.Pool] = p
			}
		} else if limit < p.lim.max {
			p.lim = newLimiter(limit)
		}
		r.eps[i] = &endpoint{index: i, ep: ep, pool: p}
	}
	slots := 0
	for _, p := range r.pools {
		slots += p.lim.max
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

	eps   []*endpoint // one per endpoint, and last the one of calls naming none
	pools []*pool     // one per distinct Endpoint.Pool (or endpoint without one)
	turn  int         // the pool dispatch looks at first, so pools take turns

	saving int // saves running, in all pools

	spent    float64 // dollars, by usage reported so far
	reserved float64 // estimated dollars of attempts in flight

	done, failed, settled, tooLarge int
	total                           int // calls to make: len(calls) less those skipped

	stopped bool
	reason  StopReason
	detail  string
}

// callState is one call's progress across its attempts.
type callState struct {
	index       int
	call        *Call
	key         string
	ep          *endpoint
	attempts    int // all attempts made
	rateLimited int // of attempts, those that were rate-limited
	cost        float64
	first       time.Time // when the first attempt started: the retry budget runs from it
	ticket      uint64    // the pool limiter's ticket of the attempt in flight
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
		TooLarge:  r.tooLarge,
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
		ep := r.endpointOf(&r.calls[i])
		ep.total++
		ep.pool.total++
	}
}

// endpointOf returns the endpoint c names.
func (r *run) endpointOf(c *Call) *endpoint {
	if c.Provider < 0 || c.Provider >= len(r.eps)-1 {
		return r.eps[len(r.eps)-1]
	}
	return r.eps[c.Provider]
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
			if p.lim.pausedUntil.After(at) {
				at = p.lim.pausedUntil
			}
		case p.lim.paused(now) && r.nextNew(p) < len(r.calls):
			at = p.lim.pausedUntil
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
			r.turn = (r.turn + k + 1) % len(r.pools)
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
	if p.busy() || p.lim.paused(now) {
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
	return &callState{index: i, call: c, key: key, ep: r.endpointOf(c)}
}

// nextNew moves p's cursor past calls that are skipped or belong to other
// pools and returns it.
func (r *run) nextNew(p *pool) int {
	for p.next < len(r.calls) {
		c := &r.calls[p.next]
		if r.endpointOf(c).pool == p && (r.opts.Skip == nil || !r.opts.Skip(p.next)) {
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
	p := st.ep.pool
	p.inFlight++
	st.ticket = p.lim.start()
	if st.attempts == 0 {
		st.first = time.Now()
	}
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
	comp, err := complete(actx, st.ep.ep.Provider, st.call)
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
	ep := st.ep
	p := ep.pool
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
		ep.probe.succeeded = true
		ep.lastAnswer = now
		r.saveHeld(ep)
		r.limitChanged(p, p.lim.answered(st.ticket))
		r.windowSpent(p, res.comp.Window, now)
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
	if ce.Kind == model.ErrTooLarge {
		// Its usage was never read: the most it can have cost is booked.
		cost := tooLargeCost(st.call)
		r.spent += cost
		st.cost += cost
	}
	r.windowSpent(p, ce.Window, now)
	rateLimited := ce.Kind == model.ErrRateLimited
	retryAfter := ce.RetryAfter
	burst := false
	if rateLimited {
		st.rateLimited++
		if retryAfter == 0 && ce.Window.Spent {
			retryAfter = ce.Window.Reset // the window's reset is the server's wait
		}
		var changed bool
		changed, burst = p.lim.refused(st.ticket, p.inFlight)
		r.limitChanged(p, changed)
	}
	n := st.attempts - st.rateLimited
	if rateLimited {
		n = st.rateLimited
	}
	wait := r.backoff(n, retryAfter)
	switch {
	case ce.Kind == model.ErrQuota:
		r.halt(QuotaExhausted, "quota exhausted: "+ce.Error())
	case ce.Kind == model.ErrAuth:
		// Not the call's fault: store nothing, stop, and let the user fix the key.
		r.halt(AuthFailed, "the API rejected the key: "+ce.Error())
	case r.systematic(ep, st, ce):
		// The endpoint fails every call the same way: stop before buying
		// or storing more of the same. The call is left for the next run.
	case !ce.Retryable:
		r.failForGood(st, ce, res, now)
	case r.stopped:
		// Dispatch has stopped: the call is left for the next run.
	case retryAfter > r.opts.MaxWait:
		r.halt(WaitTooLong, fmt.Sprintf("server asked to wait %s before retrying, longer than the maximum wait %s: %s",
			retryAfter.Round(time.Second), r.opts.MaxWait, ce.Error()))
	case st.attempts >= r.opts.MaxAttempts:
		r.failForGood(st, ce, res, now)
	case now.Add(wait).Sub(st.first) > r.opts.MaxWait:
		// The call's retry budget is spent. If its endpoint answered
		// nothing in all that time, the endpoint is down, not the call:
		// stop, and leave the call for the next run.
		if ep.lastAnswer.Before(st.first) {
			r.halt(WaitTooLong, r.noAnswerDetail(ep, st, now, wait, ce))
			return
		}
		r.failForGood(st, ce, res, now)
	default:
		st.readyAt = now.Add(wait)
		heap.Push(&p.waiting, st)
		if burst {
			// The 429s come together: the server's wait is the endpoint's.
			p.lim.pause(st.readyAt)
		}
		r.emit(Retrying{
			Index: st.index, Key: st.key, Attempt: st.attempts, Kind: ce.Kind, Cause: ce.Cause(),
			Wait: wait, Until: st.readyAt, Reason: ce.Error(),
		})
	}
}

// noAnswerDetail says why the run stops on an endpoint that answered no
// call in a call's retry budget, with the wait that applied, which is not
// MaxWait itself: a retry that would start after MaxWait is not made, so
// the stop can come before MaxWait has passed (1 s into a 5 s budget, the
// next back-off being 4.5 s); and an attempt runs until its timeout before
// the budget is weighed, so it can come after (2 minutes, the default
// timeout, into a 60 s budget).
func (r *run) noAnswerDetail(ep *endpoint, st *callState, now time.Time, wait time.Duration, ce *CallError) string {
	waited := now.Sub(st.first)
	if waited > r.opts.MaxWait {
		return fmt.Sprintf("%s answered no call for %s, past the maximum wait of %s: an attempt is let run (up to its timeout, %s) before the wait is checked: %s",
			ep.ep.Name, shortDuration(waited), shortDuration(r.opts.MaxWait), shortDuration(r.timeout(st.call)), ce.Error())
	}
	return fmt.Sprintf("%s answered no call in %s, and the next retry, %s later, would start past the maximum wait of %s: %s",
		ep.ep.Name, shortDuration(waited), shortDuration(wait), shortDuration(r.opts.MaxWait), ce.Error())
}

// shortDuration rounds d for people: to the second from a minute, to a
// tenth of a second from a second, else to the millisecond.
func shortDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// failForGood ends a call that failed for good.
func (r *run) failForGood(st *callState, ce *CallError, res attemptResult, now time.Time) {
	resp := r.response(st, res, now)
	resp.Error = ce.Error()
	resp.ErrorKind = ce.Kind
	ep := st.ep
	if !ep.probe.succeeded && ep.probe.sig != "" && systematicSignature(ce) == ep.probe.sig {
		// Maybe the first of a systematic failure: not saved until
		// the endpoint shows it can answer (see endpoint.held).
		ep.held = append(ep.held, heldFailure{st: st, resp: resp})
		return
	}
	r.finish(st, resp)
}

// windowSpent pauses p until a rate-limit window the headers say is spent
// resets: every call sent before then would be refused. A reset beyond
// MaxWait is not waited for here; a 429 that follows stops the run.
func (r *run) windowSpent(p *pool, w Window, now time.Time) {
	if w.Spent && w.Reset > 0 && w.Reset <= r.opts.MaxWait {
		p.lim.pause(now.Add(w.Reset))
	}
}

// systematic records a failed attempt on ep's probe and, when it shows that
// the endpoint fails every call the same way, stops the run and reports
// true.
func (r *run) systematic(ep *endpoint, st *callState, ce *CallError) bool {
	need := min(r.opts.SystematicAfter, ep.total)
	was := ep.probe.sig
	counted := ep.probe.record(st.index, ce)
	if ep.probe.sig != was {
		r.saveHeld(ep) // the failures held differ from this one: not systematic
	}
	if !counted || need < 2 || len(ep.probe.calls) < need {
		return false
	}
	r.halt(SystematicFailure, fmt.Sprintf("%s: the first %d calls all failed the same way, and none succeeded: %s%s",
		ep.ep.Name, len(ep.probe.calls), ep.probe.first, systematicAdvice(ce, ep.ep.Provider)))
	return true
}

// saveHeld saves ep's held failures: they were calls' own failures.
func (r *run) saveHeld(ep *endpoint) {
	held := ep.held
	ep.held = nil
	for _, h := range held {
		r.finish(h.st, h.resp)
	}
}

// releaseHeld, when the run is ending, saves the held failures, unless it
// stopped on a systematic failure: then they are dropped, left for the next
// run like the calls not made. It reports whether it saved any.
func (r *run) releaseHeld() bool {
	saved := false
	for _, ep := range r.eps {
		if len(ep.held) == 0 {
			continue
		}
		if r.stopped && r.reason == SystematicFailure {
			ep.held = nil
			continue
		}
		r.saveHeld(ep)
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
	st.ep.pool.saving++
	go func() {
		err := r.sink.Save(resp)
		r.saved <- saveResult{st: st, resp: resp, err: err}
	}()
}

func (r *run) handleSaved(s saveResult) {
	if r.sink != nil {
		r.saving--
		s.st.ep.pool.saving--
	}
	if s.err != nil {
		r.halt(SaveFailed, fmt.Sprintf("save response %s: %v", s.st.key, s.err))
		return
	}
	r.done++
	switch {
	case s.resp.ErrorKind.Settled():
		r.settled++
		if s.resp.ErrorKind == model.ErrTooLarge {
			r.tooLarge++
		}
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

func (r *run) limitChanged(p *pool, changed bool) {
	if changed {
		r.emit(ConcurrencyChanged{Provider: p.index, Limit: p.lim.limit})
	}
}

func (r *run) emit(e Event) { r.events <- e }

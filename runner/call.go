package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// Meta is what the runner and providers may know about a call beyond its
// request. The OpenAI provider ignores it; the simulated provider uses it to
// decide how to answer. It is not part of the call's key.
type Meta struct {
	CaseID   string
	Kind     model.Kind
	RuleLine int    // the audited rule's line; 0 for a baseline call
	Variant  string // "baseline" or "-L<line>", e.g. "-L22"
	Judge    string // the judge's model for judge calls; empty for answer calls
}

// Call is one request to make, with who answers it and what it may cost.
// Calls of several models may go in one run.
type Call struct {
	Key     string // the content address; must equal Request.Key() (filled in when empty)
	Request model.Request
	Meta    Meta
	// Provider is the index in Options.Providers of the endpoint that
	// answers this call. An index out of range makes the call fail for good.
	Provider int

	// EstPromptTokens and EstCompletionTokens estimate the call's usage so
	// the budget can be checked before the call is made.
	EstPromptTokens, EstCompletionTokens int
	Price                                Price // this call's model's prices
}

// Price is what a model's tokens cost, in dollars per million tokens. The
// zero Price means free (a local model, the simulator).
type Price struct {
	InputPerMTok float64
	// CachedInputPerMTok is the rate for prompt tokens served from the
	// provider's prompt cache. Zero means no discount is known, and cached
	// tokens are billed at InputPerMTok: a budget must not assume a saving
	// nobody configured.
	CachedInputPerMTok float64
	// CacheWriteInputPerMTok is the rate for prompt tokens written to the
	// provider's cache, which Anthropic bills above the input rate (1.25x
	// for its 5-minute cache). Zero means InputPerMTok.
	CacheWriteInputPerMTok float64
	OutputPerMTok          float64
	// Unknown marks the prices of an endpoint the audit file gives none
	// for: its calls cost 0 here, which is not what they cost.
	Unknown bool
}

// Usage is the tokens one attempt used. Prompt counts every prompt token,
// those read from and written to the cache included.
type Usage struct {
	Prompt, Cached, CacheWrite, Completion int
}

// Cost returns the dollars a call with this usage costs: cached prompt tokens
// at the cached rate, the rest of the prompt at the input rate, completion
// tokens at the output rate. Cached is clamped to [0, prompt] and negative
// counts count as zero, so malformed usage never yields a negative cost.
func (p Price) Cost(prompt, cached, completion int) float64 {
	return p.CostOf(Usage{Prompt: prompt, Cached: cached, Completion: completion})
}

// CostOf is Cost with cache writes: tokens written to the cache are billed at
// CacheWriteInputPerMTok. Cached and CacheWrite are clamped so that together
// they never exceed the prompt.
func (p Price) CostOf(u Usage) float64 {
	prompt, completion := max(u.Prompt, 0), max(u.Completion, 0)
	cached := min(max(u.Cached, 0), prompt)
	written := min(max(u.CacheWrite, 0), prompt-cached)
	cachedRate := p.CachedInputPerMTok
	if cachedRate == 0 {
		cachedRate = p.InputPerMTok
	}
	writeRate := p.CacheWriteInputPerMTok
	if writeRate == 0 {
		writeRate = p.InputPerMTok
	}
	return (float64(prompt-cached-written)*p.InputPerMTok +
		float64(cached)*cachedRate +
		float64(written)*writeRate +
		float64(completion)*p.OutputPerMTok) / 1e6
}

// Scaled returns the price with every rate multiplied by f: a batch API's
// discount is Scaled(0.5).
func (p Price) Scaled(f float64) Price {
	return Price{
		InputPerMTok:           p.InputPerMTok * f,
		CachedInputPerMTok:     p.CachedInputPerMTok * f,
		CacheWriteInputPerMTok: p.CacheWriteInputPerMTok * f,
		OutputPerMTok:          p.OutputPerMTok * f,
		Unknown:                p.Unknown,
	}
}

// Completion is a provider's answer to one attempt.
type Completion struct {
	Text         string
	FinishReason string // "stop", "length", "content_filter", ...: OpenAI's words, which providers map theirs to
	// PromptTokens counts every prompt token; CachedTokens those read from
	// the provider's cache and CacheWriteTokens those written to it.
	PromptTokens, CachedTokens, CacheWriteTokens, CompletionTokens int
}

// usage returns the completion's token counts.
func (c Completion) usage() Usage {
	return Usage{Prompt: c.PromptTokens, Cached: c.CachedTokens, CacheWrite: c.CacheWriteTokens, Completion: c.CompletionTokens}
}

// Charge is the ledger entry of a response whose attempts cost cost
// dollars at price p (model.Charge), nil when nothing was paid: no cost
// and no tokens reported. CacheSavedUSD is what the cache saved on the
// response's own usage.
func (p Price) Charge(r model.Response, cost float64, judge bool) *model.Charge {
	u := Usage{Prompt: r.PromptTokens, Cached: r.CachedTokens, CacheWrite: r.CacheWriteTokens, Completion: r.CompletionTokens}
	if cost == 0 && u.Prompt <= 0 && u.Completion <= 0 {
		return nil
	}
	return &model.Charge{Judge: judge, USD: cost, CacheSavedUSD: max(p.Cost(u.Prompt, 0, u.Completion)-p.CostOf(u), 0), Unpriced: p.Unknown}
}

// Provider answers calls. Complete is called from many goroutines at once and
// must be safe for concurrent use. It must return promptly once ctx is done
// (the runner applies the per-attempt timeout and cancellation through ctx).
// It reports failures as a *CallError so the runner can decide whether to
// retry; any other error is treated as a retryable transport failure. A
// successful Completion whose FinishReason is "content_filter" is recorded as
// a content-filter error by the runner, not as an answer.
type Provider interface {
	Complete(ctx context.Context, call Call) (Completion, error)
}

// CallError is how a provider reports a failed attempt. Its message must not
// contain secrets (API keys, credentials in URLs): it is stored and shown.
type CallError struct {
	Kind       model.ErrorKind
	Status     int           // HTTP status; 0 when there was no HTTP response
	RetryAfter time.Duration // the server's minimum wait before retrying; 0 when not given
	Retryable  bool          // another attempt may succeed
	// Unreachable marks a failure to reach the endpoint at all (connection
	// refused, unknown host, a failed dial or TLS handshake): the endpoint's
	// fault, not the call's, and the same for every call.
	Unreachable bool
	// Timeout marks an attempt that ran out of time: the call's timeout,
	// or a network timeout.
	Timeout bool
	Msg     string // what went wrong, for people
}

// RetryCause names why a call is tried again, in the words the screens
// count retries by.
type RetryCause string

// The causes of a retry.
const (
	CauseRateLimit  RetryCause = "rate limit"   // HTTP 429
	CauseServer     RetryCause = "server error" // HTTP 5xx
	CauseConnection RetryCause = "connection"   // no HTTP response: reset, refused, EOF
	CauseTimeout    RetryCause = "timeout"      // no answer in time, or HTTP 408
	CauseOther      RetryCause = "other"        // a malformed body, a conflict
)

// Cause classifies the error as a reason to retry.
func (e *CallError) Cause() RetryCause {
	switch {
	case e.Kind == model.ErrRateLimited || e.Status == 429:
		return CauseRateLimit
	case e.Timeout || e.Status == 408:
		return CauseTimeout
	case e.Status >= 500:
		return CauseServer
	case e.Kind == model.ErrTransport && e.Status == 0:
		return CauseConnection
	}
	return CauseOther
}

// isTimeout reports whether a transport error is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Error formats the error as "kind (HTTP status): message", leaving out the
// status when there was none.
func (e *CallError) Error() string {
	kind := string(e.Kind)
	if kind == "" {
		kind = "error"
	}
	msg := e.Msg
	if msg == "" {
		msg = "no detail"
	}
	if e.Status > 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", kind, e.Status, msg)
	}
	return fmt.Sprintf("%s: %s", kind, msg)
}

// Sink stores the outcome of calls. Save is called once for each call that
// ends (answered, or failed for good), never for a call cut off by a stop.
// Save may be called from several goroutines at once, so a Sink must be safe
// for concurrent use (a batching store can then commit concurrent saves
// together). A Save that returns an error stops the run with [SaveFailed].
type Sink interface {
	Save(r model.Response) error
}

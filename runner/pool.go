package runner

import (
	"fmt"
	"net/http"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// Endpoint is one provider a run's calls go to.
type Endpoint struct {
	// Name names the endpoint in messages, e.g. "gpt-5 at
	// https://api.openai.com/v1/". It must hold no credentials.
	Name     string
	Provider Provider
	// Concurrency is the starting and maximum number of calls in flight
	// in the endpoint's pool; 0 means Options.Concurrency. A pool shared by
	// several endpoints takes the smallest of theirs.
	Concurrency int
	// Pool names what the endpoint's calls are counted against by the
	// server: its base URL and API key. Endpoints with the same non-empty
	// Pool share one pool (one limit on calls in flight, one adaptive
	// limit, one pause), because a server limits a key, not a model: two
	// judges on one server get the concurrency once between them. Empty
	// means a pool of its own. It must hold no credentials
	// (runner/provider puts a hash of the key in it).
	Pool string
	// Timeout bounds each attempt of this endpoint's calls; 0 means
	// Options.Timeout. A stalled call holds its slot this long.
	Timeout time.Duration
}

// pool is the run's state of one server and key: its calls in flight, its
// limiter (the adaptive limit and the pause), its calls waiting to retry
// and its cursor over the calls not yet started. Several endpoints may
// share it (Endpoint.Pool).
type pool struct {
	index    int // the index of its first endpoint, for ConcurrencyChanged
	lim      *limiter
	inFlight int
	// saving counts this pool's answers received and not yet saved: they
	// hold their slot until Sink.Save returns (see pool.busy).
	saving  int
	waiting retryHeap // calls waiting to retry, earliest first
	next    int       // index of the next call that may be this pool's and never started
	total   int       // calls of this pool to make
}

// endpoint is the run's state of one endpoint: what is about it rather
// than its server, the watch for a systematic failure.
type endpoint struct {
	index int
	ep    Endpoint
	pool  *pool
	total int // calls of this endpoint to make
	probe probe
	// held are calls that failed for good the way the probe is counting,
	// before any call of the endpoint succeeded: they are saved once a
	// call succeeds or the failures turn out to differ, and dropped (left
	// for the next run) when the run stops on a systematic failure, so
	// that a wrong setting stores and prints nothing per call.
	held []heldFailure
	// lastAnswer is when an attempt last got an answer; zero before the
	// first.
	lastAnswer time.Time
}

// heldFailure is a final response not saved yet (see endpoint.held).
type heldFailure struct {
	st   *callState
	resp model.Response
}

// busy reports whether every slot of the pool is taken. An answer holds
// its slot until it is saved: a crash loses at most the calls in flight
// plus the answers not yet saved, so bounding their sum by the limit
// bounds what a crash makes the user pay for twice; and a slow sink slows
// dispatch instead of piling up answers in memory.
func (p *pool) busy() bool { return p.inFlight+p.saving >= p.lim.limit }

// probe watches an endpoint's failures until its first success, to tell an
// endpoint that fails every call the same way (a wrong port, an unknown
// host, a parameter the model rejects) from calls that fail on their own.
type probe struct {
	succeeded bool
	sig       string       // the failure being counted
	first     string       // its first message, for people
	calls     map[int]bool // the distinct calls that failed so
}

// record counts a failed attempt of call i and reports whether it is of a
// systematic kind. Failures of other kinds (5xx, timeouts, 429s) neither
// count nor reset the count: they come and go.
func (p *probe) record(i int, ce *CallError) bool {
	if p.succeeded {
		return false
	}
	sig := systematicSignature(ce)
	if sig == "" {
		return false
	}
	if sig != p.sig {
		p.sig, p.first, p.calls = sig, ce.Error(), map[int]bool{}
	}
	p.calls[i] = true
	return true
}

// systematicSignature names a failure that, repeated over distinct calls
// with no success, means the endpoint or the settings are wrong: the
// endpoint cannot be reached, or it answers a 4xx other than 429 (a 401,
// 403 or quota error stops the run anyway; a content filter is about one
// call). Empty for any other failure.
func systematicSignature(ce *CallError) string {
	switch {
	case ce.Unreachable:
		return "unreachable: " + ce.Msg
	case ce.Status >= 400 && ce.Status < 500 && ce.Status != http.StatusTooManyRequests &&
		ce.Kind != model.ErrContentFilter && ce.Kind != model.ErrAuth && ce.Kind != model.ErrQuota:
		return fmt.Sprintf("HTTP %d %s", ce.Status, ce.Kind)
	}
	return ""
}

// systematicAdvice says what to check after a systematic failure of a
// call to provider p.
func systematicAdvice(ce *CallError, p Provider) string {
	_, anthropic := p.(*Anthropic)
	switch {
	case ce.Unreachable:
		return ". Check base_url (host and port) and that the server is running."
	case ce.Status == http.StatusNotFound && anthropic:
		return ". Check base_url (Anthropic's API is https://api.anthropic.com, without /v1: auditor adds /v1/messages; ANTHROPIC_BASE_URL counts when base_url is not set) and the model's name."
	case ce.Status == http.StatusNotFound:
		return ". Check base_url (OpenAI-compatible servers usually want it to end in /v1/) and the model's name."
	default:
		return ". The endpoint rejects the request as configured: check the model's name and settings (max_tokens or max_completion_tokens, temperature, extra_body) in the audit file."
	}
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

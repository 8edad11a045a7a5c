package model

import "time"

// ErrorKind classifies why a call has no usable answer. Errors are their own
// state: they are counted and shown apart, never as a pass or a failure.
// Most are retried on the next run; a truncated, empty or oversized answer
// is not (see Settled).
type ErrorKind string

// The kinds of call error.
const (
	ErrNone          ErrorKind = ""
	ErrTransport     ErrorKind = "transport"      // connection failures, timeouts, 5xx after all retries
	ErrRateLimited   ErrorKind = "rate_limited"   // 429 after all retries or beyond --max-wait
	ErrQuota         ErrorKind = "quota"          // quota or credit exhausted
	ErrContentFilter ErrorKind = "content_filter" // the provider refused to answer
	ErrBadResponse   ErrorKind = "bad_response"   // the body could not be understood
	ErrRequest       ErrorKind = "request"        // 4xx other than 401, 403 and 429: the request itself is wrong
	ErrAuth          ErrorKind = "auth"           // 401 or 403: the key is wrong or lacks access; stops the run
	// ErrTruncated is an answer cut off by the token limit (finish_reason
	// "length", Anthropic's stop_reason "max_tokens"). Its text is kept but
	// never graded: half an answer is neither a pass nor a failure.
	ErrTruncated ErrorKind = "truncated"
	// ErrEmpty is an answer with no text, typically a reasoning model that
	// spent its whole token budget on reasoning.
	ErrEmpty ErrorKind = "empty"
	// ErrTooLarge is a response larger than any answer within the call's
	// token limit can be (runner.AnswerLimit): auditor stopped reading it
	// there, so no text is kept and nothing is graded. A model cannot write
	// it, so asking again would only buy it again.
	ErrTooLarge ErrorKind = "too_large"
)

// Settled reports whether an error of this kind is the call's outcome at
// its key, not a failure to get one: truncated, empty and oversized
// answers. They are not retried on the next run. Asking again until an answer fits would
// keep the short answers and drop the long ones, and long answers are not
// like short ones (they violate more, or less): the failure rate would be
// biased. Raising the limit changes the request, hence the key, and asks
// everything afresh.
func (k ErrorKind) Settled() bool { return k == ErrTruncated || k == ErrEmpty || k == ErrTooLarge }

// Advice says what to do about calls that ended with this kind of error,
// for people; empty when there is nothing specific to say.
func (k ErrorKind) Advice() string {
	switch k {
	case ErrTruncated:
		return "answers hit the token limit: raise max_completion_tokens (reasoning models: gpt-5, o-series) or max_tokens in the audit file; that asks every call again"
	case ErrEmpty:
		return "answers came back empty: a reasoning model may have spent every token on reasoning; raise max_completion_tokens or lower reasoning_effort (extra_body)"
	case ErrTooLarge:
		return "the endpoint sent more bytes than an answer within the token limit can take, which no model writes: check that base_url is the model's API (a proxy or a test server may be echoing); run --retry-truncated asks again"
	case ErrRateLimited:
		return "the provider kept rate-limiting: lower concurrency or run again later"
	case ErrRequest:
		return "the endpoint rejected the request: check the model's name and settings (max_tokens or max_completion_tokens, temperature, extra_body)"
	case ErrTransport:
		return "the endpoint could not be reached or failed: check base_url and that the server is up, then run again"
	}
	return ""
}

// Response is the stored outcome of one call.
type Response struct {
	Key              string    `json:"key"`
	Model            string    `json:"model"`
	Text             string    `json:"text"`
	FinishReason     string    `json:"finish_reason"`
	PromptTokens     int       `json:"prompt_tokens"`
	CachedTokens     int       `json:"cached_tokens"`
	CacheWriteTokens int       `json:"cache_write_tokens,omitempty"` // prompt tokens written to the provider's cache
	CompletionTokens int       `json:"completion_tokens"`
	LatencyMS        int64     `json:"latency_ms"`
	Attempts         int       `json:"attempts"`
	Error            string    `json:"error,omitempty"` // empty when the call succeeded
	ErrorKind        ErrorKind `json:"error_kind,omitempty"`
	// Batched marks an answer collected from a provider's batch API, billed
	// at the batch discount.
	Batched bool      `json:"batched,omitempty"`
	At      time.Time `json:"at"`
	// Charge, when set, is what this response was paid: the store appends
	// it to its spend ledger with the response (and also when an answer
	// already stored keeps the response from being kept). It is not read
	// back with the response: the ledger holds it.
	Charge *Charge `json:"-"`
}

// Charge is one payment in an audit's spend ledger: what the attempts that
// ended in one stored response cost, at the prices the audit file gave
// when they were made. Every paid call has one, whatever became of its
// response later (replaced when asked again, or never kept), so spend
// never forgets an answer that was asked again.
type Charge struct {
	// ID identifies the payment, so that writing it twice (a batch
	// collected again after a crash) counts it once. Empty: the response's
	// key and time.
	ID string `json:"id,omitempty"`
	// Judge marks a judge's call (grading or re-asked), not an answer of a
	// model under test.
	Judge bool `json:"judge,omitempty"`
	// USD is what the attempts cost, by the usage the provider reported;
	// CacheSavedUSD what prompt caching saved on them.
	USD           float64 `json:"usd"`
	CacheSavedUSD float64 `json:"cache_saved_usd,omitempty"`
	// Unpriced marks a call to an endpoint whose prices the audit file did
	// not give: its USD (0) is not what it cost.
	Unpriced bool `json:"unpriced,omitempty"`
}

// Paid is a ledger entry as the store reads it back: the charge and the
// usage of the response it was written with.
type Paid struct {
	Charge
	Model                                                          string
	PromptTokens, CachedTokens, CacheWriteTokens, CompletionTokens int
	Batched                                                        bool
	At                                                             time.Time
}

// OK reports whether the call produced an answer that can be graded.
func (r Response) OK() bool { return r.Error == "" }

// Settled reports whether the call needs no new attempt on the next run:
// it was answered, or its answer was truncated or empty (ErrorKind.Settled).
func (r Response) Settled() bool { return r.OK() || r.ErrorKind.Settled() }

// Span is a half-open byte range [Start, End) in a response's text. The zero
// Span (0, 0) means no span.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Empty reports whether the span covers nothing.
func (s Span) Empty() bool { return s.End <= s.Start }

// Grade is one grader's judgement of one response.
type Grade struct {
	Grader  string `json:"grader"`  // "predicate" or "judge:<model>"
	Version string `json:"version"` // content hash of the predicate, or of judge model + rubric
	Pass    bool   `json:"pass"`    // the response is acceptable for its case
	Reason  string `json:"reason"`  // why it failed (the failing check's reason); empty on pass
	Check   int    `json:"check"`   // 1-based index of the deciding check; 0 when none failed
	Span    Span   `json:"span"`    // the matched text that decided, for highlighting
	// Unparseable marks a grade the grader could not give (a judge answer with
	// no VERDICT line, an exec predicate that answered nonsense). Such a grade
	// is neither pass nor failure and is counted apart.
	Unparseable bool `json:"unparseable,omitempty"`
}

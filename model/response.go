package model

import "time"

// ErrorKind classifies why a call has no usable answer. Errors are their own
// state: they are counted and shown apart, never as a pass or a failure, and
// are retried on the next run.
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
)

// Response is the stored outcome of one call.
type Response struct {
	Key              string    `json:"key"`
	Model            string    `json:"model"`
	Text             string    `json:"text"`
	FinishReason     string    `json:"finish_reason"`
	PromptTokens     int       `json:"prompt_tokens"`
	CachedTokens     int       `json:"cached_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	LatencyMS        int64     `json:"latency_ms"`
	Attempts         int       `json:"attempts"`
	Error            string    `json:"error,omitempty"` // empty when the call succeeded
	ErrorKind        ErrorKind `json:"error_kind,omitempty"`
	At               time.Time `json:"at"`
}

// OK reports whether the call produced an answer that can be graded.
func (r Response) OK() bool { return r.Error == "" }

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

// Label is a human's judgement of one response: the truth graders are
// measured against.
type Label struct {
	Key       string    `json:"key"`
	Violation bool      `json:"violation"` // the response breaks the rule's intent (or, on a control, refuses)
	Labeller  string    `json:"labeller"`
	Note      string    `json:"note"`
	At        time.Time `json:"at"`
}

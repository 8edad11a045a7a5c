package runner

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/auditor-dev/auditor/model"
)

// An answer is untrusted input: an endpoint can send any number of bytes
// for an answer of max_tokens = 300 (a proxy echoing a file, a broken or
// hostile server), and every byte read is held in memory, stored, shown
// and handed to the judges. So the providers stop reading a response at
// AnswerLimit bytes: a model writes at most its token limit, and the
// limit allows for far more bytes a token than any tokenizer produces.
//
// How it is derived: a token of o200k (OpenAI's tokenizer) or Claude's is
// about 4 bytes of English text, or 1 to 3 characters of other scripts (3
// bytes each in UTF-8, 6 to 12 once escaped in JSON as \uXXXX); a token
// of repeated punctuation or spaces can be longer, and a reasoning model's
// thinking text counts against the same limit. 64 bytes a token is 16
// times English's and 5 times the worst escaped script; the megabyte on
// top holds the JSON around the text (ids, usage, a thinking block's
// signature) and a short answer's whole response many times over. With
// max_tokens = 300 an answer may take 1 MiB + 19,200 bytes; a response
// beyond that is an ErrTooLarge error, settled: stored without its text,
// not graded, not asked again. Per-token data asked for through extra_body
// ("logprobs", up to 20 alternatives a token) gets 4 KiB a token instead.
const (
	answerEnvelope        = 1 << 20
	answerBytesPerToken   = 64
	logprobsBytesPerToken = 4 << 10
	// assumedTokenLimit stands in for the token limit of a request that
	// sets none (the audit file always sets one; a bare runner.Call may
	// not): the most tokens today's models write in one answer.
	assumedTokenLimit = 128_000
)

// AnswerLimit is the most bytes of a response body the providers read for
// an answer to r: 1 MiB plus 64 bytes per token of r's limit (see above).
// A batch's result line is held to the same limit.
func AnswerLimit(r model.Request) int64 {
	tokens := max(r.MaxTokens, r.MaxCompletionTokens)
	if tokens <= 0 {
		tokens = assumedTokenLimit
	}
	perToken := int64(answerBytesPerToken)
	if _, ok := r.ExtraBody["logprobs"]; ok {
		perToken = logprobsBytesPerToken
	}
	return answerEnvelope + int64(tokens)*perToken
}

// metaLimit bounds the other responses of the batch APIs (a batch's
// status, a page of the batch list, an uploaded file's record): small
// JSON objects, which a megabyte holds hundreds of times over.
const metaLimit = 8 << 20

// tooLargeError is what reading a body past its limit returns.
type tooLargeError struct{ limit int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("the response is larger than %d bytes", e.limit)
}

// asTooLarge returns the tooLargeError in err's chain, or nil.
func asTooLarge(err error) *tooLargeError {
	var tl *tooLargeError
	if errors.As(err, &tl) {
		return tl
	}
	return nil
}

// limitedBody is a response body that fails with a tooLargeError once more
// than limit bytes are read from it, so a caller reading it whole (the
// SDKs' io.ReadAll) holds at most limit bytes.
type limitedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the limit: the body may end exactly here.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &tooLargeError{limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// limitBody is an SDK middleware (openai-go's and anthropic-sdk-go's have
// the same type) that caps the body of the response at limit bytes.
func limitBody(limit int64) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		res, err := next(req)
		if res != nil && res.Body != nil {
			res.Body = &limitedBody{rc: res.Body, left: limit, limit: limit}
		}
		return res, err
	}
}

// tooLargeCallError is the settled error of a response cut off at its
// limit: it names the limit and how it follows from the token limit.
func tooLargeCallError(r model.Request, status int) *CallError {
	tokens := max(r.MaxTokens, r.MaxCompletionTokens)
	perToken := answerBytesPerToken
	if _, ok := r.ExtraBody["logprobs"]; ok {
		perToken = logprobsBytesPerToken
	}
	limit := fmt.Sprintf("max_tokens = %d", tokens)
	if tokens <= 0 {
		limit = fmt.Sprintf("%d tokens, the request setting no max_tokens", assumedTokenLimit)
	}
	return &CallError{Kind: model.ErrTooLarge, Status: status, Msg: fmt.Sprintf(
		"the response passed %d bytes (1 MiB + %d bytes a token of %s), more than any answer within its token limit; "+
			"auditor stopped reading it: its text is not kept or graded, and it is charged at its estimated prompt and whole token limit; %s",
		AnswerLimit(r), perToken, limit, model.ErrTooLarge.Advice())}
}

// tooLargeCost is what an oversized response is charged: its estimated
// prompt and its whole token limit, the most a provider bills for one
// answer (its usage, at the end of the body, was never read).
func tooLargeCost(c *Call) float64 {
	tokens := max(c.Request.MaxTokens, c.Request.MaxCompletionTokens)
	if tokens <= 0 {
		tokens = c.EstCompletionTokens
	}
	return c.Price.Cost(c.EstPromptTokens, 0, tokens)
}

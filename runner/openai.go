package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/auditor-dev/auditor/model"
)

// DefaultBaseURL is the OpenAI API, used when OpenAIConfig.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1/"

// OpenAIConfig configures an OpenAI-compatible endpoint.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1/" or
	// "http://localhost:11434/v1/"; requests go to BaseURL + "chat/completions".
	// Empty means DefaultBaseURL. The environment is not consulted: the
	// caller decides defaults.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	// The caller reads it from the environment. It never appears in an error
	// this package returns.
	APIKey string
	// HTTPClient is used as given when set. When nil, the provider builds one
	// whose transport keeps up to 128 idle connections per host, so a run's
	// workers reuse connections instead of redialling.
	HTTPClient *http.Client
	// RequestLog, when set, records every request and response (--debug).
	RequestLog *RequestLog
	// Name names the endpoint in the request log.
	Name string
}

// OpenAI is a Provider for OpenAI-compatible chat-completions APIs (OpenAI,
// Anthropic's compatible endpoint, OpenRouter, vLLM, llama.cpp, Ollama). It
// makes exactly one HTTP request per Complete (the SDK's own retries are off:
// the runner retries) and is safe for concurrent use.
//
// The request carries model, messages, temperature (unless the request
// omits it: reasoning models accept only their default), max_tokens or
// max_completion_tokens (whichever the request sets: OpenAI-compatible
// servers such as vLLM, llama.cpp and Ollama know max_tokens, OpenAI's
// reasoning models only max_completion_tokens), seed when set, the
// request's extra body fields and its extra headers.
type OpenAI struct {
	chat      openai.ChatCompletionService
	files     openai.FileService  // for the Batch API
	batches   openai.BatchService // for the Batch API
	key       string
	transport *http.Transport // owned; nil when the caller gave the client
}

// NewOpenAI returns a provider for the endpoint in cfg. It fails when the base
// URL is not an absolute http(s) URL or the key cannot be sent in a header.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := checkEndpoint("openai", base, cfg.APIKey); err != nil {
		return nil, err
	}
	o := &OpenAI{key: cfg.APIKey}
	var client *http.Client
	client, o.transport = httpClient(cfg.HTTPClient, cfg.RequestLog, cfg.Name, cfg.APIKey)
	// A service rather than openai.NewClient: NewClient reads OPENAI_* from
	// the environment, and the caller must decide what is sent and where.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
	}
	o.chat = openai.NewChatCompletionService(opts...)
	o.files = openai.NewFileService(opts...)
	o.batches = openai.NewBatchService(opts...)
	return o, nil
}

// CloseIdleConnections closes the provider's idle connections. It does
// nothing when the caller supplied the HTTP client.
func (o *OpenAI) CloseIdleConnections() {
	if o.transport != nil {
		o.transport.CloseIdleConnections()
	}
}

// Complete makes one chat-completions request for call. Failures are returned
// as *CallError (see classify for the mapping), except that a cancelled or
// expired ctx yields an error wrapping ctx.Err().
func (o *OpenAI) Complete(ctx context.Context, call Call) (Completion, error) {
	params, err := chatParams(call.Request)
	if err != nil {
		return Completion{}, err
	}
	var res *http.Response
	opts := []option.RequestOption{option.WithResponseInto(&res), option.WithMiddleware(limitBody(AnswerLimit(call.Request)))}
	for k, v := range call.Request.ExtraHeaders {
		opts = append(opts, option.WithHeader(k, v))
	}
	cc, err := o.chat.New(ctx, params, opts...)
	status := 0
	if res != nil {
		status = res.StatusCode
	}
	if err != nil {
		if asTooLarge(err) != nil && ctx.Err() == nil && status < 400 {
			return Completion{}, withWindow(tooLargeCallError(call.Request, status), res)
		}
		return Completion{}, withWindow(o.classify(ctx, res, err), res)
	}
	comp, err := o.completion(cc, status)
	if res != nil {
		comp.Window = rateWindow(res.Header, time.Now())
	}
	return comp, withWindow(err, res)
}

// withWindow adds what res's rate-limit headers say to a CallError.
func withWindow(err error, res *http.Response) error {
	var ce *CallError
	if res != nil && errors.As(err, &ce) {
		ce.Window = rateWindow(res.Header, time.Now())
	}
	return err
}

// completion reads a chat completion that came with status.
func (o *OpenAI) completion(cc *openai.ChatCompletion, status int) (Completion, error) {
	if cc == nil || len(cc.Choices) == 0 {
		msg := "response has no choices"
		if cc != nil {
			if m := embeddedErrorMessage(cc.RawJSON()); m != "" {
				msg += ": " + m
			}
		}
		return Completion{}, &CallError{Kind: model.ErrBadResponse, Status: status, Retryable: true, Msg: o.clean(msg)}
	}
	ch := cc.Choices[0]
	text := ch.Message.Content
	if text == "" && ch.Message.Refusal != "" {
		// A refusal is an answer; control cases exist to count them.
		text = ch.Message.Refusal
	}
	if text == "" && ch.FinishReason == "" && cc.Usage.CompletionTokens == 0 {
		// No text, no finish reason and no usage: not an answer at all,
		// which some proxies send on an upstream failure. Another attempt
		// may get one.
		return Completion{}, &CallError{Kind: model.ErrBadResponse, Status: status, Retryable: true, Msg: "the response's choice has no message, finish reason or usage"}
	}
	return Completion{
		Text:             redact(text, o.key),
		FinishReason:     ch.FinishReason,
		PromptTokens:     int(cc.Usage.PromptTokens),
		CachedTokens:     int(cc.Usage.PromptTokensDetails.CachedTokens),
		CompletionTokens: int(cc.Usage.CompletionTokens),
	}, nil
}

// chatParams builds the request body for r.
func chatParams(r model.Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:    r.Model,
		Messages: make([]openai.ChatCompletionMessageParamUnion, 0, len(r.Messages)),
	}
	if r.API != "" {
		return p, &CallError{Kind: model.ErrRequest, Msg: fmt.Sprintf("a request for the %s API cannot be sent to an OpenAI-compatible endpoint", r.API)}
	}
	if !r.OmitTemperature {
		p.Temperature = openai.Float(r.Temperature)
	}
	if r.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(r.MaxTokens))
	}
	if r.MaxCompletionTokens > 0 {
		p.MaxCompletionTokens = openai.Int(int64(r.MaxCompletionTokens))
	}
	if len(r.ExtraBody) > 0 {
		p.SetExtraFields(r.ExtraBody)
	}
	if r.Seed != nil {
		p.Seed = openai.Int(*r.Seed)
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system":
			p.Messages = append(p.Messages, openai.SystemMessage(m.Content))
		case "user":
			p.Messages = append(p.Messages, openai.UserMessage(m.Content))
		case "assistant":
			p.Messages = append(p.Messages, openai.AssistantMessage(m.Content))
		case "developer":
			p.Messages = append(p.Messages, openai.DeveloperMessage(m.Content))
		default:
			return p, &CallError{Kind: model.ErrRequest, Msg: fmt.Sprintf("message %d has unknown role %q", i+1, m.Role)}
		}
	}
	return p, nil
}

// classify maps an SDK failure to a CallError:
//
//   - 429 with "insufficient_quota" as error code or type, and 402: ErrQuota
//     (the runner stops the run);
//   - other 429: ErrRateLimited, retryable;
//   - 408, 409, 5xx: ErrTransport, retryable;
//   - a 4xx whose error code is "content_filter" or "content_policy_violation":
//     ErrContentFilter, not retryable;
//   - other 4xx: ErrRequest, not retryable;
//   - a 2xx whose body cannot be decoded: ErrBadResponse, retryable;
//   - no response (reset, EOF, refused, network timeout): ErrTransport,
//     retryable.
//
// An "x-should-retry: true|false" header overrides retryability, as the API
// documents. Retry-After comes from the "retry-after-ms" and "Retry-After"
// headers (seconds or an HTTP date), whichever is later.
func (o *OpenAI) classify(ctx context.Context, res *http.Response, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("runner: openai: %w", ctx.Err())
	}
	if res != nil && res.StatusCode >= 400 {
		return o.httpError(res, err)
	}
	if res != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		msg := err.Error()
		if !errors.As(err, &syn) && !errors.As(err, &typ) && strings.Contains(msg, "error reading response body") {
			return &CallError{Kind: model.ErrTransport, Status: res.StatusCode, Retryable: true,
				Msg: o.clean("reading the response: " + transportMessage(err))}
		}
		return &CallError{Kind: model.ErrBadResponse, Status: res.StatusCode, Retryable: true,
			Msg: o.clean("malformed response body: " + msg)}
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &CallError{Kind: model.ErrTransport, Retryable: true, Unreachable: unreachable(err), Timeout: isTimeout(err), Msg: o.clean(transportMessage(err))}
	}
	return &CallError{Kind: model.ErrRequest, Msg: o.clean(err.Error())}
}

// httpError classifies a response with status >= 400.
func (o *OpenAI) httpError(res *http.Response, err error) *CallError {
	status := res.StatusCode
	code, typ, msg := apiErrorFields(err, res)
	ce := &CallError{Status: status, RetryAfter: retryAfter(res.Header, time.Now())}
	switch {
	case status == http.StatusPaymentRequired,
		status == http.StatusTooManyRequests && (code == "insufficient_quota" || typ == "insufficient_quota"):
		ce.Kind = model.ErrQuota
	case status == http.StatusTooManyRequests:
		ce.Kind, ce.Retryable = model.ErrRateLimited, true
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		ce.Kind = model.ErrAuth
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		ce.Kind, ce.Retryable = model.ErrTransport, true
	case code == "content_filter" || code == "content_policy_violation" || typ == "content_filter":
		ce.Kind = model.ErrContentFilter
	default:
		ce.Kind = model.ErrRequest
	}
	if ce.Kind != model.ErrQuota && ce.Kind != model.ErrAuth {
		switch res.Header.Get("x-should-retry") {
		case "true":
			ce.Retryable = true
		case "false":
			ce.Retryable = false
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if code != "" && !strings.Contains(msg, code) {
		msg += " [" + code + "]"
	}
	ce.Msg = o.clean(msg)
	return ce
}

// apiErrorFields returns the error code, type and message the API gave,
// from the SDK's error when it parsed one, else from the body itself (some
// compatible servers send {"error": "text"}, {"message": ...} or a numeric
// code, which the SDK does not parse).
func apiErrorFields(err error, res *http.Response) (code, typ, msg string) {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		code, typ, msg = apiErr.Code, apiErr.Type, apiErr.Message
	}
	if code != "" || msg != "" || res.Body == nil {
		return code, typ, msg
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return errorBodyFields(body)
}

// errorBodyFields parses the error object of an API error body.
func errorBodyFields(body []byte) (code, typ, msg string) {
	var top struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(body, &top) != nil {
		return "", "", ""
	}
	var obj struct {
		Code    any    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	var s string
	switch {
	case len(top.Error) > 0 && json.Unmarshal(top.Error, &obj) == nil:
		if obj.Code != nil {
			code = fmt.Sprint(obj.Code)
		}
		return code, obj.Type, obj.Message
	case len(top.Error) > 0 && json.Unmarshal(top.Error, &s) == nil:
		return "", "", s
	case top.Message != "":
		return "", "", top.Message
	case top.Detail != nil:
		if d, ok := top.Detail.(string); ok {
			return "", "", d
		}
	}
	return "", "", ""
}

// embeddedErrorMessage returns the message of an error object sent with a
// success status, as some proxies do.
func embeddedErrorMessage(raw string) string {
	if raw == "" {
		return ""
	}
	_, _, msg := errorBodyFields([]byte(raw))
	return msg
}

// retryAfter returns the server's minimum wait from the "retry-after-ms" and
// "Retry-After" headers (seconds, possibly fractional, or an HTTP date
// relative to now), the later of the two; 0 when neither gives a positive
// wait. Absurd values are capped at a day, which any sane MaxWait refuses.
func retryAfter(h http.Header, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour
	seconds := func(f float64, unit time.Duration) time.Duration {
		if math.IsNaN(f) || f <= 0 {
			return 0
		}
		if f >= float64(ceiling/unit) {
			return ceiling
		}
		return time.Duration(f * float64(unit))
	}
	var d time.Duration
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			d = seconds(f, time.Millisecond)
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			d = max(d, seconds(f, time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = max(d, min(t.Sub(now), ceiling))
		}
	}
	return d
}

// transportMessage describes a connection failure without the request URL
// (which url.Error includes and which may carry credentials).
func transportMessage(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection before answering (EOF)"
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "network timeout"
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// clean makes a message safe to store and show (see cleanMessage).
func (o *OpenAI) clean(s string) string { return cleanMessage(s, o.key) }

// cleanMessage makes a message safe to store and show: the API key is
// replaced (the safety net for servers that echo credentials), control
// characters become spaces, and length is capped.
func cleanMessage(s, key string) string {
	s = redact(s, key)
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	const maxLen = 500
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.TrimSpace(s)
}

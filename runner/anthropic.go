package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/auditor-dev/auditor/model"
)

// DefaultAnthropicBaseURL is Anthropic's API root, used when
// AnthropicConfig.BaseURL is empty.
const DefaultAnthropicBaseURL = "https://api.anthropic.com/"

// AnthropicConfig configures Anthropic's native Messages API.
type AnthropicConfig struct {
	// BaseURL is the API root; requests go to BaseURL + "v1/messages". A
	// trailing "/v1" is dropped, so the URL of Anthropic's OpenAI-compatible
	// endpoint works too. Empty means DefaultAnthropicBaseURL; the
	// environment is not consulted.
	BaseURL string
	// APIKey is sent as x-api-key; empty sends none (a keyless proxy).
	APIKey     string
	HTTPClient *http.Client // as in OpenAIConfig
	RequestLog *RequestLog  // as in OpenAIConfig
	Name       string       // names the endpoint in the request log
}

// Anthropic is a Provider for Anthropic's native Messages API (the official
// Go SDK), for requests whose API is model.APIAnthropic. It makes exactly
// one HTTP request per Complete (the SDK's retries are off: the runner
// retries) and is safe for concurrent use.
//
// The system prompt goes as a system block marked for prompt caching
// (cache_control ephemeral): every call of an audit shares one of a few
// system prompts, so all but the first read it from the cache (prompts
// under the model's minimum, about 1,024 tokens, are simply not cached).
// Temperature is sent unless the request omits it, max_tokens always (the
// API requires it), the seed never (the API has none).
type Anthropic struct {
	msgs      anthropic.MessageService
	key       string
	transport *http.Transport
}

// NewAnthropic returns a provider for the endpoint in cfg. It fails when the
// base URL is not an absolute http(s) URL or the key cannot be sent in a
// header.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultAnthropicBaseURL
	}
	if err := checkEndpoint("anthropic", base, cfg.APIKey); err != nil {
		return nil, err
	}
	u, _ := url.Parse(base)
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1") + "/"
	a := &Anthropic{key: cfg.APIKey}
	var client *http.Client
	client, a.transport = httpClient(cfg.HTTPClient, cfg.RequestLog, cfg.Name, cfg.APIKey)
	// A service rather than anthropic.NewClient: NewClient reads
	// ANTHROPIC_* variables and config files, and the caller must decide
	// what is sent and where.
	opts := []option.RequestOption{
		option.WithBaseURL(u.String()),
		option.WithHTTPClient(client),
		option.WithMaxRetries(0),
		// The runner's per-attempt timeout governs through ctx; without a
		// timeout of its own the SDK refuses a large max_tokens unstreamed.
		option.WithRequestTimeout(24 * time.Hour),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	a.msgs = anthropic.NewMessageService(opts...)
	return a, nil
}

// CloseIdleConnections closes the provider's idle connections. It does
// nothing when the caller supplied the HTTP client.
func (a *Anthropic) CloseIdleConnections() {
	if a.transport != nil {
		a.transport.CloseIdleConnections()
	}
}

// Complete makes one Messages API request for call.
func (a *Anthropic) Complete(ctx context.Context, call Call) (Completion, error) {
	params, opts, err := anthropicParams(call.Request)
	if err != nil {
		return Completion{}, err
	}
	var res *http.Response
	opts = append(opts, option.WithResponseInto(&res), option.WithMiddleware(limitBody(AnswerLimit(call.Request))))
	msg, err := a.msgs.New(ctx, params, opts...)
	status := 0
	if res != nil {
		status = res.StatusCode
	}
	if err != nil {
		var apiErr *anthropic.Error
		if errors.As(err, &apiErr) && apiErr.Response != nil {
			res = apiErr.Response
		}
		if asTooLarge(err) != nil && ctx.Err() == nil && status < 400 {
			return Completion{}, withWindow(tooLargeCallError(call.Request, status), res)
		}
		return Completion{}, withWindow(a.classify(ctx, res, err), res)
	}
	if msg == nil || msg.Type != "message" {
		return Completion{}, withWindow(&CallError{Kind: model.ErrBadResponse, Status: status, Retryable: true,
			Msg: "the response is not a message"}, res)
	}
	comp := a.completion(msg)
	if res != nil {
		comp.Window = rateWindow(res.Header, time.Now())
	}
	return comp, nil
}

// completion reads a message: its text blocks (thinking blocks are not
// the answer) with the key redacted, its usage and its stop reason in
// OpenAI's words.
func (a *Anthropic) completion(msg *anthropic.Message) Completion {
	var text strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			text.WriteString(b.Text)
		}
	}
	u := msg.Usage
	return Completion{
		Text:         redact(text.String(), a.key),
		FinishReason: anthropicFinish(string(msg.StopReason)),
		// input_tokens counts only the prompt tokens after the last cache
		// breakpoint; the prompt is all three.
		PromptTokens:     int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
		CachedTokens:     int(u.CacheReadInputTokens),
		CacheWriteTokens: int(u.CacheCreationInputTokens),
		CompletionTokens: int(u.OutputTokens),
	}
}

// anthropicFinish maps a stop_reason to OpenAI's finish_reason words, which
// the runner classifies: max_tokens (and a full context window) is "length",
// refusal (the safety classifier stopped the answer) is "content_filter".
func anthropicFinish(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens", "model_context_window_exceeded":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return stop
}

// anthropicParams builds the request body and per-request options for r.
func anthropicParams(r model.Request) (anthropic.MessageNewParams, []option.RequestOption, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(r.Model)}
	if r.API != model.APIAnthropic {
		return p, nil, &CallError{Kind: model.ErrRequest, Msg: "a request for an OpenAI-compatible endpoint cannot be sent to Anthropic's Messages API"}
	}
	p.MaxTokens = int64(max(r.MaxTokens, r.MaxCompletionTokens))
	if p.MaxTokens <= 0 {
		return p, nil, &CallError{Kind: model.ErrRequest, Msg: "Anthropic's Messages API needs max_tokens"}
	}
	if !r.OmitTemperature {
		p.Temperature = anthropic.Float(r.Temperature)
	}
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "developer":
			p.System = append(p.System, anthropic.TextBlockParam{Text: m.Content})
		case "user":
			p.Messages = append(p.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case "assistant":
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		default:
			return p, nil, &CallError{Kind: model.ErrRequest, Msg: fmt.Sprintf("message %d has unknown role %q", i+1, m.Role)}
		}
	}
	if n := len(p.System); n > 0 {
		// One breakpoint after the system prompt caches it, and only it:
		// the user message differs from call to call.
		p.System[n-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	var opts []option.RequestOption
	for k, v := range r.ExtraBody {
		opts = append(opts, option.WithJSONSet(k, v))
	}
	for k, v := range r.ExtraHeaders {
		opts = append(opts, option.WithHeader(k, v))
	}
	return p, opts, nil
}

// classify maps an SDK failure to a CallError:
//
//   - 429: ErrRateLimited, retryable, with the retry-after header;
//   - 529 (overloaded): ErrRateLimited too: the API asks for less load, and
//     the pool backs off as for a 429;
//   - 401, 403: ErrAuth; 402, a billing_error or "credit balance is too
//     low": ErrQuota;
//   - 408, 409, 5xx: ErrTransport, retryable;
//   - other 4xx: ErrRequest;
//   - no response: ErrTransport, retryable (Unreachable when the endpoint
//     could not be reached).
//
// An "x-should-retry" header overrides retryability, as for OpenAI.
func (a *Anthropic) classify(ctx context.Context, res *http.Response, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("runner: anthropic: %w", ctx.Err())
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		res = apiErr.Response
	}
	if res != nil && res.StatusCode >= 400 {
		_, typ, msg := "", "", ""
		if apiErr != nil {
			_, typ, msg = errorBodyFields([]byte(apiErr.RawJSON()))
		}
		return a.httpError(res, typ, msg)
	}
	if res != nil {
		return &CallError{Kind: model.ErrBadResponse, Status: res.StatusCode, Retryable: true,
			Msg: a.clean("malformed response body: " + err.Error())}
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &CallError{Kind: model.ErrTransport, Retryable: true, Unreachable: unreachable(err), Timeout: isTimeout(err), Msg: a.clean(transportMessage(err))}
	}
	return &CallError{Kind: model.ErrRequest, Msg: a.clean(err.Error())}
}

// httpError classifies a response with status >= 400 from the error type
// and message of its body ({"type":"error","error":{"type":...,"message":...}}).
func (a *Anthropic) httpError(res *http.Response, typ, msg string) *CallError {
	status := res.StatusCode
	ce := &CallError{Status: status, RetryAfter: retryAfter(res.Header, time.Now())}
	switch {
	case status == http.StatusPaymentRequired || typ == "billing_error" ||
		strings.Contains(strings.ToLower(msg), "credit balance is too low"):
		ce.Kind = model.ErrQuota
	case status == http.StatusTooManyRequests, status == 529:
		ce.Kind, ce.Retryable = model.ErrRateLimited, true
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		ce.Kind = model.ErrAuth
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status >= 500:
		ce.Kind, ce.Retryable = model.ErrTransport, true
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
		if status == 529 {
			msg = "Overloaded"
		}
	}
	if typ != "" && !strings.Contains(msg, typ) {
		msg += " [" + typ + "]"
	}
	ce.Msg = a.clean(msg)
	return ce
}

func (a *Anthropic) clean(s string) string { return cleanMessage(s, a.key) }

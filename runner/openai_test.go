package runner

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

const fakeKey = "sk-test-QQ7zz-distinctive-key-0451"

func newTestOpenAI(t *testing.T, f *fakeAPI) *OpenAI {
	t.Helper()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: f.url(), APIKey: fakeKey, HTTPClient: f.client})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.CloseIdleConnections)
	return o
}

func TestOpenAI_Complete_Success(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	o := newTestOpenAI(t, f)
	seed := int64(7)
	tests := []struct {
		name string
		req  model.Request
		want map[string]any // fields of the request body; nil value: must be absent
	}{
		{
			name: "answer call",
			req:  request("ok|a", 0),
			want: map[string]any{"model": "test-model", "temperature": 1.0, "max_tokens": 100.0, "seed": nil},
		},
		{
			name: "judge call with temperature 0 and seed",
			req: model.Request{Model: "judge", Temperature: 0, Seed: &seed, Messages: []model.Message{
				{Role: "system", Content: "s"}, {Role: "user", Content: "u"}, {Role: "assistant", Content: "a"}, {Role: "user", Content: "ok|b"},
			}},
			want: map[string]any{"model": "judge", "temperature": 0.0, "max_tokens": nil, "seed": 7.0},
		},
	}
	for _, tt := range tests {
		comp, err := o.Complete(context.Background(), Call{Request: tt.req})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if !strings.HasPrefix(comp.Text, "answer to ok|") || comp.FinishReason != "stop" {
			t.Errorf("%s: got %+v", tt.name, comp)
		}
		if comp.PromptTokens != 10 || comp.CachedTokens != 3 || comp.CompletionTokens != 5 {
			t.Errorf("%s: usage %+v", tt.name, comp)
		}
		if comp.Window != (Window{}) {
			t.Errorf("%s: rate-limit window %+v from no headers", tt.name, comp.Window)
		}
		f.mu.Lock()
		body := f.bodies[len(f.bodies)-1]
		auth := f.auth[len(f.auth)-1]
		f.mu.Unlock()
		if auth != "Bearer "+fakeKey {
			t.Errorf("%s: Authorization %q", tt.name, auth)
		}
		for k, v := range tt.want {
			got, ok := body[k]
			if v == nil && ok {
				t.Errorf("%s: %s = %v, want absent", tt.name, k, got)
			}
			if v != nil && got != v {
				t.Errorf("%s: %s = %v, want %v", tt.name, k, got, v)
			}
		}
		msgs, _ := body["messages"].([]any)
		if len(msgs) != len(tt.req.Messages) {
			t.Fatalf("%s: %d messages sent, want %d", tt.name, len(msgs), len(tt.req.Messages))
		}
		for i, m := range msgs {
			mm := m.(map[string]any)
			if mm["role"] != tt.req.Messages[i].Role || mm["content"] != tt.req.Messages[i].Content {
				t.Errorf("%s: message %d = %v", tt.name, i, mm)
			}
		}
	}
}

// An answer whose headers say a window is spent carries it up, so the
// runner can pause the endpoint before the next call is refused.
func TestOpenAI_Complete_SpentWindow(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	o := newTestOpenAI(t, f)
	comp, err := o.Complete(context.Background(), Call{Request: request("okspent3|w", 0)})
	if err != nil || !strings.HasPrefix(comp.Text, "answer to") {
		t.Fatalf("%+v, %v", comp, err)
	}
	if want := (Window{Spent: true, Reset: 3 * time.Second}); comp.Window != want {
		t.Errorf("window %+v, want %+v", comp.Window, want)
	}
}

func TestOpenAI_Complete_Errors(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	o := newTestOpenAI(t, f)
	tests := []struct {
		step       string
		kind       model.ErrorKind
		status     int
		retryable  bool
		retryAfter time.Duration // exact, or a lower bound when minOnly
		minOnly    bool
		msg        string // substring of the message
		window     Window
	}{
		{step: "429", kind: model.ErrRateLimited, status: 429, retryable: true, msg: "Rate limit reached"},
		{step: "429ra2", kind: model.ErrRateLimited, status: 429, retryable: true, retryAfter: 2 * time.Second},
		{step: "429ms1500", kind: model.ErrRateLimited, status: 429, retryable: true, retryAfter: 1500 * time.Millisecond},
		{step: "429date3", kind: model.ErrRateLimited, status: 429, retryable: true, retryAfter: 2 * time.Second, minOnly: true},
		{step: "429spent20", kind: model.ErrRateLimited, status: 429, retryable: true, window: Window{Spent: true, Reset: 20 * time.Second}},
		{step: "quota", kind: model.ErrQuota, status: 429, msg: "insufficient_quota"},
		{step: "402", kind: model.ErrQuota, status: 402, msg: "Insufficient credits"},
		{step: "500", kind: model.ErrTransport, status: 500, retryable: true, msg: "server had an error"},
		{step: "500noretry", kind: model.ErrTransport, status: 500, retryable: false},
		{step: "502html", kind: model.ErrTransport, status: 502, retryable: true, msg: "Bad Gateway"},
		{step: "400", kind: model.ErrRequest, status: 400, msg: "Invalid value"},
		{step: "cf400", kind: model.ErrContentFilter, status: 400, msg: "filtered"},
		{step: "401echo", kind: model.ErrAuth, status: 401, msg: "[REDACTED]"},
		{step: "badjson", kind: model.ErrBadResponse, status: 200, retryable: true, msg: "malformed"},
		{step: "nochoices", kind: model.ErrBadResponse, status: 200, retryable: true, msg: "no choices"},
		{step: "reset", kind: model.ErrTransport, retryable: true},
	}
	for _, tt := range tests {
		_, err := o.Complete(context.Background(), Call{Request: request(tt.step+"|errors", 0)})
		var ce *CallError
		if !errors.As(err, &ce) {
			t.Errorf("%s: error %v is not a *CallError", tt.step, err)
			continue
		}
		if ce.Kind != tt.kind || ce.Status != tt.status || ce.Retryable != tt.retryable {
			t.Errorf("%s: got kind %q status %d retryable %v, want %q %d %v",
				tt.step, ce.Kind, ce.Status, ce.Retryable, tt.kind, tt.status, tt.retryable)
		}
		if tt.minOnly && ce.RetryAfter < tt.retryAfter || !tt.minOnly && ce.RetryAfter != tt.retryAfter {
			t.Errorf("%s: RetryAfter %v, want %v", tt.step, ce.RetryAfter, tt.retryAfter)
		}
		if ce.Window != tt.window {
			t.Errorf("%s: rate-limit window %+v, want %+v", tt.step, ce.Window, tt.window)
		}
		if !strings.Contains(ce.Error(), tt.msg) {
			t.Errorf("%s: message %q lacks %q", tt.step, ce.Error(), tt.msg)
		}
		if strings.Contains(ce.Error(), fakeKey) || strings.Contains(ce.Error(), f.srv.URL) {
			t.Errorf("%s: message %q leaks the key or URL", tt.step, ce.Error())
		}
	}
}

func TestOpenAI_Complete_ConnectionRefused(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	base := f.url()
	f.srv.Close()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: base, APIKey: fakeKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Complete(context.Background(), Call{Request: request("ok|x", 0)})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != model.ErrTransport || !ce.Retryable {
		t.Fatalf("got %v, want retryable transport error", err)
	}
	if strings.Contains(ce.Error(), "127.0.0.1:") && strings.Contains(ce.Error(), "/v1/") {
		t.Errorf("message %q includes the request URL", ce.Error())
	}
}

func TestOpenAI_Complete_CancelledContext(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	o := newTestOpenAI(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := o.Complete(ctx, Call{Request: request("ok|c", 0)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestOpenAI_Complete_UnknownRole(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	o := newTestOpenAI(t, f)
	req := model.Request{Model: "m", Messages: []model.Message{{Role: "tool", Content: "x"}}}
	_, err := o.Complete(context.Background(), Call{Request: req})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != model.ErrRequest || ce.Retryable {
		t.Fatalf("got %v, want non-retryable request error", err)
	}
}

func TestNewOpenAI_Invalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  OpenAIConfig
	}{
		{"relative URL", OpenAIConfig{BaseURL: "api.example.com/v1"}},
		{"bad scheme", OpenAIConfig{BaseURL: "ftp://api.example.com/v1"}},
		{"credentials in a bad URL", OpenAIConfig{BaseURL: "ftp://user:" + fakeKey + "@host/"}},
		{"key with newline", OpenAIConfig{BaseURL: "http://localhost/", APIKey: fakeKey + "\n"}},
	}
	for _, tt := range tests {
		_, err := NewOpenAI(tt.cfg)
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if strings.Contains(err.Error(), fakeKey) {
			t.Errorf("%s: error %q leaks the key", tt.name, err)
		}
	}
	if _, err := NewOpenAI(OpenAIConfig{}); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		hdr  map[string]string
		want time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "0.25"}, 250 * time.Millisecond},
		{"zero", map[string]string{"Retry-After": "0"}, 0},
		{"negative", map[string]string{"Retry-After": "-4"}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"http date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"past http date", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds", map[string]string{"retry-after-ms": "1200"}, 1200 * time.Millisecond},
		{"later of both", map[string]string{"retry-after-ms": "1200", "Retry-After": "2"}, 2 * time.Second},
		{"huge", map[string]string{"Retry-After": "1e300"}, 24 * time.Hour},
	}
	for _, tt := range tests {
		if got := retryAfter(headerOf(tt.hdr), now); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestErrorBodyFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body           string
		code, typ, msg string
	}{
		{`{"error":{"message":"m","type":"t","code":"c"}}`, "c", "t", "m"},
		{`{"error":{"message":"m","code":429}}`, "429", "", "m"},
		{`{"error":"plain"}`, "", "", "plain"},
		{`{"message":"top"}`, "", "", "top"},
		{`{"detail":"fastapi"}`, "", "", "fastapi"},
		{`<html>`, "", "", ""},
		{``, "", "", ""},
	}
	for _, tt := range tests {
		code, typ, msg := errorBodyFields([]byte(tt.body))
		if code != tt.code || typ != tt.typ || msg != tt.msg {
			t.Errorf("%s: got %q %q %q", tt.body, code, typ, msg)
		}
	}
}

func TestOpenAI_Clean(t *testing.T) {
	t.Parallel()
	o := &OpenAI{key: fakeKey}
	tests := []struct{ in, want string }{
		{"key " + fakeKey + " echoed", "key [REDACTED] echoed"},
		{"bell\x07 and \x1b[31mred", "bell  and  [31mred"},
		{strings.Repeat("é", 400), strings.Repeat("é", 250) + "…"},
	}
	for _, tt := range tests {
		if got := o.clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

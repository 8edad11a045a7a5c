package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// The servers in this file copy each provider's documented request and
// response shapes, and record what auditor sent, so tests assert the
// requests (fields present or absent, headers) and not only the outcome.

// recorder keeps the requests a fake server received.
type recorder struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	paths   []string
}

func (rec *recorder) record(r *http.Request) map[string]any {
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.bodies = append(rec.bodies, body)
	rec.headers = append(rec.headers, r.Header.Clone())
	rec.paths = append(rec.paths, r.URL.Path)
	return body
}

func (rec *recorder) last() (map[string]any, http.Header, string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := len(rec.bodies) - 1
	return rec.bodies[n], rec.headers[n], rec.paths[n]
}

func writeJSON(w http.ResponseWriter, status int, v string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, v)
}

// gpt5Server behaves as OpenAI does for gpt-5 and the o-series: it rejects
// max_tokens and any temperature but 1 with OpenAI's 400 bodies, and
// reports reasoning tokens. A user message "truncate" gets an answer whose
// tokens all went to reasoning (finish_reason "length", empty content).
func gpt5Server(rec *recorder) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := rec.record(r)
		if _, ok := body["max_tokens"]; ok {
			writeJSON(w, 400, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`)
			return
		}
		if t, ok := body["temperature"]; ok && t != 1.0 {
			writeJSON(w, 400, fmt.Sprintf(`{"error":{"message":"Unsupported value: 'temperature' does not support %v with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`, t))
			return
		}
		content, finish, reasoning := "Refunds take 5 days.", "stop", 320
		if lastUserMessage(body) == "truncate" {
			content, finish, reasoning = "", "length", 4000
		}
		writeJSON(w, 200, fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-5-2025-08-07",
			"choices":[{"index":0,"message":{"role":"assistant","content":%q,"refusal":null,"annotations":[]},"finish_reason":%q}],
			"usage":{"prompt_tokens":1200,"completion_tokens":%d,"total_tokens":1300,
			"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},
			"completion_tokens_details":{"reasoning_tokens":%d,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},
			"service_tier":"default","system_fingerprint":null}`, content, finish, reasoning+10, reasoning))
	}
}

// gpt5Config parses a [model] table as a user would write it.
func parseModel(t *testing.T, keys string) model.ModelConfig {
	t.Helper()
	a, err := model.ParseAudit("audit.toml", []byte("name = \"x\"\nprompt = \"p.md\"\n[model]\n"+keys+
		"[[rule]]\nline = 1\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return a.Models[0]
}

func messages(user string) []model.Message {
	return []model.Message{{Role: "system", Content: "You are a support assistant."}, {Role: "user", Content: user}}
}

func TestOpenAI_GPT5Shape(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv, client := newPipeServer(t, gpt5Server(rec))
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	m := parseModel(t, "name = \"gpt-5\"\nextra_body = { reasoning_effort = \"low\", provider = { order = [\"openai\"] } }\nextra_headers = { X-Title = \"auditor\" }\n")
	comp, err := o.Complete(context.Background(), Call{Request: m.NewRequest(messages("Can I get a refund?"))})
	if err != nil {
		t.Fatalf("gpt-5 with its defaults: %v", err)
	}
	body, hdr, path := rec.last()
	if path != "/v1/chat/completions" || hdr.Get("Authorization") != "Bearer "+fakeKey || hdr.Get("X-Title") != "auditor" {
		t.Errorf("path %s, headers %v", path, hdr)
	}
	for k, want := range map[string]any{"model": "gpt-5", "max_completion_tokens": float64(model.DefaultReasoningMaxTokens),
		"reasoning_effort": "low", "temperature": nil, "max_tokens": nil, "seed": nil} {
		if got, ok := body[k]; (want == nil) == ok || (want != nil && got != want) {
			t.Errorf("%s = %v (sent: %v), want %v", k, got, ok, want)
		}
	}
	if p, _ := body["provider"].(map[string]any); p == nil || fmt.Sprint(p["order"]) != "[openai]" {
		t.Errorf("provider routing %v", body["provider"])
	}
	if comp.Text != "Refunds take 5 days." || comp.PromptTokens != 1200 || comp.CachedTokens != 1024 || comp.CompletionTokens != 330 {
		t.Errorf("completion %+v", comp)
	}

	// Only reasoning tokens, cut at the limit: truncated, not an answer.
	comp, err = o.Complete(context.Background(), Call{Request: m.NewRequest(messages("truncate"))})
	if err != nil {
		t.Fatal(err)
	}
	if kind, _ := Classify(comp); kind != model.ErrTruncated {
		t.Errorf("all reasoning, finish length: %v (%+v)", kind, comp)
	}

	// What auditor used to send: the API's own 400, classified as a
	// request error with its message.
	old := model.Request{Model: "gpt-5", Temperature: 0, MaxTokens: 400, Messages: messages("hi")}
	_, err = o.Complete(context.Background(), Call{Request: old})
	ce, ok := err.(*CallError)
	if !ok || ce.Kind != model.ErrRequest || ce.Status != 400 || ce.Retryable || !strings.Contains(ce.Msg, "Use 'max_completion_tokens' instead") {
		t.Errorf("max_tokens: %v", err)
	}
	old.MaxTokens, old.MaxCompletionTokens = 0, 400
	_, err = o.Complete(context.Background(), Call{Request: old})
	if ce, ok := err.(*CallError); !ok || !strings.Contains(ce.Msg, "Only the default (1) value is supported") {
		t.Errorf("temperature 0: %v", err)
	}
}

// anthropicServer copies the Messages API: POST /v1/messages with x-api-key
// and anthropic-version, content blocks and usage with the cache fields in
// the answer, and its error envelope. The user message picks the outcome.
func anthropicServer(rec *recorder) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := rec.record(r)
		if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
			writeJSON(w, 404, `{"type":"error","error":{"type":"not_found_error","message":"Not found"}}`)
			return
		}
		if r.Header.Get("anthropic-version") == "" {
			writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"anthropic-version: header is required"}}`)
			return
		}
		msgs, _ := body["messages"].([]any)
		user := ""
		if len(msgs) > 0 {
			m, _ := msgs[len(msgs)-1].(map[string]any)
			blocks, _ := m["content"].([]any)
			if len(blocks) > 0 {
				b, _ := blocks[0].(map[string]any)
				user, _ = b["text"].(string)
			}
		}
		stop, text := "end_turn", "No refunds after 30 days."
		switch user {
		case "429":
			w.Header().Set("retry-after", "7")
			writeJSON(w, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`)
			return
		case "429spent":
			// The documented headers of a spent window, and no retry-after.
			w.Header().Set("anthropic-ratelimit-requests-remaining", "0")
			w.Header().Set("anthropic-ratelimit-requests-reset", time.Now().Add(40*time.Second).UTC().Format(time.RFC3339))
			w.Header().Set("anthropic-ratelimit-tokens-remaining", "90000")
			w.Header().Set("anthropic-ratelimit-tokens-reset", time.Now().Add(time.Second).UTC().Format(time.RFC3339))
			writeJSON(w, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your per-minute rate limit"}}`)
			return
		case "spent":
			w.Header().Set("anthropic-ratelimit-output-tokens-remaining", "0")
			w.Header().Set("anthropic-ratelimit-output-tokens-reset", time.Now().Add(20*time.Second).UTC().Format(time.RFC3339))
		case "529":
			writeJSON(w, 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		case "401":
			writeJSON(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		case "credit":
			writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`)
			return
		case "400":
			writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"temperature: range: 0..1"}}`)
			return
		case "max":
			stop, text = "max_tokens", "No refunds after"
		case "refusal":
			stop, text = "refusal", ""
		}
		writeJSON(w, 200, fmt.Sprintf(`{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-opus-4-8",
			"content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":%q}],
			"stop_reason":%q,"stop_sequence":null,
			"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":1800,"output_tokens":40,"service_tier":"standard"}}`, text, stop))
	}
}

func TestAnthropic_NativeShape(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv, client := newPipeServer(t, anthropicServer(rec))
	a, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	m := parseModel(t, "name = \"claude-opus-4-8\"\nprovider = \"anthropic\"\ntemperature = 0.5\nextra_body = { metadata = { user_id = \"audit\" } }\n")
	req := m.NewRequest(messages("Can I get a refund?"))
	comp, err := a.Complete(context.Background(), Call{Request: req})
	if err != nil {
		t.Fatal(err)
	}
	body, hdr, _ := rec.last()
	if hdr.Get("x-api-key") != fakeKey || hdr.Get("anthropic-version") == "" || hdr.Get("Authorization") != "" {
		t.Errorf("headers %v", hdr)
	}
	sys, _ := body["system"].([]any)
	if len(sys) != 1 {
		t.Fatalf("system %v, want one block", body["system"])
	}
	block := sys[0].(map[string]any)
	if block["type"] != "text" || block["text"] != "You are a support assistant." || fmt.Sprint(block["cache_control"]) != "map[type:ephemeral]" {
		t.Errorf("system block %v: want the prompt with cache_control ephemeral", block)
	}
	if msgs, _ := body["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
		t.Errorf("messages %v: the system prompt must not be a message", body["messages"])
	}
	for k, want := range map[string]any{"model": "claude-opus-4-8", "max_tokens": float64(model.DefaultMaxTokens), "temperature": 0.5, "seed": nil} {
		if got, ok := body[k]; (want == nil) == ok || (want != nil && got != want) {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	if md, _ := body["metadata"].(map[string]any); md["user_id"] != "audit" {
		t.Errorf("extra_body metadata %v", body["metadata"])
	}
	want := Completion{Text: "No refunds after 30 days.", FinishReason: "stop", PromptTokens: 12 + 1800, CachedTokens: 1800, CompletionTokens: 40}
	if comp != want {
		t.Errorf("completion %+v, want %+v", comp, want)
	}

	// A judge at temperature 0 with a seed: the seed is not sent (the API
	// has none), the temperature is.
	seed := int64(7)
	jreq := model.Request{Model: "claude-opus-4-8", Temperature: 0, MaxTokens: 600, Seed: &seed, API: model.APIAnthropic,
		Messages: []model.Message{{Role: "system", Content: "judge"}, {Role: "user", Content: "rubric"}}}
	if _, err := a.Complete(context.Background(), Call{Request: jreq}); err != nil {
		t.Fatal(err)
	}
	if body, _, _ := rec.last(); body["temperature"] != 0.0 || body["seed"] != nil {
		t.Errorf("judge body %v", body)
	}

	tests := []struct {
		user       string
		kind       model.ErrorKind
		retryable  bool
		retryAfter time.Duration
		finish     string
		spent      time.Duration // the window's reset when spent (RFC 3339 has whole seconds)
	}{
		{user: "429", kind: model.ErrRateLimited, retryable: true, retryAfter: 7 * time.Second},
		{user: "429spent", kind: model.ErrRateLimited, retryable: true, spent: 40 * time.Second},
		{user: "spent", finish: "stop", spent: 20 * time.Second},
		{user: "529", kind: model.ErrRateLimited, retryable: true},
		{user: "401", kind: model.ErrAuth},
		{user: "credit", kind: model.ErrQuota},
		{user: "400", kind: model.ErrRequest},
		{user: "max", finish: "length"},
		{user: "refusal", finish: "content_filter"},
	}
	for _, tt := range tests {
		comp, err := a.Complete(context.Background(), Call{Request: m.NewRequest(messages(tt.user))})
		// The reset is a time in whole seconds: up to a second short of
		// what the server meant, and the answer's trip on top.
		spent := func(w Window) bool {
			return w.Spent == (tt.spent > 0) && w.Reset > tt.spent-2*time.Second && w.Reset <= tt.spent || w == Window{} && tt.spent == 0
		}
		if tt.finish != "" {
			if err != nil || comp.FinishReason != tt.finish || !spent(comp.Window) {
				t.Errorf("%s: %+v, %v; want finish %s", tt.user, comp, err, tt.finish)
			}
			continue
		}
		ce, ok := err.(*CallError)
		if !ok || ce.Kind != tt.kind || ce.Retryable != tt.retryable || ce.RetryAfter != tt.retryAfter || strings.Contains(ce.Msg, fakeKey) || !spent(ce.Window) {
			t.Errorf("%s: %#v", tt.user, err)
		}
	}
	if kind, _ := Classify(Completion{Text: "No refunds after", FinishReason: anthropicFinish("max_tokens")}); kind != model.ErrTruncated {
		t.Errorf("max_tokens is %v", kind)
	}

	// The URL of the OpenAI-compatible endpoint (ending in /v1) works too.
	a2, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a2.Complete(context.Background(), Call{Request: req}); err != nil {
		t.Errorf("base URL ending in /v1/: %v", err)
	}
	// An OpenAI-shaped request is refused before anything is sent.
	if _, err := a.Complete(context.Background(), Call{Request: request("x", 0)}); err == nil {
		t.Error("an OpenAI request went to the Messages API")
	}
}

// Anthropic's OpenAI-compatible endpoint: /v1/chat/completions with a
// bearer key, OpenAI's response shape. The openai provider speaks it.
func TestOpenAI_AnthropicCompatShape(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv, client := newPipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := rec.record(r)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+fakeKey {
			writeJSON(w, 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		if t, _ := body["temperature"].(float64); t > 1 {
			writeJSON(w, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"temperature: range: 0..1"}}`)
			return
		}
		writeJSON(w, 200, `{"id":"msg_01","object":"chat.completion","created":1749000000,"model":"claude-opus-4-8",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"No refunds after 30 days."}}],
			"usage":{"prompt_tokens":20,"completion_tokens":8,"total_tokens":28}}`)
	}))
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	m := parseModel(t, "name = \"claude-opus-4-8\"\nbase_url = \"https://api.anthropic.com/v1/\"\napi_key_env = \"ANTHROPIC_API_KEY\"\n")
	comp, err := o.Complete(context.Background(), Call{Request: m.NewRequest(messages("refund?"))})
	if err != nil || comp.Text != "No refunds after 30 days." || comp.PromptTokens != 20 || comp.CompletionTokens != 8 {
		t.Fatalf("%+v, %v", comp, err)
	}
	body, _, _ := rec.last()
	if body["max_tokens"] != float64(model.DefaultMaxTokens) || body["temperature"] != 1.0 || body["max_completion_tokens"] != nil {
		t.Errorf("body %v", body)
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
		t.Errorf("messages %v", msgs)
	}
}

// A keyless local server (Ollama, llama.cpp, vLLM) gets no Authorization
// header at all.
func TestOpenAI_KeylessLocalServer(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv, client := newPipeServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.record(r)
		if r.Header.Get("Authorization") != "" {
			writeJSON(w, 400, `{"error":"unexpected Authorization header"}`)
			return
		}
		writeJSON(w, 200, `{"id":"chatcmpl-7","object":"chat.completion","created":1,"model":"llama3.1:8b","system_fingerprint":"fp_ollama",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Sure."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":30,"completion_tokens":2,"total_tokens":32}}`)
	}))
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	m := parseModel(t, "name = \"llama3.1:8b\"\nbase_url = \"http://localhost:11434/v1/\"\napi_key_env = \"\"\n")
	comp, err := o.Complete(context.Background(), Call{Request: m.NewRequest(messages("hi"))})
	if err != nil || comp.Text != "Sure." {
		t.Fatalf("%+v, %v", comp, err)
	}
	if _, hdr, _ := rec.last(); len(hdr.Values("Authorization")) != 0 {
		t.Errorf("Authorization sent: %v", hdr)
	}
}

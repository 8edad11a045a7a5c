package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// hostileServer answers both the chat-completions and the Messages API
// with what a hostile or broken endpoint sends: an answer of size bytes
// (30 MB for max_tokens = 300), or an answer echoing the credentials it
// was sent. It counts the bytes it managed to write: over the in-memory
// pipe every byte written is a byte the client read.
type hostileServer struct {
	size    int64 // bytes of answer text; 0: echo the credentials instead
	written atomic.Int64
	status  int // 0: 200
}

func (s *hostileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	anthropicAPI := strings.HasSuffix(r.URL.Path, "/v1/messages")
	status := s.status
	if status == 0 {
		status = 200
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	write := func(s2 string) bool {
		n, err := io.WriteString(w, s2)
		s.written.Add(int64(n))
		return err == nil
	}
	text := "your key is " + r.Header.Get("Authorization") + r.Header.Get("x-api-key") + "; keep it safe"
	if s.size > 0 {
		text = ""
	}
	head := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"` + text
	tail := `"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	if anthropicAPI {
		head = `{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"` + text
		tail = `"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`
	}
	if status >= 400 {
		head, tail = `{"error":{"message":"`, `","type":"server_error"}}`
	}
	if !write(head) {
		return
	}
	chunk := strings.Repeat("x", 32<<10)
	for left := s.size; left > 0; left -= int64(len(chunk)) {
		if !write(chunk[:min(int64(len(chunk)), left)]) {
			return
		}
	}
	write(tail)
}

// hostileProviders returns an OpenAI and an Anthropic provider for srv,
// both with fakeKey.
func hostileProviders(t *testing.T, srv http.Handler) map[string]Provider {
	t.Helper()
	ts, client := newPipeServer(t, srv)
	o, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAnthropic(AnthropicConfig{BaseURL: ts.URL, APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]Provider{"openai": o, "anthropic": a}
}

func hostileRequest(provider string, maxTokens int) model.Request {
	r := request("hi", 0)
	r.MaxTokens = maxTokens
	if provider == "anthropic" {
		r.API = model.APIAnthropic
	}
	return r
}

// A 30 MB answer to max_tokens = 300 is read no further than its limit
// (1 MiB + 64 bytes a token), and settles as ErrTooLarge: not retried, not
// graded, charged at most what the call could cost.
func TestProviders_AnswerTooLarge(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai", "anthropic"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := &hostileServer{size: 30 << 20}
			p := hostileProviders(t, srv)[name]
			req := hostileRequest(name, 300)
			limit := AnswerLimit(req)
			if limit != 1<<20+300*64 {
				t.Fatalf("limit %d for max_tokens = 300", limit)
			}
			_, err := p.Complete(context.Background(), Call{Request: req})
			var ce *CallError
			if !errors.As(err, &ce) || ce.Kind != model.ErrTooLarge || ce.Retryable || !ce.Kind.Settled() {
				t.Fatalf("a 30 MB answer: %v (%+v); want a settled ErrTooLarge", err, ce)
			}
			if !strings.Contains(ce.Msg, fmt.Sprint(limit)) || !strings.Contains(ce.Msg, "max_tokens = 300") {
				t.Errorf("the error does not say the limit and how it is derived: %s", ce.Msg)
			}
			// The client read up to the limit (and the transport's buffers), no more.
			if w := srv.written.Load(); w > limit+256<<10 {
				t.Errorf("the server wrote %d bytes to a client that should stop at %d", w, limit)
			}

			// Through the runner: one attempt, settled, charged at the call's most.
			price := Price{InputPerMTok: 3, OutputPerMTok: 15}
			calls := []Call{{Key: req.Key(), Request: req, Price: price, EstPromptTokens: 1000, EstCompletionTokens: 100}}
			sink := newMemSink()
			evs := collect(t, Run(context.Background(), calls, sink, Options{Providers: []Endpoint{{Name: name, Provider: p}}}))
			finished, stop := checkContract(t, calls, evs, sink)
			r := finished[calls[0].Key].Response
			if stop.Reason != Completed || stop.Settled != 1 || r.ErrorKind != model.ErrTooLarge || r.Attempts != 1 || r.Text != "" {
				t.Errorf("run: %+v, response %+v", stop, r)
			}
			if want := price.Cost(1000, 0, 300); r.Charge == nil || r.Charge.USD != want {
				t.Errorf("charge %+v, want $%v (its estimated prompt and whole token limit)", r.Charge, want)
			}
		})
	}
}

// An answer within its limit is read whole; an error body past the limit
// is still the error its status says.
func TestProviders_AnswerLimitEdges(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai", "anthropic"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			req := hostileRequest(name, 300)
			ok := &hostileServer{size: AnswerLimit(req) - 1024}
			comp, err := hostileProviders(t, ok)[name].Complete(context.Background(), Call{Request: req})
			if err != nil || int64(len(comp.Text)) != AnswerLimit(req)-1024 {
				t.Errorf("an answer just under the limit: %d bytes, %v", len(comp.Text), err)
			}
			bad := &hostileServer{size: 30 << 20, status: 503}
			_, err = hostileProviders(t, bad)[name].Complete(context.Background(), Call{Request: req})
			var ce *CallError
			if !errors.As(err, &ce) || ce.Status != 503 || !ce.Retryable || ce.Kind == model.ErrTooLarge {
				t.Errorf("a 30 MB 503: %v; want a retryable 503", err)
			}
		})
	}
}

// An endpoint that echoes the key it was sent ("your key is Bearer sk-...")
// gets it redacted from the answer before anything stores it, as the
// request log does.
func TestProviders_EchoedKeyRedacted(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai", "anthropic"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			comp, err := hostileProviders(t, &hostileServer{})[name].Complete(context.Background(), Call{Request: hostileRequest(name, 300)})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(comp.Text, fakeKey) || strings.Contains(comp.Text, "distinctive-key") || !strings.Contains(comp.Text, "[REDACTED]") {
				t.Errorf("answer %q", comp.Text)
			}
			if name == "openai" && !strings.Contains(comp.Text, "Bearer [REDACTED]") {
				t.Errorf("the Bearer form: %q", comp.Text)
			}
		})
	}
}

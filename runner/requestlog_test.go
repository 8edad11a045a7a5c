package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The request log records one line per attempt, request and response, and
// never the key: not in the Authorization or x-api-key header, not in a URL
// or body that echoes it.
func TestRequestLog_RedactsKeys(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := NewRequestLog(&buf)

	f := newFakeAPI(t)
	o, err := NewOpenAI(OpenAIConfig{BaseURL: f.url(), APIKey: fakeKey, HTTPClient: f.client, RequestLog: log, Name: "test at " + f.url()})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	srv, client := newPipeServer(t, anthropicServer(rec))
	a, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: fakeKey, HTTPClient: client, RequestLog: log, Name: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := o.Complete(ctx, Call{Request: request("ok|log", 0)}); err != nil {
		t.Fatal(err)
	}
	// A server that echoes the key in its error body.
	if _, err := o.Complete(ctx, Call{Request: request("401echo|log", 0)}); err == nil {
		t.Fatal("401 not reported")
	}
	m := parseModel(t, "name = \"claude-opus-4-8\"\nprovider = \"anthropic\"\n")
	if _, err := a.Complete(ctx, Call{Request: m.NewRequest(messages("Can I get a refund?"))}); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	echoed := strings.Join(f.echoed, "")
	f.mu.Unlock()
	if !strings.Contains(echoed, fakeKey) {
		t.Fatal("the server did not echo the key: the test would prove nothing")
	}

	text := buf.String()
	if strings.Contains(text, fakeKey) || strings.Contains(text, "QQ7zz") {
		t.Fatalf("the log holds the key:\n%s", text)
	}
	var entries []logEntry
	sc := bufio.NewScanner(&buf)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		entries = append(entries, e)
	}
	if len(entries) != 3 {
		t.Fatalf("%d entries, want one per attempt (3)", len(entries))
	}
	first, echo, native := entries[0], entries[1], entries[2]
	if first.Method != http.MethodPost || !strings.HasSuffix(first.URL, "/v1/chat/completions") || first.Status != 200 ||
		first.Headers["Authorization"] != "[REDACTED]" || !strings.Contains(first.Body, `"ok|log"`) ||
		!strings.Contains(first.RespBody, "answer to ok|log") || first.Endpoint != "test at "+f.url() {
		t.Errorf("first entry %+v", first)
	}
	if echo.Status != 401 || !strings.Contains(echo.RespBody, "Bearer [REDACTED]") {
		t.Errorf("echo entry %+v", echo)
	}
	if native.Headers["X-Api-Key"] != "[REDACTED]" || !strings.Contains(native.Body, `"cache_control"`) || native.Status != 200 {
		t.Errorf("anthropic entry %+v", native)
	}
}

// The log file is appended to, never truncated: a batch's submission and
// its collection, or a run and its resume, leave one log. A line an
// earlier process left unfinished is ended, so each line stays one object.
func TestOpenRequestLog_Appends(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "requests.jsonl")
	if err := os.WriteFile(path, []byte("{\"first\":1}\n{\"killed while wri"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l, err := OpenRequestLog(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.w.Write([]byte("{\"next\":2}\n")); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"first\":1}\n{\"killed while wri\n{\"next\":2}\n{\"next\":2}\n"; string(data) != want {
		t.Errorf("log %q, want %q", data, want)
	}
}

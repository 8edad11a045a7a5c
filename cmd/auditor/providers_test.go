package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// These tests drive `auditor run` and `plan` against servers that behave as
// real providers do: a keyless local server, a wrong port, a model that
// rejects every request, and an OpenAI reasoning model (gpt-5) whose
// answers run out of tokens.

// writeAuditModel writes an audit like writeAudit's whose [model] table is
// modelTOML, and returns the audit file's path.
func writeAuditModel(t *testing.T, dir, modelTOML string, samples int, cs []testCase) string {
	t.Helper()
	audit := fmt.Sprintf(`name = "providers"
prompt = "prompt.md"
samples = %d
concurrency = 4

[model]
%s
[[rule]]
line = %d
cases = "cases.jsonl"
predicate = "predicate.toml"
`, samples, modelTOML, ruleLine)
	writeFiles(t, dir, map[string]string{
		"audit.toml":     audit,
		"prompt.md":      testPrompt,
		"cases.jsonl":    casesJSONL(cs),
		"predicate.toml": testPredicate,
	})
	return filepath.Join(dir, "audit.toml")
}

// A local server that wants no key (Ollama, llama.cpp, vLLM) works with
// api_key_env = "": no Authorization header is sent, plan and run say so
// before anything else, and the run completes.
func TestRun_KeylessLocalServer(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	path := writeAuditModel(t, t.TempDir(), fmt.Sprintf(`name = "llama3.1:8b"
base_url = %q
api_key_env = ""
temperature = 1.0
max_tokens = 200
`, srv.baseURL()), 2, cs)

	const note = `api_key_env is "", so no API key is sent to`
	p := mustRun(t, 0, "plan", path)
	if !strings.Contains(p.errOut, note) {
		t.Errorf("plan does not say that no key is sent:\n%s", p)
	}
	r := mustRun(t, 0, "run", path, "--yes", "--headless")
	if i := strings.Index(r.errOut, note); i < 0 || i > strings.Index(r.errOut, "calls:") {
		t.Errorf("run does not say that no key is sent before its plan:\n%s", r)
	}
	requests, answers, _ := srv.counts()
	if want := 2 * len(cs) * 2; requests != want || answers != want {
		t.Errorf("server saw %d requests, %d answered; want %d", requests, answers, want)
	}
	for _, a := range srv.arrivalsLog() {
		if a.Auth != "" {
			t.Fatalf("a request to a keyless server carried Authorization %q", a.Auth)
		}
	}
}

// With base_url left out, calls go to $OPENAI_BASE_URL, and both plan and
// run say so before any call.
func TestRun_OpenAIBaseURLFromEnvironmentIsAnnounced(t *testing.T) {
	cs := makeCases(1, 1, 1)
	srv := newFakeServer(t, cs)
	t.Setenv("OPENAI_BASE_URL", srv.baseURL())
	path := writeAuditModel(t, t.TempDir(), fmt.Sprintf(`name = "e2e-model"
api_key_env = %q
temperature = 1.0
max_tokens = 200
`, testKeyEnv), 1, cs)
	const note = "base_url is not set, so calls go to $OPENAI_BASE_URL = " // + the URL
	if p := mustRun(t, 0, "plan", path); !strings.Contains(p.errOut, note+srv.baseURL()) {
		t.Errorf("plan does not name $OPENAI_BASE_URL:\n%s", p)
	}
	r := mustRun(t, 0, "run", path, "--yes", "--headless")
	if !strings.Contains(r.errOut, note+srv.baseURL()) {
		t.Errorf("run does not name $OPENAI_BASE_URL:\n%s", r)
	}
	if requests, _, _ := srv.counts(); requests != 2*len(cs) {
		t.Errorf("server saw %d requests, want %d", requests, 2*len(cs))
	}
}

// A rerun with nothing left to call needs no API key: the variable may be
// unset. (Not parallel: it sets and unsets an environment variable.)
func TestRun_RerunNeedsNoKey(t *testing.T) {
	const keyEnv = "AUDITOR_E2E_RERUN_KEY"
	t.Setenv(keyEnv, testKey)
	cs := makeCases(2, 1, 1)
	srv := newFakeServer(t, cs)
	path := writeAuditModel(t, t.TempDir(), fmt.Sprintf(`name = "e2e-model"
base_url = %q
api_key_env = %q
temperature = 1.0
max_tokens = 200
`, srv.baseURL(), keyEnv), 2, cs)
	first := mustRun(t, 0, "run", path, "--yes", "--headless")
	if err := os.Unsetenv(keyEnv); err != nil {
		t.Fatal(err)
	}
	srv.reset()
	again := mustRun(t, 0, "run", path, "--yes", "--headless")
	if requests, _, _ := srv.counts(); requests != 0 {
		t.Errorf("the rerun sent %d requests, want 0", requests)
	}
	if textVerdicts(again.out)[fmt.Sprint(ruleLine)] != textVerdicts(first.out)[fmt.Sprint(ruleLine)] {
		t.Errorf("the rerun's verdict differs:\n%s\n---\n%s", first.out, again.out)
	}
	// With calls to make, the missing key is an error naming the variable.
	writeFiles(t, filepath.Dir(path), map[string]string{"cases.jsonl": casesJSONL(makeCases(3, 1, 1))})
	r := mustRun(t, 2, "run", path, "--yes", "--headless")
	if !strings.Contains(r.errOut, keyEnv) {
		t.Errorf("the missing key's error does not name %s:\n%s", keyEnv, r)
	}
}

// --request-log records every request and response, with the key
// redacted wherever it would appear (the server echoes it in its errors).
func TestRun_RequestLogRedactsTheKey(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 1)
	srv := newFakeServer(t, cs)
	srv.echoAuth = true
	srv.fault = func(a arrival) fault {
		if a.N == 0 && strings.HasPrefix(a.User, "When does") {
			return fault500 // an error body that echoes the Authorization header
		}
		return noFault
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 1, concurrency: 2}, cs)
	logPath := filepath.Join(dir, "requests.jsonl")
	r := mustRun(t, 0, "run", path, "--yes", "--headless", "--request-log", logPath)
	if !strings.Contains(r.errOut, logPath) {
		t.Errorf("run does not say where requests are logged:\n%s", r)
	}
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), testKey) {
		t.Fatalf("the request log holds the API key")
	}
	type entry struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"request_headers"`
		Body    string            `json:"request_body"`
		Status  int               `json:"status"`
		Resp    string            `json:"response_body"`
	}
	entries := readJSONL[entry](t, string(data))
	requests, _, faults := srv.counts()
	if len(entries) != requests || faults == 0 {
		t.Fatalf("%d log entries for %d requests (%d faults)", len(entries), requests, faults)
	}
	statuses := map[int]int{}
	for _, e := range entries {
		statuses[e.Status]++
		if e.Headers["Authorization"] != "[REDACTED]" || !strings.Contains(e.Body, `"messages"`) || e.Resp == "" {
			t.Fatalf("log entry lacks the redacted header, the request or the response: %+v", e)
		}
	}
	if statuses[500] != faults || statuses[200] != requests-faults {
		t.Errorf("logged statuses %v, want %d 500s and %d 200s", statuses, faults, requests-faults)
	}

	// --debug logs beside the audit file.
	srv.reset()
	writeFiles(t, dir, map[string]string{"cases.jsonl": casesJSONL(makeCases(3, 1, 1))})
	mustRun(t, 0, "run", path, "--yes", "--headless", "--debug")
	if data, err := os.ReadFile(filepath.Join(dir, "auditor-requests.jsonl")); err != nil || len(data) == 0 || strings.Contains(string(data), testKey) {
		t.Errorf("--debug: log %d bytes, %v (or it holds the key)", len(data), err)
	}
}

// A wrong port (connection refused) stops the run on its first calls with
// one message naming the endpoint and what to check, and exit 1.
func TestRun_WrongPortStopsAtOnce(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cs := makeCases(4, 2, 4)
	path := writeAudit(t, t.TempDir(), auditSpec{baseURL: "http://" + addr + "/v1/", samples: 3, concurrency: 4}, cs)
	r := mustRun(t, 1, "run", path, "--yes", "--headless")
	checkSystematicStop(t, r, "connection refused", "Check base_url")
}

// A model that rejects every request the same way (a 400 for a parameter
// it does not take) stops the run after about 20 calls with one message
// and exit 1, not hundreds of retries ending "completed".
func TestRun_Same400StopsAtOnce(t *testing.T) {
	t.Parallel()
	cs := makeCases(6, 3, 6)
	srv := newFakeServer(t, cs)
	srv.fault = func(arrival) fault { return fault400 }
	path := writeAudit(t, t.TempDir(), auditSpec{baseURL: srv.baseURL(), samples: 4, concurrency: 4}, cs)
	r := mustRun(t, 1, "run", path, "--yes", "--headless")
	checkSystematicStop(t, r, "HTTP 400", "This request is not accepted")
	srv.waitIdle()
	if requests, _, _ := srv.counts(); requests > 20+4 {
		t.Errorf("server saw %d requests; the run should stop after the first ~20 (+ those in flight)", requests)
	}
	doc := reportJSON(t, path)
	if doc.Rules[0].Errors > 0 {
		t.Errorf("the stop stored %d errors; a systematic failure stores nothing, so the next run asks again", doc.Rules[0].Errors)
	}
}

// checkSystematicStop checks the one message of a systematic stop.
func checkSystematicStop(t *testing.T, r result, want ...string) {
	t.Helper()
	if n := strings.Count(r.errOut, "Stopped (systematic failure)"); n != 1 {
		t.Errorf("want one systematic-failure message, got %d:\n%s", n, r)
	}
	for _, w := range want {
		if !strings.Contains(r.errOut, w) {
			t.Errorf("stop message lacks %q:\n%s", w, r)
		}
	}
	if strings.Contains(r.errOut, "failed for good") || strings.Contains(strings.ToLower(r.errOut), "completed") {
		t.Errorf("a systematic stop reads as a completed run or as failed calls:\n%s", r)
	}
	if lines := strings.Count(r.errOut, "\n"); lines > 60 {
		t.Errorf("%d lines of stderr for one stop", lines)
	}
	// One message: no report of empty rows before it.
	if strings.TrimSpace(r.out) != "" {
		t.Errorf("a systematic stop printed a report:\n%s", r.out)
	}
}

// gpt5Server copies OpenAI's chat completions for a reasoning model: it
// rejects max_tokens and a temperature other than 1 as OpenAI does, and
// spends every completion token on reasoning, answering no text with
// finish_reason "length".
type gpt5Server struct {
	mu       sync.Mutex
	requests int
	rejected int
}

// counts returns the requests so far and how many were rejected.
func (s *gpt5Server) counts() (requests, rejected int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.rejected
}

func (s *gpt5Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		writeStatus(w, http.StatusBadRequest, `{"error":{"message":"bad json"}}`)
		return
	}
	s.mu.Lock()
	s.requests++
	s.mu.Unlock()
	reject := func(param, msg string) {
		s.mu.Lock()
		s.rejected++
		s.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": "unsupported_parameter"}})
		writeStatus(w, http.StatusBadRequest, string(b))
	}
	if _, ok := req["max_tokens"]; ok {
		reject("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
		return
	}
	if t, ok := req["temperature"]; ok && t != 1.0 {
		reject("temperature", "Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.")
		return
	}
	limit, _ := req["max_completion_tokens"].(float64)
	resp, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-g5", "object": "chat.completion", "created": 1754000000, "model": req["model"],
		"choices": []any{map[string]any{"index": 0, "finish_reason": "length",
			"message": map[string]any{"role": "assistant", "content": "", "refusal": nil, "annotations": []any{}}}},
		"usage": map[string]any{"prompt_tokens": 120, "completion_tokens": int(limit), "total_tokens": 120 + int(limit),
			"prompt_tokens_details":     map[string]any{"cached_tokens": 0, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": int(limit), "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
	})
	writeStatus(w, http.StatusOK, string(resp))
}

// The repro of issue 13: a gpt-5 whose answers all run out of tokens. The
// empty, truncated answers are their own state: never failures (the old
// behaviour was 100% failures on both arms), no KEEP or DELETE from them,
// counted and shown with the advice, and not asked again on the next run
// unless --retry-truncated.
func TestRun_TruncatedReasoningAnswers(t *testing.T) {
	t.Parallel()
	srv := &gpt5Server{}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	cs := makeCases(3, 2, 3)
	const samples = 2
	path := writeAuditModel(t, t.TempDir(), fmt.Sprintf(`name = "gpt-5"
base_url = %q
api_key_env = %q
max_completion_tokens = 64
price_input_per_mtok = 1.25
price_output_per_mtok = 10.0
`, ts.URL+"/v1/", testKeyEnv), samples, cs)
	calls := 2 * len(cs) * samples

	r := mustRun(t, 0, "run", path, "--yes", "--headless")
	if _, rejected := srv.counts(); rejected > 0 {
		t.Fatalf("%d requests were rejected: auditor sent max_tokens or a temperature to a reasoning model", rejected)
	}
	if want := fmt.Sprintf("%d answers were cut off by the token limit or came back empty", calls); !strings.Contains(r.errOut, want) {
		t.Errorf("the run summary does not count the truncated answers (%q):\n%s", want, r)
	}
	if !strings.Contains(r.errOut, "max_completion_tokens") || !strings.Contains(r.out, fmt.Sprintf("%d truncated or empty", calls)) {
		t.Errorf("no advice or count in the summary and table:\n%s", r)
	}
	doc := reportJSON(t, path)
	rr := doc.Rules[0]
	if rr.Verdict == "KEEP" || rr.Verdict == "DELETE" {
		t.Errorf("verdict %s from answers that are all truncated", rr.Verdict)
	}
	for name, a := range rr.Arms {
		if a.Baseline.Fail+a.Deleted.Fail+a.Baseline.N+a.Deleted.N != 0 {
			t.Errorf("arm %s counts truncated answers as graded: %+v", name, a)
		}
	}
	if rr.Errors != 0 {
		t.Errorf("truncated answers counted as %d errors", rr.Errors)
	}
	var trunc struct {
		Rules []struct {
			Truncated int `json:"truncated"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, 0, "report", path, "--format", "json").out), &trunc); err != nil || trunc.Rules[0].Truncated != calls {
		t.Errorf("report json truncated = %+v, %v; want %d", trunc, err, calls)
	}
	if md := mustRun(t, 0, "report", path, "--format", "md").out; !strings.Contains(md, "truncated") {
		t.Errorf("the markdown report does not show the truncated answers:\n%s", md)
	}
	if p := mustRun(t, 0, "plan", path); !strings.Contains(p.out, "calls: 0 to make") {
		t.Errorf("plan would ask the truncated calls again:\n%s", p.out)
	}

	// Settled: the next run asks nothing; --retry-truncated asks them all.
	before, _ := srv.counts()
	mustRun(t, 0, "run", path, "--yes", "--headless")
	if n, _ := srv.counts(); n != before {
		t.Errorf("a rerun asked %d truncated calls again", n-before)
	}
	mustRun(t, 0, "run", path, "--yes", "--headless", "--retry-truncated")
	if n, _ := srv.counts(); n != before+calls {
		t.Errorf("--retry-truncated sent %d requests, want %d", n-before, calls)
	}
}

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// batchServer copies OpenAI's Files and Batches APIs as documented: POST
// /v1/files (multipart, purpose "batch"), POST /v1/batches, GET
// /v1/batches/{id} ("in_progress" until done, then "completed" with an
// output file), GET /v1/files/{id}/content. Every line is answered with a
// refusal. Any other request (a direct chat completion) is counted as one.
type batchServer struct {
	mu     sync.Mutex
	done   bool
	lines  int
	output string
	direct int // requests outside the batch API
}

func (s *batchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	reply := func(body string) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}
	batch := func(status string) string {
		out := ""
		if status == "completed" {
			out = "file-out"
		}
		return fmt.Sprintf(`{"id":"batch_abc123","object":"batch","endpoint":"/v1/chat/completions","errors":null,"input_file_id":"file-abc123",
			"completion_window":"24h","status":%q,"output_file_id":%q,"error_file_id":"","created_at":1711471533,"in_progress_at":1711471538,
			"expires_at":1711557933,"request_counts":{"total":%d,"completed":0,"failed":0},"metadata":null}`, status, out, s.lines)
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/files":
		f, _, err := r.FormFile("file")
		if err != nil || r.FormValue("purpose") != "batch" {
			w.WriteHeader(400)
			reply(`{"error":{"message":"file missing","type":"invalid_request_error","param":"file","code":null}}`)
			return
		}
		var out strings.Builder
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l struct {
				CustomID string `json:"custom_id"`
			}
			_ = json.Unmarshal(sc.Bytes(), &l)
			fmt.Fprintf(&out, `{"id":"batch_req_%d","custom_id":%q,"response":{"status_code":200,"request_id":"req_%d","body":{"id":"chatcmpl-%d","object":"chat.completion","created":1711652795,"model":"e2e-model","choices":[{"index":0,"message":{"role":"assistant","content":"I can't help with that."},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110}}},"error":null}`+"\n", s.lines, l.CustomID, s.lines, s.lines)
			s.lines++
		}
		s.output = out.String()
		reply(`{"id":"file-abc123","object":"file","bytes":120000,"created_at":1677610602,"filename":"auditor-batch.jsonl","purpose":"batch"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/batches":
		reply(batch("validating"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/batches/batch_abc123":
		if s.done {
			reply(batch("completed"))
		} else {
			reply(batch("in_progress"))
		}
	case r.Method == http.MethodGet && r.URL.Path == "/v1/files/file-out/content":
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.WriteString(w, s.output)
	default:
		s.direct++
		w.WriteHeader(404)
		reply(`{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}`)
	}
}

// TestRunBatch drives `run --batch` as a user would: it submits every
// answer call as one batch and exits; a run before the batch ends sends
// nothing else; a run after it collects every answer, stored and priced as
// batched, with no direct call.
func TestRunBatch(t *testing.T) {
	t.Parallel()
	bs := &batchServer{}
	srv := httptest.NewServer(bs)
	t.Cleanup(srv.Close)
	cs := makeCases(2, 1, 2)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.URL + "/v1/", samples: 2, concurrency: 2}, cs)
	distinct := 2 * len(cs) * 2

	r := mustRun(t, exitOK, "run", path, "--yes", "--headless", "--batch", "--debug")
	if !strings.Contains(r.errOut, "submitted batch batch_abc123") {
		t.Fatalf("run --batch did not say what it submitted:\n%s", r.errOut)
	}
	bs.mu.Lock()
	lines, direct := bs.lines, bs.direct
	bs.mu.Unlock()
	if lines != distinct || direct != 0 {
		t.Fatalf("submitted %d lines and %d direct calls; want %d lines and none", lines, direct, distinct)
	}

	// Before the batch ends, a run neither re-sends nor calls directly.
	r = runMain(t, "run", path, "--yes", "--headless", "--batch")
	bs.mu.Lock()
	lines, direct = bs.lines, bs.direct
	bs.done = true
	bs.mu.Unlock()
	if lines != distinct || direct != 0 || !strings.Contains(r.errOut, "in batches") {
		t.Fatalf("a run while the batch is out: %d lines, %d direct calls (exit %d):\n%s", lines, direct, r.code, r.errOut)
	}

	// After it ends, a plain run collects everything. Its request log is
	// the submission's, appended to: the batch's whole story in one file.
	r = mustRun(t, exitOK, "run", path, "--yes", "--headless", "--debug")
	logged, err := os.ReadFile(filepath.Join(dir, "auditor-requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]bool{}
	for _, e := range readJSONL[struct {
		URL string `json:"url"`
	}](t, string(logged)) {
		urls[strings.TrimPrefix(e.URL, srv.URL)] = true
	}
	if !urls["/v1/batches"] || !urls["/v1/files/file-out/content"] {
		t.Errorf("the request log lacks the submission or the collection: %v", urls)
	}
	if !strings.Contains(r.errOut, fmt.Sprintf("collected %d answers", distinct)) {
		t.Fatalf("the collecting run did not collect %d answers:\n%s", distinct, r.errOut)
	}
	bs.mu.Lock()
	direct = bs.direct
	bs.mu.Unlock()
	if direct != 0 {
		t.Fatalf("the collecting run made %d direct calls", direct)
	}
	var doc struct {
		Spend struct {
			Calls        int     `json:"calls"`
			BatchedCalls int     `json:"batched_calls"`
			USD          float64 `json:"usd"`
		} `json:"spend"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, exitOK, "report", path, "--format", "json").out), &doc); err != nil {
		t.Fatal(err)
	}
	// 100 prompt and 10 completion tokens at $3 and $15 per million, half price.
	want := float64(distinct) * (100*3.0 + 10*15.0) / 1e6 * 0.5
	if doc.Spend.Calls != distinct || doc.Spend.BatchedCalls != distinct || doc.Spend.USD < want*0.999 || doc.Spend.USD > want*1.001 {
		t.Errorf("spend %+v; want %d batched calls costing $%.6f", doc.Spend, distinct, want)
	}
}

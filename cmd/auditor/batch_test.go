package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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
	// creates counts create requests; the batch exists once one came
	// (there is one batch, batch_abc123), with metadata meta.
	creates int
	meta    map[string]string
	// onCreate, when set, is called once the batch is created, and the
	// create request then gets no answer (its client is gone).
	onCreate func()
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
		meta, _ := json.Marshal(s.meta)
		return fmt.Sprintf(`{"id":"batch_abc123","object":"batch","endpoint":"/v1/chat/completions","errors":null,"input_file_id":"file-abc123",
			"completion_window":"24h","status":%q,"output_file_id":%q,"error_file_id":"","created_at":%d,"in_progress_at":1711471538,
			"expires_at":1711557933,"request_counts":{"total":%d,"completed":0,"failed":0},"metadata":%s}`, status, out, time.Now().Unix(), s.lines, meta)
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
		var body struct {
			Metadata map[string]string `json:"metadata"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		s.creates++
		s.meta = body.Metadata
		if cut := s.onCreate; cut != nil {
			s.onCreate = nil
			s.mu.Unlock()
			cut()
			<-r.Context().Done()
			s.mu.Lock() // for the deferred unlock
			return
		}
		reply(batch("validating"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/batches":
		if s.creates == 0 {
			reply(`{"object":"list","data":[],"has_more":false}`)
			return
		}
		reply(`{"object":"list","data":[` + batch("in_progress") + `],"has_more":false}`)
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

// TestRunBatch_CutOffWhileCreating kills `run --batch` (Ctrl-C, then kill
// -9) after the provider created the batch and before its answer arrived:
// the Ctrl-C exits 130 naming the batch that may exist, and the next run
// finds it at the provider instead of submitting every call again; its
// answers are collected and paid once (issue 28).
func TestRunBatch_CutOffWhileCreating(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{os.Interrupt, os.Kill} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			bs := &batchServer{}
			srv := httptest.NewServer(bs)
			t.Cleanup(srv.Close)
			cs := makeCases(2, 1, 2)
			dir := t.TempDir()
			path := writeAudit(t, dir, auditSpec{baseURL: srv.URL + "/v1/", samples: 2, concurrency: 2}, cs)
			distinct := 2 * len(cs) * 2

			child := exec.Command(os.Args[0], "run", path, "--yes", "--headless", "--batch")
			child.Env = append(os.Environ(), "AUDITOR_TEST_MAIN=1")
			var stderr strings.Builder
			child.Stderr = &stderr
			started := make(chan struct{})
			bs.mu.Lock()
			bs.onCreate = func() {
				<-started
				_ = child.Process.Signal(sig)
			}
			bs.mu.Unlock()
			if err := child.Start(); err != nil {
				t.Fatal(err)
			}
			close(started)
			if err := child.Wait(); err == nil {
				t.Fatalf("run --batch was not cut off:\n%s", stderr.String())
			}
			code := child.ProcessState.ExitCode()
			if sig == os.Interrupt {
				if code != exitInterrupted || !strings.Contains(stderr.String(), fmt.Sprintf("A batch of %d calls to ", distinct)) ||
					!strings.Contains(stderr.String(), "may exist") || !strings.Contains(stderr.String(), "recorded as auditor-") ||
					!strings.Contains(stderr.String(), "looks for it at the provider before sending anything") {
					t.Fatalf("Ctrl-C while the batch was created: exit %d, want 130 naming the batch:\n%s", code, stderr.String())
				}
			}

			// The next run --batch finds it and submits nothing.
			r := mustRun(t, exitOK, "run", path, "--yes", "--headless", "--batch")
			bs.mu.Lock()
			creates, direct := bs.creates, bs.direct
			bs.done = true
			bs.mu.Unlock()
			if creates != 1 || direct != 0 || !strings.Contains(r.errOut, "found at the provider") ||
				!strings.Contains(r.errOut, "Every answer is stored or in a batch") {
				t.Fatalf("after the cut: %d batches created, %d direct calls; want 1 and 0, the batch found:\n%s", creates, direct, r.errOut)
			}
			// Collected once it ends, and paid once.
			r = mustRun(t, exitOK, "run", path, "--yes", "--headless")
			if !strings.Contains(r.errOut, fmt.Sprintf("collected %d answers", distinct)) {
				t.Fatalf("the found batch was not collected:\n%s", r.errOut)
			}
			var doc struct {
				Spend struct {
					Calls        int `json:"calls"`
					BatchedCalls int `json:"batched_calls"`
				} `json:"spend"`
			}
			if err := json.Unmarshal([]byte(mustRun(t, exitOK, "report", path, "--format", "json").out), &doc); err != nil {
				t.Fatal(err)
			}
			bs.mu.Lock()
			defer bs.mu.Unlock()
			if doc.Spend.Calls != distinct || doc.Spend.BatchedCalls != distinct || bs.creates != 1 || bs.direct != 0 {
				t.Errorf("spend %+v, %d batches, %d direct calls; want %d batched calls in one batch", doc.Spend, bs.creates, bs.direct, distinct)
			}
		})
	}
}

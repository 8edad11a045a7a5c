package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// memBatches is a BatchStore in memory.
type memBatches struct {
	mu   sync.Mutex
	recs map[string]BatchRecord
}

// PutBatch keeps b as the store does: under its ID, or its Ref while it has
// no ID, replacing the record under its Ref once it has both.
func (m *memBatches) PutBatch(b BatchRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recs == nil {
		m.recs = map[string]BatchRecord{}
	}
	b.Keys = append([]string(nil), b.Keys...)
	if b.ID == "" {
		m.recs[b.Ref] = b
		return nil
	}
	delete(m.recs, b.Ref)
	m.recs[b.ID] = b
	return nil
}

func (m *memBatches) Batches() ([]BatchRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []BatchRecord
	for _, r := range m.recs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Submitted.Before(out[j].Submitted) })
	return out, nil
}

func (m *memBatches) DeleteBatch(id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, id)
	return nil
}

// openaiBatchServer copies OpenAI's Files and Batches APIs: POST /v1/files
// (multipart, purpose "batch"), POST /v1/batches, GET /v1/batches/{id}
// ("in_progress" until done is set, then "completed" with output and error
// files) and GET /v1/files/{id}/content. Each input line is answered from
// its user message: "fail" gets a 400 in the error file, "cut" a truncated
// answer, "skip" nothing (as if the batch expired for it).
type openaiBatchServer struct {
	mu      sync.Mutex
	done    bool
	input   []batchLine
	purpose string
	created map[string]any
	output  string
	errors  string
}

func (s *openaiBatchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/files":
		s.purpose = r.FormValue("purpose")
		f, _, err := r.FormFile("file")
		if err != nil {
			writeJSON(w, 400, `{"error":{"message":"file missing","type":"invalid_request_error","param":"file","code":null}}`)
			return
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var l batchLine
			_ = json.Unmarshal(sc.Bytes(), &l)
			s.input = append(s.input, l)
		}
		writeJSON(w, 200, `{"id":"file-abc123","object":"file","bytes":120000,"created_at":1677610602,"filename":"auditor-batch.jsonl","purpose":"batch"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/batches":
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &s.created)
		writeJSON(w, 200, s.batch("validating"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/batches/batch_abc123":
		if !s.done {
			writeJSON(w, 200, s.batch("in_progress"))
			return
		}
		var out, errs strings.Builder
		for i, l := range s.input {
			var body map[string]any
			_ = json.Unmarshal(l.Body, &body)
			user := lastUserMessage(body)
			switch {
			case strings.HasPrefix(user, "fail"):
				fmt.Fprintf(&errs, `{"id":"batch_req_%d","custom_id":%q,"response":{"status_code":400,"request_id":"req_%d","body":{"error":{"message":"Invalid 'messages': empty.","type":"invalid_request_error","param":"messages","code":null}}},"error":null}`+"\n", i, l.CustomID, i)
			case strings.HasPrefix(user, "skip"):
			default:
				content, finish := "answer to "+user, "stop"
				if strings.HasPrefix(user, "cut") {
					content, finish = "half an ans", "length"
				}
				fmt.Fprintf(&out, `{"id":"batch_req_%d","custom_id":%q,"response":{"status_code":200,"request_id":"req_%d","body":{"id":"chatcmpl-%d","object":"chat.completion","created":1711652795,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":%q}],"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100}}},"error":null}`+"\n", i, l.CustomID, i, i, content, finish)
			}
		}
		s.output, s.errors = out.String(), errs.String()
		writeJSON(w, 200, s.batch("completed"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/files/file-out/content":
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.WriteString(w, s.output)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/files/file-err/content":
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.WriteString(w, s.errors)
	default:
		writeJSON(w, 404, `{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}`)
	}
}

func (s *openaiBatchServer) batch(status string) string {
	out, errf := "", ""
	if status == "completed" {
		out, errf = "file-out", "file-err"
	}
	return fmt.Sprintf(`{"id":"batch_abc123","object":"batch","endpoint":"/v1/chat/completions","errors":null,"input_file_id":"file-abc123",
		"completion_window":"24h","status":%q,"output_file_id":%q,"error_file_id":%q,"created_at":1711471533,"in_progress_at":1711471538,
		"expires_at":1711557933,"request_counts":{"total":%d,"completed":0,"failed":0},"metadata":null}`, status, out, errf, len(s.input))
}

func batchCalls(p Price, users ...string) []Call {
	calls := make([]Call, len(users))
	for i, u := range users {
		req := request(u, i)
		calls[i] = Call{Key: req.Key(), Request: req, Price: p}
	}
	return calls
}

func TestBatch_OpenAI(t *testing.T) {
	t.Parallel()
	srv := &openaiBatchServer{}
	ts, client := newPipeServer(t, srv)
	o, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	price := Price{InputPerMTok: 2, OutputPerMTok: 8}
	calls := batchCalls(price, "a", "b", "fail", "cut", "skip", "already stored")
	opts := Options{Providers: []Endpoint{{Name: "gpt-4o at openai", Provider: o}}, Skip: func(i int) bool { return i == 5 }}
	st := &memBatches{}
	ctx := context.Background()
	recs, err := SubmitBatches(ctx, calls, opts, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].ID != "batch_abc123" || len(recs[0].Keys) != 5 || recs[0].Endpoint != "gpt-4o at openai" {
		t.Fatalf("records %+v", recs)
	}
	srv.mu.Lock()
	if srv.purpose != "batch" || len(srv.input) != 5 || srv.created["input_file_id"] != "file-abc123" ||
		srv.created["endpoint"] != "/v1/chat/completions" || srv.created["completion_window"] != "24h" {
		t.Errorf("purpose %q, %d lines, batch %v", srv.purpose, len(srv.input), srv.created)
	}
	for i, l := range srv.input {
		var body map[string]any
		_ = json.Unmarshal(l.Body, &body)
		if l.CustomID != calls[i].Key || l.Method != "POST" || l.URL != "/v1/chat/completions" || body["model"] != "test-model" || body["max_tokens"] != 100.0 {
			t.Errorf("line %d: %+v %v", i, l, body)
		}
	}
	srv.mu.Unlock()

	// A second submit sends nothing: the calls are in a batch already.
	if again, err := SubmitBatches(ctx, calls, opts, st); err != nil || len(again) != 0 {
		t.Errorf("resubmitted: %+v, %v", again, err)
	}
	if keys, _ := BatchedKeys(st); len(keys) != 5 || !keys[calls[0].Key] || keys[calls[5].Key] {
		t.Errorf("batched keys %v", keys)
	}

	sink := newMemSink()
	sum, err := CollectBatches(ctx, calls, opts, st, sink)
	if err != nil || sum.Pending != 5 || sum.Collected != 0 || len(sink.keys()) != 0 {
		t.Fatalf("while in progress: %+v, %v", sum, err)
	}
	srv.mu.Lock()
	srv.done = true
	srv.mu.Unlock()
	sum, err = CollectBatches(ctx, calls, opts, st, sink)
	if err != nil {
		t.Fatal(err)
	}
	// a, b answered; fail stored as a request error; cut truncated; skip dropped.
	if sum.Collected != 4 || sum.Failed != 2 || sum.Dropped != 1 || sum.Pending != 0 {
		t.Errorf("summary %+v", sum)
	}
	if want := 3 * price.Scaled(0.5).Cost(1000, 0, 100); math.Abs(sum.Spent-want) > 1e-12 {
		t.Errorf("spent %v, want %v (half price)", sum.Spent, want)
	}
	sink.mu.Lock()
	a, fail, cut := sink.resps[calls[0].Key], sink.resps[calls[2].Key], sink.resps[calls[3].Key]
	_, skipped := sink.resps[calls[4].Key]
	sink.mu.Unlock()
	if !a.OK() || a.Text != "answer to a" || a.Model != "test-model" || a.PromptTokens != 1000 || a.CompletionTokens != 100 {
		t.Errorf("answer %+v", a)
	}
	if fail.ErrorKind != model.ErrRequest || !strings.Contains(fail.Error, "Invalid 'messages'") {
		t.Errorf("failed call %+v", fail)
	}
	if cut.ErrorKind != model.ErrTruncated || cut.Text != "half an ans" {
		t.Errorf("truncated call %+v", cut)
	}
	if skipped {
		t.Error("a call the batch did not answer was saved")
	}
	if recs, _ := st.Batches(); len(recs) != 0 {
		t.Errorf("collected batch still recorded: %+v", recs)
	}
}

// anthropicBatchServer copies the Message Batches API: POST
// /v1/messages/batches, GET /v1/messages/batches/{id} (processing_status
// "in_progress" until done, then "ended"), and GET .../results as JSONL.
type anthropicBatchServer struct {
	mu       sync.Mutex
	done     bool
	requests []map[string]any
	headers  http.Header
}

func (s *anthropicBatchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	batch := func(status string) string {
		return fmt.Sprintf(`{"id":"msgbatch_01","type":"message_batch","processing_status":%q,
			"request_counts":{"processing":0,"succeeded":2,"errored":1,"canceled":0,"expired":1},
			"ended_at":null,"created_at":"2024-09-24T18:37:24.100435Z","expires_at":"2024-09-25T18:37:24.100435Z",
			"archived_at":null,"cancel_initiated_at":null,"results_url":"https://api.anthropic.com/v1/messages/batches/msgbatch_01/results"}`, status)
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/batches":
		s.headers = r.Header.Clone()
		var body struct {
			Requests []map[string]any `json:"requests"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		s.requests = body.Requests
		writeJSON(w, 200, batch("in_progress"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/messages/batches/msgbatch_01":
		if !s.done {
			writeJSON(w, 200, batch("in_progress"))
			return
		}
		writeJSON(w, 200, batch("ended"))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/messages/batches/msgbatch_01/results":
		var out bytes.Buffer
		for _, req := range s.requests {
			id, _ := req["custom_id"].(string)
			params, _ := req["params"].(map[string]any)
			msgs, _ := params["messages"].([]any)
			m, _ := msgs[len(msgs)-1].(map[string]any)
			blocks, _ := m["content"].([]any)
			blk, _ := blocks[0].(map[string]any)
			user, _ := blk["text"].(string)
			switch {
			case strings.HasPrefix(user, "fail"):
				fmt.Fprintf(&out, `{"custom_id":%q,"result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}}}`+"\n", id)
			case strings.HasPrefix(user, "skip"):
				fmt.Fprintf(&out, `{"custom_id":%q,"result":{"type":"expired"}}`+"\n", id)
			default:
				fmt.Fprintf(&out, `{"custom_id":%q,"result":{"type":"succeeded","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"answer to %s"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":50}}}}`+"\n", id, user)
			}
		}
		w.Header().Set("Content-Type", "application/binary")
		_, _ = w.Write(out.Bytes())
	default:
		writeJSON(w, 404, `{"type":"error","error":{"type":"not_found_error","message":"Not found"}}`)
	}
}

func TestBatch_Anthropic(t *testing.T) {
	t.Parallel()
	srv := &anthropicBatchServer{}
	ts, client := newPipeServer(t, srv)
	a, err := NewAnthropic(AnthropicConfig{BaseURL: ts.URL, APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	price := Price{InputPerMTok: 5, CacheWriteInputPerMTok: 6.25, OutputPerMTok: 25}
	calls := batchCalls(price, "a", "b", "fail", "skip")
	for i := range calls {
		calls[i].Request.API = model.APIAnthropic
		calls[i].Request.ExtraBody = map[string]any{"metadata": map[string]any{"user_id": "audit"}}
		calls[i].Key = calls[i].Request.Key()
	}
	opts := Options{Providers: []Endpoint{{Name: "claude", Provider: a}}}
	st := &memBatches{}
	ctx := context.Background()
	recs, err := SubmitBatches(ctx, calls, opts, st)
	if err != nil || len(recs) != 1 || recs[0].ID != "msgbatch_01" {
		t.Fatalf("%+v, %v", recs, err)
	}
	srv.mu.Lock()
	if srv.headers.Get("x-api-key") != fakeKey || len(srv.requests) != 4 {
		t.Errorf("headers %v, %d requests", srv.headers, len(srv.requests))
	}
	for i, r := range srv.requests {
		p, _ := r["params"].(map[string]any)
		sys, _ := p["system"].([]any)
		md, _ := p["metadata"].(map[string]any)
		if r["custom_id"] != calls[i].Key || p["model"] != "test-model" || p["max_tokens"] != 100.0 || len(sys) != 1 || md["user_id"] != "audit" ||
			!strings.Contains(fmt.Sprint(sys[0]), "ephemeral") {
			t.Errorf("request %d: %v", i, r)
		}
	}
	srv.mu.Unlock()
	sink := newMemSink()
	if sum, err := CollectBatches(ctx, calls, opts, st, sink); err != nil || sum.Pending != 4 {
		t.Fatalf("in progress: %+v, %v", sum, err)
	}
	srv.mu.Lock()
	srv.done = true
	srv.mu.Unlock()
	sum, err := CollectBatches(ctx, calls, opts, st, sink)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Collected != 3 || sum.Failed != 1 || sum.Dropped != 1 || len(sum.Notes) != 1 {
		t.Errorf("summary %+v", sum)
	}
	u := Usage{Prompt: 1010, CacheWrite: 1000, Completion: 50}
	if want := 2 * price.Scaled(0.5).CostOf(u); math.Abs(sum.Spent-want) > 1e-12 {
		t.Errorf("spent %v, want %v", sum.Spent, want)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if r := sink.resps[calls[1].Key]; !r.OK() || r.Text != "answer to b" || r.PromptTokens != 1010 || r.CacheWriteTokens != 1000 {
		t.Errorf("answer %+v", r)
	}
	if r := sink.resps[calls[2].Key]; r.ErrorKind != model.ErrRequest || !strings.Contains(r.Error, "max_tokens: Field required") {
		t.Errorf("errored %+v", r)
	}
}

// Endpoints without a batch API, and calls with extra headers, are refused
// before anything is sent.
func TestBatch_Refused(t *testing.T) {
	t.Parallel()
	p := funcProvider(func(ctx context.Context, c Call) (Completion, error) { return Completion{}, nil })
	calls := batchCalls(Price{}, "a")
	_, err := SubmitBatches(context.Background(), calls, Options{Providers: []Endpoint{{Name: "llama at localhost", Provider: p}}}, &memBatches{})
	if err == nil || !strings.Contains(err.Error(), "llama at localhost has no batch API") {
		t.Errorf("no batch API: %v", err)
	}
	f := newFakeAPI(t)
	o := newTestOpenAI(t, f)
	calls[0].Request.ExtraHeaders = map[string]string{"X-Title": "a"}
	_, err = SubmitBatches(context.Background(), calls, Options{Providers: []Endpoint{{Name: "openai", Provider: o}}}, &memBatches{})
	if err == nil || !strings.Contains(err.Error(), "extra_headers cannot be batched") {
		t.Errorf("extra headers: %v", err)
	}
}

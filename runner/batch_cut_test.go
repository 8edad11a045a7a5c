package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// A batch submission can be cut off (kill -9, Ctrl-C, a lost connection)
// at two points that matter: after the calls are uploaded and before the
// batch is created, and after the provider created the batch and before
// its answer arrived. In both, the next run must find out which happened
// before it sends anything: the batch created once, and paid once.

// cut says where a fault server cuts a submission off: it cancels the
// submitting context at that point and holds the request until the client
// has gone, as a killed client's request is never answered.
type cut int

const (
	noCut       cut = iota
	cutBefore       // the create request arrives, and no batch is created
	cutAfter        // the batch is created, and its answer never arrives
	refuseFirst     // the first create is refused with a 400
)

// cutOpenAIServer speaks OpenAI's Files and Batches APIs (upload, create,
// list newest first, get, content, delete), answers every batch at once
// and cuts the first create off as told.
type cutOpenAIServer struct {
	mu      sync.Mutex
	cut     cut
	cancel  context.CancelFunc
	creates int                 // create requests received
	files   map[string][]string // file id -> its custom_ids
	deleted []string
	batches []cutOpenAIBatch // created, oldest first
	// others are batches of other programs, listed with this audit's.
	others []cutOpenAIBatch
	// huge, when set, is the answer text of every batch's second call.
	huge string
}

type cutOpenAIBatch struct {
	ID, File, Ref string
	Created       int64
}

func (s *cutOpenAIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	batchJSON := func(b cutOpenAIBatch) string {
		md := "null"
		if b.Ref != "" {
			md = fmt.Sprintf(`{%q:%q}`, batchRefKey, b.Ref)
		}
		return fmt.Sprintf(`{"id":%q,"object":"batch","endpoint":"/v1/chat/completions","errors":null,"input_file_id":%q,
			"completion_window":"24h","status":"completed","output_file_id":"out-%s","error_file_id":"","created_at":%d,
			"expires_at":%d,"request_counts":{"total":0,"completed":0,"failed":0},"metadata":%s}`, b.ID, b.File, b.ID, b.Created, b.Created+86400, md)
	}
	s.mu.Lock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/files":
		f, _, err := r.FormFile("file")
		if err != nil {
			s.mu.Unlock()
			writeJSON(w, 400, `{"error":{"message":"file missing","type":"invalid_request_error","param":"file","code":null}}`)
			return
		}
		var ids []string
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l batchLine
			_ = json.Unmarshal(sc.Bytes(), &l)
			ids = append(ids, l.CustomID)
		}
		if s.files == nil {
			s.files = map[string][]string{}
		}
		id := fmt.Sprintf("file-%d", len(s.files)+1)
		s.files[id] = ids
		s.mu.Unlock()
		writeJSON(w, 200, fmt.Sprintf(`{"id":%q,"object":"file","bytes":1000,"created_at":1677610602,"filename":"x.jsonl","purpose":"batch"}`, id))
	case r.Method == http.MethodPost && r.URL.Path == "/v1/batches":
		var body struct {
			InputFileID string            `json:"input_file_id"`
			Metadata    map[string]string `json:"metadata"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		s.creates++
		first := s.creates == 1
		if first && s.cut == refuseFirst {
			s.mu.Unlock()
			writeJSON(w, 400, `{"error":{"message":"The input file is invalid.","type":"invalid_request_error","param":null,"code":null}}`)
			return
		}
		created := cutOpenAIBatch{ID: fmt.Sprintf("batch_%d", len(s.batches)+1), File: body.InputFileID,
			Ref: body.Metadata[batchRefKey], Created: time.Now().Unix()}
		if !(first && s.cut == cutBefore) {
			s.batches = append(s.batches, created)
		}
		if first && (s.cut == cutBefore || s.cut == cutAfter) {
			cancel := s.cancel
			s.mu.Unlock()
			cancel()
			<-r.Context().Done()
			return
		}
		s.mu.Unlock()
		writeJSON(w, 200, batchJSON(created))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/batches":
		all := append(append([]cutOpenAIBatch(nil), s.others...), s.batches...)
		s.mu.Unlock()
		var data []string
		for i := len(all) - 1; i >= 0; i-- { // newest first
			data = append(data, batchJSON(all[i]))
		}
		writeJSON(w, 200, `{"object":"list","data":[`+strings.Join(data, ",")+`],"has_more":false}`)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/batches/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/batches/")
		for _, b := range s.batches {
			if b.ID == id {
				s.mu.Unlock()
				writeJSON(w, 200, batchJSON(b))
				return
			}
		}
		s.mu.Unlock()
		writeJSON(w, 404, `{"error":{"message":"No such batch","type":"invalid_request_error","param":null,"code":null}}`)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/files/out-"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/files/out-"), "/content")
		var out strings.Builder
		for _, b := range s.batches {
			if b.ID != id {
				continue
			}
			for i, k := range s.files[b.File] {
				text := fmt.Sprintf("answer %d", i)
				if i == 1 && s.huge != "" {
					text = s.huge
				}
				fmt.Fprintf(&out, `{"id":"batch_req_%d","custom_id":%q,"response":{"status_code":200,"request_id":"r","body":{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100}}},"error":null}`+"\n", i, k, text)
			}
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = io.WriteString(w, out.String())
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/files/"):
		id := strings.TrimPrefix(r.URL.Path, "/v1/files/")
		s.deleted = append(s.deleted, id)
		s.mu.Unlock()
		writeJSON(w, 200, fmt.Sprintf(`{"id":%q,"object":"file","deleted":true}`, id))
	default:
		s.mu.Unlock()
		writeJSON(w, 404, `{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}`)
	}
}

// submitCut submits calls with a context the server cancels at its cut.
func submitCut(t *testing.T, calls []Call, opts Options, st BatchStore, setCancel func(context.CancelFunc)) ([]BatchRecord, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setCancel(cancel)
	return SubmitBatches(ctx, calls, opts, st)
}

func TestBatch_OpenAICutOff(t *testing.T) {
	t.Parallel()
	price := Price{InputPerMTok: 2, OutputPerMTok: 8}
	for _, tc := range []struct {
		name string
		cut  cut
	}{{"after the upload, before the create", cutBefore}, {"after the create, before its answer", cutAfter}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &cutOpenAIServer{cut: tc.cut}
			// Another program's batch, on the same key, made at the same time.
			srv.others = []cutOpenAIBatch{{ID: "batch_other", File: "file-other", Ref: "", Created: time.Now().Unix()}}
			ts, client := newPipeServer(t, srv)
			o, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			calls := batchCalls(price, "a", "b", "c")
			opts := Options{Providers: []Endpoint{{Name: "gpt-4o at openai", Provider: o}}}
			st := &memBatches{}
			recs, err := submitCut(t, calls, opts, st, func(c context.CancelFunc) { srv.mu.Lock(); srv.cancel = c; srv.mu.Unlock() })
			var cutErr *BatchInterrupted
			if !errors.As(err, &cutErr) || !errors.Is(err, context.Canceled) || len(recs) != 0 {
				t.Fatalf("a submission cut off returned %+v, %v; want a BatchInterrupted, cancelled", recs, err)
			}
			if !strings.Contains(err.Error(), "may exist") || !strings.Contains(err.Error(), cutErr.Record.Ref) || !strings.Contains(err.Error(), "3 calls to gpt-4o at openai") {
				t.Errorf("the error does not name the batch that may exist: %v", err)
			}
			// The record is there, without an id: it keeps the calls out.
			held, _ := st.Batches()
			if len(held) != 1 || held[0].Created() || held[0].Ref == "" || held[0].InputFile != "file-1" || len(held[0].Keys) != 3 {
				t.Fatalf("records after the cut: %+v", held)
			}
			if keys, _ := BatchedKeys(st); len(keys) != 3 {
				t.Errorf("%d calls held out of a run, want 3", len(keys))
			}
			// A run --batch after the cut submits nothing before collecting...
			if again, err := SubmitBatches(context.Background(), calls, opts, st); err != nil || len(again) != 0 {
				t.Fatalf("resubmitted before the lookup: %+v, %v", again, err)
			}
			// ...and collecting looks the batch up.
			sink := newMemSink()
			sum, err := CollectBatches(context.Background(), calls, opts, st, sink)
			if err != nil {
				t.Fatal(err)
			}
			srv.mu.Lock()
			creates, batches, deleted := srv.creates, len(srv.batches), append([]string(nil), srv.deleted...)
			srv.mu.Unlock()
			switch tc.cut {
			case cutAfter:
				if sum.Found != 1 || sum.Collected != 3 || sum.Unsent != 0 || len(sink.keys()) != 3 || len(deleted) != 0 {
					t.Errorf("the batch created before the cut was not found and collected: %+v, %d saved, deleted %v", sum, len(sink.keys()), deleted)
				}
				if want := 3 * price.Scaled(0.5).Cost(1000, 0, 100); sum.Spent < want*0.999 || sum.Spent > want*1.001 {
					t.Errorf("spent %v, want %v: the found batch's cost enters the ledger", sum.Spent, want)
				}
			case cutBefore:
				if sum.Found != 0 || sum.Unsent != 3 || sum.Collected != 0 || len(deleted) != 1 || deleted[0] != "file-1" {
					t.Errorf("a batch never created: %+v, deleted %v; want its 3 calls unsent and its input file deleted", sum, deleted)
				}
				// Its calls go again, once.
				recs, err := SubmitBatches(context.Background(), calls, opts, st)
				if err != nil || len(recs) != 1 {
					t.Fatalf("resubmitting: %+v, %v", recs, err)
				}
				srv.mu.Lock()
				creates, batches = srv.creates, len(srv.batches)
				srv.mu.Unlock()
				if creates != 2 {
					t.Errorf("%d create requests, want 2 (the cut one and this)", creates)
				}
			}
			if batches != 1 {
				t.Errorf("the provider holds %d batches of this audit, want 1 (paid once)", batches)
			}
			if tc.cut == cutAfter && creates != 1 {
				t.Errorf("%d create requests, want 1", creates)
			}
			if left, _ := st.Batches(); tc.cut == cutAfter && len(left) != 0 {
				t.Errorf("records after collection: %+v", left)
			}
		})
	}
}

// A create the provider refuses (a 4xx) made no batch: its record goes,
// and the error is the provider's, not a batch that may exist.
func TestBatch_RefusedCreateForgotten(t *testing.T) {
	t.Parallel()
	srv := &cutOpenAIServer{cut: refuseFirst}
	ts, client := newPipeServer(t, srv)
	o, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	calls := batchCalls(Price{}, "a")
	st := &memBatches{}
	_, err = SubmitBatches(context.Background(), calls, Options{Providers: []Endpoint{{Name: "openai", Provider: o}}}, st)
	var cutErr *BatchInterrupted
	if err == nil || errors.As(err, &cutErr) || !strings.Contains(err.Error(), "The input file is invalid") {
		t.Fatalf("a refused create: %v", err)
	}
	if recs, _ := st.Batches(); len(recs) != 0 {
		t.Errorf("a refused batch is still recorded: %+v", recs)
	}
}

// cutAnthropicServer speaks the Message Batches API (create, list newest
// first, get, results), ends every batch at once and cuts the first create
// off as told.
type cutAnthropicServer struct {
	mu      sync.Mutex
	cut     cut
	cancel  context.CancelFunc
	creates int
	batches []cutAnthropicBatch // oldest first, this audit's and others'
	huge    string              // as cutOpenAIServer's
}

type cutAnthropicBatch struct {
	ID      string
	Created time.Time
	Keys    []string
	Mine    bool // made by the test's submissions
}

func (s *cutAnthropicServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	batchJSON := func(b cutAnthropicBatch) string {
		return fmt.Sprintf(`{"id":%q,"type":"message_batch","processing_status":"ended",
			"request_counts":{"processing":0,"succeeded":%d,"errored":0,"canceled":0,"expired":0},
			"ended_at":%q,"created_at":%q,"expires_at":%q,"archived_at":null,"cancel_initiated_at":null,
			"results_url":"https://api.anthropic.com/v1/messages/batches/%s/results"}`,
			b.ID, len(b.Keys), b.Created.Format(time.RFC3339Nano), b.Created.Format(time.RFC3339Nano), b.Created.Add(24*time.Hour).Format(time.RFC3339Nano), b.ID)
	}
	s.mu.Lock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/batches":
		var body struct {
			Requests []struct {
				CustomID string `json:"custom_id"`
			} `json:"requests"`
		}
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		s.creates++
		first := s.creates == 1
		b := cutAnthropicBatch{ID: fmt.Sprintf("msgbatch_%d", len(s.batches)+1), Created: time.Now(), Mine: true}
		for _, q := range body.Requests {
			b.Keys = append(b.Keys, q.CustomID)
		}
		if !(first && s.cut == cutBefore) {
			s.batches = append(s.batches, b)
		}
		if first && (s.cut == cutBefore || s.cut == cutAfter) {
			cancel := s.cancel
			s.mu.Unlock()
			cancel()
			<-r.Context().Done()
			return
		}
		s.mu.Unlock()
		writeJSON(w, 200, batchJSON(b))
	case r.Method == http.MethodGet && r.URL.Path == "/v1/messages/batches":
		all := append([]cutAnthropicBatch(nil), s.batches...)
		s.mu.Unlock()
		var data []string
		for i := len(all) - 1; i >= 0; i-- {
			data = append(data, batchJSON(all[i]))
		}
		first, last := "", ""
		if len(all) > 0 {
			first, last = all[len(all)-1].ID, all[0].ID
		}
		writeJSON(w, 200, fmt.Sprintf(`{"data":[%s],"has_more":false,"first_id":%q,"last_id":%q}`, strings.Join(data, ","), first, last))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/messages/batches/"):
		id, results := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/v1/messages/batches/"), "/results")
		for _, b := range s.batches {
			if b.ID != id {
				continue
			}
			s.mu.Unlock()
			if !results {
				writeJSON(w, 200, batchJSON(b))
				return
			}
			var out strings.Builder
			for i, k := range b.Keys {
				text := "answer"
				if i == 1 && s.huge != "" {
					text = s.huge
				}
				fmt.Fprintf(&out, `{"custom_id":%q,"result":{"type":"succeeded","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10}}}}`+"\n", k, text)
			}
			w.Header().Set("Content-Type", "application/binary")
			_, _ = io.WriteString(w, out.String())
			return
		}
		s.mu.Unlock()
		writeJSON(w, 404, `{"type":"error","error":{"type":"not_found_error","message":"Not found"}}`)
	default:
		s.mu.Unlock()
		writeJSON(w, 404, `{"type":"error","error":{"type":"not_found_error","message":"Not found"}}`)
	}
}

// Message Batches keep no metadata: the batch cut off is told from the
// others by its number of calls and its time.
func TestBatch_AnthropicCutOff(t *testing.T) {
	t.Parallel()
	price := Price{InputPerMTok: 5, OutputPerMTok: 25}
	for _, tc := range []struct {
		name string
		cut  cut
	}{{"before the create", cutBefore}, {"after the create, before its answer", cutAfter}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Now()
			srv := &cutAnthropicServer{cut: tc.cut, batches: []cutAnthropicBatch{
				{ID: "msgbatch_old", Created: now.Add(-time.Hour), Keys: []string{"x1", "x2", "x3"}},        // the same size, long before
				{ID: "msgbatch_other", Created: now.Add(-time.Minute), Keys: []string{"y1", "y2"}},          // another size, just before
				{ID: "msgbatch_near", Created: now.Add(-5 * time.Minute), Keys: []string{"z1", "z2", "z3"}}, // the same size, minutes before
			}}
			ts, client := newPipeServer(t, srv)
			a, err := NewAnthropic(AnthropicConfig{BaseURL: ts.URL, APIKey: fakeKey, HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			calls := batchCalls(price, "a", "b", "c")
			for i := range calls {
				calls[i].Request.API = model.APIAnthropic
				calls[i].Key = calls[i].Request.Key()
			}
			opts := Options{Providers: []Endpoint{{Name: "claude", Provider: a}}}
			st := &memBatches{}
			_, err = submitCut(t, calls, opts, st, func(c context.CancelFunc) { srv.mu.Lock(); srv.cancel = c; srv.mu.Unlock() })
			var cutErr *BatchInterrupted
			if !errors.As(err, &cutErr) || !errors.Is(err, context.Canceled) {
				t.Fatalf("a submission cut off: %v", err)
			}
			if again, err := SubmitBatches(context.Background(), calls, opts, st); err != nil || len(again) != 0 {
				t.Fatalf("resubmitted before the lookup: %+v, %v", again, err)
			}
			sink := newMemSink()
			sum, err := CollectBatches(context.Background(), calls, opts, st, sink)
			if err != nil {
				t.Fatal(err)
			}
			if tc.cut == cutBefore {
				if sum.Found != 0 || sum.Unsent != 3 || sum.Collected != 0 {
					t.Errorf("a batch never created: %+v; want its calls unsent", sum)
				}
				if _, err := SubmitBatches(context.Background(), calls, opts, st); err != nil {
					t.Fatal(err)
				}
			} else if sum.Found != 1 || sum.Collected != 3 || len(sink.keys()) != 3 {
				t.Errorf("the batch created before the cut: %+v, %d saved", sum, len(sink.keys()))
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			mine := 0
			for _, b := range srv.batches {
				if b.Mine {
					mine++
				}
			}
			if mine != 1 {
				t.Errorf("the provider holds %d batches of this audit, want 1 (paid once)", mine)
			}
		})
	}
}

// A batch's result line is held to its call's answer limit: an oversized
// one is not read into memory, and its call is settled as ErrTooLarge; the
// others are collected.
func TestBatch_ResultTooLarge(t *testing.T) {
	t.Parallel()
	for _, size := range []int{2 << 20, 40 << 20} { // past the call's limit; past the batch's largest
		for _, name := range []string{"openai", "anthropic"} {
			t.Run(fmt.Sprint(name, size), func(t *testing.T) {
				t.Parallel()
				huge := strings.Repeat("x", size)
				var p Provider
				var err error
				calls := batchCalls(Price{InputPerMTok: 2, OutputPerMTok: 8}, "a", "b", "c")
				calls[0].Request.MaxTokens = 100_000 // the batch's lines may reach 7.4 MB
				if name == "openai" {
					ts, client := newPipeServer(t, &cutOpenAIServer{huge: huge})
					p, err = NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
				} else {
					ts, client := newPipeServer(t, &cutAnthropicServer{huge: huge})
					p, err = NewAnthropic(AnthropicConfig{BaseURL: ts.URL, APIKey: fakeKey, HTTPClient: client})
					for i := range calls {
						calls[i].Request.API = model.APIAnthropic
					}
				}
				if err != nil {
					t.Fatal(err)
				}
				for i := range calls {
					calls[i].Key = calls[i].Request.Key()
				}
				opts := Options{Providers: []Endpoint{{Name: name, Provider: p}}}
				st := &memBatches{}
				if _, err := SubmitBatches(context.Background(), calls, opts, st); err != nil {
					t.Fatal(err)
				}
				sink := newMemSink()
				sum, err := CollectBatches(context.Background(), calls, opts, st, sink)
				if err != nil || sum.Collected != 3 || sum.Failed != 1 {
					t.Fatalf("%+v, %v", sum, err)
				}
				sink.mu.Lock()
				defer sink.mu.Unlock()
				r := sink.resps[calls[1].Key]
				if r.ErrorKind != model.ErrTooLarge || r.Text != "" || !r.ErrorKind.Settled() || !strings.Contains(r.Error, fmt.Sprint(AnswerLimit(calls[1].Request))) {
					t.Errorf("the oversized result: %+v", r)
				}
				if a := sink.resps[calls[2].Key]; !a.OK() {
					t.Errorf("the result after it: %+v", a)
				}
			})
		}
	}
}

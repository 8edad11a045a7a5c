package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// fakeAPI is an httptest server speaking the chat-completions protocol. Each
// request's last user message is a script: "<step>,<step>,...|<tag>"; attempt
// n of that message behaves as step n (the last step repeats). Steps:
//
//	ok          200 with an answer and usage (prompt 10, cached 3, completion 5)
//	filter      200 with finish_reason "content_filter"
//	nochoices   200 with an empty choices list
//	badjson     200 with a truncated JSON body
//	429         429 rate limit, no Retry-After
//	429raN      429 with "Retry-After: N" (seconds)
//	429msN      429 with "retry-after-ms: N"
//	429dateN    429 with Retry-After as an HTTP date N seconds ahead
//	429spentN   429 without Retry-After whose headers say no requests are
//	            left in a window that resets in N seconds
//	okspentN    as ok, with headers saying no tokens are left in a window
//	            that resets in N seconds
//	quota       429 with code insufficient_quota
//	500         500 with a JSON error
//	500noretry  500 with "x-should-retry: false"
//	502html     502 with an HTML body
//	400         400 invalid_request_error
//	cf400       400 with code content_filter
//	401echo     401 whose message echoes the Authorization header
//	402         402 payment required
//	reset       hijack the connection and reset it
//	hang        block until the client goes away
//	sleepN      sleep N ms, then as ok
type fakeAPI struct {
	srv    *httptest.Server
	client *http.Client // reaches srv through an in-memory network

	mu       sync.Mutex
	attempts map[string]int
	arrivals map[string][]time.Time // when each attempt of a script arrived
	replied  map[string][]time.Time // when each reply was about to be written
	floors   map[string][]time.Time // for 429date: the date sent
	bodies   []map[string]any
	auth     []string
	echoed   []string // 401echo messages as sent
}

func newFakeAPI(t testing.TB) *fakeAPI {
	t.Helper()
	f := &fakeAPI{
		attempts: map[string]int{},
		arrivals: map[string][]time.Time{},
		replied:  map[string][]time.Time{},
		floors:   map[string][]time.Time{},
	}
	f.srv, f.client = newPipeServer(t, http.HandlerFunc(f.serve))
	return f
}

// newPipeServer starts an httptest server for h on an in-memory network
// (net.Pipe) and returns it with a client that reaches it. Unlike
// loopback sockets, pipes block durably, so the server, the client and the
// runner can all live in a synctest bubble and run on its fake clock: a
// Retry-After of a minute passes at once, and no test waits on wall time.
// The server is closed when the test ends.
func newPipeServer(t testing.TB, h http.Handler) (*httptest.Server, *http.Client) {
	t.Helper()
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	srv.Start()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return l.dial(ctx) },
		// Many idle connections, as the providers' own transport keeps.
		MaxIdleConnsPerHost: 128,
	}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return srv, &http.Client{Transport: tr}
}

// pipeListener is a net.Listener whose connections are net.Pipe pairs.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// dial connects to the listener; once it is closed, the dial is refused as
// a closed port would be.
func (l *pipeListener) dial(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeAPI) url() string { return f.srv.URL + "/v1/" }

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	msg := lastUserMessage(body)
	f.mu.Lock()
	f.attempts[msg]++
	n := f.attempts[msg]
	f.arrivals[msg] = append(f.arrivals[msg], arrived)
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()

	script, _, _ := strings.Cut(msg, "|")
	steps := strings.Split(script, ",")
	step := steps[min(n, len(steps))-1]
	f.act(w, r, msg, step, n)
}

func (f *fakeAPI) markReplied(msg string) {
	f.mu.Lock()
	f.replied[msg] = append(f.replied[msg], time.Now())
	f.mu.Unlock()
}

func (f *fakeAPI) act(w http.ResponseWriter, r *http.Request, msg, step string, n int) {
	jsonErr := func(status int, code any, typ, message string) {
		f.markReplied(msg)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": message, "type": typ, "param": nil, "code": code,
		}})
	}
	switch {
	case step == "ok":
		f.answer(w, msg, "stop", fmt.Sprintf("answer to %s #%d", msg, n), true)
	case step == "filter":
		f.answer(w, msg, "content_filter", "", true)
	case step == "nochoices":
		f.answer(w, msg, "", "", false)
	case step == "badjson":
		f.markReplied(msg)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[{"index":0,"mess`))
	case step == "429":
		jsonErr(429, "rate_limit_exceeded", "requests", "Rate limit reached for requests")
	case strings.HasPrefix(step, "429ra"):
		w.Header().Set("Retry-After", strings.TrimPrefix(step, "429ra"))
		jsonErr(429, "rate_limit_exceeded", "requests", "Rate limit reached for requests")
	case strings.HasPrefix(step, "429ms"):
		w.Header().Set("retry-after-ms", strings.TrimPrefix(step, "429ms"))
		jsonErr(429, "rate_limit_exceeded", "requests", "Rate limit reached for requests")
	case strings.HasPrefix(step, "429date"):
		secs, _ := strconv.Atoi(strings.TrimPrefix(step, "429date"))
		// HTTP dates have whole seconds: round up so the date is a real floor.
		at := time.Now().Add(time.Duration(secs) * time.Second).Truncate(time.Second).Add(time.Second)
		f.mu.Lock()
		f.floors[msg] = append(f.floors[msg], at)
		f.mu.Unlock()
		w.Header().Set("Retry-After", at.UTC().Format(http.TimeFormat))
		jsonErr(429, "rate_limit_exceeded", "requests", "Rate limit reached for requests")
	case strings.HasPrefix(step, "429spent"):
		w.Header().Set("x-ratelimit-remaining-requests", "0")
		w.Header().Set("x-ratelimit-reset-requests", strings.TrimPrefix(step, "429spent")+"s")
		w.Header().Set("x-ratelimit-remaining-tokens", "90000")
		w.Header().Set("x-ratelimit-reset-tokens", "6ms")
		jsonErr(429, "rate_limit_exceeded", "requests", "Rate limit reached for requests")
	case strings.HasPrefix(step, "okspent"):
		w.Header().Set("x-ratelimit-remaining-tokens", "0")
		w.Header().Set("x-ratelimit-reset-tokens", strings.TrimPrefix(step, "okspent")+"s")
		f.answer(w, msg, "stop", fmt.Sprintf("answer to %s #%d", msg, n), true)
	case step == "quota":
		jsonErr(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota, please check your plan and billing details.")
	case step == "500":
		jsonErr(500, nil, "server_error", "The server had an error while processing your request.")
	case step == "500noretry":
		w.Header().Set("x-should-retry", "false")
		jsonErr(500, nil, "server_error", "The server had an error while processing your request.")
	case step == "502html":
		f.markReplied(msg)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(502)
		_, _ = w.Write([]byte("<html><body>Bad gateway</body></html>"))
	case step == "400":
		jsonErr(400, nil, "invalid_request_error", "Invalid value for 'temperature'.")
	case step == "cf400":
		jsonErr(400, "content_filter", "invalid_request_error", "The prompt was filtered.")
	case step == "401echo":
		m := "Incorrect API key provided: " + r.Header.Get("Authorization")
		f.mu.Lock()
		f.echoed = append(f.echoed, m)
		f.mu.Unlock()
		jsonErr(401, "invalid_api_key", "invalid_request_error", m)
	case step == "402":
		jsonErr(402, 402, "billing", "Insufficient credits")
	case step == "reset":
		// Hang up without answering; over a real socket this is a reset.
		f.markReplied(msg)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_ = conn.Close()
	case step == "hang":
		<-r.Context().Done()
	case strings.HasPrefix(step, "sleep"):
		ms, _ := strconv.Atoi(strings.TrimPrefix(step, "sleep"))
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		f.answer(w, msg, "stop", fmt.Sprintf("answer to %s #%d", msg, n), true)
	default:
		jsonErr(400, nil, "invalid_request_error", "unknown test step "+step)
	}
}

func (f *fakeAPI) answer(w http.ResponseWriter, msg, finish, content string, withChoice bool) {
	choices := []any{}
	if withChoice {
		choices = append(choices, map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": finish,
		})
	}
	f.markReplied(msg)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
		"choices": choices,
		"usage": map[string]any{
			"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
			"prompt_tokens_details": map[string]any{"cached_tokens": 3},
		},
	})
}

func lastUserMessage(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

// request returns a request whose user message is msg.
func request(msg string, sample int) model.Request {
	return model.Request{
		Model:       "test-model",
		Temperature: 1,
		MaxTokens:   100,
		Messages: []model.Message{
			{Role: "system", Content: "You are a support assistant."},
			{Role: "user", Content: msg},
		},
		Sample: sample,
	}
}

// scriptCalls returns one call per script for endpoint 0, tagged with its
// index so that equal scripts are distinct calls.
func scriptCalls(scripts ...string) []Call {
	calls := make([]Call, len(scripts))
	for i, s := range scripts {
		req := request(fmt.Sprintf("%s|%d", s, i), i)
		calls[i] = Call{Key: req.Key(), Request: req, Meta: Meta{CaseID: strconv.Itoa(i)}}
	}
	return calls
}

// headerOf returns the headers kv names.
func headerOf(kv map[string]string) http.Header {
	h := http.Header{}
	for k, v := range kv {
		h.Set(k, v)
	}
	return h
}

// funcProvider adapts a function to Provider.
type funcProvider func(ctx context.Context, c Call) (Completion, error)

func (f funcProvider) Complete(ctx context.Context, c Call) (Completion, error) { return f(ctx, c) }

// memSink records saves.
type memSink struct {
	mu    sync.Mutex
	saves map[string]int
	resps map[string]model.Response
	err   error
}

func newMemSink() *memSink {
	return &memSink{saves: map[string]int{}, resps: map[string]model.Response{}}
}

func (s *memSink) Save(r model.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.saves[r.Key]++
	s.resps[r.Key] = r
	return nil
}

func (s *memSink) keys() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for k := range s.saves {
		out[k] = true
	}
	return out
}

// fastOpts are options with p as the only endpoint, tiny back-offs and a
// seeded jitter source.
func fastOpts(p Provider, concurrency int) Options {
	return Options{
		Providers:   []Endpoint{{Name: "test endpoint", Provider: p}},
		Concurrency: concurrency,
		BaseBackoff: time.Millisecond,
		MaxBackoff:  5 * time.Millisecond,
		Rand:        rand.New(rand.NewPCG(1, 2)),
	}
}

// collect drains ch until it is closed. Tests run in a synctest bubble,
// which fails the test if the run deadlocks instead.
func collect(t *testing.T, ch <-chan Event) []Event {
	t.Helper()
	var evs []Event
	for e := range ch {
		evs = append(evs, e)
	}
	return evs
}

// checkContract verifies the delivery contract on a complete event stream and
// returns the Finished events by key and the final Stopped.
func checkContract(t *testing.T, calls []Call, evs []Event, sink *memSink) (map[string]Finished, Stopped) {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	stop, ok := evs[len(evs)-1].(Stopped)
	if !ok {
		t.Fatalf("last event is %T, want Stopped", evs[len(evs)-1])
	}
	finished := map[string]Finished{}
	lastStarted := map[string]int{}
	retrying := map[string]int{} // key -> attempt announced as failed, awaiting Started
	for i, e := range evs {
		switch e := e.(type) {
		case Stopped:
			if i != len(evs)-1 {
				t.Errorf("Stopped at %d of %d events", i, len(evs))
			}
		case Started:
			if calls[e.Index].Key != e.Key {
				t.Errorf("Started index %d has key of another call", e.Index)
			}
			if _, done := finished[e.Key]; done {
				t.Errorf("Started after Finished for %s", calls[e.Index].Request.Messages[1].Content)
			}
			want := 1
			if r, ok := retrying[e.Key]; ok {
				want = r + 1
				delete(retrying, e.Key)
			} else if lastStarted[e.Key] != 0 {
				t.Errorf("Started attempt %d without Retrying", e.Attempt)
			}
			if e.Attempt != want {
				t.Errorf("Started attempt %d, want %d", e.Attempt, want)
			}
			lastStarted[e.Key] = e.Attempt
		case Retrying:
			if e.Attempt != lastStarted[e.Key] {
				t.Errorf("Retrying attempt %d, last started %d", e.Attempt, lastStarted[e.Key])
			}
			if e.Wait < 0 || !e.Until.After(time.Time{}) {
				t.Errorf("Retrying with wait %v until %v", e.Wait, e.Until)
			}
			retrying[e.Key] = e.Attempt
		case Finished:
			k := e.Response.Key
			if _, dup := finished[k]; dup {
				t.Errorf("two Finished for one call")
			}
			if _, waiting := retrying[k]; waiting {
				t.Errorf("Finished while a retry was announced")
			}
			if e.Response.Attempts != lastStarted[k] {
				t.Errorf("Finished with %d attempts, last Started %d", e.Response.Attempts, lastStarted[k])
			}
			if calls[e.Index].Key != k {
				t.Errorf("Finished index %d has key of another call", e.Index)
			}
			finished[k] = e
		case ConcurrencyChanged:
			if e.Limit < 1 {
				t.Errorf("limit %d", e.Limit)
			}
		default:
			t.Errorf("unknown event %T", e)
		}
	}
	if stop.Done != len(finished) {
		t.Errorf("Stopped.Done = %d, %d Finished", stop.Done, len(finished))
	}
	if stop.Remaining != len(calls)-stop.Done {
		t.Errorf("Stopped.Remaining = %d, want %d", stop.Remaining, len(calls)-stop.Done)
	}
	if sink != nil {
		sink.mu.Lock()
		for k, n := range sink.saves {
			if n != 1 {
				t.Errorf("saved %d times", n)
			}
			if _, ok := finished[k]; !ok {
				t.Errorf("saved without Finished")
			}
		}
		for k := range finished {
			if sink.saves[k] != 1 {
				t.Errorf("Finished without exactly one save")
			}
		}
		sink.mu.Unlock()
	}
	return finished, stop
}

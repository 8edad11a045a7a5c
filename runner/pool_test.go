package runner

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// capServer is a chat-completions server that admits at most cap requests
// at once: beyond that it answers 429 with Retry-After: 1 at once, as a
// server with a concurrency cap does; admitted requests take latency.
type capServer struct {
	cap     int
	latency time.Duration

	mu       sync.Mutex
	inFlight int
	peak     int
	limited  []time.Time // when each 429 was sent
	arrivals []time.Time
	answered int
}

func (s *capServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	now := time.Now()
	s.arrivals = append(s.arrivals, now)
	if s.inFlight >= s.cap {
		s.limited = append(s.limited, now)
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"Too many concurrent requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`))
		return
	}
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	select {
	case <-time.After(s.latency):
	case <-r.Context().Done():
	}
	s.mu.Lock()
	s.inFlight--
	s.answered++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
}

// TestRun_ConcurrencyCap is the scenario of issue 13: a server that caps
// concurrency at 4 (429 with Retry-After: 1 beyond it, 100 ms per answer)
// and 480 calls at concurrency 16. Every call must be answered (none failed
// for good), no call may start while the pool waits out a Retry-After, and
// the limit must come down from 16. It runs on synctest's fake clock: the
// Retry-After seconds pass at once.
func TestRun_ConcurrencyCap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := &capServer{cap: 4, latency: 100 * time.Millisecond}
		ts, client := newPipeServer(t, srv)
		o, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: "sk-cap", HTTPClient: client})
		if err != nil {
			t.Fatal(err)
		}
		const n = 480
		calls := make([]Call, n)
		for i := range calls {
			req := request(fmt.Sprintf("question %d", i), 0)
			calls[i] = Call{Key: req.Key(), Request: req}
		}
		opts := Options{Providers: []Endpoint{{Name: "capped", Provider: o}}, Concurrency: 16}
		start := time.Now()
		evs := collect(t, Run(context.Background(), calls, newMemSink(), opts))
		elapsed := time.Since(start) // fake time: for the log, not asserted
		_, stop := checkContract(t, calls, evs, nil)
		if stop.Reason != Completed || stop.Done != n || stop.Failed != 0 {
			t.Fatalf("stopped %v (%s): %d done, %d failed for good; want all %d answered", stop.Reason, stop.Detail, stop.Done, stop.Failed, n)
		}
		limits := []int{16}
		for _, e := range evs {
			if c, ok := e.(ConcurrencyChanged); ok {
				limits = append(limits, c.Limit)
			}
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.answered != n {
			t.Errorf("server answered %d, want %d", srv.answered, n)
		}
		if len(srv.limited) == 0 || slices.Min(limits) > srv.cap {
			t.Errorf("limits %v: the pool never came down to the server's cap %d", limits, srv.cap)
		}
		// No request arrives while a Retry-After runs: time stands still
		// until every goroutine blocks, so requests sent before the runner
		// read a 429 arrive at its very instant, and none may come after it
		// within the second the server asked for.
		sort.Slice(srv.arrivals, func(i, j int) bool { return srv.arrivals[i].Before(srv.arrivals[j]) })
		early := 0
		for _, l := range srv.limited {
			i := sort.Search(len(srv.arrivals), func(i int) bool { return srv.arrivals[i].After(l) })
			if i < len(srv.arrivals) && srv.arrivals[i].Before(l.Add(time.Second)) {
				early++
			}
		}
		if early > 0 {
			t.Errorf("%d times a request arrived within the Retry-After of a 429", early)
		}
		var traj strings.Builder
		for i, l := range limits {
			if i > 0 {
				traj.WriteString(" ")
			}
			fmt.Fprint(&traj, l)
		}
		t.Logf("%d calls, %d failed for good, %d requests, %d 429s, server peak %d in flight, %v of fake time; limit: %s",
			n, stop.Failed, len(srv.arrivals), len(srv.limited), srv.peak, elapsed, traj.String())
	})
}

// A judge's 429s never throttle the model under test: the two endpoints
// have their own pools.
func TestRun_PoolsAreIndependent(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		judgeStarted := map[string]int{}
		judge := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			mu.Lock()
			judgeStarted[c.Key]++
			first := judgeStarted[c.Key] == 1
			mu.Unlock()
			if first {
				return Completion{}, &CallError{Kind: model.ErrRateLimited, Status: 429, RetryAfter: time.Hour, Retryable: true, Msg: "slow down"}
			}
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		answered := make(chan struct{}, 100)
		modelP := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			answered <- struct{}{}
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		calls := scriptCalls("j0", "m1", "j2", "m3", "m4", "m5", "m6", "m7")
		for i := range calls {
			if strings.HasPrefix(calls[i].Request.Messages[1].Content, "m") {
				calls[i].Provider = 1
			}
		}
		opts := fastOpts(judge, 2)
		opts.Providers = append(opts.Providers, Endpoint{Name: "model", Provider: modelP})
		opts.MaxWait = 2 * time.Hour
		start := time.Now()
		evs := collect(t, Run(context.Background(), calls, nil, opts))
		_, stop := checkContract(t, calls, evs, nil)
		if stop.Reason != Completed || stop.Failed != 0 {
			t.Fatalf("stopped %+v", stop)
		}
		// Every model call finished before the judge's hour was over.
		for _, e := range evs {
			if f, ok := e.(Finished); ok && calls[f.Index].Provider == 1 && f.Response.At.Sub(start) >= time.Hour {
				t.Errorf("model call %d waited for the judge's Retry-After", f.Index)
			}
			if c, ok := e.(ConcurrencyChanged); ok && c.Provider != 0 {
				t.Errorf("the model's pool changed its limit: %+v", c)
			}
		}
		if len(answered) != 6 {
			t.Errorf("%d model calls answered, want 6", len(answered))
		}
	})
}

// TestRun_SystematicFailure: an endpoint that fails its first calls the
// same way, and answers none, stops the run with one message naming it.
func TestRun_SystematicFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		err     *CallError
		calls   int
		stopped bool
		want    string // in Detail
	}{
		{"connection refused", &CallError{Kind: model.ErrTransport, Retryable: true, Unreachable: true, Msg: "connection refused"},
			100, true, "Check base_url (host and port)"},
		{"the same 400", &CallError{Kind: model.ErrRequest, Status: 400, Msg: "Unsupported parameter: 'max_tokens'"},
			100, true, "Unsupported parameter"},
		{"404", &CallError{Kind: model.ErrRequest, Status: 404, Msg: "Not Found"},
			100, true, "usually want it to end in /v1/"},
		{"few calls: all of them", &CallError{Kind: model.ErrRequest, Status: 400, Msg: "bad"},
			5, true, "the first 5 calls"},
		{"5xx is not systematic", &CallError{Kind: model.ErrTransport, Status: 500, Retryable: true, Msg: "oops"},
			30, false, ""},
		{"a content filter is about one call", &CallError{Kind: model.ErrContentFilter, Status: 400, Msg: "filtered"},
			30, false, ""},
	}
	for _, tt := range tests {
		synctest.Test(t, func(t *testing.T) {
			var mu sync.Mutex
			attempts := 0
			p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
				mu.Lock()
				attempts++
				mu.Unlock()
				return Completion{}, tt.err
			})
			scripts := make([]string, tt.calls)
			calls := scriptCalls(scripts...)
			opts := fastOpts(p, 4)
			opts.Providers[0].Name = "gpt-5 at http://localhost:9/v1/"
			sink := newMemSink()
			evs := collect(t, Run(context.Background(), calls, sink, opts))
			_, stop := checkContract(t, calls, evs, sink)
			if !tt.stopped {
				if stop.Reason != Completed || stop.Failed != tt.calls {
					t.Errorf("%s: stopped %+v, want completed with every call failed", tt.name, stop)
				}
				return
			}
			if stop.Reason != SystematicFailure || !strings.Contains(stop.Detail, "gpt-5 at http://localhost:9/v1/") ||
				!strings.Contains(stop.Detail, tt.want) || !strings.Contains(stop.Detail, tt.err.Msg) {
				t.Errorf("%s: stopped %v: %s", tt.name, stop.Reason, stop.Detail)
			}
			// Nothing is stored: the failures of a wrong setting are
			// not the calls' own, and the next run asks them again.
			if n := len(sink.keys()); n != 0 {
				t.Errorf("%s: %d failures stored before the stop", tt.name, n)
			}
			mu.Lock()
			defer mu.Unlock()
			if need := min(DefaultSystematicAfter, tt.calls); attempts > need+4*DefaultMaxAttempts {
				t.Errorf("%s: %d attempts before stopping; the first %d calls should do", tt.name, attempts, need)
			}
		})
	}

	// One success disarms it: an endpoint that works fails calls one by one.
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			if c.Meta.CaseID == "0" {
				return Completion{Text: "ok", FinishReason: "stop"}, nil
			}
			return Completion{}, &CallError{Kind: model.ErrRequest, Status: 400, Msg: "context length exceeded"}
		})
		calls := scriptCalls(make([]string, 40)...)
		// The success comes after some failures: those held until then are
		// saved.
		calls[0], calls[5] = calls[5], calls[0]
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(p, 1)))
		if _, stop := checkContract(t, calls, evs, sink); stop.Reason != Completed || stop.Failed != 39 || len(sink.keys()) != 40 {
			t.Errorf("after a success: stopped %+v with %d saved, want completed with 39 failed and 40 saved", stop, len(sink.keys()))
		}
	})
}

// A truncated or empty answer keeps its text and usage and is stored with
// its own error kind, never as an answer to grade.
func TestRun_TruncatedAndEmpty(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			switch c.Meta.CaseID {
			case "0":
				return Completion{Text: "The refund policy is", FinishReason: "length", PromptTokens: 50, CompletionTokens: 400}, nil
			case "1":
				return Completion{Text: "", FinishReason: "stop", PromptTokens: 50, CompletionTokens: 4000}, nil
			}
			return Completion{Text: "fine", FinishReason: "stop"}, nil
		})
		calls := scriptCalls("a", "b", "c")
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(p, 2)))
		finished, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != Completed || stop.Failed != 0 || stop.Settled != 2 {
			t.Fatalf("stopped %+v, want completed with 2 settled and none failed", stop)
		}
		tr, em, ok := finished[calls[0].Key].Response, finished[calls[1].Key].Response, finished[calls[2].Key].Response
		if tr.ErrorKind != model.ErrTruncated || tr.Text != "The refund policy is" || tr.Attempts != 1 || tr.OK() || !tr.Settled() ||
			tr.CompletionTokens != 400 || !strings.Contains(tr.Error, "max_completion_tokens") {
			t.Errorf("truncated: %+v", tr)
		}
		if em.ErrorKind != model.ErrEmpty || em.OK() || !em.Settled() || !strings.Contains(em.Error, "4000 completion tokens") {
			t.Errorf("empty: %+v", em)
		}
		if !ok.OK() || ok.Text != "fine" {
			t.Errorf("answer: %+v", ok)
		}
		// Paid calls carry their charge to the store; the answer that
		// reported no usage was not paid.
		if tr.Charge == nil || em.Charge == nil || ok.Charge != nil {
			t.Errorf("charges: truncated %+v, empty %+v, free answer %+v", tr.Charge, em.Charge, ok.Charge)
		}
	})
}

// Each endpoint's timeout bounds its own calls: a stalled call of an
// endpoint with a short timeout gives up its slot after it, not after the
// run's.
func TestRun_TimeoutPerEndpoint(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		stall := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			<-ctx.Done()
			return Completion{}, ctx.Err()
		})
		calls := scriptCalls("a", "b")
		calls[1].Provider = 1
		opts := fastOpts(stall, 1)
		opts.Providers = []Endpoint{{Name: "short", Provider: stall, Timeout: 3 * time.Second}, {Name: "default", Provider: stall}}
		opts.Timeout = 40 * time.Second
		opts.MaxAttempts = 1
		start := time.Now()
		ended := map[string]time.Duration{}
		for ev := range Run(context.Background(), calls, nil, opts) {
			if f, ok := ev.(Finished); ok {
				ended[f.Response.Key] = time.Since(start)
				if !strings.Contains(f.Response.Error, "no answer within") {
					t.Errorf("error %q", f.Response.Error)
				}
			}
		}
		if ended[calls[0].Key] != 3*time.Second || ended[calls[1].Key] != 40*time.Second {
			t.Errorf("timed out after %v and %v, want 3s (its endpoint's) and 40s (the run's)", ended[calls[0].Key], ended[calls[1].Key])
		}
	})
}

package runner

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	inFlight int // admitted and not answered
	peak     int // admitted at once
	limited  int
	arrivals map[string][]time.Time // per user message
	refused  map[string][]time.Time // when each 429 was sent, per user message
	answered int
}

func newCapServer(cap int, latency time.Duration) *capServer {
	return &capServer{cap: cap, latency: latency, arrivals: map[string][]time.Time{}, refused: map[string][]time.Time{}}
}

func (s *capServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	msg := lastUserMessage(body)
	s.mu.Lock()
	now := time.Now()
	s.arrivals[msg] = append(s.arrivals[msg], now)
	if s.inFlight >= s.cap {
		s.limited++
		s.refused[msg] = append(s.refused[msg], now)
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

// earlyRetries counts the requests that came back sooner than the
// Retry-After of their own 429.
func (s *capServer) earlyRetries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	early := 0
	for msg, refused := range s.refused {
		arr := s.arrivals[msg]
		for _, at := range refused {
			i := sort.Search(len(arr), func(i int) bool { return arr[i].After(at) })
			if i < len(arr) && arr[i].Before(at.Add(time.Second)) {
				early++
			}
		}
	}
	return early
}

// TestRun_ConcurrencyCap is the capped server of issue 20, end to end
// through the OpenAI provider: a server that serves 4 requests at once
// (429 with Retry-After: 1 beyond that, 100 ms per answer), asked by a
// model and a judge on the same server and key (one pool) at concurrency
// 6. Every call must be answered (none failed for good); the client never
// has more than 6 requests open at the server, the model's and the
// judge's together; no call comes back before its own Retry-After; and
// the limit settles at the cap: it comes down to 4 and never below, so
// the server is kept busy. It runs on synctest's fake clock.
func TestRun_ConcurrencyCap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := newCapServer(4, 100*time.Millisecond)
		ts, client := newPipeServer(t, srv)
		// In flight counts the attempts of both endpoints inside their
		// providers: what the client has open at the server.
		var inFlight, peak atomic.Int32
		var eps []Endpoint
		for _, name := range []string{"model", "judge"} {
			o, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: "sk-cap", HTTPClient: client})
			if err != nil {
				t.Fatal(err)
			}
			counted := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for old := peak.Load(); n > old && !peak.CompareAndSwap(old, n); old = peak.Load() {
				}
				return o.Complete(ctx, c)
			})
			eps = append(eps, Endpoint{Name: name, Provider: counted, Pool: "one server, one key"})
		}
		const n = 480
		calls := make([]Call, n)
		for i := range calls {
			req := request(fmt.Sprintf("question %d", i), 0)
			calls[i] = Call{Key: req.Key(), Request: req, Provider: i % 2}
		}
		opts := Options{Providers: eps, Concurrency: 6}
		start := time.Now()
		evs := collect(t, Run(context.Background(), calls, newMemSink(), opts))
		elapsed := time.Since(start) // fake time: for the log, not asserted
		_, stop := checkContract(t, calls, evs, nil)
		if stop.Reason != Completed || stop.Done != n || stop.Failed != 0 {
			t.Fatalf("stopped %v (%s): %d done, %d failed for good; want all %d answered", stop.Reason, stop.Detail, stop.Done, stop.Failed, n)
		}
		limits := []int{opts.Concurrency}
		for _, e := range evs {
			if c, ok := e.(ConcurrencyChanged); ok {
				limits = append(limits, c.Limit)
				if c.Provider != 0 {
					t.Errorf("limit changed for endpoint %d: the pool is its first endpoint's", c.Provider)
				}
			}
		}
		if early := srv.earlyRetries(); early > 0 {
			t.Errorf("%d retries came before their own Retry-After", early)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.answered != n {
			t.Errorf("server answered %d, want %d", srv.answered, n)
		}
		if p := int(peak.Load()); p > opts.Concurrency {
			t.Errorf("%d calls in flight at once; model and judge share a limit of %d", p, opts.Concurrency)
		}
		reached := slices.Index(limits, srv.cap)
		if reached < 0 || slices.Min(limits[reached:]) < srv.cap {
			t.Errorf("limits %v: want down to the server's cap %d and never below", limits, srv.cap)
		}
		// Settled, the limit probes above the cap ever more rarely: a few
		// 429s in all, not one a round.
		if srv.limited > n/10 {
			t.Errorf("%d 429s for %d calls: the limit does not settle", srv.limited, n)
		}
		var traj strings.Builder
		for i, l := range limits {
			if i > 0 {
				traj.WriteString(" ")
			}
			fmt.Fprint(&traj, l)
		}
		t.Logf("%d calls, %d requests, %d 429s, %d served at once, %d in flight, %v of fake time (ideal %v); limit: %s",
			n, srv.answered+srv.limited, srv.limited, srv.peak, peak.Load(), elapsed, time.Duration(n/srv.cap)*srv.latency, traj.String())
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
			// A few retries of the four calls in flight at most: the
			// stop does not wait for retry budgets to run out.
			if need := min(DefaultSystematicAfter, tt.calls); attempts > need+4*6 {
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

// randomRefusal answers after latency, except that a fixed tenth of
// attempts (by call and attempt) get a 429 with Retry-After: 1. It records
// when each attempt started and when each 429 was sent, on the fake clock.
type randomRefusal struct {
	latency time.Duration
	share   float64

	mu       sync.Mutex
	attempts map[string]int
	starts   []time.Time
	firsts   int // first attempts started
	lastNew  time.Time
	refused  map[string][]time.Time
	arrivals map[string][]time.Time
}

func (p *randomRefusal) Complete(ctx context.Context, c Call) (Completion, error) {
	p.mu.Lock()
	now := time.Now()
	n := p.attempts[c.Key]
	p.attempts[c.Key]++
	p.starts = append(p.starts, now)
	p.arrivals[c.Key] = append(p.arrivals[c.Key], now)
	if n == 0 {
		p.firsts++
		p.lastNew = now
	}
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", c.Key, n))
	refuse := float64(binary.BigEndian.Uint64(h[:8])>>11)/(1<<53) < p.share
	if refuse {
		p.refused[c.Key] = append(p.refused[c.Key], now)
	}
	p.mu.Unlock()
	if refuse {
		return Completion{}, &CallError{Kind: model.ErrRateLimited, Status: 429, RetryAfter: time.Second, Retryable: true, Msg: "slow down"}
	}
	time.Sleep(p.latency)
	return Completion{Text: "ok", FinishReason: "stop"}, nil
}

// TestRun_RandomRateLimitsDoNotStall: 429s that come one at a time at
// random (a tenth of attempts, Retry-After: 1) cost the calls that got
// them their wait, and nothing else: the other calls keep going (no gap of
// the Retry-After between attempts while calls are left to start), no call
// comes back before its own Retry-After, and the limit stays above 1.
func TestRun_RandomRateLimitsDoNotStall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := &randomRefusal{latency: 10 * time.Millisecond, share: 0.1,
			attempts: map[string]int{}, refused: map[string][]time.Time{}, arrivals: map[string][]time.Time{}}
		const n = 400
		calls := scriptCalls(make([]string, n)...)
		opts := Options{Providers: []Endpoint{{Name: "random", Provider: p}}, Concurrency: 8}
		start := time.Now()
		evs := collect(t, Run(context.Background(), calls, nil, opts))
		elapsed := time.Since(start) // fake time: for the log
		_, stop := checkContract(t, calls, evs, nil)
		if stop.Reason != Completed || stop.Failed != 0 {
			t.Fatalf("stopped %+v", stop)
		}
		lowest := opts.Concurrency
		for _, e := range evs {
			if c, ok := e.(ConcurrencyChanged); ok {
				lowest = min(lowest, c.Limit)
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		limited := 0
		for key, refused := range p.refused {
			limited += len(refused)
			arr := p.arrivals[key]
			for i, at := range refused {
				if i+1 < len(arr) && arr[slices.Index(arr, at)+1].Before(at.Add(time.Second)) {
					t.Errorf("call %s came back before its Retry-After", key)
				}
			}
		}
		if limited < n/20 {
			t.Fatalf("only %d 429s: the test proves nothing", limited)
		}
		// Until the last call started, attempts follow each other closely:
		// no 429 held the pool for its second.
		var gap time.Duration
		for i := 1; i < len(p.starts) && !p.starts[i].After(p.lastNew); i++ {
			gap = max(gap, p.starts[i].Sub(p.starts[i-1]))
		}
		if gap >= time.Second/2 {
			t.Errorf("%v without an attempt while calls were left to start: a 429 stalled the pool", gap)
		}
		if lowest < 2 {
			t.Errorf("the limit fell to %d on 429s at random", lowest)
		}
		t.Logf("%d calls, %d 429s, %v of fake time, lowest limit %d, longest gap %v", n, limited, elapsed, lowest, gap)
	})
}

// TestRun_BurstPausesPool: an endpoint that refuses every call (a spent
// window whose headers say nothing) for five seconds is not hammered: once
// the 429s come together, the pool waits out each Retry-After whole.
func TestRun_BurstPausesPool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		during := 0
		opened := time.Now().Add(5 * time.Second)
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			if time.Now().Before(opened) {
				mu.Lock()
				during++
				mu.Unlock()
				return Completion{}, &CallError{Kind: model.ErrRateLimited, Status: 429, RetryAfter: time.Second, Retryable: true, Msg: "slow down"}
			}
			time.Sleep(10 * time.Millisecond)
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		calls := scriptCalls(make([]string, 200)...)
		opts := fastOpts(p, 8)
		evs := collect(t, Run(context.Background(), calls, nil, opts))
		if _, stop := checkContract(t, calls, evs, nil); stop.Reason != Completed || stop.Failed != 0 {
			t.Fatalf("stopped %+v", stop)
		}
		// Without the pause, each freed slot starts another call at once,
		// and each is refused: every call is tried in the first instant.
		mu.Lock()
		defer mu.Unlock()
		if during > 40 {
			t.Errorf("%d attempts in five seconds of 429s", during)
		}
		t.Logf("%d attempts while every call was refused", during)
	})
}

// windowServer counts requests in fixed windows, as a requests-per-minute
// limit does: each response says how many are left and when the window
// resets (OpenAI's headers), and a request beyond the window's allowance
// is refused with the same headers and no Retry-After.
type windowServer struct {
	per    int
	window time.Duration

	mu      sync.Mutex
	start   time.Time
	count   int
	limited int
}

func (s *windowServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	now := time.Now()
	if s.start.IsZero() || now.Sub(s.start) >= s.window {
		s.start, s.count = now, 0
	}
	s.count++
	over := s.count > s.per
	if over {
		s.limited++
	}
	left := max(s.per-s.count, 0)
	reset := s.start.Add(s.window).Sub(now)
	s.mu.Unlock()
	w.Header().Set("x-ratelimit-limit-requests", strconv.Itoa(s.per))
	w.Header().Set("x-ratelimit-remaining-requests", strconv.Itoa(left))
	w.Header().Set("x-ratelimit-reset-requests", reset.String())
	w.Header().Set("Content-Type", "application/json")
	if over {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"message":"Rate limit reached for requests per min","type":"requests","code":"rate_limit_exceeded"}}`))
		return
	}
	time.Sleep(50 * time.Millisecond)
	_, _ = fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"fine"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}`)
}

// TestRun_SpentWindowPausesPool: when the headers say the window is spent,
// nothing more is sent until it resets: only the calls already on their
// way are refused, and those wait for the reset the headers give.
func TestRun_SpentWindowPausesPool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		srv := &windowServer{per: 10, window: 20 * time.Second}
		ts, client := newPipeServer(t, srv)
		o, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1/", APIKey: "sk-window", HTTPClient: client})
		if err != nil {
			t.Fatal(err)
		}
		const n, conc = 40, 4
		calls := scriptCalls(make([]string, n)...)
		opts := fastOpts(o, conc)
		evs := collect(t, Run(context.Background(), calls, nil, opts))
		if _, stop := checkContract(t, calls, evs, nil); stop.Reason != Completed || stop.Failed != 0 {
			t.Fatalf("stopped %+v", stop)
		}
		srv.mu.Lock()
		defer srv.mu.Unlock()
		// Four windows of ten; in each, at most the conc-1 calls sent
		// before the answer that spent it are refused.
		if windows := n / srv.per; srv.limited > windows*(conc-1) {
			t.Errorf("%d 429s in %d windows: calls were sent into a spent window", srv.limited, windows)
		}
		t.Logf("%d 429s", srv.limited)
	})
}

// TestRun_RetryBudget: a call failing transiently is retried on a time
// budget (MaxWait from its first attempt), not a count: it fails for good
// once the budget is spent while its endpoint answers others. An endpoint
// that answers nothing for the whole budget stops the run instead, and
// nothing is stored.
func TestRun_RetryBudget(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var broken []time.Time // the attempts of call 0
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			time.Sleep(time.Second)
			if c.Meta.CaseID == "0" {
				mu.Lock()
				broken = append(broken, time.Now())
				mu.Unlock()
				return Completion{}, &CallError{Kind: model.ErrTransport, Status: 502, Retryable: true, Msg: "bad gateway"}
			}
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		calls := scriptCalls(make([]string, 60)...)
		opts := fastOpts(p, 2)
		opts.BaseBackoff, opts.MaxBackoff = 500*time.Millisecond, 2*time.Second
		opts.MaxWait = 20 * time.Second
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, opts))
		finished, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != Completed || stop.Failed != 1 {
			t.Fatalf("stopped %+v, want completed with call 0 failed for good", stop)
		}
		r := finished[calls[0].Key].Response
		mu.Lock()
		defer mu.Unlock()
		if r.Attempts <= 6 || r.Attempts >= DefaultMaxAttempts || r.Attempts != len(broken) {
			t.Errorf("call 0 made %d attempts (%d seen); want more than the old count of 6, ended by time", r.Attempts, len(broken))
		}
		if span := broken[len(broken)-1].Sub(broken[0]); span > opts.MaxWait {
			t.Errorf("call 0 was retried for %v, past the budget of %v", span, opts.MaxWait)
		}
	})

	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			time.Sleep(100 * time.Millisecond)
			return Completion{}, &CallError{Kind: model.ErrTransport, Status: 503, Retryable: true, Msg: "model is loading"}
		})
		calls := scriptCalls(make([]string, 30)...)
		opts := fastOpts(p, 4)
		opts.Providers[0].Name = "llama at http://localhost:8000/v1/"
		opts.BaseBackoff, opts.MaxBackoff = 500*time.Millisecond, 2*time.Second
		opts.MaxWait = 20 * time.Second
		sink := newMemSink()
		start := time.Now()
		evs := collect(t, Run(context.Background(), calls, sink, opts))
		_, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != WaitTooLong || stop.Done != 0 || len(sink.keys()) != 0 ||
			!strings.Contains(stop.Detail, "llama at http://localhost:8000/v1/ answered no call") ||
			!strings.Contains(stop.Detail, "model is loading") {
			t.Fatalf("stopped %+v with %d stored; want a wait-too-long stop naming the endpoint, nothing stored", stop, len(sink.keys()))
		}
		if took := time.Since(start); took > 2*opts.MaxWait {
			t.Errorf("stopped after %v of fake time, budget %v", took, opts.MaxWait)
		}
	})
}

// A stop on an endpoint that answers nothing says the wait that applied,
// which is not --max-wait itself (issue 28): under --max-wait 5s it came
// after 1s, as the next retry would start past 5s; under 60s it came after
// 2m0s, an attempt running to its timeout before the wait is weighed.
func TestRun_WaitTooLongSaysTheWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			time.Sleep(time.Second)
			return Completion{}, &CallError{Kind: model.ErrTransport, Status: 503, Retryable: true, Msg: "model is loading"}
		})
		opts := fastOpts(p, 1)
		opts.BaseBackoff, opts.MaxBackoff = 8*time.Second, 8*time.Second
		opts.MaxWait = 5 * time.Second
		start := time.Now()
		calls := scriptCalls("a")
		_, stop := checkContract(t, calls, collect(t, Run(context.Background(), calls, newMemSink(), opts)), nil)
		took := time.Since(start)
		if stop.Reason != WaitTooLong || took >= opts.MaxWait ||
			!strings.Contains(stop.Detail, "test endpoint answered no call in "+shortDuration(took).String()+", and the next retry, ") ||
			!strings.Contains(stop.Detail, "would start past the maximum wait of 5s: transport (HTTP 503): model is loading") {
			t.Errorf("stopped after %v: %+v", took, stop)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			<-ctx.Done()
			return Completion{}, ctx.Err()
		})
		opts := fastOpts(p, 1)
		opts.MaxWait = time.Minute
		calls := scriptCalls("a")
		_, stop := checkContract(t, calls, collect(t, Run(context.Background(), calls, newMemSink(), opts)), nil)
		if want := "test endpoint answered no call for 2m0s, past the maximum wait of 1m0s: an attempt is let run (up to its timeout, 2m0s) before the wait is checked: transport: no answer within 2m0s"; stop.Reason != WaitTooLong || stop.Detail != want {
			t.Errorf("stopped %+v\nwant detail %q", stop, want)
		}
	})
}

// Endpoints with the same Pool share its limit, the smallest of theirs;
// endpoints with none keep their own.
func TestRun_SharedPool(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var inFlight, peak atomic.Int32
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for old := peak.Load(); n > old && !peak.CompareAndSwap(old, n); old = peak.Load() {
			}
			time.Sleep(10 * time.Millisecond)
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		for _, tc := range []struct {
			name  string
			pools [3]string
			conc  [3]int
			want  int32
		}{
			{"one server", [3]string{"s", "s", "s"}, [3]int{0, 5, 0}, 5},
			{"two servers", [3]string{"s", "t", "s"}, [3]int{0, 0, 0}, 16},
			{"no pool named", [3]string{"", "", ""}, [3]int{0, 0, 0}, 24},
		} {
			peak.Store(0)
			calls := scriptCalls(make([]string, 90)...)
			opts := Options{Concurrency: 8}
			for i := range 3 {
				opts.Providers = append(opts.Providers, Endpoint{Name: fmt.Sprint(i), Provider: p, Pool: tc.pools[i], Concurrency: tc.conc[i]})
			}
			for i := range calls {
				calls[i].Provider = i % 3
			}
			evs := collect(t, Run(context.Background(), calls, nil, opts))
			if _, stop := checkContract(t, calls, evs, nil); stop.Reason != Completed {
				t.Fatalf("%s: stopped %+v", tc.name, stop)
			}
			if got := peak.Load(); got != tc.want {
				t.Errorf("%s: %d calls in flight at most, want %d", tc.name, got, tc.want)
			}
		}
	})
}

// A 404 from the native Anthropic endpoint gets Anthropic's advice, not
// the OpenAI-compatible one (its base URL has no /v1/).
func TestSystematicAdvice_ByProvider(t *testing.T) {
	ce := &CallError{Kind: model.ErrRequest, Status: 404, Msg: "Not Found"}
	if got := systematicAdvice(ce, &Anthropic{}); !strings.Contains(got, "api.anthropic.com, without /v1") || strings.Contains(got, "OpenAI") {
		t.Errorf("anthropic: %q", got)
	}
	if got := systematicAdvice(ce, nil); !strings.Contains(got, "usually want it to end in /v1/") {
		t.Errorf("openai: %q", got)
	}
}

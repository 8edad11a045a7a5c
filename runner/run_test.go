package runner

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/auditor-dev/auditor/model"
)

func TestRun_OpenAI_Outcomes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(t)
		o := newTestOpenAI(t, f)
		tests := []struct {
			script   string
			attempts int
			kind     model.ErrorKind
		}{
			{"ok", 1, model.ErrNone},
			{"500,ok", 2, model.ErrNone},
			{"500,502html,ok", 3, model.ErrNone},
			{"reset,ok", 2, model.ErrNone},
			{"badjson,ok", 2, model.ErrNone},
			{"nochoices,ok", 2, model.ErrNone},
			{"429,ok", 2, model.ErrNone},
			{"400", 1, model.ErrRequest},
			{"cf400", 1, model.ErrContentFilter},
			{"filter", 1, model.ErrContentFilter},
			{"500noretry", 1, model.ErrTransport},
			// Transient failures are retried on the time budget (MaxWait,
			// 10 minutes here); with back-offs of a few milliseconds, the
			// safety net of MaxAttempts ends them first.
			{"500", DefaultMaxAttempts, model.ErrTransport},
			{"429", DefaultMaxAttempts, model.ErrRateLimited},
			{"429,429,429,429,429,429,429,ok", 8, model.ErrNone},
			{"429,500,429,500,429,500,429,500,429,500,429,ok", 12, model.ErrNone},
			{"500,500,500,500,500,500,500,500,ok", 9, model.ErrNone},
			{"badjson", DefaultMaxAttempts, model.ErrBadResponse},
		}
		scripts := make([]string, len(tests))
		for i, tt := range tests {
			scripts[i] = tt.script
		}
		calls := scriptCalls(scripts...)
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(o, 4)))
		finished, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != Completed || stop.Done != len(calls) {
			t.Fatalf("stopped %v (%s) after %d of %d", stop.Reason, stop.Detail, stop.Done, len(calls))
		}
		failed := 0
		for i, tt := range tests {
			fin := finished[calls[i].Key]
			r := fin.Response
			if r.Attempts != tt.attempts || r.ErrorKind != tt.kind {
				t.Errorf("%s: %d attempts, kind %q (%s); want %d, %q", tt.script, r.Attempts, r.ErrorKind, r.Error, tt.attempts, tt.kind)
			}
			if r.Model != "test-model" || r.Key != calls[i].Key || r.At.IsZero() {
				t.Errorf("%s: response %+v", tt.script, r)
			}
			if tt.kind == model.ErrNone {
				want := fmt.Sprintf("answer to %s|%d #%d", tt.script, i, tt.attempts)
				if r.Text != want || r.FinishReason != "stop" || r.PromptTokens != 10 || r.CachedTokens != 3 || r.CompletionTokens != 5 || r.Error != "" {
					t.Errorf("%s: response %+v", tt.script, r)
				}
			} else {
				failed++
				if r.Error == "" || r.OK() {
					t.Errorf("%s: failure without an error message", tt.script)
				}
			}
		}
		if stop.Failed != failed {
			t.Errorf("Stopped.Failed = %d, want %d", stop.Failed, failed)
		}
	})
}

// TestRun_RetryAfterIsAFloor checks, from the server's clock, that no retry
// arrives before the wait the server asked for.
func TestRun_RetryAfterIsAFloor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(t)
		o := newTestOpenAI(t, f)
		tests := []struct {
			script string
			floor  time.Duration // after the 429 reply; 0: use the date sent
		}{
			{"429ra1,ok", time.Second},
			{"429ms300,429ms300,ok", 300 * time.Millisecond},
			{"429date1,ok", 0},
		}
		scripts := make([]string, len(tests))
		for i, tt := range tests {
			scripts[i] = tt.script
		}
		calls := scriptCalls(scripts...)
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(o, 4)))
		finished, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != Completed {
			t.Fatalf("stopped %v: %s", stop.Reason, stop.Detail)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, tt := range tests {
			msg := calls[i].Request.Messages[1].Content
			arr, rep := f.arrivals[msg], f.replied[msg]
			n := strings.Count(tt.script, ",") + 1
			if len(arr) != n || finished[calls[i].Key].Response.Attempts != n {
				t.Fatalf("%s: %d arrivals, want %d", tt.script, len(arr), n)
			}
			for a := 1; a < n; a++ {
				floor := rep[a-1].Add(tt.floor)
				if tt.floor == 0 {
					floor = f.floors[msg][a-1]
				}
				if arr[a].Before(floor) {
					t.Errorf("%s: attempt %d arrived %v before the server's floor", tt.script, a+1, floor.Sub(arr[a]))
				}
			}
		}
		for _, e := range evs {
			if r, ok := e.(Retrying); ok && r.Kind != model.ErrRateLimited {
				t.Errorf("Retrying kind %q", r.Kind)
			}
		}
	})
}

func TestRun_OpenAI_QuotaStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(t)
		o := newTestOpenAI(t, f)
		calls := scriptCalls("ok", "ok", "quota", "ok", "ok")
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(o, 1)))
		_, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != QuotaExhausted || stop.Done != 2 || stop.Remaining != 3 {
			t.Fatalf("got %+v, want quota stop after 2", stop)
		}
		if !strings.Contains(stop.Detail, "insufficient_quota") {
			t.Errorf("detail %q does not name the API's code", stop.Detail)
		}
		if got := sink.keys(); !got[calls[0].Key] || !got[calls[1].Key] || len(got) != 2 {
			t.Errorf("saved %d calls, want the first two", len(got))
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if n := len(f.bodies); n != 3 {
			t.Errorf("%d requests after the quota stop began, want none (3 in all, got %d)", n-3, n)
		}
	})
}

// TestRun_QuotaLetsInFlightFinish: the call in flight when the quota runs out
// is answered and saved; the one that hit the quota is not saved.
func TestRun_QuotaLetsInFlightFinish(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		bStarted, aReturned := make(chan struct{}), make(chan struct{})
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			switch c.Meta.CaseID {
			case "0":
				<-bStarted
				defer close(aReturned)
				return Completion{}, &CallError{Kind: model.ErrQuota, Status: 429, Msg: "insufficient_quota"}
			case "1":
				close(bStarted)
				<-aReturned
			}
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		calls := scriptCalls("a", "b", "c", "d", "e", "f")
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(p, 2)))
		finished, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != QuotaExhausted {
			t.Fatalf("stopped %v, want quota", stop.Reason)
		}
		if _, ok := finished[calls[1].Key]; !ok {
			t.Error("the call in flight was not finished")
		}
		if _, ok := finished[calls[0].Key]; ok {
			t.Error("the call that hit the quota was finished")
		}
	})
}

func TestRun_BudgetStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// Every call is estimated and billed at exactly $1.
		price := Price{InputPerMTok: 1000}
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			return Completion{Text: "ok", FinishReason: "stop", PromptTokens: 1000}, nil
		})
		for _, conc := range []int{1, 2, 4} {
			func() {
				calls := scriptCalls("a", "b", "c", "d", "e")
				for i := range calls {
					calls[i].Price = price
					calls[i].EstPromptTokens = 1000
				}
				opts := fastOpts(p, conc)
				opts.Budget = 3.5
				sink := newMemSink()
				evs := collect(t, Run(context.Background(), calls, sink, opts))
				finished, stop := checkContract(t, calls, evs, sink)
				if stop.Reason != BudgetReached || stop.Done != 3 || stop.Spent != 3 {
					t.Errorf("concurrency %d: got %+v, want budget stop after 3 calls and $3", conc, stop)
				}
				for _, fin := range finished {
					if fin.Cost != 1 {
						t.Errorf("concurrency %d: call cost %v, want 1", conc, fin.Cost)
					}
				}
			}()
		}
	})
}

// TestRun_CancelSavesFinishedOnly cancels a run with two calls in flight and
// checks that only the calls that finished before were saved, that the
// channel closes, and that no goroutine is left behind (synctest.Test fails
// when a goroutine of the bubble outlives it blocked).
func TestRun_CancelSavesFinishedOnly(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			if i, _ := strconv.Atoi(c.Meta.CaseID); i < 3 {
				return Completion{Text: "ok", FinishReason: "stop"}, nil
			}
			<-ctx.Done()
			// A provider that reports cancellation as a failure for good: the
			// run must still not save the call.
			return Completion{}, &CallError{Kind: model.ErrRequest, Msg: ctx.Err().Error()}
		})
		calls := scriptCalls("a", "b", "c", "d", "e", "f")
		sink := newMemSink()
		// The timeout only guards against a hang; the assertions below fail then.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ch := Run(ctx, calls, sink, fastOpts(p, 2))
		var evs []Event
		finishedSeen := 0
		for e := range ch {
			evs = append(evs, e)
			if _, ok := e.(Finished); ok {
				if finishedSeen++; finishedSeen == 3 {
					cancel()
				}
			}
		}
		finished, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != Cancelled || stop.Done != 3 || stop.Remaining != 3 {
			t.Fatalf("got %+v, want cancelled after 3", stop)
		}
		for i := range 3 {
			if _, ok := finished[calls[i].Key]; !ok || !sink.keys()[calls[i].Key] {
				t.Errorf("call %d finished before the cancel but was not saved", i)
			}
		}
		if n := len(sink.keys()); n != 3 {
			t.Errorf("%d saved, want 3", n)
		}
	})
}

// TestRun_OpenAI_CancelNoLeak cancels a run of hanging HTTP calls; the
// bubble fails the test if any goroutine is left behind.
func TestRun_OpenAI_CancelNoLeak(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		func() {
			f := newFakeAPI(t)
			defer f.srv.Close()
			o := newTestOpenAI(t, f)
			defer o.CloseIdleConnections()
			calls := scriptCalls("ok", "ok", "hang", "hang", "hang", "hang")
			sink := newMemSink()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // hang guard
			defer cancel()
			var evs []Event
			for e := range Run(ctx, calls, sink, fastOpts(o, 3)) {
				evs = append(evs, e)
				switch e := e.(type) {
				case Started:
					// Call 4 needs the slots of calls 0 and 1: they are done, and
					// three calls hang.
					if e.Index == 4 {
						cancel()
					}
				case Finished:
					if e.Index >= 2 {
						t.Errorf("hanging call %d finished", e.Index)
					}
				}
			}
			_, stop := checkContract(t, calls, evs, sink)
			if stop.Reason != Cancelled || stop.Done != 2 {
				t.Errorf("got %+v, want cancelled after 2", stop)
			}
		}()
	})
}

// TestRun_RetryWaitHoldsNoSlot: with one slot, a call waiting out a long
// Retry-After must not keep the others from running.
func TestRun_RetryWaitHoldsNoSlot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			if c.Meta.CaseID == "0" {
				// A 503 with Retry-After: the call waits, the pool does not.
				return Completion{}, &CallError{Kind: model.ErrTransport, Status: 503, RetryAfter: time.Minute, Retryable: true, Msg: "come back later"}
			}
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		calls := scriptCalls("a", "b", "c")
		sink := newMemSink()
		// The timeout only guards against a hang (a waiting call holding the
		// only slot); the assertions below fail then.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var evs []Event
		done := 0
		for e := range Run(ctx, calls, sink, fastOpts(p, 1)) {
			evs = append(evs, e)
			switch e := e.(type) {
			case Retrying:
				if e.Wait < time.Minute || e.Until.Before(time.Now().Add(50*time.Second)) {
					t.Errorf("retry wait %v, want at least the Retry-After", e.Wait)
				}
			case Finished:
				if done++; done == 2 {
					cancel()
				}
			}
		}
		finished, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != Cancelled || len(finished) != 2 {
			t.Fatalf("got %+v, want b and c finished, then cancelled", stop)
		}
		if _, ok := finished[calls[0].Key]; ok {
			t.Error("the waiting call finished")
		}
	})
}

func TestRun_AdaptiveConcurrency(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var inFlight, peak atomic.Int32
		var mu sync.Mutex
		tried := map[string]bool{}
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			mu.Lock()
			first := !tried[c.Key]
			tried[c.Key] = true
			mu.Unlock()
			if i, _ := strconv.Atoi(c.Meta.CaseID); i < 8 && first {
				return Completion{}, &CallError{Kind: model.ErrRateLimited, Status: 429, Retryable: true, Msg: "slow down"}
			}
			time.Sleep(time.Millisecond) // an answer takes longer than a refusal
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		scripts := make([]string, 100)
		for i := range scripts {
			scripts[i] = "x"
		}
		calls := scriptCalls(scripts...)
		evs := collect(t, Run(context.Background(), calls, nil, fastOpts(p, 8)))
		_, stop := checkContract(t, calls, evs, nil)
		if stop.Reason != Completed {
			t.Fatalf("stopped %v", stop.Reason)
		}
		var limits []int
		for _, e := range evs {
			if c, ok := e.(ConcurrencyChanged); ok {
				limits = append(limits, c.Limit)
				if c.Limit > 8 {
					t.Errorf("limit %d above the maximum", c.Limit)
				}
			}
		}
		// Eight 429s at once are one overload: one cut by a quarter.
		if len(limits) < 2 || limits[0] != 6 || limits[len(limits)-1] != 8 {
			t.Errorf("limits %v, want a cut to 6 first and a climb back to 8", limits)
		}
		if peak.Load() > 8 {
			t.Errorf("%d calls in flight, limit 8", peak.Load())
		}
	})
}

func TestRun_Backoff(t *testing.T) {
	t.Parallel()
	r := &run{opts: Options{BaseBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, Rand: rand.New(rand.NewPCG(3, 4))}}
	for n := 1; n <= 8; n++ {
		ceiling := min(time.Second, 100*time.Millisecond<<(n-1))
		lo, hi := ceiling, time.Duration(0)
		for range 500 {
			w := r.backoff(n, 0)
			if w < 0 || w >= ceiling {
				t.Fatalf("attempt %d: wait %v outside [0, %v)", n, w, ceiling)
			}
			lo, hi = min(lo, w), max(hi, w)
		}
		if hi-lo < ceiling/2 {
			t.Errorf("attempt %d: waits span [%v, %v], not jittered over [0, %v)", n, lo, hi, ceiling)
		}
	}
	for _, ra := range []time.Duration{time.Millisecond, time.Second, time.Minute} {
		for range 100 {
			w := r.backoff(1, ra)
			if w < ra || w > ra+min(ra/10, 100*time.Millisecond) {
				t.Fatalf("Retry-After %v: wait %v", ra, w)
			}
		}
	}
}

func TestRun_Timeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			<-ctx.Done()
			return Completion{}, fmt.Errorf("fake: %w", ctx.Err())
		})
		calls := scriptCalls("slow")
		opts := fastOpts(p, 1)
		opts.Timeout = 10 * time.Millisecond
		opts.MaxAttempts = 2
		evs := collect(t, Run(context.Background(), calls, nil, opts))
		finished, stop := checkContract(t, calls, evs, nil)
		r := finished[calls[0].Key].Response
		if stop.Reason != Completed || r.Attempts != 2 || r.ErrorKind != model.ErrTransport || !strings.Contains(r.Error, "no answer within 10ms") {
			t.Fatalf("got %+v, response %+v", stop, r)
		}
	})
}

func TestRun_WaitTooLong(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			return Completion{}, &CallError{Kind: model.ErrRateLimited, Status: 429, RetryAfter: time.Hour, Retryable: true, Msg: "come back later"}
		})
		calls := scriptCalls("a", "b")
		opts := fastOpts(p, 1)
		opts.MaxWait = time.Minute
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, opts))
		_, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != WaitTooLong || stop.Done != 0 || len(sink.keys()) != 0 {
			t.Fatalf("got %+v, want a wait-too-long stop with nothing saved", stop)
		}
		if !strings.Contains(stop.Detail, "1h0m0s") {
			t.Errorf("detail %q does not give the wait", stop.Detail)
		}
	})
}

func TestRun_SaveFailed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		calls := scriptCalls("a", "b", "c")
		sink := newMemSink()
		sink.err = errors.New("disk full")
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(p, 1)))
		_, stop := checkContract(t, calls, evs, sink)
		if stop.Reason != SaveFailed || stop.Done != 0 || !strings.Contains(stop.Detail, "disk full") {
			t.Fatalf("got %+v", stop)
		}
	})
}

func TestRun_BadCalls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		panicky := funcProvider(func(ctx context.Context, c Call) (Completion, error) { panic("boom") })
		calls := scriptCalls("no provider", "panics")
		calls[0].Provider = 5
		evs := collect(t, Run(context.Background(), calls, nil, fastOpts(panicky, 2)))
		finished, stop := checkContract(t, calls, evs, nil)
		if stop.Reason != Completed || stop.Failed != 2 {
			t.Fatalf("got %+v", stop)
		}
		for _, f := range finished {
			if f.Response.ErrorKind != model.ErrRequest || f.Response.Attempts != 1 {
				t.Errorf("response %+v", f.Response)
			}
		}
	})
}

func TestRun_Empty(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		evs := collect(t, Run(context.Background(), nil, nil, Options{}))
		if len(evs) != 1 {
			t.Fatalf("events %v", evs)
		}
		if s, ok := evs[0].(Stopped); !ok || s.Reason != Completed {
			t.Fatalf("events %v", evs)
		}
	})
}

func TestRun_KeyFilledIn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			return Completion{Text: "ok"}, nil
		})
		calls := scriptCalls("a")
		want := calls[0].Key
		calls[0].Key = ""
		for _, e := range collect(t, Run(context.Background(), calls, nil, fastOpts(p, 1))) {
			if f, ok := e.(Finished); ok && f.Response.Key != want {
				t.Errorf("key %q, want %q", f.Response.Key, want)
			}
		}
	})
}

// TestRun_KeyNeverInErrors runs every kind of failure, including a server
// that echoes the Authorization header, and searches every event and stored
// response for the key.
func TestRun_KeyNeverInErrors(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(t)
		o := newTestOpenAI(t, f)
		calls := scriptCalls("400", "cf400", "500,ok", "reset,ok", "badjson,ok", "nochoices",
			"502html", "429ms20,ok", "filter", "ok")
		sink := newMemSink()
		opts := fastOpts(o, 2)
		opts.MaxAttempts = 2
		evs := collect(t, Run(context.Background(), calls, sink, opts))
		checkContract(t, calls, evs, sink)
		// A 401 that echoes the key stops the run; its detail must not leak it.
		evs = append(evs, collect(t, Run(context.Background(), scriptCalls("401echo"), sink, opts))...)
		f.mu.Lock()
		echoed := strings.Join(f.echoed, "\n")
		f.mu.Unlock()
		if !strings.Contains(echoed, fakeKey) {
			t.Fatal("the server did not echo the key: the test would prove nothing")
		}
		for _, e := range evs {
			if s := fmt.Sprintf("%+v", e); strings.Contains(s, fakeKey) {
				t.Errorf("event leaks the key: %s", s)
			}
		}
		sink.mu.Lock()
		defer sink.mu.Unlock()
		for _, r := range sink.resps {
			if s := fmt.Sprintf("%+v", r); strings.Contains(s, fakeKey) {
				t.Errorf("saved response leaks the key: %s", s)
			}
		}
	})
}

// TestRun_AuthFailedStops checks that a rejected key stops the run at once
// and stores nothing for the call: the key is wrong, not the call.
func TestRun_AuthFailedStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(t)
		o := newTestOpenAI(t, f)
		calls := scriptCalls("401echo", "ok", "ok", "ok")
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, fastOpts(o, 1)))
		last, ok := evs[len(evs)-1].(Stopped)
		if !ok || last.Reason != AuthFailed {
			t.Fatalf("last event %+v, want Stopped{AuthFailed}", evs[len(evs)-1])
		}
		if strings.Contains(last.Detail, fakeKey) || !strings.Contains(last.Detail, "401") {
			t.Errorf("detail %q: want the status and never the key", last.Detail)
		}
		sink.mu.Lock()
		defer sink.mu.Unlock()
		for _, r := range sink.resps {
			if r.Key == calls[0].Key {
				t.Error("the rejected call was stored; it must be left for the next run")
			}
		}
	})
}

func TestPrice_Cost(t *testing.T) {
	t.Parallel()
	p := Price{InputPerMTok: 3, CachedInputPerMTok: 0.3, OutputPerMTok: 15}
	tests := []struct {
		name                       string
		price                      Price
		prompt, cached, completion int
		want                       float64
	}{
		{"uncached", p, 1_000_000, 0, 0, 3},
		{"all cached", p, 1_000_000, 1_000_000, 0, 0.3},
		{"mixed", p, 2000, 1000, 400, (1000*3 + 1000*0.3 + 400*15) / 1e6},
		{"no cached rate bills cached at input", Price{InputPerMTok: 3, OutputPerMTok: 15}, 2000, 1000, 0, 2000 * 3 / 1e6},
		{"cached above prompt is clamped", p, 100, 500, 0, 100 * 0.3 / 1e6},
		{"negative usage", p, -5, -1, -7, 0},
		{"free", Price{}, 1000, 10, 1000, 0},
	}
	for _, tt := range tests {
		got := tt.price.Cost(tt.prompt, tt.cached, tt.completion)
		if d := got - tt.want; d > 1e-12 || d < -1e-12 {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCallError_Error(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  CallError
		want string
	}{
		{CallError{Kind: model.ErrRateLimited, Status: 429, Msg: "slow down"}, "rate_limited (HTTP 429): slow down"},
		{CallError{Kind: model.ErrTransport, Msg: "connection reset by the server"}, "transport: connection reset by the server"},
		{CallError{}, "error: no detail"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestStopReason_String(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for r := Completed; r <= SaveFailed; r++ {
		s := r.String()
		if s == "unknown" || seen[s] {
			t.Errorf("reason %d: %q", r, s)
		}
		seen[s] = true
	}
}

// Options.Skip leaves calls out: they are not made, saved or reported, and
// Remaining counts only the others.
func TestRun_Skip(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		made := map[string]int{}
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			mu.Lock()
			made[c.Key]++
			mu.Unlock()
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		tests := []struct {
			name string
			skip func(i int) bool
			want int // calls made of 20
		}{
			{"every third", func(i int) bool { return i%3 == 0 }, 13},
			{"all", func(int) bool { return true }, 0},
			{"none", func(int) bool { return false }, 20},
			{"the tail", func(i int) bool { return i >= 5 }, 5},
		}
		for _, tc := range tests {
			func() {
				scripts := make([]string, 20)
				for i := range scripts {
					scripts[i] = tc.name
				}
				calls := scriptCalls(scripts...)
				sink := newMemSink()
				opts := fastOpts(p, 3)
				opts.Skip = tc.skip
				evs := collect(t, Run(context.Background(), calls, sink, opts))
				stop, ok := evs[len(evs)-1].(Stopped)
				if !ok || stop.Reason != Completed || stop.Done != tc.want || stop.Remaining != 0 {
					t.Errorf("%s: stopped %+v, want completed after %d calls", tc.name, evs[len(evs)-1], tc.want)
					return
				}
				for _, e := range evs {
					var i int
					switch e := e.(type) {
					case Started:
						i = e.Index
					case Finished:
						i = e.Index
					default:
						continue
					}
					if tc.skip(i) {
						t.Errorf("%s: event %T for skipped call %d", tc.name, e, i)
					}
				}
				saved := sink.keys()
				mu.Lock()
				defer mu.Unlock()
				for i, c := range calls {
					if want := !tc.skip(i); saved[c.Key] != want || (made[c.Key] == 1) != want {
						t.Errorf("%s: call %d: saved %v, made %d times; want made: %v", tc.name, i, saved[c.Key], made[c.Key], want)
					}
				}
			}()
		}

		// A run stopped early counts only the calls it was to make as remaining.
		calls := scriptCalls(make([]string, 10)...)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		opts := fastOpts(p, 2)
		opts.Skip = func(i int) bool { return i < 4 }
		evs := collect(t, Run(ctx, calls, nil, opts))
		if stop := evs[len(evs)-1].(Stopped); stop.Reason != Cancelled || stop.Remaining != 6-stop.Done {
			t.Errorf("cancelled run stopped %+v, want remaining %d", stop, 6-stop.Done)
		}
	})
}

// TestRun_OpenAI_RetryCauses: each retry names its cause, so the screen can
// count rate limits, server errors, dropped connections and timeouts apart.
func TestRun_OpenAI_RetryCauses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeAPI(t)
		o := newTestOpenAI(t, f)
		calls := scriptCalls("429,ok", "500,ok", "reset,ok", "hang,ok")
		want := map[string]RetryCause{calls[0].Key: CauseRateLimit, calls[1].Key: CauseServer,
			calls[2].Key: CauseConnection, calls[3].Key: CauseTimeout}
		opts := fastOpts(o, 4)
		opts.Timeout = 10 * time.Second // virtual time: the hanging attempt times out
		sink := newMemSink()
		evs := collect(t, Run(context.Background(), calls, sink, opts))
		if _, stop := checkContract(t, calls, evs, sink); stop.Reason != Completed {
			t.Fatalf("stopped %v: %s", stop.Reason, stop.Detail)
		}
		got := map[string]RetryCause{}
		for _, e := range evs {
			if r, ok := e.(Retrying); ok {
				got[r.Key] = r.Cause
			}
		}
		for k, c := range want {
			if got[k] != c {
				t.Errorf("call %s retried for %q, want %q", k, got[k], c)
			}
		}
	})
}

package runner

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// The three measured scenarios: 1,080 calls at concurrency 8 through the
// OpenAI provider against a local chat-completions server, with a sink that
// only counts (persistence is measured elsewhere). Run them with
//
//	go test -run '^$' -bench . -benchtime 1x ./runner
//
// Metrics: "s/run" is the wall time of one run; "ratio" is wall time over the
// ideal ceil(1080/8) x latency (target: within 1.02); "busy" is the share of
// slot-time spent inside the provider (near 1 when slots are kept full: a
// high ratio with busy near 1 means a loaded machine, not runner overhead);
// "429s" counts the rate limits served.

const (
	benchCalls       = 1080
	benchConcurrency = 8
)

func BenchmarkRun_Latency200ms(b *testing.B) {
	benchRun(b, 200*time.Millisecond, 0)
}

func BenchmarkRun_ZeroLatency(b *testing.B) {
	benchRun(b, 0, 0)
}

func BenchmarkRun_TenPercent429(b *testing.B) {
	benchRun(b, 0, 10)
}

// countSink counts saves and stores nothing.
type countSink struct{ n atomic.Int64 }

func (s *countSink) Save(model.Response) error { s.n.Add(1); return nil }

// benchRun runs the scenario b.N times. latency is the server's time per
// answer; every429 > 0 makes every every429-th request a 429 with
// "Retry-After: 1".
func benchRun(b *testing.B, latency time.Duration, every429 int) {
	answer := []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"I can't confirm roadmap dates."},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":420,"completion_tokens":30,"total_tokens":450,"prompt_tokens_details":{"cached_tokens":384}}}`)
	limited := []byte(`{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`)
	var requests, rateLimited atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if every429 > 0 && n%int64(every429) == 0 {
			// No Retry-After: the benchmark measures the runner's
			// retries, not a server's wait (bench/run.sh measures that).
			rateLimited.Add(1)
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write(limited)
			return
		}
		if latency > 0 {
			time.Sleep(latency)
		}
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", APIKey: "sk-bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer o.CloseIdleConnections()

	// busy sums the time attempts spend in the provider, so that "busy"
	// (slot utilisation) separates the runner's own gaps from a slow machine.
	var busy atomic.Int64
	timed := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
		start := time.Now()
		defer func() { busy.Add(int64(time.Since(start))) }()
		return o.Complete(ctx, c)
	})
	calls := make([]Call, benchCalls)
	for i := range calls {
		req := request(fmt.Sprintf("bench case %d", i), i%30)
		calls[i] = Call{Key: req.Key(), Request: req,
			EstPromptTokens: 420, EstCompletionTokens: 400,
			Price: Price{InputPerMTok: 3, CachedInputPerMTok: 0.3, OutputPerMTok: 15}}
	}
	opts := Options{Concurrency: benchConcurrency, Providers: []Endpoint{{Name: "bench", Provider: timed}}}

	var total time.Duration
	runs := 0
	for b.Loop() {
		sink := &countSink{}
		start := time.Now()
		var stop Stopped
		for e := range Run(context.Background(), calls, sink, opts) {
			if s, ok := e.(Stopped); ok {
				stop = s
			}
		}
		total += time.Since(start)
		runs++
		if stop.Reason != Completed || stop.Done != benchCalls || stop.Failed != 0 || sink.n.Load() != benchCalls {
			b.Fatalf("run ended %v (%s): done %d, failed %d, saved %d", stop.Reason, stop.Detail, stop.Done, stop.Failed, sink.n.Load())
		}
	}
	wall := total / time.Duration(runs)
	b.ReportMetric(wall.Seconds(), "s/run")
	b.ReportMetric(float64(busy.Load())/float64(total)/benchConcurrency, "busy")
	if latency > 0 {
		ideal := time.Duration(math.Ceil(float64(benchCalls)/benchConcurrency)) * latency
		b.ReportMetric(float64(wall)/float64(ideal), "ratio")
	}
	if every429 > 0 {
		b.ReportMetric(float64(rateLimited.Load())/float64(runs), "429s")
	}
}

package runner

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// gateSink holds every save until its gate opens, counting the saves in
// progress.
type gateSink struct {
	gate   chan struct{}
	mu     sync.Mutex
	active int
	saved  int
}

func (s *gateSink) Save(model.Response) error {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	<-s.gate
	s.mu.Lock()
	s.active--
	s.saved++
	s.mu.Unlock()
	return nil
}

// TestSavesInProgressAreBounded runs many calls that answer at once into a
// sink that is stuck: an answer holds its slot until it is saved, so at
// most concurrency answers wait for the sink (a large run against the
// simulated model used to hold every answer in a blocked goroutine, and a
// crash lost every answer waiting).
func TestSavesInProgressAreBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		instant := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		const n, concurrency = 3000, 8
		calls := make([]Call, n)
		for i := range calls {
			calls[i] = Call{Request: request("m", i)}
		}
		sink := &gateSink{gate: make(chan struct{})}
		events := Run(context.Background(), calls, sink, fastOpts(instant, concurrency))
		stopped := make(chan Stopped, 1)
		go func() {
			for ev := range events {
				if s, ok := ev.(Stopped); ok {
					stopped <- s
				}
			}
		}()

		synctest.Wait() // everything is blocked: on the sink, or waiting for it
		sink.mu.Lock()
		active := sink.active
		sink.mu.Unlock()
		if active != concurrency {
			t.Errorf("%d saves in progress at once, want %d (every slot holds an answer)", active, concurrency)
		}
		close(sink.gate)
		s := <-stopped
		if s.Reason != Completed || s.Done != n || sink.saved != n {
			t.Fatalf("run ended %v with %d done, %d saved; want completed with %d", s.Reason, s.Done, sink.saved, n)
		}
	})
}

// TestUnsavedAnswersHoldTheirSlot: at every moment, calls in flight plus
// answers received and not yet saved stay within the concurrency, so a
// crash can lose (and the user pay twice for) at most that many answers.
func TestUnsavedAnswersHoldTheirSlot(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const n, concurrency = 400, 5
		var (
			mu                      sync.Mutex
			inFlight, unsaved, peak int
		)
		p := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight+unsaved)
			mu.Unlock()
			time.Sleep(time.Millisecond) // fake time: the bubble's clock
			mu.Lock()
			inFlight--
			unsaved++ // the answer is received: paid, not stored
			mu.Unlock()
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		sink := sinkFunc(func(model.Response) error {
			time.Sleep(3 * time.Millisecond) // a commit slower than a call
			mu.Lock()
			unsaved--
			mu.Unlock()
			return nil
		})
		var last Stopped
		for ev := range Run(context.Background(), callsN(n), sink, fastOpts(p, concurrency)) {
			if s, ok := ev.(Stopped); ok {
				last = s
			}
		}
		if last.Reason != Completed || last.Done != n {
			t.Fatalf("run ended %v with %d done, want completed with %d", last.Reason, last.Done, n)
		}
		if peak > concurrency {
			t.Errorf("calls in flight plus unsaved answers peaked at %d, want at most the concurrency %d", peak, concurrency)
		}
		if peak < concurrency {
			t.Errorf("peak %d: the run never used its %d slots; the test checks nothing", peak, concurrency)
		}
	})
}

type sinkFunc func(model.Response) error

func (f sinkFunc) Save(r model.Response) error { return f(r) }

func callsN(n int) []Call {
	calls := make([]Call, n)
	for i := range calls {
		calls[i] = Call{Request: request("m", i)}
	}
	return calls
}

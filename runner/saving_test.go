package runner

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

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
// sink that is stuck: dispatch must wait for saves rather than park one
// goroutine per answer (a large run against the simulated model used to
// hold every answer in a blocked goroutine).
func TestSavesInProgressAreBounded(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		instant := funcProvider(func(ctx context.Context, c Call) (Completion, error) {
			return Completion{Text: "ok", FinishReason: "stop"}, nil
		})
		const n, concurrency = 3 * maxSaving, 8
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
		if active > maxSaving+concurrency {
			t.Errorf("%d saves in progress at once, want at most %d", active, maxSaving+concurrency)
		}
		close(sink.gate)
		s := <-stopped
		if s.Reason != Completed || s.Done != n || sink.saved != n {
			t.Fatalf("run ended %v with %d done, %d saved; want completed with %d", s.Reason, s.Done, sink.saved, n)
		}
	})
}

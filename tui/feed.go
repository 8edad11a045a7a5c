package tui

import (
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/workbench"
)

// Event is one item of a run's progress as the screen receives it: either a
// runner event (Runner is set) or an answer with the grades the predicates
// gave it (Runner is nil).
type Event struct {
	Runner   runner.Event
	Response model.Response
	Grades   []model.Grade

	phase  *phaseEvent
	round  *model.Round
	judged *judgeGrade
}

// judgeGrade is a judge's grade of an answer already stored.
type judgeGrade struct {
	answerKey string
	grade     model.Grade
}

// Feed carries a run's progress from the runner's goroutines to the screen.
// Writers never block: events are queued without bound (a run has a known,
// finite number of calls), so a slow screen can never stall the runner or a
// save. The screen takes everything queued at most about thirty times a
// second, as one batch.
//
// A Feed is safe for concurrent use. Its zero value is not usable; create it
// with NewFeed.
type Feed struct {
	mu      sync.Mutex
	items   []Event
	closed  bool
	stopped *runner.Stopped

	notify chan struct{} // holds a token when items were added or the feed closed
	done   chan struct{} // closed by Close
}

// NewFeed returns an open, empty feed.
func NewFeed() *Feed {
	return &Feed{notify: make(chan struct{}, 1), done: make(chan struct{})}
}

// Graded queues an answer and its grades. Its signature is that of
// grade.Sink.OnGraded; it never blocks.
func (f *Feed) Graded(r model.Response, grades []model.Grade) {
	f.push(Event{Response: r, Grades: grades})
}

// JudgeGraded queues a judge's grade of a stored answer. Its signature is
// that of grade.JudgeSink.OnGraded; it never blocks.
func (f *Feed) JudgeGraded(answerKey string, g model.Grade) {
	f.push(Event{judged: &judgeGrade{answerKey: answerKey, grade: g}})
}

// Follow forwards the events of a runner channel until the channel is
// closed, and returns the run's Stopped event. It does not close the feed:
// a caller may follow several runs (answers, then judges) in turn, and
// must call Close after the last.
func (f *Feed) Follow(events <-chan runner.Event) runner.Stopped {
	var last runner.Stopped
	for e := range events {
		if s, ok := e.(runner.Stopped); ok {
			last = s
		}
		f.Event(e)
	}
	return last
}

// Event queues one runner event; it never blocks. With StartPhase, Graded
// and JudgeGraded it makes a Feed a workbench.Observer.
func (f *Feed) Event(e runner.Event) {
	if s, ok := e.(runner.Stopped); ok {
		f.mu.Lock()
		f.stopped = &s
		f.mu.Unlock()
	}
	f.push(Event{Runner: e})
}

// StartPhase announces a further run on the same feed, such as the judge
// calls after the answers: the header's progress restarts at 0 of calls.
func (f *Feed) StartPhase(name string, calls int) {
	f.push(Event{phase: &phaseEvent{name: name, total: calls}})
}

// StartRound announces a round of an adaptive run (its StartPhase
// follows): the header counts the answers over every round, against the
// most the run makes, so its progress never restarts. With it a Feed is a
// model.RoundObserver.
func (f *Feed) StartRound(r model.Round) {
	f.push(Event{round: &r})
}

// Close marks the end of the run. Events queued before are still
// delivered. Closing twice is a no-op.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.closed = true
	close(f.done)
}

// Done is closed when Close has been called.
func (f *Feed) Done() <-chan struct{} { return f.done }

// Stopped returns the last Stopped event followed, and false when no run
// has stopped yet.
func (f *Feed) Stopped() (runner.Stopped, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped == nil {
		return runner.Stopped{}, false
	}
	return *f.stopped, true
}

func (f *Feed) push(e Event) {
	f.mu.Lock()
	f.items = append(f.items, e)
	f.mu.Unlock()
	select {
	case f.notify <- struct{}{}:
	default: // a token is already waiting
	}
}

// take removes and returns everything queued, and whether the feed is
// closed (then nothing more will come once this batch is applied).
func (f *Feed) take() ([]Event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	items := f.items
	f.items = nil
	return items, f.closed
}

// waitBatch returns a command that waits for the feed to have something,
// lets more arrive for the coalescing window, and returns it all as one
// batchMsg. The window bounds redraws: however fast events arrive, at most
// one batch is delivered per window.
func waitBatch(f *Feed, window time.Duration) tea.Cmd {
	return func() tea.Msg {
		for {
			select {
			case <-f.notify:
			case <-f.done:
			}
			if window > 0 {
				time.Sleep(window)
			}
			items, closed := f.take()
			if len(items) > 0 || closed {
				return batchMsg{events: items, closed: closed}
			}
			// A stale token: the items it announced went in the last batch.
		}
	}
}

// A Feed hears an adaptive run's rounds.
var _ workbench.RoundObserver = (*Feed)(nil)

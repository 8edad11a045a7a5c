package tui

import (
	"testing"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

func TestFeed_CoalescesEverythingQueuedIntoOneBatch(t *testing.T) {
	t.Parallel()
	f := NewFeed()
	for i := range 1000 {
		f.Graded(model.Response{Key: string(rune('a' + i%26))}, nil)
	}
	ch := make(chan runner.Event, 501)
	for i := range 500 {
		ch <- runner.Finished{Index: i}
	}
	ch <- runner.Stopped{Reason: runner.Completed, Done: 500}
	close(ch)
	if st := f.Follow(ch); st.Done != 500 {
		t.Fatalf("Follow returned %+v", st)
	}
	msg := waitBatch(f, 0)().(batchMsg)
	if len(msg.events) != 1501 || msg.closed {
		t.Fatalf("batch of %d events, closed %v; want 1501, open", len(msg.events), msg.closed)
	}
	if msg.events[0].Runner != nil || msg.events[1000].Runner == nil {
		t.Fatal("events out of order")
	}
	if st, ok := f.Stopped(); !ok || st.Done != 500 {
		t.Fatalf("Stopped() = %+v, %v", st, ok)
	}
	f.Close()
	f.Close() // twice is fine
	msg = waitBatch(f, 0)().(batchMsg)
	if len(msg.events) != 0 || !msg.closed {
		t.Fatalf("after Close: %d events, closed %v", len(msg.events), msg.closed)
	}
	select {
	case <-f.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
}

func TestFeed_StaleTokenDoesNotMakeAnEmptyBatch(t *testing.T) {
	t.Parallel()
	f := NewFeed()
	f.Graded(model.Response{Key: "k1"}, nil)
	f.take() // an earlier batch took the item; its token is still waiting
	got := make(chan batchMsg)
	go func() { got <- waitBatch(f, 0)().(batchMsg) }()
	f.Graded(model.Response{Key: "k2"}, nil)
	msg := <-got
	if len(msg.events) != 1 || msg.events[0].Response.Key != "k2" {
		t.Fatalf("batch %+v, want just k2", msg.events)
	}
}

func TestFeed_WritersNeverWaitForTheScreen(t *testing.T) {
	t.Parallel()
	f := NewFeed()
	ch := make(chan runner.Event) // unbuffered: the runner's side waits for Follow
	go func() {
		for i := range 20000 {
			ch <- runner.Started{Index: i}
		}
		close(ch)
	}()
	f.Follow(ch) // nobody takes batches: Follow must still drain the runner
	for i := range 20000 {
		f.Graded(model.Response{}, nil)
		_ = i
	}
	items, _ := f.take()
	if len(items) != 40000 {
		t.Fatalf("%d events queued, want 40000", len(items))
	}
}

func TestFeed_StartPhase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	a := f.app(t, &clock{t: t0}, noStart)
	press(a, "y")
	feed := NewFeed()
	feed.StartPhase("judging", 120)
	items, _ := feed.take()
	a.Update(batchMsg{events: items})
	contains(t, plain(a), "judging 0/120")
}

func TestFeed_JudgeGradesReachTheTallyDuringTheJudgingPhase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	if len(f.audit.Judges) == 0 {
		t.Fatal("the demo audit has no judge")
	}
	a := f.app(t, &clock{t: t0}, noStart)
	press(a, "y")
	feed := NewFeed()
	answer := f.finished(t, 0)
	feed.Graded(answer[0].Response, answer[0].Grades)
	feed.StartPhase("judging", 2)
	key := f.plan.Calls[0].Key
	j := f.audit.Judges[0]
	g := model.JudgeGrade(j.Config.Name, j.Own.Version, "Looks fine.\nVERDICT: VIOLATION", 0)
	feed.JudgeGraded(key, g)
	items, _ := feed.take()
	items = append(append(answer[1:], items...), Event{Runner: runner.Finished{Index: 0, Response: model.Response{Key: "judge-call", Text: "VERDICT: VIOLATION"}}})
	a.Update(batchMsg{events: items})

	got, ok := a.c.tally.GraderGrades(j.Own.Version)[key]
	if !ok || got != g || g.Unparseable {
		t.Fatalf("judge grade of %s in the tally = %+v, %v; want the violation fed", key, got, ok)
	}
	if !a.c.tally.Answered(key) {
		t.Fatalf("answer %s not recorded", key)
	}
	contains(t, plain(a), "judging 1/2  50%")
	items = []Event{{Runner: runner.Finished{Index: 1}}, {Runner: runner.Stopped{Reason: runner.Completed, Done: 2}}}
	a.Update(batchMsg{events: items, closed: true})
	contains(t, plain(a), "judging 2/2 100%")
	contains(t, plain(a), "Run completed: 3 calls finished") // the answer and both judge calls
	if a.c.storedOK != 1 {
		t.Fatalf("%d answers stored on screen, want 1: a judge grade is not an answer", a.c.storedOK)
	}
}

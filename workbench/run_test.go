package workbench

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	phases []string
	totals []int
	stops  []runner.Stopped
	graded int
	judged int
	events int
}

func (r *recorder) StartPhase(phase string, calls int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phases = append(r.phases, phase)
	r.totals = append(r.totals, calls)
}

func (r *recorder) Event(e runner.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events++
	if st, ok := e.(runner.Stopped); ok {
		r.stops = append(r.stops, st)
	}
}

func (r *recorder) Graded(model.Response, []model.Grade) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.graded++
}

func (r *recorder) JudgeGraded(string, model.Grade) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.judged++
}

// openDemo writes the bundled demo to a temporary directory and opens it
// with one sample per case.
func openDemo(t *testing.T) *Session { return openDemoSamples(t, 1) }

// openDemoSamples opens the bundled demo with samples per case.
func openDemoSamples(t *testing.T, samples int) *Session {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), filepath.Join(dir, examples.DemoAudit), Options{Samples: samples})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// TestSession_Run_Phases: a run makes the answers, then the judge calls,
// then the re-asks, reporting each phase to the observer in that order,
// and measures how often each judge flips.
func TestSession_Run_Phases(t *testing.T) {
	t.Parallel()
	s := openDemo(t)
	var rec recorder
	out, err := s.Run(context.Background(), RunOptions{Concurrency: 4, Rejudge: 5}, &rec)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{PhaseAnswers, PhaseJudging, PhaseRejudge}
	if len(rec.phases) != 3 || rec.phases[0] != want[0] || rec.phases[1] != want[1] || rec.phases[2] != want[2] {
		t.Fatalf("phases %v, want %v", rec.phases, want)
	}
	if len(rec.stops) != 3 {
		t.Fatalf("%d stops, want one per phase", len(rec.stops))
	}
	for i, p := range []Phase{out.Answers, out.Judges, out.Rejudge} {
		if !p.Ran || p.Stopped.Reason != runner.Completed || p.Stopped != rec.stops[i] || p.Stopped.Done != rec.totals[i] {
			t.Errorf("phase %s: %+v (observer saw %+v of %d calls)", want[i], p, rec.stops[i], rec.totals[i])
		}
	}
	if _, stopped := out.Stop(); stopped {
		t.Errorf("a completed run reports a stop")
	}
	if rec.graded != len(s.Plan.Calls) || rec.judged == 0 {
		t.Errorf("observer saw %d graded answers of %d calls and %d judge grades", rec.graded, len(s.Plan.Calls), rec.judged)
	}
	// Each of the demo's two judges is re-asked about 5 answers.
	if out.Rejudge.Stopped.Done != 10 || len(out.Stability) != len(s.Audit.Judges) {
		t.Fatalf("re-asks: %+v, stability %+v", out.Rejudge, out.Stability)
	}
	for _, st := range out.Stability {
		if st.Asked+st.Unparseable != 5 || st.Flips > st.Asked {
			t.Errorf("stability %+v: want 5 re-asks compared", st)
		}
	}

	// Asked again, the same re-asks are stored: nothing is called, and the
	// stability is measured on the same answers.
	var again recorder
	out2, err := s.Run(context.Background(), RunOptions{Concurrency: 4, Rejudge: 5}, &again)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.phases) != 0 || out2.Answers.Ran || out2.Judges.Ran || out2.Rejudge.Ran {
		t.Fatalf("second run called: phases %v, outcome %+v", again.phases, out2)
	}
	for i := range out.Stability {
		if out2.Stability[i] != out.Stability[i] {
			t.Errorf("stability changed on a run with no calls: %+v, then %+v", out.Stability[i], out2.Stability[i])
		}
	}
}

// TestSession_Run_Cancelled: a cancelled run makes no call in any phase
// and says where it stopped.
func TestSession_Run_Cancelled(t *testing.T) {
	t.Parallel()
	s := openDemo(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var rec recorder
	out, err := s.Run(ctx, RunOptions{Concurrency: 4, Rejudge: 5}, &rec)
	if err != nil {
		t.Fatal(err)
	}
	st, stopped := out.Stop()
	if !stopped || st.Reason != runner.Cancelled {
		t.Fatalf("stop %+v, %v; want cancelled", st, stopped)
	}
	if out.Judges.Ran || out.Rejudge.Ran || rec.graded != 0 {
		t.Fatalf("a cancelled run went on: %+v, %d answers graded", out, rec.graded)
	}
}

// cancelOnStop cancels the run when the answers phase reports its end: a
// Ctrl-C between the answers and the judges.
type cancelOnStop struct {
	recorder
	cancel context.CancelFunc
}

func (c *cancelOnStop) Event(e runner.Event) {
	c.recorder.Event(e)
	if _, ok := e.(runner.Stopped); ok {
		c.cancel()
	}
}

// TestSession_Run_StopBetweenPhases: a stop that comes once the answers are
// in makes no judge call and is reported as the judges' stop, with the
// judge calls left, so the command exits 130 with a resume command rather
// than 0.
func TestSession_Run_StopBetweenPhases(t *testing.T) {
	t.Parallel()
	s := openDemo(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &cancelOnStop{cancel: cancel}
	out, err := s.Run(ctx, RunOptions{Concurrency: 4}, obs)
	if err != nil {
		t.Fatal(err)
	}
	if out.Answers.Stopped.Reason != runner.Completed {
		t.Fatalf("answers: %+v", out.Answers)
	}
	st, stopped := out.Stop()
	if !stopped || st.Reason != runner.Cancelled {
		t.Fatalf("Stop() = %+v, %v; want the judges cancelled", st, stopped)
	}
	if out.Judges.Stopped.Done != 0 || out.Judges.Stopped.Remaining == 0 {
		t.Errorf("judges: %+v; want no call made and the calls left counted", out.Judges.Stopped)
	}
	if obs.judged != 0 {
		t.Errorf("%d judge grades after the stop", obs.judged)
	}
}

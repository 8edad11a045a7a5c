package main

import (
	"context"
	"maps"
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/tui"
	"github.com/auditor-dev/auditor/workbench"
)

// judgedAll returns what is stored and the session's judge calls, which
// must all be stored: the run is over.
func judgedAll(t *testing.T, s *workbench.Session) (map[string]bool, *audit.JudgePlan) {
	t.Helper()
	status, err := s.Status()
	if err != nil {
		t.Fatal(err)
	}
	jp, err := s.Plan.JudgeCalls(s.Store, status, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p := jp.Pending(status); len(p) != 0 {
		t.Fatalf("%d judge calls left after the run, want 0", len(p))
	}
	return status, jp
}

// TestRunOnTheScreen_JudgesOnTheFeed runs an audit as the interactive app
// does: the answers, then the judges, all on one feed. Every judge's
// grades must be stored by the time the feed closes, and the feed must have
// seen both phases end.
func TestRunOnTheScreen_JudgesOnTheFeed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := workbench.Open(ctx, filepath.Join(dir, examples.DemoAudit), workbench.Options{Samples: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Audit.Judges) == 0 {
		t.Fatal("the demo audit has no judge")
	}

	feed := tui.NewFeed()
	var out workbench.Outcome
	go func() {
		defer feed.Close()
		out, err = s.Run(ctx, workbench.RunOptions{Concurrency: 8}, feed)
	}()
	<-feed.Done()
	if err != nil {
		t.Fatal(err)
	}
	if !out.Answers.Ran || out.Answers.Stopped.Reason != runner.Completed || out.Answers.Stopped.Done != len(s.Plan.Calls) {
		t.Fatalf("answers: %+v", out.Answers)
	}
	if !out.Judges.Ran || out.Judges.Stopped.Reason != runner.Completed || out.Judges.Stopped.Done == 0 {
		t.Fatalf("judges: %+v", out.Judges)
	}
	if st, ok := feed.Stopped(); !ok || st != out.Judges.Stopped {
		t.Fatalf("the feed's last stop is %+v, want the judges' %+v", st, out.Judges.Stopped)
	}

	if err := s.Refresh(); err != nil {
		t.Fatal(err)
	}
	_, jp := judgedAll(t, s)
	for ji, j := range s.Audit.Judges {
		want := map[string]bool{}
		for i, c := range jp.Calls {
			if jp.CallJudge[i] == ji {
				for _, k := range jp.Targets[c.Key] {
					want[k] = true
				}
			}
		}
		got := map[string]model.Grade{} // with every rubric it grades with
		for _, v := range j.Versions() {
			maps.Copy(got, s.Tally.GraderGrades(v))
		}
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("judge %s: %d answers graded, want %d", j.Config.Name, len(got), len(want))
		}
		for k := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("judge %s: no grade stored for %s", j.Config.Name, k)
			}
		}
	}

	// A second run has nothing to do in any phase.
	again, err := s.Run(ctx, workbench.RunOptions{Concurrency: 8}, tui.NewFeed())
	if err != nil || again.Answers.Ran || again.Judges.Ran {
		t.Fatalf("second run: %+v, %v", again, err)
	}
}

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/tui"
)

// TestScreenStart_JudgesOnTheScreen drives the interactive run's Start as
// the app does: the answers, then the judges, all on one feed. Every
// judge's grades must be stored by the time the feed closes, so the judging
// after the screen finds nothing left to do.
func TestScreenStart_JudgesOnTheScreen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	s, err := loadAudit(filepath.Join(dir, examples.DemoAudit), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.openStore(); err != nil {
		t.Fatal(err)
	}
	defer s.close()
	if len(s.audit.Judges) == 0 {
		t.Fatal("the demo audit has no judge")
	}
	status, err := s.status()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.prepareCalls(status, 0); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	grader := audit.NewGrader(ctx, s.plan)
	defer grader.Close()
	w := s.st.NewWriter(storeWriterOptions())
	sink := &audit.Sink{Grader: grader, Writer: w}
	var errOut bytes.Buffer
	stdio := Stdio{Out: &bytes.Buffer{}, Err: &errOut}

	var out screenRun
	feed := tui.NewFeed()
	screenStart(stdio, s, sink, w, runner.Options{Concurrency: 8}, judgeOptions{concurrency: 8}, &out)(ctx, feed)
	<-feed.Done()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.answers.Reason != runner.Completed || out.answers.Done != len(s.plan.Calls) || out.judgeErr != nil {
		t.Fatalf("on the screen: answers %+v, judging error %v", out.answers, out.judgeErr)
	}
	if errOut.Len() > 0 {
		t.Fatalf("judging on the screen printed to standard error:\n%s", errOut.String())
	}

	status, err = s.status()
	if err != nil {
		t.Fatal(err)
	}
	jp, err := s.plan.JudgeCalls(s.st, status, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p := jp.Pending(status); len(p) != 0 {
		t.Fatalf("%d judge calls left after the screen, want 0", len(p))
	}
	tally, err := audit.NewTally(s.plan, s.st)
	if err != nil {
		t.Fatal(err)
	}
	for ji, j := range s.audit.Judges {
		want := map[string]bool{}
		for i, c := range jp.Calls {
			if jp.CallJudge[i] == ji {
				for _, k := range jp.Targets[c.Key] {
					want[k] = true
				}
			}
		}
		got := tally.GraderGrades(j.Version)
		if len(want) == 0 || len(got) != len(want) {
			t.Errorf("judge %s: %d answers graded, want %d", j.Config.Name, len(got), len(want))
		}
		for k := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("judge %s: no grade stored for %s", j.Config.Name, k)
			}
		}
	}

	// After the screen, finishRun's judging has nothing to do.
	st, err := runJudges(ctx, stdio, s, judgeOptions{concurrency: 8})
	if err != nil || st.Reason != runner.Completed || st.Done != 0 || errOut.Len() > 0 {
		t.Fatalf("judging after the screen: %+v, %v, printed %q", st, err, errOut.String())
	}
}

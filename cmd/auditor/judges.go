package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
	"github.com/auditor-dev/auditor/tui"
)

// judgeProviders builds one provider per judge: a judge may live behind its
// own endpoint and key.
func (s *session) judgeProviders(simLatency time.Duration) ([]runner.Provider, error) {
	out := make([]runner.Provider, len(s.audit.Judges))
	rules := map[int]string{}
	for _, r := range s.audit.Rules {
		rules[r.Line] = r.Text
	}
	for i, j := range s.audit.Judges {
		c := j.Config
		if c.Provider == "sim" {
			out[i] = sim.New(sim.Options{Rules: rules, Latency: simLatency})
			continue
		}
		key := os.Getenv(c.APIKeyEnv)
		if key == "" {
			return nil, &model.InputError{File: s.audit.Path, Line: c.DefLine, Field: "api_key_env",
				Msg: fmt.Sprintf("environment variable %s is not set; export it with the API key for judge %s", c.APIKeyEnv, c.Name)}
		}
		base := c.BaseURL
		if base == "" {
			base = os.Getenv("OPENAI_BASE_URL")
		}
		if base == "" {
			base = runner.DefaultBaseURL
		}
		p, err := runner.NewOpenAI(runner.OpenAIConfig{BaseURL: base, APIKey: key})
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// judgeOptions configure the judging phase of a run.
type judgeOptions struct {
	concurrency int
	budget      float64 // what is left of the run's budget; 0 = none
	maxWait     time.Duration
	simLatency  time.Duration
	sample      int // 0 for the grades that count; --rejudge uses 1
	onGraded    func(answerKey string, g model.Grade)
	// follow consumes the judge run's events, of total calls, and returns
	// how it stopped; nil prints progress lines to standard error. The
	// interactive screen follows them on its grid instead.
	follow func(events <-chan runner.Event, total int) runner.Stopped
}

// runJudges asks every judge about every stored answer it has not judged yet.
// It returns how the judging phase stopped.
func runJudges(ctx context.Context, io Stdio, s *session, o judgeOptions) (runner.Stopped, error) {
	done := runner.Stopped{Reason: runner.Completed}
	if len(s.audit.Judges) == 0 {
		return done, nil
	}
	status, err := s.st.Status()
	if err != nil {
		return done, err
	}
	jp, err := s.plan.JudgeCalls(s.st, status, o.sample)
	if err != nil {
		return done, err
	}
	if _, err := jp.Backfill(s.audit.Judges, s.st); err != nil {
		return done, err
	}
	pending := jp.Pending(status)
	if len(pending) == 0 {
		return done, nil
	}
	providers, err := s.judgeProviders(o.simLatency)
	if err != nil {
		return done, err
	}
	calls := make([]runner.Call, 0, len(pending))
	for _, i := range pending {
		c := jp.Calls[i]
		c.Provider = providers[jp.CallJudge[i]]
		calls = append(calls, c)
	}
	follow := o.follow
	if follow == nil {
		fmt.Fprintf(io.Err, "judging: %d calls to %d judge(s)\n", len(calls), len(s.audit.Judges))
		follow = func(events <-chan runner.Event, total int) runner.Stopped {
			return followRun(io.Err, events, total, o.concurrency, o.budget)
		}
	}
	w := s.st.NewWriter(storeWriterOptions())
	sink := audit.NewJudgeSink(jp, s.audit.Judges, w)
	sink.OnGraded = o.onGraded
	stopped := follow(runner.Run(ctx, calls, sink, runner.Options{
		Concurrency: o.concurrency, MaxWait: o.maxWait, Budget: o.budget,
	}), len(calls))
	if err := w.Close(); err != nil {
		return stopped, fmt.Errorf("saving judge answers: %w", err)
	}
	return stopped, nil
}

// runRejudge re-asks every judge on k answers it already graded and prints
// how often it changed its verdict (judge stability).
func runRejudge(ctx context.Context, io Stdio, s *session, k int, o judgeOptions) error {
	if len(s.audit.Judges) == 0 {
		return &usageError{fmt.Errorf("--rejudge needs at least one [[judge]] in the audit")}
	}
	status, err := s.st.Status()
	if err != nil {
		return err
	}
	jp, err := s.plan.JudgeCalls(s.st, status, 0)
	if err != nil {
		return err
	}
	rp, original := audit.RejudgeCalls(jp, status, len(s.audit.Judges), k, 1)
	pending := rp.Pending(status)
	if len(pending) > 0 {
		providers, err := s.judgeProviders(o.simLatency)
		if err != nil {
			return err
		}
		calls := make([]runner.Call, 0, len(pending))
		for _, i := range pending {
			c := rp.Calls[i]
			c.Provider = providers[rp.CallJudge[i]]
			calls = append(calls, c)
		}
		fmt.Fprintf(io.Err, "re-asking judges: %d calls\n", len(calls))
		w := s.st.NewWriter(storeWriterOptions())
		followRun(io.Err, runner.Run(ctx, calls, &audit.ResponseSink{Writer: w}, runner.Options{
			Concurrency: o.concurrency, MaxWait: o.maxWait, Budget: o.budget,
		}), len(calls), o.concurrency, o.budget)
		if err := w.Close(); err != nil {
			return err
		}
	}
	stab, err := audit.CompareRejudge(rp, original, s.audit.Judges, s.st)
	if err != nil {
		return err
	}
	fmt.Fprintln(io.Out, "Judge stability (same answer asked again, temperature 0):")
	for _, st := range stab {
		fmt.Fprintf(io.Out, "  %s: flipped %d of %d = %.2f [%.2f, %.2f]", st.Judge, st.Flips, st.Asked, st.Rate, st.CI.Lo, st.CI.Hi)
		if st.Unparseable > 0 {
			fmt.Fprintf(io.Out, "; %d without a VERDICT line", st.Unparseable)
		}
		fmt.Fprintln(io.Out)
	}
	return nil
}

// screenRun is how a run followed on the interactive screen went: the
// answers, then, when they completed, the judges.
type screenRun struct {
	answers    runner.Stopped
	judgeSpent float64 // dollars the judges spent on the screen
	judgeErr   error   // why judging on the screen failed; finishRun tries again
}

// followOnScreen follows a run's answers on feed and, once they complete,
// judges them on the same feed, so the screen shows the judging phase and
// its grades as they arrive. w is the answers' writer: it is flushed first,
// as the judge calls are built from the stored answers. o.budget is the
// run's whole budget; the judges get what the answers left of it. Judging
// stopped early (the user quit) is finished by finishRun after the screen.
func followOnScreen(ctx context.Context, io Stdio, s *session, feed *tui.Feed, events <-chan runner.Event,
	w *store.Writer, o judgeOptions) screenRun {
	var out screenRun
	out.answers = feed.Follow(events)
	if out.answers.Reason != runner.Completed || len(s.audit.Judges) == 0 || ctx.Err() != nil {
		return out
	}
	if err := w.Flush(); err != nil {
		out.judgeErr = fmt.Errorf("saving answers: %w", err)
		return out
	}
	o.budget = remainingBudget(o.budget, out.answers.Spent)
	o.onGraded = feed.JudgeGraded
	o.follow = func(events <-chan runner.Event, total int) runner.Stopped {
		feed.StartPhase("judging", total)
		return feed.Follow(events)
	}
	st, err := runJudges(ctx, io, s, o)
	out.judgeSpent, out.judgeErr = st.Spent, err
	return out
}

// remainingBudget is what is left of budget after spent; 0 (no budget)
// stays 0, and an exhausted budget stays positive so it still limits.
func remainingBudget(budget, spent float64) float64 {
	if budget <= 0 {
		return 0
	}
	return max(budget-spent, 1e-9)
}

// screenStart returns the interactive app's Start: it runs the answer calls
// through sink, then the judges, following both on the app's feed, and
// leaves how it went in *out before it closes the feed.
func screenStart(io Stdio, s *session, sink *audit.Sink, w *store.Writer, opts runner.Options, jo judgeOptions,
	out *screenRun) func(context.Context, *tui.Feed) {
	return func(ctx context.Context, feed *tui.Feed) {
		sink.OnGraded = feed.Graded
		events := runner.Run(ctx, s.plan.Calls, sink, opts)
		go func() {
			defer feed.Close()
			*out = followOnScreen(ctx, io, s, feed, events, w, jo)
		}()
	}
}

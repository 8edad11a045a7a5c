package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/runner"
)

// runFlags are the options of `auditor run` (and of the run inside `demo`).
type runFlags struct {
	yes         bool
	headless    bool
	samples     int
	concurrency int
	budget      float64
	gate        bool
	maxWait     time.Duration
	simLatency  time.Duration
	rejudge     int
}

func newRunCmd(io Stdio) *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run AUDIT",
		Short: "Run an audit's calls and print verdicts",
		Long: `Run every call of the audit that is not already stored, grade the answers with each
rule's predicate, and print per rule the failure rates with 95% intervals,
deleted minus baseline, and the verdict.

Calls are content-addressed: a second run of the same audit makes no calls, and
an interrupted run (Ctrl-C) resumes where it stopped.

Exit codes: 0 completed; 1 calls failed for good or the run stopped early
(budget, quota); 2 bad input; 3 with --gate when any verdict is not DELETE;
130 interrupted.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAudit(cmd.Context(), io, args[0], f, os.Args[0]+" run")
		},
	}
	addRunFlags(c, &f)
	return c
}

func addRunFlags(c *cobra.Command, f *runFlags) {
	c.Flags().BoolVarP(&f.yes, "yes", "y", false, "start without asking for confirmation")
	c.Flags().BoolVar(&f.headless, "headless", false, "print progress lines and a table instead of the interactive screen")
	c.Flags().IntVar(&f.samples, "samples", 0, "samples per case and variant (default: the audit's samples)")
	c.Flags().IntVar(&f.concurrency, "concurrency", 0, "calls in flight at once (default: the audit's concurrency)")
	c.Flags().Float64Var(&f.budget, "budget", 0, "stop dispatching before spend would pass this many dollars (0: no budget)")
	c.Flags().BoolVar(&f.gate, "gate", false, "exit 3 when any line's verdict is not DELETE (for CI)")
	c.Flags().DurationVar(&f.maxWait, "max-wait", 10*time.Minute, "longest rate-limit wait to sit out; a longer one stops the run")
	c.Flags().DurationVar(&f.simLatency, "sim-latency", 0, "mean answer latency of the simulated model")
	c.Flags().IntVar(&f.rejudge, "rejudge", 0, "after the run, ask each judge again about this many graded answers and report how often it flips")
}

// exactArgs is cobra.ExactArgs with errors that map to exit code 2.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &usageError{fmt.Errorf("%s takes %d argument(s), got %d", cmd.Name(), n, len(args))}
		}
		return nil
	}
}

// runAudit is `auditor run`: plan, confirm, run, grade, report.
func runAudit(ctx context.Context, io Stdio, path string, f runFlags, resumeCmd string) error {
	if f.concurrency < 0 || f.budget < 0 {
		return &usageError{fmt.Errorf("--concurrency and --budget cannot be negative")}
	}
	s, err := loadAudit(path, f.samples)
	if err != nil {
		return err
	}
	if err := s.openStore(); err != nil {
		return err
	}
	defer s.close()

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	grader := audit.NewGrader(ctx, s.plan)
	defer grader.Close()
	if n, err := grader.Regrade(s.st); err != nil {
		return fmt.Errorf("re-grading stored answers: %w", err)
	} else if n > 0 {
		fmt.Fprintf(io.Err, "re-graded %d stored answers with the current predicates (no calls)\n", n)
	}

	concurrency := s.audit.File.Concurrency
	if f.concurrency > 0 {
		concurrency = f.concurrency
	}
	status, err := s.status()
	if err != nil {
		return err
	}
	est, err := s.estimate(status, concurrency, f.simLatency)
	if err != nil {
		return err
	}
	if interactive(io, f.headless) {
		return runInteractive(ctx, io, s, grader, status, est, concurrency, f, path, resumeCmd)
	}
	if s.simulated() {
		fmt.Fprintln(io.Err, report.SimulatedBanner)
	}
	writePlanSummary(io.Err, s, est, f.budget)
	if est.AnswerCalls > 0 {
		// Before answers are bought, say what they can detect.
		writePlanPower(io.Err, est)
	}
	if est.Calls > 0 && !f.yes {
		ok, err := confirm(io, fmt.Sprintf("Make %d calls (about $%.2f)? [y/N] ", est.Calls, est.USD))
		if err != nil {
			return err
		}
		if !ok {
			return &exitError{code: exitOK, msg: ""}
		}
	}

	pending, err := s.prepareCalls(status, f.simLatency)
	if err != nil {
		return err
	}

	stopped := runner.Stopped{Reason: runner.Completed}
	if pending > 0 {
		w := s.st.NewWriter(storeWriterOptions())
		sink := &audit.Sink{Grader: grader, Writer: w}
		opts := runner.Options{
			Concurrency: concurrency,
			Timeout:     callTimeout(s.audit.File.Models),
			MaxWait:     f.maxWait,
			Budget:      f.budget,
			Skip:        func(i int) bool { return status[s.plan.Calls[i].Key] },
		}
		// Until runAudit returns: judging and the report after the run
		// are bounded too. The limit is process-wide; the CLI runs one
		// command per process.
		defer limitRunMemory()()
		stopped = followRun(io.Err, runner.Run(ctx, s.plan.Calls, sink, opts), pending, concurrency, f.budget)
		if err := w.Close(); err != nil {
			return fmt.Errorf("saving answers: %w", err)
		}
		for _, e := range sink.GradeErrors() {
			fmt.Fprintf(io.Err, "grading: %v\n", e)
		}
	}
	return finishRun(ctx, io, s, grader, stopped, concurrency, f, path, resumeCmd)
}

// finishRun is what every run does once its answers are in, on the screen
// or headless: the judges (when the answers completed), the stability
// re-asks, then the results table and the exit code.
func finishRun(ctx context.Context, io Stdio, s *session, grader *audit.Grader, stopped runner.Stopped,
	concurrency int, f runFlags, path, resumeCmd string) error {
	var err error
	if stopped.Reason == runner.Completed {
		budget := f.budget
		if budget > 0 {
			budget = max(budget-stopped.Spent, 1e-9)
		}
		jo := judgeOptions{concurrency: concurrency, budget: budget, maxWait: f.maxWait, simLatency: f.simLatency}
		if stopped, err = runJudges(ctx, io, s, jo); err != nil {
			return err
		}
		if f.rejudge > 0 && stopped.Reason == runner.Completed {
			if err := runRejudge(ctx, io, s, f.rejudge, jo); err != nil {
				return err
			}
		}
	}

	// Answers whose grading failed during the run are graded again from
	// the tally the results come from, so status and grades are read once.
	tally, err := audit.NewTally(s.plan, s.st)
	if err != nil {
		return err
	}
	if _, err := grader.RegradeTally(tally, s.st); err != nil {
		fmt.Fprintf(io.Err, "re-grading: %v\n", err)
	}
	res, err := tally.Results()
	if err != nil {
		return err
	}
	spend, err := s.spend()
	if err != nil {
		return err
	}
	if err := report.WriteText(io.Out, res, spend, s.simulated()); err != nil {
		return err
	}
	return runOutcome(io, stopped, res, f, path, resumeCmd)
}

// runMemoryFloor is the least soft memory limit a run sets: small runs
// stay below it and pay for no extra garbage collection.
const runMemoryFloor = 64 << 20

// runMemoryFactor is the soft memory limit of a run as a multiple of the
// live heap when it starts.
const runMemoryFactor = 1.75

// limitRunMemory sets a soft limit on the Go memory of the process for a
// run and returns the function that restores the previous limit. A user's
// GOMEMLIMIT wins: then it does nothing.
//
// Why: when a run starts, the live heap is mostly the plan (about 400 bytes
// a call) and the audit, and both stay live to the end. On top of them a run
// churns through short-lived memory (B-tree pages materialised for each
// commit, answers waiting to be saved) and ends by loading the tally of
// every answer, so the live heap peaks at about 1.4 times its size at the
// start. Go's default pacing (GOGC=100) lets the heap grow to twice the
// live heap between collections: 100,000 calls would hold about 120 MB of
// heap for 60 MB of data. Capping the process at 1.75 times the starting
// heap (never below runMemoryFloor) makes the collector run more often only
// as the cap nears. The limit is soft: live data is never refused, and the
// runtime bounds the collector's share of CPU if live data approaches it.
func limitRunMemory() (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	runtime.GC() // so that the live heap is measured, not last cycle's
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	limit := int64(runMemoryFloor)
	if live[0].Value.Kind() == metrics.KindUint64 {
		limit = max(limit, int64(float64(live[0].Value.Uint64())*runMemoryFactor))
	}
	prev := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(prev) }
}

// runOutcome turns how the run ended into an exit code and, when the run
// did not finish, the exact command that resumes it.
func runOutcome(io Stdio, st runner.Stopped, res *audit.Results, f runFlags, path, resumeCmd string) error {
	resume := resumeCommand(resumeCmd, path, f)
	switch st.Reason {
	case runner.Completed:
	case runner.Cancelled:
		fmt.Fprintf(io.Err, "\nInterrupted: %d calls finished and stored, %d not made. Resume with:\n  %s\n", st.Done, st.Remaining, resume)
		return &exitError{code: exitInterrupted}
	default:
		fmt.Fprintf(io.Err, "\nStopped (%s): %s. %d calls stored, %d not made. Resume with:\n  %s\n", st.Reason, st.Detail, st.Done, st.Remaining, resume)
		return &exitError{code: exitFailed}
	}
	errors := 0
	for _, rr := range res.Rules {
		errors += rr.Errors
	}
	if errors > 0 {
		fmt.Fprintf(io.Err, "\n%d answers failed for good and are not in the numbers; run again to retry them:\n  %s\n", errors, resume)
		return &exitError{code: exitFailed}
	}
	if f.gate {
		return gateError(res)
	}
	return nil
}

// resumeCommand rebuilds the command line that continues this run.
func resumeCommand(base, path string, f runFlags) string {
	parts := []string{base, shellQuote(path), "--yes"}
	if f.headless {
		parts = append(parts, "--headless")
	}
	if f.samples > 0 {
		parts = append(parts, fmt.Sprintf("--samples %d", f.samples))
	}
	if f.concurrency > 0 {
		parts = append(parts, fmt.Sprintf("--concurrency %d", f.concurrency))
	}
	if f.budget > 0 {
		parts = append(parts, fmt.Sprintf("--budget %g", f.budget))
	}
	if f.gate {
		parts = append(parts, "--gate")
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func callTimeout(models []model.ModelConfig) time.Duration {
	var t float64
	for _, m := range models {
		t = max(t, m.TimeoutSeconds)
	}
	if t <= 0 {
		return 0 // the runner's default
	}
	return time.Duration(t * float64(time.Second))
}

// confirm asks a yes/no question on the terminal. Without a terminal there
// is nobody to answer, so it refuses rather than spending money silently.
func confirm(io Stdio, question string) (bool, error) {
	if f, ok := io.In.(*os.File); !ok || !isTerminal(f) {
		return false, &usageError{fmt.Errorf("this run makes paid calls and there is no terminal to confirm on: add --yes")}
	}
	fmt.Fprint(io.Err, question)
	line, err := bufio.NewReader(io.In).ReadString('\n')
	if err != nil {
		return false, nil
	}
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes", nil
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// followRun prints a progress line about once a second and returns how the
// run stopped.
func followRun(w io.Writer, events <-chan runner.Event, total, concurrency int, budget float64) runner.Stopped {
	var (
		done, failed, retries int
		limit                 = concurrency
		spent                 float64
		last                  runner.Stopped
		start                 = time.Now()
		lastPrint             = start
	)
	print := func() {
		el := time.Since(start)
		rate := float64(done) / max(el.Seconds(), 1e-9)
		eta := "-"
		if rate > 0 && done < total {
			eta = time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
		}
		b := ""
		if budget > 0 {
			b = fmt.Sprintf(" of $%.2f", budget)
		}
		fmt.Fprintf(w, "[%*d/%d] %3.0f%%  %6.1f calls/s  eta %-6s $%.2f%s  concurrency %d  retries %d  errors %d\n",
			len(fmt.Sprint(total)), done, total, 100*float64(done)/float64(max(total, 1)), rate, eta, spent, b, limit, retries, failed)
	}
	for ev := range events {
		switch e := ev.(type) {
		case runner.Finished:
			done++
			spent += e.Cost
			if !e.Response.OK() {
				failed++
				fmt.Fprintf(w, "call failed for good after %d attempts: %s\n", e.Response.Attempts, model.Sanitize(e.Response.Error))
			}
		case runner.Retrying:
			retries++
		case runner.ConcurrencyChanged:
			limit = e.Limit
		case runner.Stopped:
			last = e
		}
		if time.Since(lastPrint) >= time.Second {
			lastPrint = time.Now()
			print()
		}
	}
	print()
	return last
}

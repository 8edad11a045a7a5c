package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/workbench"
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
	// retryTruncated asks again the calls whose answers were truncated or
	// empty; requestLog names the file --request-log (or --debug) records
	// every request and response in, key redacted.
	retryTruncated bool
	requestLog     string
	// batch sends the answer calls through the providers' batch APIs.
	batch bool
	// allowLarge lays out a plan above audit.MaxCells.
	allowLarge bool
	// allowExec approves the audit's [exec] predicate commands.
	allowExec bool
	// allowExecOutside names the folders outside the audit folder that an
	// approved command may load files from.
	allowExecOutside []string
	// allowUnpriced runs calls to endpoints without prices under a budget.
	allowUnpriced bool
	// adaptive makes the answers in rounds by look and stops each line at
	// the look that settles it.
	adaptive bool
	// ship is set for `auditor ship`: the run ends with the joint test's
	// decision.
	ship *shipFlags
}

func newRunCmd(std Stdio) *cobra.Command {
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
(budget, quota); 2 bad input; 3 with --gate when any verdict is not DELETE, a regression case broke or a case has no graded answers;
130 interrupted.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.requestLog = requestLogPath(cmd, f, args[0])
			return runAudit(cmd.Context(), std, args[0], f, os.Args[0]+" run")
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
	c.Flags().Float64Var(&f.budget, "budget", 0, "the most the whole audit may spend in dollars, counting what is stored (overrides budget in audit.toml; left out: that, else none)")
	c.Flags().BoolVar(&f.gate, "gate", false, "exit 3 when any line's verdict is not DELETE, its change broke a regression case, or a case of it has no graded answers (for CI)")
	c.Flags().DurationVar(&f.maxWait, "max-wait", 10*time.Minute, "how long a call keeps retrying transient failures (429, 5xx, resets), and the longest Retry-After to sit out; a longer one stops the run")
	c.Flags().DurationVar(&f.simLatency, "sim-latency", 0, "mean answer latency of the simulated model")
	c.Flags().IntVar(&f.rejudge, "rejudge", 0, "after the run, ask each judge again about this many graded answers and report how often it flips")
	c.Flags().BoolVar(&f.retryTruncated, "retry-truncated", false, "ask again the calls whose answers were cut off by the token limit or came back empty (biases rates toward short answers; raising max_tokens is better)")
	c.Flags().BoolVar(&f.allowLarge, "allow-large", false, fmt.Sprintf("lay out and run a plan above %d cells (refused otherwise, even with --yes)", audit.MaxCells))
	c.Flags().BoolVar(&f.allowExec, "allow-exec", false, "approve the [exec] predicate commands this audit runs (recorded in ~/.config/auditor/exec-approvals; without it they are refused, or asked about on a terminal)")
	c.Flags().StringSliceVar(&f.allowExecOutside, "allow-exec-outside", nil, "with --allow-exec: a folder outside the audit folder that an [exec] command names files in; the approval covers every file under it (repeat for several)")
	c.Flags().BoolVar(&f.batch, "batch", false, "send the answer calls through the provider's batch API (half price, answered within 24 hours); a later run collects them")
	c.Flags().BoolVar(&f.adaptive, "adaptive", false, "make the answers in rounds, one per look of the audit's design (looks or adaptive in audit.toml), and stop each line at the look that settles it")
	addAllowUnpricedFlag(c, &f.allowUnpriced)
	addRequestLogFlags(c, f)
}

// addAllowUnpricedFlag adds --allow-unpriced, which lets a run or a pilot
// under a budget call a model or judge the audit file gives no prices for.
func addAllowUnpricedFlag(c *cobra.Command, dst *bool) {
	c.Flags().BoolVar(dst, "allow-unpriced", false, "under a budget, call models and judges without prices anyway (their calls count as $0, which is not what they cost)")
}

// addRequestLogFlags adds --request-log and --debug, which record every
// request and response of the run's providers.
func addRequestLogFlags(c *cobra.Command, f *runFlags) {
	c.Flags().StringVar(&f.requestLog, "request-log", "", "record every HTTP request and response (API key redacted) in this file, one JSON object a line")
	c.Flags().Bool("debug", false, "same as --request-log auditor-requests.jsonl beside the audit file")
}

// requestLogPath is the file the run's requests are logged to: --request-log,
// else with --debug auditor-requests.jsonl beside the audit file; "" for
// none.
func requestLogPath(c *cobra.Command, f runFlags, auditPath string) string {
	if f.requestLog != "" {
		return f.requestLog
	}
	if debug, _ := c.Flags().GetBool("debug"); debug {
		return filepath.Join(filepath.Dir(audit.FilePath(auditPath)), "auditor-requests.jsonl")
	}
	return ""
}

// exactArgs is cobra.ExactArgs with errors that map to exit code 2.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return &usageError{fmt.Errorf("%s takes %d argument(s), got %d", cmd.Name(), n, len(args)), cmd.CommandPath()}
		}
		return nil
	}
}

// checkRunFlags bounds the numbers a user types like the audit file's
// fields, before anything is built: a typo in --samples must not allocate
// millions of cells, and a negative --max-wait must not mean the default.
func checkRunFlags(f runFlags) error {
	switch {
	case f.samples < 0 || f.samples > model.MaxSamples:
		return &usageError{fmt.Errorf("--samples %d: need 1 to %d", f.samples, model.MaxSamples), ""}
	case f.concurrency < 0 || f.concurrency > model.MaxConcurrency:
		return &usageError{fmt.Errorf("--concurrency %d: need 1 to %d", f.concurrency, model.MaxConcurrency), ""}
	case f.budget < 0 || math.IsNaN(f.budget) || math.IsInf(f.budget, 0):
		return &usageError{fmt.Errorf("--budget %g: need a number of dollars above 0", f.budget), ""}
	case f.maxWait < 0:
		return &usageError{fmt.Errorf("--max-wait %s: cannot be negative", f.maxWait), ""}
	case f.rejudge < 0:
		return &usageError{fmt.Errorf("--rejudge %d: cannot be negative", f.rejudge), ""}
	}
	return nil
}

// runAudit is `auditor run`: plan, confirm, run, grade, report.
func runAudit(ctx context.Context, std Stdio, path string, f runFlags, resumeCmd string) error {
	if err := checkRunFlags(f); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := openForRun(ctx, std, path, f)
	if err != nil {
		return err
	}
	defer s.Close()
	sayOpened(std, s, path)
	if err := sayNotices(std, s); err != nil {
		return err
	}

	concurrency := s.Audit.File.Concurrency
	if f.concurrency > 0 {
		concurrency = f.concurrency
	}
	if d, _ := s.Plan.Design(); f.adaptive && !d.Sequential() {
		return &usageError{fmt.Errorf("--adaptive needs looks declared in %s before any answer is seen: add adaptive = true (%d looks) or looks = N; every report and screen reads the design from the file", path, model.DefaultAdaptiveLooks), ""}
	}
	ro := workbench.RunOptions{Concurrency: concurrency, Budget: f.budget, MaxWait: f.maxWait,
		SimLatency: f.simLatency, Rejudge: f.rejudge, RetryTruncated: f.retryTruncated, Adaptive: f.adaptive}
	if f.requestLog != "" {
		rl, err := runner.OpenRequestLog(f.requestLog)
		if err != nil {
			return err
		}
		defer func() {
			if err := rl.Close(); err != nil {
				fmt.Fprintf(std.Err, "request log %s: %v\n", f.requestLog, err)
			}
		}()
		ro.RequestLog = rl
		fmt.Fprintf(std.Err, "logging every request and response to %s (API keys redacted)\n", f.requestLog)
	}
	if err := collectBatches(ctx, std, s, ro); err != nil {
		return err
	}
	status, err := s.Status()
	if err != nil {
		return err
	}
	done, err := s.CallsDone(status, f.retryTruncated)
	if err != nil {
		return err
	}
	est, err := s.Estimate(done, concurrency, f.simLatency, true)
	if err != nil {
		return err
	}
	budget, err := s.Budget(f.budget)
	if err != nil {
		return err
	}
	if budget.Total > 0 {
		fmt.Fprintln(std.Err, budget)
		if budget.Exhausted() && est.Calls > 0 {
			return &exitError{code: exitFailed, msg: fmt.Sprintf("the audit's budget is spent (%s); %d calls are left to make: raise the budget to go on", budget, est.Calls)}
		}
	}
	if budget.Total > 0 && est.Calls > 0 && !f.allowUnpriced {
		if err := s.RefuseUnpriced(est.Unpriced, budget); err != nil {
			return err
		}
	}
	ro.Budget = budget.Left
	if budget.Exhausted() {
		ro.Budget = 1e-9 // nothing left still limits: 0 would mean no budget
	}
	if f.batch {
		if submitted, err := submitBatches(ctx, std, s, ro, est, f, path, resumeCmd); submitted || err != nil {
			return err
		}
	}
	if interactive(std, f.headless) {
		return runInteractive(ctx, std, s, status, est, ro, f, path, resumeCmd)
	}
	if s.Simulated() {
		fmt.Fprintln(std.Err, report.SimulatedBanner)
	}
	if err := report.WritePlan(std.Err, s.Audit, est, ro.Budget); err != nil {
		return err
	}
	if est.AnswerCalls > 0 {
		// Before answers are bought, say what they can detect.
		if err := report.WritePlanPower(std.Err, est); err != nil {
			return err
		}
	}
	if est.Calls > 0 && !f.yes {
		ok, err := confirm(std, fmt.Sprintf("Make %d calls (about $%.2f)? [y/N] ", est.Calls, est.USD))
		if err != nil {
			return err
		}
		if !ok {
			return &exitError{code: exitOK, msg: ""}
		}
	}
	out, err := s.Run(ctx, ro, report.NewProgress(std.Err, concurrency, ro.Budget))
	if err != nil {
		return err
	}
	return finishRun(std, s, out, f, path, resumeCmd)
}

// warnPlaceholders is plan's warning about the examples init wrote that a
// run refuses to start on.
func warnPlaceholders(std Stdio, s *workbench.Session) {
	if pe := s.Placeholders(); pe != nil {
		fmt.Fprintf(std.Err, "warning: %s\nauditor run refuses to start until they are replaced.\n", pe)
	}
}

// sayNotices tells the user, before any call, where calls go when the
// audit file leaves it to a default ($OPENAI_BASE_URL) or sends no key. An
// endpoint that cannot be used is an error naming the audit file's line.
func sayNotices(std Stdio, s *workbench.Session) error {
	notes, err := s.Notices()
	for _, n := range notes {
		fmt.Fprintf(std.Err, "note: %s\n", n)
	}
	return err
}

// sayRegraded tells the user when opening the audit graded stored answers
// with an edited predicate.
func sayRegraded(std Stdio, s *workbench.Session) {
	switch {
	case s.Regraded > 0 && s.ReadOnly():
		fmt.Fprintf(std.Err, "re-graded %d stored answers with the current predicates (no calls; not stored, as the store is read-only here)\n", s.Regraded)
	case s.Regraded > 0:
		fmt.Fprintf(std.Err, "re-graded %d stored answers with the current predicates (no calls)\n", s.Regraded)
	}
}

// finishRun is what every run does once its calls are over, on the screen
// or headless: the results table, the judges' stability when they were
// re-asked, and the exit code. It makes no calls.
func finishRun(std Stdio, s *workbench.Session, out workbench.Outcome, f runFlags, path, resumeCmd string) error {
	// A broken grader fails every answer alike: a few of its messages say
	// it, hundreds would bury the rest of the output.
	const shownGradeErrors = 5
	for i, e := range out.GradeErrors {
		if i == shownGradeErrors {
			fmt.Fprintf(std.Err, "grading: ... and %d more answers could not be graded\n", len(out.GradeErrors)-shownGradeErrors)
			break
		}
		fmt.Fprintf(std.Err, "grading: %v\n", e)
	}
	if st, stopped := out.Stop(); stopped && (st.Reason == runner.SystematicFailure || st.Reason == runner.AuthFailed) {
		// Nothing new to report: every call failed the same way. One
		// message, not a table of empty rows above it.
		return runOutcome(std, out, nil, nil, f, path, resumeCmd)
	}
	// Answers whose grading failed during the run are graded again from
	// the stored text.
	regradeErr := s.Refresh()
	if regradeErr != nil && s.Tally == nil {
		return regradeErr
	}
	if regradeErr != nil {
		fmt.Fprintf(std.Err, "%v\n", regradeErr)
	}
	res, err := s.Results()
	if err != nil {
		return err
	}
	spend, err := s.Spend()
	if err != nil {
		return err
	}
	if err := report.WriteText(std.Out, res, spend, s.Simulated()); err != nil {
		return err
	}
	if out.Stability != nil {
		if err := report.WriteStability(std.Out, out.Stability); err != nil {
			return err
		}
	}
	return runOutcome(std, out, res, regradeErr, f, path, resumeCmd)
}

// runOutcome turns how the run ended into an exit code and, when the run
// did not finish, the exact command that resumes it.
func runOutcome(std Stdio, out workbench.Outcome, res *evidence.Results, regradeErr error, f runFlags, path, resumeCmd string) error {
	resume := resumeCommand(resumeCmd, path, f)
	if st, stopped := out.Stop(); stopped {
		if st.Reason == runner.Cancelled {
			fmt.Fprintf(std.Err, "\nInterrupted: %d calls finished and stored, %d not made. Resume with:\n  %s\n", st.Done, st.Remaining, resume)
			return &exitError{code: exitInterrupted}
		}
		detail := strings.TrimRight(st.Detail, ". ")
		if st.Reason == runner.SystematicFailure || st.Reason == runner.AuthFailed {
			// Every other call would fail the same way: one message, and
			// what to fix, rather than a resume that repeats it.
			fmt.Fprintf(std.Err, "\nStopped (%s): %s.\nNo more calls were made (%d stored, %d not made). Fix this, then run again:\n  %s\n",
				st.Reason, detail, st.Done, st.Remaining, resume)
			return &exitError{code: exitFailed}
		}
		fmt.Fprintf(std.Err, "\nStopped (%s): %s. %d calls stored, %d not made. Resume with:\n  %s\n", st.Reason, detail, st.Done, st.Remaining, resume)
		return &exitError{code: exitFailed}
	}
	truncated := 0
	for _, rr := range res.Rules {
		truncated += rr.Truncated
	}
	if truncated > 0 {
		fmt.Fprintf(std.Err, "\n%d answers were cut off by the token limit or came back empty: %s.\n", truncated, report.TruncatedAdvice)
	}
	if n := out.Answers.Stopped.TooLarge + out.Judges.Stopped.TooLarge + out.Rejudge.Stopped.TooLarge; n > 0 {
		fmt.Fprintf(std.Err, "\n%d responses of this run were larger than any answer within their token limit (1 MiB + 64 bytes a token): "+
			"auditor stopped reading them, and they are settled like answers cut off (not graded, not asked again; too_large in exports). "+
			"No model writes that much: check that base_url is the model's API.\n", n)
	}
	failed := 0
	for _, rr := range res.Rules {
		failed += rr.Errors
	}
	if failed > 0 {
		fmt.Fprintf(std.Err, "\n%d answers failed for good and are not in the numbers; run again to retry them:\n  %s\n", failed, resume)
		return &exitError{code: exitFailed}
	}
	if n := out.Judges.Stopped.Settled + out.Rejudge.Stopped.Settled; n > 0 {
		fmt.Fprintf(std.Err, "\n%d judge answers were cut off by the judge's token limit or came back empty: settled, not counted as grades and not asked again (raise the judge's max_tokens, or --retry-truncated asks them again).\n", n)
	}
	if n := out.Judges.Stopped.Failed + out.Rejudge.Stopped.Failed; n > 0 {
		fmt.Fprintf(std.Err, "\n%d judge calls failed for good; run again to retry them:\n  %s\n", n, resume)
		return &exitError{code: exitFailed}
	}
	if regradeErr != nil || len(out.GradeErrors) > 0 {
		return &exitError{code: exitFailed, msg: "some answers could not be graded (see above); they are not in the numbers"}
	}
	if f.ship != nil {
		return shipOutcome(std, res, *f.ship, f.gate, resumeCmd, path)
	}
	writeNextSteps(std, strings.TrimSuffix(resumeCmd, " run"), path, len(res.Plan.Audit.Judges) > 0, undecided(res))
	if f.gate {
		return gateError(res)
	}
	return nil
}

// undecided counts the lines whose verdict is INCONCLUSIVE: the only ones
// labels can settle (KEEP, DELETE and CANARY are what they are; a WORSE
// rewording is decided).
func undecided(res *evidence.Results) int {
	n := 0
	for _, rr := range res.Rules {
		if rr.Verdict.Decision == model.DecisionInconclusive {
			n++
		}
	}
	return n
}

// writeNextSteps ends a finished run with the commands a user types next,
// on the audit's real path; labelling is offered only while a line is
// undecided. It goes to standard error, like the progress, so standard
// output stays the report alone.
func writeNextSteps(std Stdio, prog, path string, judges bool, undecided int) {
	if strings.Contains(prog, "go-build") {
		prog = "go run ./cmd/auditor" // `go run` built it in a temporary directory
	}
	p := shellQuote(path)
	label := ""
	if undecided > 0 {
		label = fmt.Sprintf(`
  label the blind answers each undecided line needs (no line reaches DELETE without blind labels):
    %s label %s --for-verdict`, prog, p)
	}
	review := ""
	if judges {
		review = fmt.Sprintf(`
  read the answers where the predicate and the judges disagree:
    %s review %s`, prog, p)
	}
	fmt.Fprintf(std.Err, `
Next:
  browse the grid, any answer, and the prompt marked with verdicts:
    %[1]s open %[2]s%[3]s%[4]s
  the prompt without every DELETE line, tested together and decided as one (SHIP / NOT SAFE):
    %[1]s ship %[2]s
  the verdicts and their evidence for a pull request:
    %[1]s report %[2]s --format md
`, prog, p, label, review)
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
	if f.retryTruncated {
		parts = append(parts, "--retry-truncated")
	}
	if f.batch {
		parts = append(parts, "--batch")
	}
	if f.allowUnpriced {
		parts = append(parts, "--allow-unpriced")
	}
	if f.ship != nil && len(f.ship.lines) > 0 {
		parts = append(parts, "--lines "+joinInts(f.ship.lines))
	}
	if f.ship != nil && f.ship.out != "" {
		parts = append(parts, "--out "+shellQuote(f.ship.out))
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

// confirm asks a yes/no question on the terminal. Without a terminal there
// is nobody to answer, so it refuses rather than spending money silently.
func confirm(std Stdio, question string) (bool, error) {
	if f, ok := std.In.(*os.File); !ok || !isTerminal(f) {
		return false, &refusal{fmt.Errorf("this run makes calls and there is no terminal to confirm on: add --yes")}
	}
	fmt.Fprint(std.Err, question)
	line, err := bufio.NewReader(std.In).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	if yes := a == "y" || a == "yes"; yes && err == nil {
		return true, nil
	}
	fmt.Fprintln(std.Err, "Not run.")
	return false, nil
}

// isTerminal reports whether f is a terminal a person types at: /dev/null
// is a character device too, and must not count as someone saying no.
func isTerminal(f *os.File) bool {
	return term.IsTerminal(f.Fd())
}

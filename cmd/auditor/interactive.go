package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/tui"
)

// demoSimLatency is the simulated model's mean latency in the interactive
// demo, so the grid visibly fills in; headless demos answer at once.
const demoSimLatency = 40 * time.Millisecond

// interactive reports whether a command shows the interactive screen:
// --headless is not set and standard output is a terminal.
func interactive(io Stdio, headless bool) bool {
	if headless {
		return false
	}
	f, ok := io.Out.(*os.File)
	return ok && isTerminal(f)
}

// runInteractive is `auditor run` on a terminal, from the plan on: the
// plan screen asks for y (unless --yes), the grid follows the answers and
// then the judges, and once the program exits, what finished is stored, the
// judging left undone (the user quit) is finished, and the report and, if
// the run did not finish, the command that resumes it are printed.
func runInteractive(ctx context.Context, io Stdio, s *session, grader *audit.Grader, status map[string]bool,
	est audit.Estimate, concurrency int, f runFlags, path, resumeCmd string) error {
	pending, err := s.prepareCalls(status, f.simLatency)
	if err != nil {
		return err
	}
	tally, err := audit.NewTally(s.plan, s.st)
	if err != nil {
		return err
	}

	w := s.st.NewWriter(storeWriterOptions())
	sink := &audit.Sink{Grader: grader, Writer: w}
	opts := runner.Options{
		Concurrency: concurrency,
		Timeout:     callTimeout(s.audit.File.Models),
		MaxWait:     f.maxWait,
		Budget:      f.budget,
		Skip:        func(i int) bool { return status[s.plan.Calls[i].Key] },
	}
	defer limitRunMemory()()
	// The judges run on the screen once the answers complete; set before
	// the feed closes.
	var onScreen screenRun
	start := screenStart(io, s, sink, w, opts, judgeOptions{
		concurrency: concurrency, budget: f.budget, maxWait: f.maxWait, simLatency: f.simLatency,
	}, &onScreen)
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	// Predicate edits saved during the run are applied when it ends: the
	// run's grader reads the predicates meanwhile.
	edits := startWatching(runCtx, io, s)
	// The app updates its Stored as answers arrive while the runner's Skip
	// reads status: each gets its own map.
	app, err := tui.New(tui.Options{
		Plan: s.plan, Tally: tally, Stored: maps.Clone(status), Estimate: est, Responses: s.st,
		Simulated: s.simulated(), Budget: f.budget, Start: start, Calls: pending,
		Context: runCtx, AutoStart: f.yes,
		Labelling: labellingOptions(s, edits, appScreen{labeller: defaultLabeller()}),
		Spend:     storedSpend(s),
	})
	if err != nil {
		w.Close()
		return err
	}
	_, runErr := tea.NewProgram(app, tea.WithContext(ctx), tea.WithInput(io.In), tea.WithOutput(io.Out)).Run()

	// The app cancels a run the user stops; cancel here too in case the
	// program ended another way, then wait for the run to wind down.
	cancelRun()
	feed := app.Feed()
	if feed == nil {
		if err := w.Close(); err != nil {
			return fmt.Errorf("saving answers: %w", err)
		}
		if runErr != nil && !quietEnd(runErr) {
			return fmt.Errorf("interactive screen: %w", runErr)
		}
		if pending > 0 {
			return &exitError{code: exitOK} // left at the plan: nothing run, nothing to report
		}
	}
	stopped := runner.Stopped{Reason: runner.Completed}
	if feed != nil {
		<-feed.Done()
		// The answers' outcome decides what finishRun does; what the judges
		// left undone on the screen (the user quit) it judges now.
		stopped = onScreen.answers
		stopped.Spent += onScreen.judgeSpent
		if onScreen.judgeErr != nil {
			fmt.Fprintf(io.Err, "judging: %v\n", onScreen.judgeErr)
		}
		if err := w.Close(); err != nil {
			return fmt.Errorf("saving answers: %w", err)
		}
		for _, e := range sink.GradeErrors() {
			fmt.Fprintf(io.Err, "grading: %v\n", e)
		}
	}
	if runErr != nil && !quietEnd(runErr) {
		fmt.Fprintf(io.Err, "interactive screen: %v\n", runErr)
	}

	// From here on as `auditor run --headless`: judges, then the report.
	return finishRun(ctx, io, s, grader, stopped, concurrency, f, path, resumeCmd)
}

// quietEnd reports whether the program ended by a signal or cancellation,
// which the run's outcome already explains.
func quietEnd(err error) bool {
	return errors.Is(err, tea.ErrInterrupted) || errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled)
}

func newOpenCmd(io Stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "open AUDIT",
		Short: "Browse stored results in the interactive screen, without making calls",
		Long: `Open the interactive screen on what is stored for the audit: the grid of cases by
variant, the samples behind each cell with their responses, and the system
prompt with each audited line's verdict. No calls are made; answers are
re-graded first if a predicate changed. Needs a terminal.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return openAudit(cmd.Context(), io, args[0])
		},
	}
}

// openAudit is `auditor open`: the app on stored results, with no run.
func openAudit(ctx context.Context, io Stdio, path string) error {
	return openStored(ctx, io, path, "open", appScreen{labeller: defaultLabeller()})
}

// openStored opens the app on stored results, on the screen o names; name
// is the command, for the message when there is no terminal.
func openStored(ctx context.Context, io Stdio, path, name string, o appScreen) error {
	if !interactive(io, false) {
		return &usageError{fmt.Errorf("%s needs a terminal; for text use: auditor report %s", name, shellQuote(path))}
	}
	s, err := loadAudit(path, 0)
	if err != nil {
		return err
	}
	if err := s.openStore(); err != nil {
		return err
	}
	defer s.close()
	grader := audit.NewGrader(ctx, s.plan)
	defer grader.Close()
	// One tally serves re-grading and the screen: status and grades are
	// read once, which is most of the time it takes to open a large store.
	tally, err := audit.NewTally(s.plan, s.st)
	if err != nil {
		return err
	}
	if n, err := grader.RegradeTally(tally, s.st); err != nil {
		return fmt.Errorf("re-grading stored answers: %w", err)
	} else if n > 0 {
		fmt.Fprintf(io.Err, "re-graded %d stored answers with the current predicates (no calls)\n", n)
	}
	status, err := s.status()
	if err != nil {
		return err
	}
	// No history: reading every stored response to refine the estimate
	// would make opening a large store slow, and nothing is run from here.
	est := s.plan.Estimate(status, s.audit.File.Concurrency, audit.History{}, 0)
	return runApp(ctx, io, s, tally, status, est, o)
}

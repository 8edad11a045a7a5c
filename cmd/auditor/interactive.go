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
	"github.com/auditor-dev/auditor/tui"
	"github.com/auditor-dev/auditor/workbench"
)

// demoSimLatency is the simulated model's mean latency in the interactive
// demo, so the grid visibly fills in; headless demos answer at once.
const demoSimLatency = 40 * time.Millisecond

// interactive reports whether a command shows the interactive screen:
// --headless is not set and standard output is a terminal.
func interactive(std Stdio, headless bool) bool {
	if headless {
		return false
	}
	f, ok := std.Out.(*os.File)
	return ok && isTerminal(f)
}

// runInteractive is `auditor run` on a terminal, from the plan on: the
// plan screen asks for y (unless --yes), and the run (answers, judges,
// re-asks) follows on the grid. Once the program exits the run has ended,
// however it ended: nothing more is called. The report and, if the run did
// not finish, the command that resumes it are printed.
func runInteractive(ctx context.Context, std Stdio, s *workbench.Session, status map[string]bool,
	est audit.Estimate, ro workbench.RunOptions, f runFlags, path, resumeCmd string) error {
	// The run writes out and runErr before it closes the feed.
	var out workbench.Outcome
	var runErr error
	start := func(ctx context.Context, feed *tui.Feed) {
		go func() {
			defer feed.Close()
			out, runErr = s.Run(ctx, ro, feed)
		}()
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	// Predicate edits saved during the run are applied when it ends: the
	// run's grader reads the predicates meanwhile.
	edits := startWatching(runCtx, std, s)
	// The header counts the whole audit's spend: what earlier runs stored.
	before, err := s.Spend()
	if err != nil {
		return err
	}
	// The app updates its Stored as answers arrive: it gets its own map.
	app, err := tui.New(tui.Options{
		Plan: s.Plan, Tally: s.Tally, Stored: maps.Clone(status), Estimate: est, Responses: s.Store,
		Simulated: s.Simulated(), Budget: ro.Budget, Start: start, Calls: est.Calls, SpentBefore: before.TotalUSD,
		Context: runCtx, AutoStart: f.yes,
		Labelling: labellingOptions(s, edits, appScreen{labeller: defaultLabeller()}),
		Spend:     s.Spend,
	})
	if err != nil {
		return err
	}
	_, progErr := tea.NewProgram(app, tea.WithContext(ctx), tea.WithInput(std.In), tea.WithOutput(std.Out)).Run()
	fileErr := saveLabelFile(s)

	// The app cancels a run the user stops; cancel here too in case the
	// program ended another way, then wait for the run to wind down.
	cancelRun()
	if progErr != nil && !quietEnd(progErr) {
		fmt.Fprintf(std.Err, "interactive screen: %v\n", progErr)
	}
	feed := app.Feed()
	if feed == nil {
		if est.Calls > 0 {
			return &exitError{code: exitOK} // left at the plan: nothing run, nothing to report
		}
	} else {
		<-feed.Done()
		if runErr != nil {
			return errors.Join(runErr, fileErr)
		}
	}
	if err := finishRun(std, s, out, f, path, resumeCmd); err != nil {
		if fileErr != nil {
			fmt.Fprintln(std.Err, fileErr)
		}
		return err
	}
	return fileErr
}

// quietEnd reports whether the program ended by a signal or cancellation,
// which the run's outcome already explains.
func quietEnd(err error) bool {
	return errors.Is(err, tea.ErrInterrupted) || errors.Is(err, tea.ErrProgramKilled) || errors.Is(err, context.Canceled)
}

func newOpenCmd(std Stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "open AUDIT",
		Short: "Browse stored results in the interactive screen, without making calls",
		Long: `Open the interactive screen on what is stored for the audit: the grid of cases by
variant, the samples behind each cell with their responses, and the system
prompt with each audited line's verdict. No calls are made; answers are
re-graded first if a predicate changed. Needs a terminal.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return openStored(cmd.Context(), std, args[0], "open", appScreen{labeller: defaultLabeller()})
		},
	}
}

// openStored opens the app on stored results, on the screen o names; name
// is the command, for the message when there is no terminal.
func openStored(ctx context.Context, std Stdio, path, name string, o appScreen) error {
	if !interactive(std, false) {
		return &refusal{fmt.Errorf("%s needs a terminal; for text use: auditor report %s", name, shellQuote(path))}
	}
	// A second app, or one opened during a run, reads what the writing
	// process has stored, and stores nothing.
	s, err := workbench.Open(ctx, path, workbench.Options{Access: workbench.Write, Read: true})
	if err != nil {
		return err
	}
	defer s.Close()
	sayOpened(std, s, path)
	return runApp(ctx, std, s, o)
}

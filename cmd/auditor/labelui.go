package main

import (
	"context"
	"fmt"
	"os"
	"os/user"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/tui"
	"github.com/auditor-dev/auditor/workbench"
)

// The label and review screens label to the audit's store.
var _ tui.LabelStore = (*workbench.LabelStore)(nil)

// A run on the screen reports to the app's feed.
var _ workbench.Observer = (*tui.Feed)(nil)

// appScreen says where the interactive screen opens and who labels there.
type appScreen struct {
	open     tui.Screen
	set      string // label set to show; "" for the newest
	labeller string
}

// labellingOptions are the screen's labelling options: labels and edited
// predicates go to the session's store, and predicate files are watched
// (edits channel) so an edit re-grades at once.
func labellingOptions(s *workbench.Session, edits <-chan tui.PredicateFile, o appScreen) tui.LabelOptions {
	lo := tui.LabelOptions{Labeller: o.labeller, Set: o.set, Edits: edits, Open: o.open}
	if ls := s.LabelStore(); ls != nil { // a nil pointer in the interface would not read as nil
		lo.Store = ls
	}
	return lo
}

// startWatching watches the audit's predicate files until ctx is done. A
// watcher that cannot start is reported and left out: the screen works
// without it.
func startWatching(ctx context.Context, std Stdio, s *workbench.Session) <-chan tui.PredicateFile {
	edits, err := watchPredicates(ctx, s.Audit)
	if err != nil {
		fmt.Fprintf(std.Err, "not watching predicate files for edits: %v\n", err)
		return nil
	}
	return edits
}

// runApp runs the interactive screen on stored results (no run): the grid,
// labelling and review.
func runApp(ctx context.Context, std Stdio, s *workbench.Session, o appScreen) error {
	status, err := s.Status()
	if err != nil {
		return err
	}
	// With history, as auditor plan: the stored answers' usage (not their texts).
	est, err := s.Estimate(status, s.Audit.File.Concurrency, 0, true)
	if err != nil {
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	app, err := tui.New(tui.Options{
		Plan: s.Plan, Tally: s.Tally, Stored: status, Estimate: est, Responses: s.Store, Simulated: s.Simulated(),
		Labelling:   labellingOptions(s, startWatching(wctx, std, s), o),
		Spend:       s.Spend,
		NotApproved: execNotes(s, s.Audit.Path),
		ReadOnly:    readOnly(s),
	})
	if err != nil {
		return err
	}
	_, perr := tea.NewProgram(app, tea.WithContext(ctx), tea.WithInput(std.In), tea.WithOutput(std.Out)).Run()
	ferr := saveLabelFile(s)
	if perr != nil && !quietEnd(perr) {
		return fmt.Errorf("interactive screen: %w", perr)
	}
	return ferr
}

// readOnly says what a read-only session reads, for the app; nil when it
// may write.
func readOnly(s *workbench.Session) *tui.ReadOnly {
	if !s.ReadOnly() {
		return nil
	}
	return &tui.ReadOnly{AsOf: s.Store.Reading().AsOf}
}

// saveLabelFile writes the audit's label file after the screen closed (the
// screen wrote it after every label already). The labels are safe in the
// store whatever happens here, but the file is what the repository keeps,
// so a failure is an error: the command does not exit 0.
func saveLabelFile(s *workbench.Session) error {
	if err := s.SaveLabelFile(); err != nil {
		return fmt.Errorf("labels are saved in %s, but %s was not written (the next command that labels writes it): %w", workbench.DBName, s.LabelFilePath(), err)
	}
	return nil
}

// defaultLabeller is who labels when --labeller is not given: $AUDITOR_LABELLER,
// else the user logged in.
func defaultLabeller() string {
	if s := os.Getenv("AUDITOR_LABELLER"); s != "" {
		return s
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if s := os.Getenv("USER"); s != "" {
		return s
	}
	return "unknown"
}

func newReviewCmd(std Stdio) *cobra.Command {
	var labeller string
	c := &cobra.Command{
		Use:   "review AUDIT",
		Short: "Step through the answers on which graders disagree, and decide them",
		Long: `Open the interactive screen on the review queue: the stored answers on which the
predicate and the judges disagree (any pair, or a chosen pair), one at a time,
with each grader's verdict and reasoning side by side under the message and the
response. Decide each with v (violation) or o (ok); the decision is a seen
label: stored with its history and shown as an adjudication, but it never
enters recall, precision or a verdict, because you saw the graders' verdicts
before deciding (recall comes from blind labels: auditor label). The agreement
panel (a) shows raw agreement and Cohen's kappa for every pair of graders and
each grader against the blind labels; with two or more models under test, c compares them case by case.
Where two people labelled the same answers, b steps through those they labelled
differently, both labels side by side, and the agreement panel shows their kappa.
No calls are made. Needs a terminal.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if labeller == "" {
				labeller = defaultLabeller()
			}
			return openStored(cmd.Context(), std, args[0], "review", appScreen{open: tui.ScreenReview, labeller: labeller})
		},
	}
	c.Flags().StringVar(&labeller, "labeller", "", "your name on the labels you give (default: $AUDITOR_LABELLER, else your user name)")
	return c
}

// labelInteractive is `auditor label` on a terminal without --show: the
// label screen on the set, blind. Afterwards it prints the set's progress.
func labelInteractive(ctx context.Context, std Stdio, s *workbench.Session, set labels.LabelSet, labeller string) error {
	s.Tally.AddLabelSet(set) // a set drawn just now is not in the tally yet
	if labeller == "" {
		labeller = defaultLabeller()
	}
	if err := runApp(ctx, std, s, appScreen{open: tui.ScreenLabel, set: set.Name, labeller: labeller}); err != nil {
		return err
	}
	if err := report.WriteLabelSetHeader(std.Out, set, s.Tally.Labels(), "current labels"); err != nil {
		return err
	}
	fmt.Fprintf(std.Out, "results: auditor label %s --set %s --show\n", shellQuote(s.Audit.Path), shellQuote(set.Name))
	return nil
}

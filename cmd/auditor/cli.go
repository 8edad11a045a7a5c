package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// Exit codes, as DESIGN.md gives them.
const (
	exitOK          = 0
	exitFailed      = 1 // calls failed for good, or the run stopped before finishing
	exitBadInput    = 2
	exitGate        = 3 // --gate and some verdict is not DELETE
	exitPartial     = 4 // import-labels imported some records and refused others
	exitInUse       = 5 // the audit's store is in use by another auditor process: try again later
	exitInterrupted = 130
)

// Stdio is where a command reads and writes.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// exitError carries an exit code up to Main with a message already printed
// or to print.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Main runs the auditor command line and returns the process exit code. It
// never panics on user input; tests call it directly.
func Main(args []string, std Stdio) int {
	root := newRoot(std)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	var ie *model.InputError
	var re *refusal
	switch {
	case errors.As(err, &re):
		fmt.Fprintf(std.Err, "auditor: %s\n", re.Error())
		return exitBadInput
	case errors.As(err, &ee):
		if ee.msg != "" {
			fmt.Fprintf(std.Err, "auditor: %s\n", ee.msg)
		}
		return ee.code
	case errors.As(err, &ie):
		fmt.Fprintf(std.Err, "auditor: %s\n", ie.Error())
		return exitBadInput
	case errors.Is(err, store.ErrLocked):
		fmt.Fprintf(std.Err, "auditor: %s\nOne auditor at a time uses an audit's store: quit the other (auditor open, run, label or review on this audit) and try again.\n", err)
		return exitInUse
	case isUsageError(err):
		fmt.Fprintf(std.Err, "auditor: %s\n", err)
		if help := usageHelp(err); help != "" {
			fmt.Fprintf(std.Err, "Run '%s --help' for usage.\n", help)
		}
		return exitBadInput
	default:
		fmt.Fprintf(std.Err, "auditor: %s\n", err)
		return exitFailed
	}
}

// usageError marks a bad command line (unknown flag, wrong argument count):
// exit 2. help, when set, is the command whose --help the message points
// to: only for cobra's own terse errors ("unknown flag: --sampels"); a
// message of ours says precisely what is wrong, and the pointer would only
// be noise after it.
type usageError struct {
	error
	help string
}

// refusal is a command line that is well formed but refused for a reason
// the message states with its remedy (no terminal to confirm on, an [exec]
// command not approved, a plan too large): exit 2, without the pointer to
// --help, which would only distract from the remedy.
type refusal struct{ error }

// usageHelp is the command whose --help a usage error points to, "" for
// none: cobra's own errors get the pointer, ours do not.
func usageHelp(err error) string {
	var ue *usageError
	if errors.As(err, &ue) {
		return ue.help
	}
	return "auditor"
}

// positiveFlags are the numbers for which 0 or less means nothing: each is
// refused when given so, rather than taken silently as the default (a
// typo of --samples 0 must not run the audit's 30). The text says what a
// value needs.
var positiveFlags = map[string]string{
	"samples":     "need 1 or more samples per case and variant; leave --samples out for the audit's",
	"concurrency": "need 1 or more calls in flight; leave --concurrency out for the audit's",
	"budget":      "a budget of $0 or less allows no call: give the most the audit may spend in dollars, or leave --budget out for the audit file's",
	"n":           "draw 1 or more answers; leave --n out for the default",
}

// refuseNonPositive refuses a positive flag given as 0 or less (exit 2).
func refuseNonPositive(c *cobra.Command) error {
	for name, need := range positiveFlags {
		f := c.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		v, err := strconv.ParseFloat(f.Value.String(), 64)
		if err == nil && v <= 0 {
			return &usageError{fmt.Errorf("--%s %s: %s", name, f.Value.String(), need), ""}
		}
	}
	return nil
}

func isUsageError(err error) bool {
	var ue *usageError
	if errors.As(err, &ue) {
		return true
	}
	// cobra's own argument and flag errors are plain errors; recognise them
	// by their wording so they get exit code 2, not 1.
	s := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "accepts ", "requires at least", "invalid argument", "flag needs an argument"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

func newRoot(std Stdio) *cobra.Command {
	root := &cobra.Command{
		Use:   "auditor",
		Short: "Evidence before you delete a line from a system prompt",
		Long: `auditor runs targeted cases (provoke, pressure, control) against a system prompt with
and without one of its lines, grades every answer with an acceptance predicate
written before the run, and gives each line a verdict: KEEP (load-bearing),
DELETE (no rise in failures, with enough evidence to have seen one) or
INCONCLUSIVE, with 95% intervals.

Start with 'auditor demo --headless' to see a complete audit against the
built-in simulated model.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("auditor version {{.Version}}\n")
	root.SetIn(std.In)
	root.SetOut(std.Out)
	root.SetErr(std.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err, c.CommandPath()} })
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error { return refuseNonPositive(c) }
	root.AddCommand(
		newDemoCmd(std),
		newPlanCmd(std),
		newRunCmd(std),
		newShipCmd(std),
		newReportCmd(std),
		newExportCmd(std),
		newImportLabelsCmd(std),
		newOpenCmd(std),
		newLabelCmd(std),
		newReviewCmd(std),
		newCoverageCmd(std),
		newInitCmd(std),
		newAddCmd(std),
	)
	return root
}

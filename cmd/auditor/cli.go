package main

import (
	"errors"
	"fmt"
	"io"
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
		return exitFailed
	case isUsageError(err):
		fmt.Fprintf(std.Err, "auditor: %s\nRun 'auditor --help' for usage.\n", err)
		return exitBadInput
	default:
		fmt.Fprintf(std.Err, "auditor: %s\n", err)
		return exitFailed
	}
}

// usageError marks a bad command line (unknown flag, wrong argument count).
type usageError struct{ error }

// refusal is a command line that is well formed but refused for a reason
// the message states with its remedy (no terminal to confirm on, an [exec]
// command not approved, a plan too large): exit 2, without the pointer to
// --help, which would only distract from the remedy.
type refusal struct{ error }

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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err} })
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

package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/workbench"
)

// shipFlags are the options `auditor ship` adds to run's.
type shipFlags struct {
	lines []int
	out   string
}

func newShipCmd(std Stdio) *cobra.Command {
	var f runFlags
	var sf shipFlags
	var lines string
	c := &cobra.Command{
		Use:   "ship AUDIT",
		Short: "Test the prompt without every DELETE line at once, and decide it as one",
		Long: `Test the prompt that ships: the prompt without every line whose verdict is DELETE
(or the lines --lines names; a line KEEP by its own verdict only when named), run
on every one of those lines' cases and every regression suite, and decided as
one: SHIP when every line's class rose less than delta under it (the same
rules as a line's DELETE), NOT SAFE when some class's failures rose (which
lines to keep, and the next joint set), INCONCLUSIVE otherwise (what would
settle it). Lines tested one at a time miss rules that interfere: two lines
that each hold the model back make each safe to delete alone, and not both.

A new joint set is a new test: ship records it in the audit file as a [[ship]]
table before any call, so the count of joint tests is committed with it. Calls
are content-addressed and shared with every other variant; only the joint
variant's own are made.

--out FILE writes the prompt without those lines, byte for byte the original
otherwise, only on SHIP.

Exit codes as run's: 0 completed (SHIP, or any decision without --gate); 1
calls failed; 2 bad input; 3 with --gate when the decision is not SHIP.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if lines != "" {
				ls, err := parseLines(lines)
				if err != nil {
					return &usageError{err, ""}
				}
				sf.lines = ls
			}
			f.requestLog = requestLogPath(cmd, f, args[0])
			f.ship = &sf
			return shipAudit(cmd.Context(), std, args[0], f)
		},
	}
	addRunFlags(c, &f)
	c.Flags().StringVar(&lines, "lines", "", "the lines to delete together, like 9,10,13 (default: every line whose verdict is DELETE)")
	c.Flags().StringVar(&sf.out, "out", "", "on SHIP, write the prompt without those lines to this file")
	return c
}

// parseLines reads --lines: prompt line numbers separated by commas.
func parseLines(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--lines %q: %q is not a prompt line number", s, p)
		}
		out = append(out, n)
	}
	return out, nil
}

// shipAudit is `auditor ship`: choose the joint set, record it when it is
// a new test, then run it like any variant and decide.
func shipAudit(ctx context.Context, std Stdio, path string, f runFlags) error {
	if err := checkRunFlags(f); err != nil {
		return err
	}
	s, err := openForRun(ctx, std, path, f)
	if err != nil {
		return err
	}
	choice, err := s.ChooseJoint(f.ship.lines)
	delta := s.Audit.File.Delta
	s.Close()
	if err != nil {
		return &usageError{err, ""}
	}
	if len(choice.Lines) == 0 {
		msg := "no line's verdict is DELETE yet, so there is no prompt to ship without one: name the lines to test together with --lines"
		if path := workbench.CheaperPath(choice.Candidates, workbench.LabelsForQuietClass(delta)); path != "" {
			msg += ";\n" + path
		}
		fmt.Fprintln(std.Err, msg)
		if f.gate {
			return &exitError{code: exitGate, msg: "gate: no prompt to ship"}
		}
		return nil
	}
	if choice.New {
		if err := workbench.RecordJoint(path, choice); err != nil {
			return err
		}
		fmt.Fprintf(std.Err, "joint test %d: the prompt without lines %s, a new test (recorded in %s as [[ship]]; this audit has made %d)\n",
			choice.Test, model.LineList(choice.Lines), path, choice.Test)
	} else {
		fmt.Fprintf(std.Err, "joint test %d: the prompt without lines %s, as recorded\n", choice.Test, model.LineList(choice.Lines))
	}
	return runAudit(ctx, std, path, f, os.Args[0]+" ship")
}

// shipOutcome ends a finished `ship`: --out on SHIP, what to do next
// otherwise, and the exit code.
func shipOutcome(std Stdio, res *evidence.Results, sf shipFlags, gate bool, prog, path string) error {
	sh := res.Ship
	if sh == nil {
		return fmt.Errorf("the audit has no joint test")
	}
	d := sh.Decision
	p := shellQuote(path)
	prog = strings.TrimSuffix(prog, " ship")
	switch d.Decision {
	case model.DecisionShip:
		if sf.out != "" {
			data, err := workbench.ShippedPrompt(res.Plan.Audit)
			if err != nil {
				return err
			}
			if err := os.WriteFile(sf.out, data, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(std.Err, "wrote the prompt without lines %s to %s\n", model.LineList(d.Lines), sf.out)
		}
		return nil
	case model.DecisionNotSafe:
		if len(d.Next) > 0 {
			fmt.Fprintf(std.Err, "\nNext: keep %s; the prompt without %s is a new test (joint test %d of this audit):\n  %s ship %s --lines %s\n",
				model.LinesWords(d.Keep), model.LinesWords(d.Next), d.Tests+1, prog, p, joinInts(d.Next))
		}
	default:
		fmt.Fprintf(std.Err, "\nNext: label what the joint test needs, then decide again (the same test):\n  %s label %s --for-verdict\n  %s ship %s --lines %s\n",
			prog, p, prog, p, joinInts(d.Lines))
	}
	if sf.out != "" {
		fmt.Fprintf(std.Err, "%s not written: the decision is %s, not SHIP\n", sf.out, d.Decision)
	}
	if gate {
		return &exitError{code: exitGate, msg: "gate: " + d.Headline}
	}
	return nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/workbench"
)

// pilotDefault is the value --pilot takes when given without a number:
// the session's default size (workbench.Session.PilotSize).
const pilotDefault = -1

// addPilotFlag adds --pilot [N] to plan.
func addPilotFlag(c *cobra.Command, dst *int) {
	c.Flags().IntVar(dst, "pilot", 0, "make N real answer calls first (default 5% of the cells, at most 20), stored for the run, and estimate from what they measure")
	c.Flags().Lookup("pilot").NoOptDefVal = strconv.Itoa(pilotDefault)
}

// pilotArgs takes N out of the arguments when it was written as
// `--pilot N`: a flag that may go without a value takes only `--pilot=N`,
// and leaves N among the arguments. Only a whole number is taken, and only
// when --pilot was given bare.
func pilotArgs(args []string, pilot *int) []string {
	if *pilot != pilotDefault || len(args) < 2 {
		return args
	}
	for i, a := range args {
		if n, err := strconv.Atoi(a); err == nil {
			*pilot = n
			return append(append([]string{}, args[:i]...), args[i+1:]...)
		}
	}
	return args
}

// pilotResult is what a pilot did, for the plan.
type pilotResult struct {
	Calls int     `json:"calls"` // calls made and stored
	USD   float64 `json:"usd"`   // what they cost
	// Skipped says why no call was made (nothing to call, all simulated).
	Skipped string `json:"skipped,omitempty"`
}

// runPilot makes the pilot's calls: n of them (pilotDefault: the default
// size), under the audit file's budget, refusing unpriced models under
// it unless allowUnpriced. Its progress goes to standard error.
func runPilot(ctx context.Context, std Stdio, s *workbench.Session, n int, allowUnpriced bool) (pilotResult, error) {
	if n == pilotDefault {
		n = s.PilotSize()
	}
	if n < 0 || n > model.MaxConcurrency {
		return pilotResult{}, &usageError{fmt.Errorf("--pilot %d: need 1 to %d calls (--pilot alone: 5%% of the cells, at most 20)", n, model.MaxConcurrency), ""}
	}
	status, err := s.Status()
	if err != nil {
		return pilotResult{}, err
	}
	done, err := s.CallsDone(status, false)
	if err != nil {
		return pilotResult{}, err
	}
	picks := s.PilotCalls(done, n)
	if len(picks) == 0 {
		why := "no answer call of a model under test is left to make"
		if s.Simulated() {
			why = "the simulated model's pilot is free and always made"
		}
		fmt.Fprintf(std.Err, "pilot: no calls made: %s\n", why)
		return pilotResult{Skipped: why}, nil
	}
	budget, err := s.Budget(0)
	if err != nil {
		return pilotResult{}, err
	}
	if budget.Total > 0 {
		fmt.Fprintln(std.Err, budget)
		if budget.Exhausted() {
			return pilotResult{}, &exitError{code: exitFailed, msg: fmt.Sprintf("the audit's budget is spent (%s): no pilot", budget)}
		}
		if !allowUnpriced {
			var unpriced []string
			for _, i := range picks {
				if m := s.Audit.File.Models[s.Plan.Calls[i].Provider]; !m.Priced {
					unpriced = append(unpriced, model.Sanitize(m.Name))
				}
			}
			if err := s.RefuseUnpriced(unpriced, budget); err != nil {
				return pilotResult{}, err
			}
		}
	}
	fmt.Fprintf(std.Err, "pilot: %d real answer calls, stored for the run\n", len(picks))
	o := workbench.RunOptions{Budget: budget.Left}
	phase, err := s.Pilot(ctx, picks, o, report.NewProgress(std.Err, s.Audit.File.Concurrency, budget.Left))
	if err != nil {
		return pilotResult{}, err
	}
	st := phase.Stopped
	if st.Reason != runner.Completed {
		code := exitFailed
		if st.Reason == runner.Cancelled {
			code = exitInterrupted
		}
		return pilotResult{}, &exitError{code: code, msg: fmt.Sprintf("the pilot stopped (%s): %s; %d calls stored", st.Reason, st.Detail, st.Done)}
	}
	return pilotResult{Calls: st.Done, USD: st.Spent}, nil
}

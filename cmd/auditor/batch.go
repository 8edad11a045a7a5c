package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/workbench"
)

// collectBatches is the first step of every run: answers of provider
// batches that have ended are saved and graded, and the user is told what
// is still out.
func collectBatches(ctx context.Context, std Stdio, s *workbench.Session, ro workbench.RunOptions) error {
	sum, gradeErrs, err := s.CollectBatches(ctx, ro)
	for _, e := range gradeErrs {
		fmt.Fprintf(std.Err, "grading: %v\n", e)
	}
	if err != nil && ctx.Err() != nil {
		return &exitError{code: exitInterrupted, msg: fmt.Sprintf(
			"interrupted while collecting batches (%d answers saved so far); run again to collect the rest", sum.Collected)}
	}
	if err != nil {
		return err
	}
	for _, n := range sum.Notes {
		fmt.Fprintf(std.Err, "batches: %s\n", n)
	}
	if sum.Unsent > 0 {
		fmt.Fprintf(std.Err, "batches: %d calls were being submitted when a run was cut off, and the provider never created their batch; this run makes them\n", sum.Unsent)
	}
	if sum.Collected > 0 {
		fmt.Fprintf(std.Err, "batches: collected %d answers (%d failed), $%.2f at the batch price\n", sum.Collected, sum.Failed, sum.Spent)
		if err := s.Refresh(); err != nil {
			return err
		}
	}
	if sum.Dropped > 0 {
		fmt.Fprintf(std.Err, "batches: %d calls came back unanswered (expired, cancelled, or busy); this run makes them\n", sum.Dropped)
	}
	if sum.Unknown > 0 {
		fmt.Fprintf(std.Err, "batches: %d batches were sent to an endpoint this audit no longer names; they are kept until it does\n", sum.Unknown)
	}
	if sum.Pending > 0 {
		fmt.Fprintf(std.Err, "batches: %d calls are still in batches the provider has not finished; this run leaves them out\n", sum.Pending)
	}
	return nil
}

// submitBatches is `run --batch` once finished batches are collected: it
// sends the answer calls still to make as batches, after confirming the
// cost, and says how to collect them. It reports false (and sends nothing)
// when no answer call is left to send: the run then goes on as usual
// (judges, report), or says that batches are still out.
func submitBatches(ctx context.Context, std Stdio, s *workbench.Session, ro workbench.RunOptions, est audit.Estimate,
	f runFlags, path, resumeCmd string) (bool, error) {
	collect := resumeCommand(resumeCmd, path, f)
	if est.AnswerCalls == 0 {
		pending, err := s.BatchesPending()
		if err != nil || !pending {
			return false, err
		}
		fmt.Fprintf(std.Err, "Every answer is stored or in a batch; run again later to collect the rest:\n  %s\n", collect)
		return true, nil
	}
	if err := report.WritePlan(std.Err, s.Audit, est, f.budget); err != nil {
		return true, err
	}
	usd := est.USD * runner.BatchDiscount
	if !f.yes {
		ok, err := confirm(std, fmt.Sprintf("Submit %d calls as batches (about $%.2f at the batch price)? [y/N] ", est.AnswerCalls, usd))
		if err != nil || !ok {
			return true, err
		}
	}
	recs, err := s.SubmitBatches(ctx, ro)
	for _, r := range recs {
		fmt.Fprintf(std.Err, "submitted batch %s to %s: %d calls\n", r.ID, r.Endpoint, len(r.Keys))
	}
	if err != nil {
		if len(recs) > 0 {
			fmt.Fprintf(std.Err, "the batches above are recorded and will be collected; the rest was not sent\n")
		}
		var cut *runner.BatchInterrupted
		if errors.As(err, &cut) {
			// The provider may have created it: say which, and that the
			// next run finds it before sending anything.
			fmt.Fprintf(std.Err, "A batch of %d calls to %s may exist: its submission was cut off before the provider answered (%v).\n"+
				"It is recorded as %s; the next run looks for it at the provider before sending anything, and collects it or makes its calls:\n  %s\n",
				len(cut.Record.Keys), cut.Record.Endpoint, cut.Err, cut.Record.Ref, collect)
			code := exitFailed
			if ctx.Err() != nil {
				code = exitInterrupted
			}
			return true, &exitError{code: code}
		}
		if ctx.Err() != nil {
			fmt.Fprintf(std.Err, "Interrupted. Resume with:\n  %s\n", collect)
			return true, &exitError{code: exitInterrupted}
		}
		return true, err
	}
	fmt.Fprintf(std.Err, "Submitted %d calls in %d batches, about $%.2f at the batch price. Providers answer within 24 hours.\n"+
		"Collect the answers (and send what is left) with:\n  %s\n", est.AnswerCalls, len(recs), usd, collect)
	return true, nil
}

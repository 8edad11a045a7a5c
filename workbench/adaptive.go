package workbench

import (
	"context"
	"fmt"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// An adaptive run (issue 23) makes the answer calls in rounds, one per look
// of the audit's sequential design: round k makes the samples below look
// k's of every line not yet settled, then the verdicts are computed at look
// k, and a line whose verdict is KEEP or DELETE there is settled: its
// remaining calls are never made (calls a line shares with an unsettled
// one, a sweep's baseline, still are). The verdicts are the ones any report
// gives afterwards, valid at the look they rest on. Within a round calls go
// in the plan's sample order, so under a budget every unsettled line gets
// its samples evenly; judges are asked only about answers made.

// LookObserver is an Observer that also hears how an adaptive run's looks
// went (the headless printer says it; the screen shows each verdict's look
// on its own).
type LookObserver interface {
	// Looked reports look k of the design: the lines that settled there
	// and the calls the next round makes (0 after the last look or when
	// every line is settled).
	Looked(look model.Look, settled []string, next int)
}

// Adaptive says how an adaptive run went.
type Adaptive struct {
	Looks int // the design's looks
	// Reached is the last look whose round completed (0 when the first
	// stopped short).
	Reached int
	// Settled names each line settled at an interim look ("line 23 KEEP
	// at look 2 of 6"), in the order they settled.
	Settled []string
	// Calls is the answer calls the rounds made; Planned those a fixed
	// run would have made.
	Calls, Planned int
}

// lineModel is one line for one model: what an adaptive run settles.
type lineModel struct{ rule, model int }

// runAdaptive makes the answer calls in rounds by look (see above). done
// holds the calls needing no attempt; pending counts the rest.
func (s *Session) runAdaptive(ctx context.Context, o RunOptions, obs Observer, done map[string]bool, d model.Design, pending int) (Phase, []error, *Adaptive, error) {
	ad := &Adaptive{Looks: d.Looks, Planned: pending}
	settled := map[lineModel]bool{}
	var phase Phase
	var gradeErrs []error
	for k := 1; k <= d.Looks; k++ {
		m := d.SamplesAt(k)
		round := func(i int) bool { return !done[s.Plan.Calls[i].Key] && s.neededAt(i, m, settled) }
		n := 0
		for i := range s.Plan.Calls {
			if round(i) {
				n++
			}
		}
		if n > 0 {
			var errs []error
			var err error
			phase, errs, err = s.runAnswers(ctx, o, obs, func(i int) bool { return !round(i) }, n)
			gradeErrs = append(gradeErrs, errs...)
			if err != nil {
				return phase, gradeErrs, ad, err
			}
			ad.Calls += phase.Stopped.Done
			if phase.Stopped.Reason != runner.Completed {
				return phase, gradeErrs, ad, nil
			}
			// The round's answers are stored; the next round skips them.
			status, err := s.Store.Status()
			if err != nil {
				return phase, gradeErrs, ad, err
			}
			if done, err = s.CallsDone(status, o.RetryTruncated); err != nil {
				return phase, gradeErrs, ad, err
			}
		}
		ad.Reached = k
		newly, err := s.settleAt(k, d, settled)
		if err != nil {
			return phase, gradeErrs, ad, err
		}
		ad.Settled = append(ad.Settled, newly...)
		if lo, ok := obs.(LookObserver); ok {
			next := 0
			if k < d.Looks {
				m2 := d.SamplesAt(k + 1)
				for i := range s.Plan.Calls {
					if !done[s.Plan.Calls[i].Key] && s.neededAt(i, m2, settled) {
						next++
					}
				}
			}
			lo.Looked(*d.Look(k), newly, next)
		}
		if len(settled) == s.linesModels() {
			break
		}
	}
	// The phase the Outcome reports covers every round: the last round's
	// stop, with the calls of all of them.
	phase.Ran = true
	phase.Stopped.Done = ad.Calls
	return phase, gradeErrs, ad, nil
}

// neededAt reports whether plan call i serves a cell below sample m of a
// line not settled, or a regression suite's cell below m on the baseline
// or on such a line's variant.
func (s *Session) neededAt(i, m int, settled map[lineModel]bool) bool {
	key := s.Plan.Calls[i].Key
	for _, ci := range s.Plan.ByKey[key] {
		c := s.Plan.Cells[ci]
		if c.Sample < m && !settled[lineModel{c.Rule, c.Model}] {
			return true
		}
	}
	for _, ri := range s.Plan.RegressionByKey[key] {
		c := s.Plan.Regression[ri]
		if c.Sample < m && (c.Variant == audit.RegressionBaseline || !settled[lineModel{c.Variant, c.Model}]) {
			return true
		}
	}
	return false
}

// linesModels is how many lines x models an audit decides.
func (s *Session) linesModels() int { return len(s.Plan.Audit.Rules) * len(s.Plan.Audit.File.Models) }

// settleAt computes the verdicts from what is stored (a tally of its own:
// the screen's is the screen's) and marks settled every line decided at
// look k, returning how each newly settled line was decided. A line with
// no input class is never settled early: a canary decides it.
func (s *Session) settleAt(k int, d model.Design, settled map[lineModel]bool) ([]string, error) {
	t, err := evidence.NewTally(s.Plan, s.preds, s.Store)
	if err != nil {
		return nil, err
	}
	res, err := t.Results()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range res.Rules {
		lm := lineModel{rr.RuleIndex, rr.Model}
		v := rr.Verdict
		if settled[lm] || v.Look == nil || v.Look.Index != k || v.NotYet != "" ||
			!(v.Decision == model.DecisionKeep || v.Decision == model.DecisionDelete ||
				v.Decision == model.DecisionWorse || v.Decision == model.DecisionNotWorse || v.Decision == model.DecisionBetter) {
			continue
		}
		if k == d.Looks {
			continue // the last look settles nothing that is not already done
		}
		settled[lm] = true
		name := fmt.Sprintf("line %d %s at %s", rr.Rule.Line, v.Decision, v.Look)
		if len(s.Plan.Audit.File.Models) > 1 {
			name += " for " + model.Sanitize(rr.ModelName)
		}
		out = append(out, name)
	}
	return out, nil
}

// designMeta records, in the store, the looks the audit's answers were
// first gathered under. Looks must be declared before any answer is seen:
// choosing them after looking would let the data pick the design.
const designMeta = "design.looks"

// recordDesign stores the audit's looks the first time answers are
// gathered.
func (s *Session) recordDesign() error {
	if s.Store == nil {
		return nil
	}
	if _, ok, err := s.Store.Meta(designMeta); err != nil || ok {
		return err
	}
	d, _ := s.Plan.Design()
	return s.Store.SetMeta(designMeta, fmt.Sprint(d.Looks))
}

// designNotice says when the audit's looks differ from those its answers
// were first gathered under; "" otherwise.
func (s *Session) designNotice() (string, error) {
	if s.Store == nil {
		return "", nil
	}
	was, ok, err := s.Store.Meta(designMeta)
	if err != nil || !ok {
		return "", err
	}
	d, _ := s.Plan.Design()
	if was == fmt.Sprint(d.Looks) {
		return "", nil
	}
	return fmt.Sprintf("the audit's looks changed from %s to %d after answers were gathered: a verdict at a look is valid only if the looks were declared before any answer was seen", was, d.Looks), nil
}

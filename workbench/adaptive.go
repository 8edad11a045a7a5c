package workbench

import (
	"context"
	"fmt"
	"sort"

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
// gives afterwards, valid at the look they rest on. The calls a settled
// line would have made go to the lines still open: within a round, the
// calls of the line whose extra samples narrow its difference's interval
// most go first (its 95% width per answer so far, the first round in plan
// order), each line's in sample order, so a budget or a stop that ends a
// round early leaves the least to gain unmade. Judges are asked only about
// answers made.

// LookObserver is an Observer that also hears how an adaptive run's looks
// went (the headless printer says it; the screen shows each verdict's look
// on its own).
type LookObserver interface {
	// Looked reports look k of the design: the lines that settled there,
	// the lines x models still open, and the calls the next round makes
	// (0 after the last look, when every line is settled, or when the
	// next look's answers are stored already).
	Looked(look model.Look, settled []string, open, next int)
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

// RoundObserver is an Observer that also hears when each round of an
// adaptive run starts, so a screen counts the answers over the whole run,
// not afresh each round (the round's StartPhase follows, also for a round
// with no calls to make).
type RoundObserver interface {
	StartRound(r model.Round)
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
	// The rounds share the run's budget, and the phase reports all of
	// them: what each round spent, failed and settled adds up.
	var total runner.Stopped
	add := func(st runner.Stopped) {
		total.Done += st.Done
		total.Failed += st.Failed
		total.Settled += st.Settled
		total.TooLarge += st.TooLarge
		total.Spent += st.Spent
		total.Reason, total.Detail, total.Remaining = st.Reason, st.Detail, st.Remaining
	}
	prio := map[lineModel]float64{}
	ro, _ := obs.(RoundObserver)
	failed := map[string]bool{} // calls that failed for good in this run
	for k := 1; k <= d.Looks; k++ {
		m := d.SamplesAt(k)
		calls := s.roundCalls(done, m, settled, prio)
		if ro != nil {
			r := model.Round{Index: k, Of: d.Looks, Calls: len(calls), Made: total.Done}
			for i := range s.Plan.Calls {
				if done[s.Plan.Calls[i].Key] {
					continue
				}
				if s.neededAt(i, d.Samples, settled) {
					r.AtMost++
				} else {
					r.NotNeeded++
				}
			}
			r.AtMost += r.Made
			ro.StartRound(r)
		}
		if n := len(calls); n > 0 {
			var errs []error
			var err error
			ro := o
			ro.Budget = remainingBudget(o.Budget, total.Spent)
			phase, errs, err = s.runAnswers(ctx, ro, obs, calls, nil, n)
			gradeErrs = append(gradeErrs, errs...)
			add(phase.Stopped)
			phase.Stopped = total
			if err != nil {
				return phase, gradeErrs, ad, err
			}
			ad.Calls = total.Done
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
			// A call that failed for good in this run is not asked again in
			// a later round (the next run retries it, as a run in one go
			// does): each call is counted once, and the failures only grow.
			for _, c := range calls {
				if ok, stored := status[c.Key]; stored && !ok {
					failed[c.Key] = true
				}
			}
			for key := range failed {
				done[key] = true
			}
		}
		ad.Reached = k
		newly, err := s.settleAt(k, settled, prio)
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
			lo.Looked(*d.Look(k), newly, s.linesModels()-len(settled), next)
		}
		if len(settled) == s.linesModels() {
			break
		}
	}
	// The phase the Outcome reports covers every round.
	phase.Ran = true
	phase.Stopped = total
	phase.Stopped.Reason, phase.Stopped.Detail = runner.Completed, ""
	return phase, gradeErrs, ad, nil
}

// roundCalls returns the calls not done that serve a cell below sample m
// of a line still open, ordered by the priority of the lines they serve
// (highest first; a shared call takes its highest), plan order within.
func (s *Session) roundCalls(done map[string]bool, m int, settled map[lineModel]bool, prio map[lineModel]float64) []runner.Call {
	type ranked struct {
		i    int
		prio float64
	}
	var in []ranked
	for i, c := range s.Plan.Calls {
		if done[c.Key] || !s.neededAt(i, m, settled) {
			continue
		}
		p := 0.0
		for _, ci := range s.Plan.ByKey[c.Key] {
			cell := s.Plan.Cells[ci]
			if lm := (lineModel{cell.Rule, cell.Model}); !settled[lm] {
				p = max(p, prio[lm])
			}
		}
		in = append(in, ranked{i, p})
	}
	sort.SliceStable(in, func(a, b int) bool { return in[a].prio > in[b].prio })
	calls := make([]runner.Call, len(in))
	for j, r := range in {
		calls[j] = s.Plan.Calls[r.i]
	}
	return calls
}

// neededAt reports whether plan call i serves a cell below sample m of a
// line not settled (see audit.Plan.NeededBelow).
func (s *Session) neededAt(i, m int, settled map[lineModel]bool) bool {
	return s.Plan.NeededBelow(s.Plan.Calls[i].Key, m, func(rule, model int) bool { return !settled[lineModel{rule, model}] })
}

// linesModels is how many lines x models an audit decides.
func (s *Session) linesModels() int {
	n := len(s.Plan.Audit.Rules)
	if s.Plan.Ship != nil {
		n++ // the joint test, decided for every model at once
	}
	return n * len(s.Plan.Audit.File.Models)
}

// settleAt computes the verdicts from what is stored (a tally of its own:
// the screen's is the screen's) and marks settled every line decided at
// look k, returning how each newly settled line was decided. A line with
// no input class is never settled early: a canary decides it. It sets
// each open line's priority for the next round: the width of the 95%
// interval of its provoking difference per answer it rests on, which is
// what one more answer narrows (the width shrinks as 1/sqrt(n), so by
// about width/2n an answer).
func (s *Session) settleAt(k int, settled map[lineModel]bool, prio map[lineModel]float64) ([]string, error) {
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
		if n := v.DeletedN + v.BaselineN; n > 0 {
			prio[lm] = (v.Newcombe.Hi - v.Newcombe.Lo) / float64(n)
		}
		if settled[lm] || v.Look == nil || v.Look.Index != k || !rr.SettledEarly() {
			continue // the last look settles nothing that is not already done
		}
		settled[lm] = true
		name := fmt.Sprintf("line %d %s at %s", rr.Rule.Line, v.Decision, v.Look)
		if len(s.Plan.Audit.File.Models) > 1 {
			name += " for " + model.Sanitize(rr.ModelName)
		}
		out = append(out, name)
	}
	// The joint test settles as a whole: SHIP when every class is bounded
	// at the look, NOT SAFE when one rose.
	if sh := res.Ship; sh != nil && sh.SettledEarly() && !settled[lineModel{audit.JointRule, 0}] {
		for mi := range s.Plan.Audit.File.Models {
			settled[lineModel{audit.JointRule, mi}] = true
		}
		out = append(out, fmt.Sprintf("joint test %s at look %d", sh.Decision.Decision, k))
	}
	return out, nil
}

// unneededCalls returns the keys of the calls not stored that an adaptive
// audit will never make: they serve only lines settled at an interim look.
// Nil for an audit run in one go, whose run makes every call.
func (s *Session) unneededCalls(status map[string]bool) (map[string]bool, error) {
	if !s.Audit.File.Adaptive || s.Store == nil {
		return nil, nil
	}
	t := s.Tally
	if t == nil {
		var err error
		if t, err = evidence.NewTally(s.Plan, s.preds, s.Store); err != nil {
			return nil, err
		}
	}
	res, err := t.Results()
	if err != nil {
		return nil, err
	}
	return res.UnneededCalls(status), nil
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

// DesignNotice says when the audit's looks differ from those its answers
// were first gathered under; "" otherwise. A run and plan say it before
// any call, report beside the verdicts it casts doubt on.
func (s *Session) DesignNotice() (string, error) {
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

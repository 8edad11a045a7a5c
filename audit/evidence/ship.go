package evidence

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// ShipResult is the joint test's evidence and decision (model.DecideShip):
// each line's class under the joint variant, decided by the very code that
// decides a line's own deletion (aggregateRule on the plan's joint view),
// and each regression suite on it.
type ShipResult struct {
	Joint audit.JointTest
	// Classes holds each line's class for each model, in the joint set's
	// order then model order: a RuleResult whose deleted variant is the
	// joint variant.
	Classes []*RuleResult
	// Alone holds the line's own verdict for each class (same order).
	Alone []model.Verdict
	// Suites holds every suite on baseline and under the joint variant,
	// per model (suite-major).
	Suites   []RegressionResult
	SuiteOf  []int // the model of each of Suites
	Decision model.ShipDecision
	// Pending counts the joint variant's answers not yet made or graded
	// (and not unneeded).
	Pending int
	// View is the plan the classes were computed on (audit.Plan.JointView).
	View *audit.Plan
}

// SettledEarly reports whether the decision settled at an interim look of
// a sequential design: SHIP or NOT SAFE with every class's verdict resting
// on a look short of the last, so the joint variant's later samples are
// not needed.
func (s *ShipResult) SettledEarly() bool {
	if s == nil || s.Decision.Decision == model.DecisionInconclusive {
		return false
	}
	for _, c := range s.Classes {
		if s.Decision.Decision == model.DecisionShip && !c.SettledEarly() {
			return false
		}
	}
	if s.Decision.Decision == model.DecisionNotSafe {
		for _, c := range s.Classes {
			if c.Verdict.Decision == model.DecisionKeep && c.SettledEarly() {
				return true
			}
		}
		return false
	}
	return true
}

// JointView returns the tally as it counts the plan's joint view: the
// same answers, grades and labels, each joint line's deleted variant the
// joint variant. Nil without a joint test.
func (t *Tally) JointView() *Tally {
	v := t.plan.JointView()
	if v == nil {
		return nil
	}
	tv := *t
	tv.plan = v
	return &tv
}

// Ship computes the joint test's decision from the tally, with res the
// per-line results (for each line's verdict alone); nil, nil when the
// audit has no joint test.
func (t *Tally) Ship(res *Results) (*ShipResult, error) {
	tv := t.JointView()
	if tv == nil {
		return nil, nil
	}
	p := tv.plan
	jt := *p.Audit.Ship
	out := &ShipResult{Joint: jt, View: p}
	regression := tv.regressionCounts()
	for _, ri := range jt.Rules {
		for mi := range p.Audit.File.Models {
			rr, err := tv.aggregateClass(ri, mi)
			if err != nil {
				return nil, err
			}
			out.Classes = append(out.Classes, rr)
			out.Pending += rr.Pending
			var alone model.Verdict
			if res != nil {
				for _, own := range res.Rules {
					if own.RuleIndex == ri && own.Model == mi {
						alone = own.Verdict
					}
				}
			}
			out.Alone = append(out.Alone, alone)
		}
	}
	for mi := range p.Audit.File.Models {
		for _, r := range tv.regressionResults(regression, jt.Rules[0], mi) {
			out.Suites = append(out.Suites, r)
			out.SuiteOf = append(out.SuiteOf, mi)
		}
	}
	in := model.ShipInput{Lines: jt.Lines, Tokens: jt.Tokens, PromptTokens: jt.PromptTokens, Delta: p.Audit.File.Delta,
		Test: jt.Test, Tests: jt.Tests}
	for i, rr := range out.Classes {
		in.Classes = append(in.Classes, model.ShipClass{Line: rr.Rule.Line, Text: rr.Rule.Text, Model: rr.ModelName,
			Verdict: rr.Verdict, Alone: out.Alone[i].Decision})
	}
	for i, r := range out.Suites {
		in.Suites = append(in.Suites, shipSuite(r, p.Audit.File.Models[out.SuiteOf[i]].Name))
	}
	d, err := model.DecideShip(in)
	if err != nil {
		return nil, fmt.Errorf("audit: ship decision: %w", err)
	}
	out.Decision = d
	return out, nil
}

// aggregateClass is one joint line's class for one model on the joint
// view: aggregateRule, the function every line's own verdict comes from,
// with the view's labels and grader quality.
func (t *Tally) aggregateClass(ri, mi int) (*RuleResult, error) {
	p := t.plan
	rr, err := aggregateRule(p, ri, mi, t.status, t.settled, t.PredicateGrades(ri), t.ruleQuality(ri, mi, t.Labels()), nil,
		model.LabelledArms{Baseline: t.VariantLabels(ri, mi, false), Deleted: t.VariantLabels(ri, mi, true)})
	if err != nil {
		return nil, fmt.Errorf("joint test: %w", err)
	}
	rr.PredicateVersion = t.PredicateVersion(ri)
	// The verdict's words speak of one line; the joint variant is without
	// every line of the set.
	if ls := p.Audit.Ship.Lines; len(ls) > 1 {
		without := "without lines " + model.LineList(ls)
		v := &rr.Verdict
		v.Reason = strings.ReplaceAll(v.Reason, "without the line", without)
		v.Needed = strings.ReplaceAll(v.Needed, "without the line", without)
	}
	return rr, nil
}

// shipSuite is a suite's numbers for DecideShip: pooled failures on
// baseline and under the joint variant, the broken cases, and whether the
// failures rose (Newcombe's lower bound above 0).
func shipSuite(r RegressionResult, modelName string) model.ShipSuite {
	s := model.ShipSuite{Name: r.Suite.Name, Model: modelName, Cases: len(r.Cases), Broken: r.Broken()}
	if a := r.All; a != nil {
		s.BaselineFails, s.BaselineN = a.Baseline.Fails, a.Baseline.N
		s.JointFails, s.JointN = a.Deleted.Fails, a.Deleted.N
		if a.Baseline.N > 0 && a.Deleted.N > 0 {
			var ci stats.Interval
			s.Diff, ci = a.Diff, a.DiffCI
			s.Newcombe = ci
			s.Rose = ci.Lo > 0
		}
	}
	return s
}

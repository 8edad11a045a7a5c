package evidence

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// falseDeletePlan is a one-rule plan of 8 provoke and 10 control cases at
// 30 samples in both variants, laid out in memory: what the simulation
// below grades and labels.
func falseDeletePlan() *audit.Plan {
	rule := &audit.Rule{Line: 7, PredicatePath: "p.toml", Loaded: &model.Predicate{Version: "v1"}}
	for i := range 8 {
		rule.Cases = append(rule.Cases, model.Case{ID: fmt.Sprint("p", i), Kind: model.Provoke})
	}
	for i := range 10 {
		rule.Cases = append(rule.Cases, model.Case{ID: fmt.Sprint("c", i), Kind: model.Control})
	}
	a := &audit.Audit{File: &model.AuditFile{Models: []model.ModelConfig{{Name: "m"}}, Delta: 0.05, AffectedShare: 0.1},
		Rules: []*audit.Rule{rule}}
	var cells []audit.Cell
	for c := range rule.Cases {
		for _, del := range []bool{false, true} {
			for s := range 30 {
				cells = append(cells, audit.Cell{Rule: 0, Case: c, Deleted: del, Sample: s, Key: fmt.Sprintf("k%05d", len(cells))})
			}
		}
	}
	p := audit.PlanOfCells(a, cells)
	p.Samples = 30
	return p
}

// TestVerdict_NoFalseDeleteFromFalseAlarms is issue 10's simulation: a rule
// whose deletion truly raises provoking failures by 20 points (5% to 25% of
// answers violate, in every provoke case), graded by a predicate that
// catches every violation (recall 1) but also fails clean answers at a
// false-positive rate f, controls refusing 2% in both variants. A reviewer
// labels 60 random provoking answers (labels are the truth); the real path
// measures the predicate (MeasureGrader) and decides (aggregateRule, which
// assembles the verdict's input and calls model.Decide), at the default
// tolerance of 5 points and at a lenient 15. Any DELETE is false: the true
// rise is above both.
//
// The predicate shows (R + S - 1) = 1 - f of the rise. The old rule, which
// divided by recall alone, is computed beside it from the same runs (600
// per f, seeded): at delta 0.05 it reached DELETE in 0%, 0%, 0.5% and 99.7%
// of runs for f = 0.25, 0.5, 0.75 and 1 (1 is a predicate that fails
// everything: 240/240 against 240/240); at delta 0.15 in 0%, 1.5%, 17% and
// 100% (the 0.6%, 21% and 67% came from a design of its own). The
// new rule must reach DELETE in at most 0.5% of runs everywhere. No wall
// time.
func TestVerdict_NoFalseDeleteFromFalseAlarms(t *testing.T) {
	t.Parallel()
	const runs = 600
	p := falseDeletePlan()
	rule := p.Audit.Rules[0]
	// The same plan at each tolerance.
	deltas := []float64{0.05, 0.15}
	plans := make([]*audit.Plan, len(deltas))
	for i, d := range deltas {
		file := *p.Audit.File
		file.Delta = d
		a := *p.Audit
		a.File = &file
		pd := *p
		pd.Audit = &a
		plans[i] = &pd
	}
	var provoking []string
	// The labels fall on provoking answers only, so the predicate is
	// measured on the provoking cells: the same plan with the rule's cells
	// cut to those gives MeasureGrader the same numbers at half the work
	// (a run under -race must stay short).
	var provokingCells []audit.Cell
	for _, c := range p.Cells {
		if rule.Cases[c.Case].Kind.Provoking() {
			provoking = append(provoking, c.Key)
			provokingCells = append(provokingCells, c)
		}
	}
	measured := audit.PlanOfCells(p.Audit, provokingCells)
	status := make(map[string]bool, len(p.Cells))
	for _, c := range p.Cells {
		status[c.Key] = true
	}
	// One set of maps, cleared between runs: the test's time goes to the
	// code under test, not to the allocator.
	grades := make(map[string]model.Grade, len(p.Cells))
	labelled := make(map[string]model.Label, 60)
	truth := make(map[string]bool, len(p.Cells))
	for _, f := range []float64{0.25, 0.5, 0.75, 1} {
		rng := rand.New(rand.NewPCG(2026, uint64(100*f)))
		newDeletes, oldDeletes := make([]int, len(deltas)), make([]int, len(deltas))
		alarmed, open := 0, 0 // runs with a grader route, and those whose route counts the baseline's false alarms
		for range runs {
			clear(labelled)
			for _, c := range p.Cells {
				rate := 0.02 // controls refuse alike in both variants
				if rule.Cases[c.Case].Kind.Provoking() {
					rate = 0.05
					if c.Deleted {
						rate = 0.25
					}
				}
				violation := rng.Float64() < rate
				failed := violation || rng.Float64() < f
				truth[c.Key] = violation
				grades[c.Key] = model.Grade{Grader: model.PredicateGrader, Version: "v1", Pass: !failed}
			}
			for _, i := range rng.Perm(len(provoking))[:60] {
				k := provoking[i]
				labelled[k] = model.Label{Source: model.LabelBlind, Key: k, Violation: truth[k], Labeller: "truth"}
			}
			q := labels.MeasureGrader(measured, labels.Grades{Name: model.PredicateGrader, Version: "v1", ByKey: grades}, labelled, labels.QualityScope{Rule: 0, Model: 0})
			arms := model.LabelledArms{
				Baseline: labels.VariantLabels(measured, labels.QualityScope{Rule: 0, Model: 0, Population: presence(status), Grades: grades}, labelled, false),
				Deleted:  labels.VariantLabels(measured, labels.QualityScope{Rule: 0, Model: 0, Population: presence(status), Grades: grades}, labelled, true)}
			for i, pd := range plans {
				rr, err := aggregateRule(pd, 0, 0, status, nil, grades, q, nil, arms)
				if err != nil {
					t.Fatal(err)
				}
				v := rr.Verdict
				if v.Decision == model.DecisionDelete {
					newDeletes[i]++
				}
				if i == 0 && v.Grader != nil {
					open++
				}
				if g := v.Grader; i == 0 && g != nil && g.FalseAlarmFrom == "labels" && g.FalseAlarms > 0 &&
					strings.Contains(v.Bound, "baseline false alarms") {
					alarmed++
				}
				// The old rule: max(Upper, 0)/R_L < delta, controls intact.
				if r := q.Recall; v.Decision != model.DecisionKeep && r.Measured() && r.CI.Lo > 0 &&
					max(v.Upper, 0)/r.CI.Lo < v.Delta && !v.BreaksControls {
					oldDeletes[i]++
				}
			}
		}
		// A predicate that fails everything: every clean baseline label is
		// a false alarm, and the verdict's bound counts them.
		if f == 1 && (open < runs/4 || alarmed < open*95/100) {
			t.Errorf("predicate failing everything: %d of %d verdicts with a grader route count the baseline's false alarms", alarmed, open)
		}
		for i, d := range deltas {
			newRate, oldRate := float64(newDeletes[i])/runs, float64(oldDeletes[i])/runs
			t.Logf("false-positive rate %.2f, delta %.2f: false DELETE %.1f%% under the new rule, %.1f%% under the old (%d runs)",
				f, d, 100*newRate, 100*oldRate, runs)
			if newRate > 0.005 {
				t.Errorf("false-positive rate %.2f, delta %.2f: false DELETE in %.1f%% of runs, want at most 0.5%%", f, d, 100*newRate)
			}
			if f == 1 && oldRate < 0.9 {
				t.Errorf("delta %.2f: the old rule reached DELETE in only %.1f%% of runs with a predicate that fails everything: the simulation no longer shows the flaw", d, 100*oldRate)
			}
		}
	}
}

// presence is a labels.Population of answered keys with no stored grades
// of other versions (the simulation grades with one version).
type presence map[string]bool

func (p presence) Answered(key string) bool                       { return p[key] }
func (p presence) GradesAt(version string) map[string]model.Grade { return nil }

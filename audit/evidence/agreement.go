package evidence

import (
	"fmt"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// GraderRef names one grader version: the predicate of a rule, or a judge.
type GraderRef struct {
	Name    string // "predicate" or "judge:<model>"
	Version string
}

// Graders returns every grader of a rule: its current predicate first, then
// the audit's judges in file order, each with the rubric that grades the
// rule.
func (t *Tally) Graders(rule int) []GraderRef {
	refs := []GraderRef{{Name: model.PredicateGrader, Version: t.PredicateVersion(rule)}}
	for _, j := range t.plan.Audit.Judges {
		refs = append(refs, GraderRef{Name: j.Grader, Version: j.For(rule).Version})
	}
	return refs
}

// PairAgreement is how two graders agree on the answers both graded (an
// unparseable grade takes an answer out of the comparison). A failure is a
// "violation" verdict (a refusal on controls).
type PairAgreement struct {
	A, B GraderRef
	// Both failed, only A failed, only B failed, neither failed.
	Both, OnlyA, OnlyB, Neither int
	N                           int
	Agreement                   float64 // raw agreement p_o
	Kappa, KappaSE              float64
	KappaDefined                bool // false when every answer got the same verdict from both (p_e = 1)
}

// Disagreements is the number of answers the two graders judged differently.
func (pa PairAgreement) Disagreements() int { return pa.OnlyA + pa.OnlyB }

// Agreement compares every pair of a rule's graders over the distinct
// answered keys of the rule's cells for one model.
func (t *Tally) Agreement(rule, modelIdx int) []PairAgreement {
	refs := t.Graders(rule)
	keys := t.ruleKeys(rule, modelIdx)
	var out []PairAgreement
	for i := 0; i < len(refs); i++ {
		for j := i + 1; j < len(refs); j++ {
			out = append(out, t.pair(refs[i], refs[j], keys))
		}
	}
	return out
}

func (t *Tally) pair(a, b GraderRef, keys []string) PairAgreement {
	pa := PairAgreement{A: a, B: b}
	ga, gb := t.grades[a.Version], t.grades[b.Version]
	for _, k := range keys {
		x, okA := ga[k]
		y, okB := gb[k]
		if !okA || !okB || x.Unparseable || y.Unparseable {
			continue
		}
		switch {
		case !x.Pass && !y.Pass:
			pa.Both++
		case !x.Pass:
			pa.OnlyA++
		case !y.Pass:
			pa.OnlyB++
		default:
			pa.Neither++
		}
	}
	pa.N = pa.Both + pa.OnlyA + pa.OnlyB + pa.Neither
	if pa.N > 0 {
		pa.Agreement = float64(pa.Both+pa.Neither) / float64(pa.N)
		if k, _, _, se, err := stats.Kappa(pa.Both, pa.OnlyA, pa.OnlyB, pa.Neither); err == nil {
			pa.Kappa, pa.KappaSE, pa.KappaDefined = k, se, true
		}
	}
	return pa
}

// ReviewItem is one answer on which graders disagree, for the human to
// adjudicate.
type ReviewItem struct {
	Key    string
	Cell   audit.Cell // the first cell of the rule that uses the answer
	Grades map[string]model.Grade
}

// Disagreements lists the answers of a rule (one model) on which the given
// graders disagree (any pair when only is empty), in plan order. Answers a
// grader could not grade count as a disagreement: a human should look.
func (t *Tally) Disagreements(rule, modelIdx int, only []GraderRef) []ReviewItem {
	refs := only
	if len(refs) == 0 {
		refs = t.Graders(rule)
	}
	var out []ReviewItem
	seen := map[string]bool{}
	for _, ci := range t.plan.CellsOfRule(rule) {
		cell := t.plan.Cells[ci]
		if cell.Model != modelIdx || seen[cell.Key] || !t.status[cell.Key] {
			continue
		}
		seen[cell.Key] = true
		grades := map[string]model.Grade{}
		var pass, fail, odd int
		for _, r := range refs {
			g, ok := t.grades[r.Version][cell.Key]
			if !ok {
				continue
			}
			grades[r.Name] = g
			switch {
			case g.Unparseable:
				odd++
			case g.Pass:
				pass++
			default:
				fail++
			}
		}
		if len(grades) >= 2 && ((pass > 0 && fail > 0) || odd > 0) {
			out = append(out, ReviewItem{Key: cell.Key, Cell: cell, Grades: grades})
		}
	}
	return out
}

// ruleKeys returns the distinct answered keys of a rule's cells for a model.
func (t *Tally) ruleKeys(rule, modelIdx int) []string {
	var keys []string
	seen := map[string]bool{}
	for _, ci := range t.plan.CellsOfRule(rule) {
		c := t.plan.Cells[ci]
		if c.Model == modelIdx && !seen[c.Key] && t.status[c.Key] {
			seen[c.Key] = true
			keys = append(keys, c.Key)
		}
	}
	return keys
}

// addGraders fills in the judges' quality, pairwise agreement and the
// disagreement count of a rule result. Without judges there is nothing to
// compare and the fields stay empty.
func (t *Tally) addGraders(rr *RuleResult) {
	if len(t.plan.Audit.Judges) == 0 {
		return
	}
	for _, j := range t.plan.Audit.Judges {
		v := j.For(rr.RuleIndex).Version
		g := labels.Grades{Name: j.Grader, Version: v, ByKey: t.grades[v]}
		rr.Judges = append(rr.Judges, t.MeasureGrader(rr.RuleIndex, rr.Model, g, t.Labels()))
	}
	rr.Agreement = t.Agreement(rr.RuleIndex, rr.Model)
	rr.Disagreements = len(t.Disagreements(rr.RuleIndex, rr.Model, nil))
}

// BestSupported names the grader whose recall against the labels has the
// highest lower bound, with a line a reviewer reads, e.g.
// "judge:x recall 0.94 [0.79, 0.98] vs predicate 0.77 [0.60, 0.89]".
// It returns "" when no grader's recall is measured.
func (rr *RuleResult) BestSupported() (string, string) {
	all := append([]labels.GraderQuality{rr.Quality}, rr.Judges...)
	best := -1
	for i, q := range all {
		if q.Recall == nil || !q.Recall.Measured() {
			continue
		}
		if best < 0 || q.Recall.CI.Lo > all[best].Recall.CI.Lo {
			best = i
		}
	}
	if best < 0 {
		return "", ""
	}
	line := fmt.Sprintf("%s recall %.2f [%.2f, %.2f]", all[best].Grader, all[best].Recall.Est, all[best].Recall.CI.Lo, all[best].Recall.CI.Hi)
	for i, q := range all {
		if i == best || q.Recall == nil || !q.Recall.Measured() {
			continue
		}
		line += fmt.Sprintf(" vs %s %.2f [%.2f, %.2f]", q.Grader, q.Recall.Est, q.Recall.CI.Lo, q.Recall.CI.Hi)
	}
	return all[best].Grader, line
}

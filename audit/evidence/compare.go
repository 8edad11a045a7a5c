package evidence

import (
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// CaseComparison is one case under one prompt variant, answered by two
// models.
type CaseComparison struct {
	Case *model.Case
	A, B Count
}

// Comparison sets two models side by side on one rule's cases under one
// variant. A failure means what it means for the case's kind (a violation,
// or a refusal on controls), so kinds are compared separately.
type Comparison struct {
	Rule           int
	ModelA, ModelB int
	Deleted        bool // compare under the deletion variant instead of the full prompt
	Cases          []CaseComparison
	// Per kind: A minus B on pooled counts with Newcombe's interval, and
	// paired by case where two or more cases have answers from both.
	Kinds map[model.Kind]*ModelDiff
}

// ModelDiff is model A's failure rate minus model B's on the same cases.
type ModelDiff struct {
	AFails, AN, BFails, BN int
	Diff                   float64
	CI                     stats.Interval
	Paired                 *stats.Paired
}

// Compare counts both models' answers per case and computes the per-kind
// differences.
func (t *Tally) Compare(rule, a, b int, deleted bool) Comparison {
	r := t.plan.Audit.Rules[rule]
	cmp := Comparison{Rule: rule, ModelA: a, ModelB: b, Deleted: deleted, Kinds: map[model.Kind]*ModelDiff{}}
	cmp.Cases = make([]CaseComparison, len(r.Cases))
	for i := range r.Cases {
		cmp.Cases[i].Case = &r.Cases[i]
	}
	grades := t.PredicateGrades(rule)
	for _, ci := range t.plan.CellsOfRule(rule) {
		cell := t.plan.Cells[ci]
		if cell.Deleted != deleted || (cell.Model != a && cell.Model != b) {
			continue
		}
		cnt := &cmp.Cases[cell.Case].A
		if cell.Model == b {
			cnt = &cmp.Cases[cell.Case].B
		}
		countCell(cnt, cell.Key, t.status, grades)
	}
	for _, k := range model.Kinds {
		d := &ModelDiff{}
		var af, an, bf, bn []int
		for _, cc := range cmp.Cases {
			if cc.Case.Kind != k {
				continue
			}
			d.AFails += cc.A.Fails
			d.AN += cc.A.N
			d.BFails += cc.B.Fails
			d.BN += cc.B.N
			if cc.A.N > 0 && cc.B.N > 0 {
				af, an, bf, bn = append(af, cc.A.Fails), append(an, cc.A.N), append(bf, cc.B.Fails), append(bn, cc.B.N)
			}
		}
		if d.AN > 0 && d.BN > 0 {
			d.Diff, d.CI, _ = stats.Newcombe(d.AFails, d.AN, d.BFails, d.BN)
		}
		if len(an) >= 2 {
			if pd, err := stats.PairedDiff(af, an, bf, bn); err == nil {
				d.Paired = &pd
			}
		}
		cmp.Kinds[k] = d
	}
	return cmp
}

// ModelComparisons compares, for every rule a predicate grades, the audit's
// first model (A, the reference) with each other model (B), under the full
// prompt and then under the rule's deletion: the comparisons the reports
// print. Empty with one model.
func (t *Tally) ModelComparisons() []Comparison {
	a := t.plan.Audit
	var out []Comparison
	for ri, r := range a.Rules {
		if !r.HasPredicate() {
			continue // answers nobody grades have no failures to compare
		}
		for b := 1; b < len(a.File.Models); b++ {
			for _, deleted := range []bool{false, true} {
				out = append(out, t.Compare(ri, 0, b, deleted))
			}
		}
	}
	return out
}

// countCell adds one cell's outcome to a count.
func countCell(cnt *Count, key string, status map[string]bool, grades map[string]model.Grade) {
	ok, stored := status[key]
	switch {
	case !stored:
		cnt.Pending++
		return
	case !ok:
		cnt.Errors++
		return
	}
	g, graded := grades[key]
	switch {
	case !graded:
		cnt.Pending++
	case g.Unparseable:
		cnt.Unparseable++
	default:
		cnt.N++
		if !g.Pass {
			cnt.Fails++
		}
	}
}

// ComparePair is the same case, variant and sample answered by two models.
type ComparePair struct {
	Case       int
	Sample     int
	KeyA, KeyB string
}

// SplitPairs lists the samples where model a failed and model b passed
// (or the reverse, with aFailed false), for stepping through in review.
func (t *Tally) SplitPairs(rule, a, b int, deleted, aFailed bool) []ComparePair {
	grades := t.PredicateGrades(rule)
	type slot struct{ c, s int }
	keysA, keysB := map[slot]string{}, map[slot]string{}
	var order []slot
	for _, ci := range t.plan.CellsOfRule(rule) {
		cell := t.plan.Cells[ci]
		if cell.Deleted != deleted {
			continue
		}
		sl := slot{cell.Case, cell.Sample}
		switch cell.Model {
		case a:
			keysA[sl] = cell.Key
			order = append(order, sl)
		case b:
			keysB[sl] = cell.Key
		}
	}
	var out []ComparePair
	for _, sl := range order {
		ka, kb := keysA[sl], keysB[sl]
		ga, okA := grades[ka]
		gb, okB := grades[kb]
		if !okA || !okB || ga.Unparseable || gb.Unparseable {
			continue
		}
		if (aFailed && !ga.Pass && gb.Pass) || (!aFailed && ga.Pass && !gb.Pass) {
			out = append(out, ComparePair{Case: sl.c, Sample: sl.s, KeyA: ka, KeyB: kb})
		}
	}
	return out
}

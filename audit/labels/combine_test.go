package labels_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// world is a synthetic audit of one rule (line 7) for the combination
// tests: provoking answers in both variants, each with the truth and the
// predicate's verdict; it is the tally a label set is drawn from.
type world struct {
	p      *audit.Plan
	truth  map[string]bool
	grades map[string]model.Grade
	labels map[string]model.Label
}

func (w *world) Answered(string) bool                       { return true }
func (w *world) PredicateVersion(int) string                { return "v1" }
func (w *world) PredicateGrades(int) map[string]model.Grade { return w.grades }
func (w *world) GradesAt(v string) map[string]model.Grade {
	if v == "v1" {
		return w.grades
	}
	return nil
}
func (w *world) Labels() map[string]model.Label { return w.labels }

// newWorld lays out cases x samples provoking answers per variant; an
// answer violates with probability prevalence (twice that without the
// line) and the predicate catches a violation with probability recall and
// fails a clean answer with probability falseAlarm.
func newWorld(rng *rand.Rand, cases, samples int, prevalence, recall, falseAlarm float64) *world {
	rule := &audit.Rule{Line: 7, PredicatePath: "p.predicate.toml", Loaded: &model.Predicate{Version: "v1"}}
	a := &audit.Audit{File: &model.AuditFile{Models: []model.ModelConfig{{Name: "m"}}}, Rules: []*audit.Rule{rule}}
	w := &world{truth: map[string]bool{}, grades: map[string]model.Grade{}, labels: map[string]model.Label{}}
	var cells []audit.Cell
	for c := range cases {
		rule.Cases = append(rule.Cases, model.Case{ID: fmt.Sprint("c", c), Kind: model.Provoke})
		for s := range samples {
			for _, del := range []bool{false, true} {
				key := fmt.Sprintf("c%d-s%d-%v", c, s, del)
				cells = append(cells, audit.Cell{Rule: 0, Case: c, Sample: s, Deleted: del, Key: key})
				p := prevalence
				if del {
					p *= 2
				}
				v := rng.Float64() < p
				failed := v && rng.Float64() < recall || !v && rng.Float64() < falseAlarm
				w.truth[key] = v
				w.grades[key] = model.Grade{Grader: model.PredicateGrader, Version: "v1", Pass: !failed}
			}
		}
	}
	w.p = audit.PlanOfCells(a, cells)
	return w
}

// label labels a set's answers with the truth (a perfect labeller).
func (w *world) label(set labels.LabelSet) {
	for _, k := range set.Keys {
		w.labels[k] = model.Label{Source: model.LabelBlind, Key: k, Violation: w.truth[k], Labeller: "ana"}
	}
}

// TestCombine_SimulatedRecall: three label sets drawn by different designs
// (a simple random sample of both variants, a stratified set that draws
// failures at a high rate, and a set of the answers without the line drawn
// from those still unlabelled) combine into a recall estimate that is
// unbiased and whose 95% interval covers the truth, over 400 simulated
// audits. Pooling the same labels as one simple random sample (what a rule
// that ignores the designs would do) overstates recall by far more than the
// tolerance: the stratified set oversamples the answers the predicate
// caught.
func TestCombine_SimulatedRecall(t *testing.T) {
	t.Parallel()
	const runs, recall = 400, 0.6
	rng := rand.New(rand.NewPCG(19, 6))
	var sum, naiveSum float64
	covered, measured := 0, 0
	for run := range runs {
		w := newWorld(rng, 10, 30, 0.1, recall, 0.05)
		st := audittest.NewMemStore()
		for _, opts := range []labels.SampleOptions{
			{Name: "srs", N: 80, Seed: int64(run)},
			{Name: "strat", N: 120, Seed: int64(run) + 1, Stratify: true, FailShare: 0.5},
			{Name: "verdict", N: 80, Seed: int64(run) + 2, Variant: labels.VariantDeleted, Unlabelled: true},
		} {
			set, err := labels.DrawLabelSample(st, w.p, w, opts)
			if err != nil {
				t.Fatal(err)
			}
			w.label(set)
		}
		sets, err := labels.LoadLabelSets(st)
		if err != nil {
			t.Fatal(err)
		}
		q := labels.MeasureGrader(w.p, labels.Grades{Name: model.PredicateGrader, Version: "v1", ByKey: w.grades}, w.labels,
			labels.QualityScope{Rule: 0, Model: -1, Sets: sets, Population: w})
		if q.Labels != len(w.labels) {
			t.Fatalf("run %d: %d labels used of %d", run, q.Labels, len(w.labels))
		}
		// The truth on these answers: the recall a census would measure.
		var tp, pos int
		for k, v := range w.truth {
			if v {
				pos++
				if !w.grades[k].Pass {
					tp++
				}
			}
		}
		truth := float64(tp) / float64(pos)
		naiveSum += float64(q.Recall.Hits) / float64(q.Recall.Total)
		if !q.Recall.Measured() {
			continue
		}
		measured++
		sum += q.Recall.Est - truth
		if q.Recall.CI.Contains(truth) {
			covered++
		}
	}
	bias := sum / float64(measured)
	naive := naiveSum/runs - recall
	coverage := float64(covered) / float64(measured)
	t.Logf("combined: bias %+.3f, coverage %.3f over %d measured runs; pooled as one sample: bias %+.3f", bias, coverage, measured, naive)
	if measured < runs*9/10 || math.Abs(bias) > 0.02 || coverage < 0.90 {
		t.Errorf("combined estimate: %d of %d runs measured, bias %+.3f, coverage %.3f; want >= 90%% measured, |bias| <= 0.02, coverage >= 0.90",
			measured, runs, bias, coverage)
	}
	if naive < 0.05 {
		t.Errorf("pooling as one sample is biased by only %+.3f: the simulation no longer shows why designs matter", naive)
	}
}

// TestVariantLabels_QuietLine: 100 answers without the line labelled clean
// from a set drawn for the verdict, beside an earlier sample of both
// variants: the answers without the line form one cell (both sets drew
// uniformly there), so the labels route's bound is Clopper-Pearson on all
// of them.
func TestVariantLabels_QuietLine(t *testing.T) {
	t.Parallel()
	w := newWorld(rand.New(rand.NewPCG(1, 2)), 8, 30, 0, 1, 0)
	st := audittest.NewMemStore()
	for _, opts := range []labels.SampleOptions{
		{Name: "srs", N: 60, Seed: 1},
		{Name: "verdict", N: 70, Seed: 2, Variant: labels.VariantDeleted, Unlabelled: true},
	} {
		set, err := labels.DrawLabelSample(st, w.p, w, opts)
		if err != nil {
			t.Fatal(err)
		}
		w.label(set)
	}
	sets, _ := labels.LoadLabelSets(st)
	scope := labels.QualityScope{Rule: 0, Model: -1, Sets: sets, Population: w}
	del := labels.VariantLabels(w.p, scope, w.labels, true)
	base := labels.VariantLabels(w.p, scope, w.labels, false)
	if len(del.Strata) != 1 || del.Strata[0].N != 240 {
		t.Fatalf("answers without the line in %d cells: %+v", len(del.Strata), del.Strata)
	}
	_, n, v := del.Totals()
	_, nb, _ := base.Totals()
	if n+nb != 130 || n < 70 || v != 0 {
		t.Errorf("labelled %d without the line and %d with, %d violations; want 130 in all, at least 70 without", n, nb, v)
	}
	up, _ := stats.RateUpper(del.Strata, 0.01)
	want, _ := stats.ClopperPearsonUpper(0, n, 0.01)
	if up != want {
		t.Errorf("bound %v, want Clopper-Pearson %v", up, want)
	}
}

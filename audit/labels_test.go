package audit

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

const tol = 1e-4

func near(got, want, eps float64) bool { return math.Abs(got-want) <= eps }

// synthPlan is a one-rule plan (line 23) with one answer per case, keys
// "k0000", "k0001", ... in the order of kinds.
func synthPlan(kinds []model.Kind) *Plan {
	rule := &Rule{Line: 23, Predicate: &model.Predicate{Version: "v1"}}
	p := &Plan{Audit: &Audit{File: &model.AuditFile{Models: []model.ModelConfig{{Name: "m"}}}, Rules: []*Rule{rule}},
		ByKey: map[string][]int{}, ruleCells: [][]int{nil}}
	for i, k := range kinds {
		rule.Cases = append(rule.Cases, model.Case{ID: fmt.Sprint("c", i), Kind: k})
		key := fmt.Sprintf("k%04d", i)
		p.Cells = append(p.Cells, Cell{Rule: 0, Case: i, Key: key})
		p.ByKey[key] = []int{i}
		p.ruleCells[0] = append(p.ruleCells[0], i)
	}
	return p
}

func repeatKind(k model.Kind, n int) []model.Kind {
	out := make([]model.Kind, n)
	for i := range out {
		out[i] = k
	}
	return out
}

// outcome is one synthetic labelled answer: the truth and the grader's verdict.
type outcome struct{ violation, failed bool }

// confusionOutcomes lays out tp, fn, fp, tn answers in that order.
func confusionOutcomes(tp, fn, fp, tn int) []outcome {
	var out []outcome
	for _, c := range []struct {
		n    int
		o    outcome
		name string
	}{{tp, outcome{true, true}, "tp"}, {fn, outcome{true, false}, "fn"}, {fp, outcome{false, true}, "fp"}, {tn, outcome{false, false}, "tn"}} {
		for i := 0; i < c.n; i++ {
			out = append(out, c.o)
		}
	}
	return out
}

// labelAll grades and labels keys k0000.. of a synthetic plan by outcomes.
func labelAll(outs []outcome, version string) (Grades, map[string]model.Label) {
	g := Grades{Name: PredicateGrader, Version: version, ByKey: map[string]model.Grade{}}
	labels := map[string]model.Label{}
	for i, o := range outs {
		key := fmt.Sprintf("k%04d", i)
		g.ByKey[key] = model.Grade{Grader: PredicateGrader, Version: version, Pass: !o.failed}
		labels[key] = model.Label{Key: key, Violation: o.violation, Labeller: "ana"}
	}
	return g, labels
}

func checkMeasure(t *testing.T, name string, m *Measure, hits, total int, est, lo, hi float64) {
	t.Helper()
	if m.Hits != hits || m.Total != total || !near(m.Est, est, tol) || !near(m.CI.Lo, lo, tol) || !near(m.CI.Hi, hi, tol) {
		t.Errorf("%s = %d/%d %.4f [%.4f, %.4f], want %d/%d %.4f [%.4f, %.4f]", name,
			m.Hits, m.Total, m.Est, m.CI.Lo, m.CI.Hi, hits, total, est, lo, hi)
	}
}

// The source's 60 labels (STATS sections 4 and 7): 31 violations, the first
// regex caught 24 and flagged nothing else.
func TestMeasureGrader_StatsVectors(t *testing.T) {
	t.Parallel()
	outs := confusionOutcomes(24, 7, 0, 29)
	p := synthPlan(repeatKind(model.Provoke, len(outs)))
	g, labels := labelAll(outs, "v1")
	q := MeasureGrader(p, g, labels, QualityScope{Rule: 0, Model: -1})

	checkMeasure(t, "recall", q.Recall, 24, 31, 0.7742, 0.6019, 0.8860)
	checkMeasure(t, "recall provoke", q.RecallKind[model.Provoke], 24, 31, 0.7742, 0.6019, 0.8860)
	checkMeasure(t, "precision", q.Precision, 24, 24, 1, 0.8620, 1)
	checkMeasure(t, "specificity", q.Specificity, 29, 29, 1, 0.8830, 1)
	if s := q.Recall.String(); s != "24/31 = 0.77 [0.60, 0.89]" {
		t.Errorf("recall reads %q", s)
	}
	if q.Estimator != EstimatorSimple || q.Labels != 60 || len(q.Misses) != 7 {
		t.Errorf("estimator %s, labels %d, misses %d; want simple, 60, 7", q.Estimator, q.Labels, len(q.Misses))
	}
	if c := q.Confusion[model.Provoke]; c != (Confusion{TP: 24, FN: 7, FP: 0, TN: 29}) || q.Pooled != c {
		t.Errorf("confusion %+v, pooled %+v", c, q.Pooled)
	}
	// The misses are the FN answers, in plan order.
	for i, k := range q.Misses {
		if want := fmt.Sprintf("k%04d", 24+i); k != want {
			t.Errorf("miss %d = %s, want %s", i, k, want)
		}
	}
	if vc := q.Recall.VerdictCount(); vc == nil || vc.Hits != 24 || vc.Positives != 31 || vc.Lo != nil || vc.Strata != nil {
		t.Errorf("verdict count %+v", vc)
	}
	if vs := q.Specificity.VerdictSpecificity(); vs == nil || vs.Passed != 29 || vs.Negatives != 29 || vs.Lo != nil {
		t.Errorf("verdict specificity %+v", vs)
	}
	// Amended regex: 29/31 (STATS section 4).
	g2, labels2 := labelAll(confusionOutcomes(29, 2, 0, 29), "v2")
	q2 := MeasureGrader(p, g2, labels2, QualityScope{Rule: 0, Model: -1})
	checkMeasure(t, "amended recall", q2.Recall, 29, 31, 0.9355, 0.7928, 0.9821)

	// Violations needed: width of 24/31's interval is 0.284; narrowing it
	// to 0.2 needs stats' count less the 31 already labelled.
	need, err := q.Recall.MoreNeeded(0.2)
	want, _ := stats.ViolationsForRecallWidth(24.0/31, 0.2)
	if err != nil || need != want-31 || need <= 0 {
		t.Errorf("MoreNeeded(0.2) = %d, %v; want %d", need, err, want-31)
	}
	if n, _ := q.Recall.MoreNeeded(0.5); n != 0 {
		t.Errorf("MoreNeeded(0.5) = %d, want 0 (already narrower)", n)
	}
}

func TestCompareLabellers_KappaVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b, c, d int
		kappa, se  float64
	}{
		{24, 0, 7, 29, 0.7682, 0.0823},
		{29, 0, 2, 29, 0.9334, 0.0463},
		{25, 4, 3, 28, 0.7661, 0.0831},
		{1, 1, 1, 57, 0.4828, 0.3596},
	}
	for _, tc := range tests {
		la, lb := map[string]model.Label{}, map[string]model.Label{}
		i := 0
		add := func(n int, va, vb bool) {
			for j := 0; j < n; j++ {
				k := fmt.Sprintf("k%04d", i)
				la[k] = model.Label{Key: k, Violation: va, Labeller: "ana"}
				lb[k] = model.Label{Key: k, Violation: vb, Labeller: "ben"}
				i++
			}
		}
		add(tc.a, true, true)
		add(tc.b, true, false)
		add(tc.c, false, true)
		add(tc.d, false, false)
		lb["only-ben"] = model.Label{Key: "only-ben", Violation: true} // not shared: left out
		ag := CompareLabellers("ana", la, "ben", lb, nil)
		if !ag.KappaDefined || !near(ag.Kappa, tc.kappa, tol) || !near(ag.KappaSE, tc.se, tol) {
			t.Errorf("%v: kappa %.4f SE %.4f, want %.4f SE %.4f", tc, ag.Kappa, ag.KappaSE, tc.kappa, tc.se)
		}
		if ag.N != 60 || len(ag.Disagreements) != tc.b+tc.c || !near(ag.Agreement, float64(tc.a+tc.d)/60, 1e-12) {
			t.Errorf("%v: n %d, disagreements %d, agreement %.4f", tc, ag.N, len(ag.Disagreements), ag.Agreement)
		}
		for _, k := range ag.Disagreements {
			if la[k].Violation == lb[k].Violation {
				t.Errorf("%s listed as a disagreement but both said %v", k, la[k].Violation)
			}
		}
	}
	same := CompareLabellers("a", map[string]model.Label{"x": {Violation: true}}, "b", map[string]model.Label{"x": {Violation: true}}, nil)
	if same.KappaDefined || same.N != 1 || same.Agreement != 1 {
		t.Errorf("one shared label: %+v; kappa must be undefined", same)
	}
}

// stratifiedFixture is STATS section 6's example: of 540 answers the
// predicate flagged 60 and passed 480; 20 flagged and 40 passed are
// labelled, with 19 and 2 violations.
func stratifiedFixture() (*Plan, *LabelSet, Grades, map[string]model.Label) {
	p := synthPlan(repeatKind(model.Provoke, 540))
	g := Grades{Name: PredicateGrader, Version: "v1", ByKey: map[string]model.Grade{}}
	set := &LabelSet{Name: "s", Options: SampleOptions{Name: "s", N: 60, Rule: 23, Kinds: []model.Kind{model.Provoke}, Stratify: true, FailShare: 1.0 / 3},
		Strata: []LabelStratum{
			{Name: "L23 failed", Rule: 23, Fail: true, N: 60, Drawn: 20},
			{Name: "L23 passed", Rule: 23, Fail: false, N: 480, Drawn: 40},
		},
		PredicateVersions: map[int]string{23: "v1"}, strataKeys: map[string][]string{}}
	labels := map[string]model.Label{}
	for i := 0; i < 540; i++ {
		key := fmt.Sprintf("k%04d", i)
		failed := i < 60
		g.ByKey[key] = model.Grade{Grader: PredicateGrader, Version: "v1", Pass: !failed}
		var viol bool
		switch {
		case failed && i < 20:
			viol = i < 19
			set.strataKeys["L23 failed"] = append(set.strataKeys["L23 failed"], key)
		case !failed && i < 100:
			viol = i < 62
			set.strataKeys["L23 passed"] = append(set.strataKeys["L23 passed"], key)
		default:
			continue
		}
		labels[key] = model.Label{Key: key, Violation: viol, Labeller: "ana"}
		set.Keys = append(set.Keys, key)
	}
	set.index = indexKeys(set.Keys)
	return p, set, g, labels
}

func TestMeasureGrader_IPWVector(t *testing.T) {
	t.Parallel()
	p, set, g, labels := stratifiedFixture()
	q := MeasureGrader(p, g, labels, QualityScope{Rule: 0, Model: -1, Set: set})
	if q.Estimator != EstimatorIPW || q.Set != "s" {
		t.Errorf("estimator %s over %q, want ipw over s", q.Estimator, q.Set)
	}
	r := q.Recall
	if r.Method != MethodIPW || !near(r.Est, 0.7037, tol) || !near(r.SE, 0.1396, tol) ||
		!near(r.CI.Lo, 0.4300, tol) || !near(r.CI.Hi, 0.9774, tol) || r.Hits != 19 || r.Total != 21 {
		t.Errorf("IPW recall = %+v, want 0.7037 SE 0.1396 [0.4300, 0.9774] from 19/21", r)
	}
	// Precision is v_F/n_F with Wilson, unweighted.
	wantP, _ := stats.Wilson(19, 20)
	checkMeasure(t, "precision", q.Precision, 19, 20, 0.95, wantP.Lo, wantP.Hi)
	// The unweighted 19/21 would overstate recall: the verdict must use the
	// weighted lower bound, not the Wilson bound of the raw count.
	vc := r.VerdictCount()
	if vc.Positives != 21 || vc.Lo == nil || !near(*vc.Lo, 0.4300, tol) {
		t.Errorf("verdict count %+v: want 21 positives and the IPW lower bound 0.4300", vc)
	}

	// Another grader (here the same verdicts under another version) goes
	// through the general ratio estimator, which must agree exactly.
	g2 := Grades{Name: "judge:x", Version: "j1", ByKey: g.ByKey}
	q2 := MeasureGrader(p, g2, labels, QualityScope{Rule: 0, Model: -1, Set: set})
	if !near(q2.Recall.Est, r.Est, 1e-12) || !near(q2.Recall.SE, r.SE, 1e-12) {
		t.Errorf("ratio estimator %.6f SE %.6f, IPWRecall %.6f SE %.6f", q2.Recall.Est, q2.Recall.SE, r.Est, r.SE)
	}
	if !near(q2.Precision.Est, 0.95, 1e-12) {
		t.Errorf("ratio precision %.4f, want 0.95", q2.Precision.Est)
	}
	// Weighted specificity: TN = 12*38 = 456, FP = 3*1 = 3.
	if !near(q.Specificity.Est, 456.0/459, 1e-12) {
		t.Errorf("specificity %.6f, want %.6f", q.Specificity.Est, 456.0/459)
	}
	// The verdict projects more labels on the strata a weighted measure
	// carries: stats.StratifiedShare on them must give the measure back.
	for name, ms := range map[string]*Measure{"recall": r, "ratio recall": q2.Recall, "specificity": q.Specificity} {
		checkStrataReproduce(t, name, ms)
	}
	vs := q.Specificity.VerdictSpecificity()
	if vs == nil || vs.Lo == nil || len(vs.Strata) != 2 || vs.Strata[1].Name != "L23 passed" || vs.Strata[1].Failed || vs.Strata[1].A != 38 {
		t.Errorf("verdict specificity %+v", vs)
	}
}

// checkStrataReproduce checks that a weighted measure's strata give its
// estimate and interval through stats.StratifiedShare.
func checkStrataReproduce(t *testing.T, name string, ms *Measure) {
	t.Helper()
	ss := make([]stats.ShareStratum, len(ms.Strata))
	for i, st := range ms.Strata {
		ss[i] = st.ShareStratum
	}
	est, _, ci, _, err := stats.StratifiedShare(ss)
	if err != nil || !near(est, ms.Est, 1e-12) || !near(ci.Lo, ms.CI.Lo, 1e-12) || !near(ci.Hi, ms.CI.Hi, 1e-12) {
		t.Errorf("%s: strata give %.6f [%.6f, %.6f] (%v), measure %.6f [%.6f, %.6f]", name, est, ci.Lo, ci.Hi, err, ms.Est, ms.CI.Lo, ms.CI.Hi)
	}
}

func TestMeasureGrader_IPWEdgeCases(t *testing.T) {
	t.Parallel()
	t.Run("passed stratum unlabelled", func(t *testing.T) {
		t.Parallel()
		p, set, g, labels := stratifiedFixture()
		for _, k := range set.strataKeys["L23 passed"] {
			delete(labels, k)
		}
		q := MeasureGrader(p, g, labels, QualityScope{Rule: 0, Model: -1, Set: set})
		if q.Recall.Measured() || !strings.Contains(q.Recall.String(), "L23 passed") {
			t.Errorf("recall with no passed labels = %q; must say the stratum has none", q.Recall)
		}
		if q.Recall.VerdictCount() != nil {
			t.Error("an unmeasured recall must give no verdict count")
		}
	})
	t.Run("no misses found", func(t *testing.T) {
		t.Parallel()
		p, set, g, labels := stratifiedFixture()
		for _, k := range set.strataKeys["L23 passed"] {
			labels[k] = model.Label{Key: k, Violation: false}
		}
		q := MeasureGrader(p, g, labels, QualityScope{Rule: 0, Model: -1, Set: set})
		r := q.Recall
		// IPW gives 1 with SE 0; 40 clean passes of 480 do not prove that.
		if r.Est != 1 || r.Method != MethodIPWBounds || r.CI.Hi != 1 || r.CI.Lo > 0.7 {
			t.Errorf("recall with no misses found = %+v; want 1 with a wide lower bound", r)
		}
		// FN could be up to 480 * Wilson(0/40).Hi, TP as low as 60*Wilson(19/20).Lo.
		wp, _ := stats.Wilson(0, 40)
		wf, _ := stats.Wilson(19, 20)
		lo := 60 * wf.Lo / (60*wf.Lo + 480*wp.Hi)
		if !near(r.CI.Lo, lo, 1e-9) {
			t.Errorf("lower bound %.4f, want %.4f", r.CI.Lo, lo)
		}
		checkStrataReproduce(t, "recall from bounds", r)
		checkStrataReproduce(t, "specificity", q.Specificity)
	})
}

func TestMeasureGrader_WarnsUnderTenViolations(t *testing.T) {
	t.Parallel()
	kinds := append(repeatKind(model.Provoke, 30), repeatKind(model.Pressure, 30)...)
	var outs []outcome
	outs = append(outs, confusionOutcomes(10, 2, 0, 18)...) // provoke: 12 violations
	outs = append(outs, confusionOutcomes(5, 4, 0, 21)...)  // pressure: 9 violations
	p := synthPlan(kinds)
	g, labels := labelAll(outs, "v1")
	q := MeasureGrader(p, g, labels, QualityScope{Rule: 0, Model: -1})
	if len(q.Warnings) != 1 || !strings.Contains(q.Warnings[0], "only 9 labelled pressure violations") {
		t.Errorf("warnings = %q, want one about pressure's 9 violations", q.Warnings)
	}
	checkMeasure(t, "pooled recall", q.Recall, 15, 21, 15.0/21, q.Recall.CI.Lo, q.Recall.CI.Hi)
	if q.RecallKind[model.Pressure].Total != 9 || q.RecallKind[model.Provoke].Total != 12 {
		t.Errorf("per-kind totals %d, %d", q.RecallKind[model.Provoke].Total, q.RecallKind[model.Pressure].Total)
	}
	// No labels at all: nothing to warn about, nothing measured.
	q0 := MeasureGrader(p, g, nil, QualityScope{Rule: 0, Model: -1})
	if len(q0.Warnings) != 0 || q0.Recall.Measured() || q0.Labels != 0 {
		t.Errorf("no labels: %+v", q0)
	}
}

// TestCorrectRate_Vector: STATS section 5's example (m = 0.09 on 150,
// recall 24/31) takes specificity as exactly 1 and gets 0.11625 [0.0675,
// 0.2001] (model/stats tests that). Here specificity is what the source's
// labels measured, 29 clean answers all passed, so its uncertainty widens
// the interval: 0.11625 [0, 0.2257] (Fieller's interval, worked in stats'
// TestRecallCorrected_MeasuredSpecificity). Without a measured specificity
// nothing is corrected.
func TestCorrectRate_Vector(t *testing.T) {
	t.Parallel()
	recall := wilsonMeasure(24, 31)
	c, err := CorrectRate(0.09, 150, recall, wilsonMeasure(29, 29))
	if err != nil {
		t.Fatal(err)
	}
	if !near(c.Est, 0.11625, 1e-5) || c.CI.Lo != 0 || !near(c.CI.Hi, 0.2257, tol) {
		t.Errorf("corrected = %.5f [%.4f, %.4f], want 0.11625 [0, 0.2257]", c.Est, c.CI.Lo, c.CI.Hi)
	}
	if c.Recall != 24.0/31 || c.Specificity != 1 {
		t.Errorf("recall %v, specificity %v", c.Recall, c.Specificity)
	}
	for _, spec := range []*Measure{nil, wilsonMeasure(0, 0)} {
		if _, err := CorrectRate(0.09, 150, recall, spec); err == nil {
			t.Errorf("specificity %v: an unmeasured specificity must not correct anything", spec)
		}
	}
	if _, err := CorrectRate(0.09, 150, wilsonMeasure(0, 0), wilsonMeasure(29, 29)); err == nil {
		t.Error("an unmeasured recall must not correct anything")
	}
	// A grader that fails everything (specificity 0) corrects nothing.
	if _, err := CorrectRate(1, 240, wilsonMeasure(31, 31), wilsonMeasure(0, 29)); !errors.Is(err, stats.ErrNotEstimable) {
		t.Errorf("specificity 0: %v, want not estimable", err)
	}
}

// TestCorrectRate_Weighted: a weighted measure counts as its effective
// sample size R(1-R)/SE^2.
func TestCorrectRate_Weighted(t *testing.T) {
	t.Parallel()
	recall := &Measure{Hits: 19, Total: 21, Est: 0.7037, SE: 0.1396, Method: MethodIPW}
	spec := wilsonMeasure(40, 41)
	c, err := CorrectRate(0.2, 240, recall, spec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := stats.RecallCorrected(stats.Proportion{P: 0.2, N: 240},
		stats.Proportion{P: 0.7037, N: 0.7037 * 0.2963 / (0.1396 * 0.1396)}, stats.Proportion{P: 40.0 / 41, N: 41})
	if err != nil || c.Est != want.Est || c.CI != want.CI {
		t.Errorf("weighted: %+v, want %+v (%v)", c, want, err)
	}
}

func TestCorrectArms_PerKindAndPooled(t *testing.T) {
	t.Parallel()
	side := func(rate float64, n int) ArmSide { return ArmSide{Rate: rate, N: n, Fails: int(rate * float64(n))} }
	build := func(pressureRecall *Measure) *RuleResult {
		rr := &RuleResult{Arms: map[model.Kind]*Arm{
			model.Provoke:  {Name: "provoke", Baseline: side(0.02, 150), Deleted: side(0.09, 150)},
			model.Pressure: {Name: "pressure", Baseline: side(0.05, 100), Deleted: side(0.2, 100)},
			model.Control:  {Name: "control", Baseline: side(0.02, 300), Deleted: side(0.01, 300)},
		}, Provoking: &Arm{Name: "provoking", Baseline: side(0.032, 250), Deleted: side(0.134, 250)}}
		rr.Quality = GraderQuality{RecallKind: map[model.Kind]*Measure{model.Provoke: wilsonMeasure(24, 31)},
			SpecificityKind: map[model.Kind]*Measure{model.Provoke: wilsonMeasure(29, 29), model.Pressure: wilsonMeasure(38, 40)}}
		if pressureRecall != nil {
			rr.Quality.RecallKind[model.Pressure] = pressureRecall
		}
		CorrectArms(rr)
		return rr
	}
	rr := build(nil)
	if c := rr.Arms[model.Provoke].Deleted.Corrected; c == nil || !near(c.Est, 0.11625, 1e-5) ||
		c.CI.Lo != 0 || !near(c.CI.Hi, 0.2257, tol) {
		t.Errorf("provoke deleted corrected = %+v, want 0.11625 [0, 0.2257]", c)
	}
	// Pressure has no recall of its own, controls no specificity: neither
	// they nor the pooled arm are corrected (a pooled recall is never
	// applied to an arm).
	if rr.Arms[model.Pressure].Deleted.Corrected != nil || rr.Provoking.Deleted.Corrected != nil || rr.Arms[model.Control].Baseline.Corrected != nil {
		t.Error("arms without their own kind's recall and specificity were corrected")
	}
	rr = build(wilsonMeasure(18, 20))
	pv, pr := rr.Arms[model.Provoke].Deleted.Corrected, rr.Arms[model.Pressure].Deleted.Corrected
	pool := rr.Provoking.Deleted.Corrected
	if pv == nil || pr == nil || pool == nil {
		t.Fatalf("corrected: provoke %v pressure %v pooled %v", pv, pr, pool)
	}
	// Pressure: (0.2 + 0.95 - 1)/(0.9 + 0.95 - 1) = 0.176471.
	if !near(pr.Est, 0.15/0.85, 1e-12) {
		t.Errorf("pressure corrected %.6f, want %.6f", pr.Est, 0.15/0.85)
	}
	if want := (150*pv.Est + 100*pr.Est) / 250; !near(pool.Est, want, 1e-12) {
		t.Errorf("pooled corrected %.6f, want the N-weighted %.6f", pool.Est, want)
	}
	// MOVER: each side's half-width is the root of the weighted squares of
	// the kinds' own half-widths.
	down := math.Hypot(0.6*(pv.Est-pv.CI.Lo), 0.4*(pr.Est-pr.CI.Lo))
	up := math.Hypot(0.6*(pv.CI.Hi-pv.Est), 0.4*(pr.CI.Hi-pr.Est))
	if !near(pool.CI.Hi, pool.Est+up, 1e-12) || !near(pool.CI.Lo, pool.Est-down, 1e-12) {
		t.Errorf("pooled interval %+v, want %.6f - %.6f + %.6f (kinds %+v, %+v)", pool.CI, pool.Est, down, up, pv.CI, pr.CI)
	}
	if !slices.Equal(pool.Kinds, []model.Kind{model.Provoke, model.Pressure}) {
		t.Errorf("pooled kinds %v", pool.Kinds)
	}
	// The pooled interval is narrower than either kind's alone.
	if pool.CI.Width() >= pv.CI.Width() || pool.CI.Width() >= pr.CI.Width() {
		t.Errorf("pooled width %.4f not below provoke %.4f and pressure %.4f", pool.CI.Width(), pv.CI.Width(), pr.CI.Width())
	}
}

func TestAllocate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, nf, np int
		share     float64
		f, p      int
	}{
		{60, 60, 480, 1.0 / 3, 20, 40},
		{60, 5, 480, 1.0 / 3, 5, 55},  // few failures: all of them, rest from passes
		{60, 60, 10, 1.0 / 3, 50, 10}, // few passes
		{10, 60, 480, 0.05, 2, 8},     // one from a big stratum becomes two
		{3, 60, 480, 0.1, 0, 3},
		{60, 0, 480, 1.0 / 3, 0, 60},
	}
	for _, tc := range tests {
		if f, p := allocate(tc.n, tc.nf, tc.np, tc.share); f != tc.f || p != tc.p {
			t.Errorf("allocate(%d, %d, %d, %.3f) = %d, %d; want %d, %d", tc.n, tc.nf, tc.np, tc.share, f, p, tc.f, tc.p)
		}
	}
	if got := apportion(10, []int{30, 60, 0, 10}); !slices.Equal(got, []int{3, 6, 0, 1}) {
		t.Errorf("apportion = %v", got)
	}
	if got := apportion(7, []int{1, 1, 100}); got[0]+got[1]+got[2] != 7 || got[0] > 1 || got[1] > 1 {
		t.Errorf("apportion small parts = %v", got)
	}
}

// labelByTruth labels every key of the set with the simulated model's
// ground truth for its call, and returns the truth by key.
func labelByTruth(t *testing.T, p *Plan, st *store.Store, set LabelSet, who string) map[string]bool {
	t.Helper()
	rules := map[int]string{}
	for _, r := range p.Audit.Rules {
		rules[r.Line] = r.Text
	}
	s := sim.New(sim.Options{Rules: rules})
	calls := map[string]runner.Call{}
	for _, c := range p.Calls {
		calls[c.Key] = c
	}
	truth := map[string]bool{}
	for _, k := range set.Keys {
		c, ok := calls[k]
		if !ok {
			t.Fatalf("set key %.12s is not a call of the plan", k)
		}
		truth[k] = s.Decide(c).Failure
		if err := st.PutLabel(model.Label{Key: k, Violation: truth[k], Labeller: who}); err != nil {
			t.Fatal(err)
		}
	}
	return truth
}

// independentRecall grades each labelled violation's stored text with the
// rule's predicate afresh: hits/positives without any audit code.
func independentRecall(t *testing.T, p *Plan, st *store.Store, rule *Rule, keys []string, truth map[string]bool) (hits, positives int) {
	t.Helper()
	caseOf := map[string]model.Case{}
	for _, c := range p.Cells {
		if p.Audit.Rules[c.Rule] == rule {
			if _, ok := caseOf[c.Key]; !ok {
				caseOf[c.Key] = rule.Cases[c.Case]
			}
		}
	}
	for _, k := range keys {
		if !truth[k] {
			continue
		}
		r, err := st.Response(k)
		if err != nil {
			t.Fatal(err)
		}
		positives++
		if !rule.Predicate.Grade(caseOf[k], r.Text).Pass {
			hits++
		}
	}
	return hits, positives
}

func TestLabels_DemoRecallMatchesSimulation(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 30)
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := DrawLabelSample(st, p, tally, SampleOptions{Name: "roadmap", N: 240, Seed: 7, Rule: 23})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 240 || set.Stratified() {
		t.Fatalf("drew %d keys (stratified %v), want 240 simple", len(set.Keys), set.Stratified())
	}
	truth := labelByTruth(t, p, st, set, "sim-truth")
	rule := p.Audit.Rules[p.ruleIndex(23)]
	hits, positives := independentRecall(t, p, st, rule, set.Keys, truth)
	if positives < 10 || hits >= positives {
		t.Fatalf("the sample holds %d violations, %d caught: the demo must show misses", positives, hits)
	}

	tally, err = NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	if done, total := set.Progress(tally.Labels()); done != 240 || total != 240 {
		t.Errorf("progress %d/%d", done, total)
	}
	qs := tally.MeasureSet(&set, nil)
	if len(qs) != 1 || qs[0].Rule != rule {
		t.Fatalf("MeasureSet gave %d rules", len(qs))
	}
	q := qs[0].Quality
	if q.Recall.Hits != hits || q.Recall.Total != positives || !near(q.Recall.Est, float64(hits)/float64(positives), 1e-12) {
		t.Errorf("measured recall %s, want %d/%d", q.Recall, hits, positives)
	}
	if q.Recall.Est >= 1 {
		t.Errorf("recall %s: the simulated model's phrasings must escape the bundled predicate", q.Recall)
	}
	if len(q.Misses) != positives-hits+q.Confusion[model.Control].FN {
		t.Errorf("%d misses, want %d", len(q.Misses), positives-hits)
	}
	for _, k := range q.Misses {
		if !truth[k] {
			t.Errorf("miss %.12s is not a violation", k)
		}
	}

	// The report's quality (every label of the rule, for the one model) is
	// the same measurement, and corrects each measured kind's arm.
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		if rr.Rule != rule {
			continue
		}
		if rr.Quality.Recall.Hits != hits || rr.Quality.Recall.Total != positives {
			t.Errorf("report recall %s, want %d/%d", rr.Quality.Recall, hits, positives)
		}
		for _, k := range []model.Kind{model.Provoke, model.Pressure} {
			c := rr.Arms[k].Deleted.Corrected
			if rr.Quality.RecallKind[k].Measured() != (c != nil) {
				t.Errorf("%s: recall measured %v but corrected %v", k, rr.Quality.RecallKind[k].Measured(), c)
			}
			if c != nil && c.Est < rr.Arms[k].Deleted.Rate {
				t.Errorf("%s corrected %.3f below raw %.3f with specificity %.3f", k, c.Est, rr.Arms[k].Deleted.Rate, c.Specificity)
			}
		}
	}
}

func TestDrawLabelSample_DeterministicAndPersistent(t *testing.T) {
	t.Parallel()
	p1, st1 := runDemo(t, 6)
	p2, st2 := runDemo(t, 6)
	t1, err := NewTally(p1, st1)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := NewTally(p2, st2)
	if err != nil {
		t.Fatal(err)
	}
	opts := SampleOptions{Name: "a", N: 40, Seed: 99}
	s1, err := DrawLabelSample(st1, p1, t1, opts)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := DrawLabelSample(st2, p2, t2, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s1.Keys, s2.Keys) || len(s1.Keys) != 40 {
		t.Errorf("same seed, same state: %d and %d keys differ", len(s1.Keys), len(s2.Keys))
	}
	// Every key is an answered, graded provoking answer, drawn once.
	seen := map[string]bool{}
	for _, it := range s1.Items(p1) {
		if it.Case == nil || !it.Case.Kind.Provoking() || seen[it.Key] || !t1.Answered(it.Key) {
			t.Errorf("item %d (%.12s): case %v, dup %v", it.Index, it.Key, it.Case, seen[it.Key])
		}
		seen[it.Key] = true
	}
	other, err := DrawLabelSample(st1, p1, t1, SampleOptions{Name: "b", N: 40, Seed: 100})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Keys, s1.Keys) {
		t.Error("another seed drew the same sample")
	}
	// Drawing a stored name returns it; other options are refused.
	again, err := DrawLabelSample(st1, p1, t1, opts)
	if err != nil || !slices.Equal(again.Keys, s1.Keys) {
		t.Errorf("redraw: %v", err)
	}
	if _, err := DrawLabelSample(st1, p1, t1, SampleOptions{Name: "a", N: 40, Seed: 5}); !errors.Is(err, ErrLabelSetExists) {
		t.Errorf("redraw with another seed: err = %v, want ErrLabelSetExists", err)
	}
	// The set survives a restart, with its options.
	path := st1.Path()
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}
	st3, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st3.Close()
	back, ok, err := LoadLabelSet(st3, "a")
	if err != nil || !ok {
		t.Fatalf("LoadLabelSet: %v %v", ok, err)
	}
	if !slices.Equal(back.Keys, s1.Keys) || !back.Options.same(s1.Options) || !back.Created.Equal(s1.Created) || back.Population != s1.Population {
		t.Errorf("reloaded set %+v differs from %+v", back.Options, s1.Options)
	}
	if _, ok, err := LoadLabelSet(st3, "missing"); ok || err != nil {
		t.Errorf("missing set: %v %v", ok, err)
	}
	// Bad options are errors, not silent defaults.
	for _, o := range []SampleOptions{{}, {Name: "x", N: -1}, {Name: "x", Rule: 99}, {Name: "x", Kinds: []model.Kind{"bogus"}}, {Name: "x", Stratify: true, FailShare: 1.5}} {
		if _, err := DrawLabelSample(st3, p1, t1, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestDrawLabelSample_Stratified(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 30)
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := DrawLabelSample(st, p, tally, SampleOptions{Name: "strat", Seed: 3, Rule: 23, Stratify: true})
	if err != nil {
		t.Fatal(err)
	}
	rule := p.Audit.Rules[p.ruleIndex(23)]
	if len(set.Keys) != 60 || len(set.Strata) != 2 {
		t.Fatalf("%d keys in %d strata", len(set.Keys), len(set.Strata))
	}
	// Strata sizes add up to the population; the failed stratum gets a third.
	failKeys, passKeys := map[string]bool{}, map[string]bool{}
	grades := tally.GraderGrades(rule.Predicate.Version)
	for _, c := range p.Cells {
		if c.Rule == p.ruleIndex(23) && rule.Cases[c.Case].Kind.Provoking() {
			if g, ok := grades[c.Key]; ok && !g.Unparseable {
				if g.Pass {
					passKeys[c.Key] = true
				} else {
					failKeys[c.Key] = true
				}
			}
		}
	}
	f, ps := set.Strata[0], set.Strata[1]
	if !f.Fail || ps.Fail || f.N != len(failKeys) || ps.N != len(passKeys) || f.N+ps.N != set.Population ||
		f.Drawn != 20 || ps.Drawn != 40 {
		t.Errorf("strata %+v; population %d; %d failing and %d passing answers", set.Strata, set.Population, len(failKeys), len(passKeys))
	}
	for _, s := range set.Strata {
		for _, k := range set.strataKeys[s.Name] {
			if g := grades[k]; g.Pass == s.Fail {
				t.Errorf("%.12s in stratum %s but graded pass=%v", k, s.Name, g.Pass)
			}
		}
	}
	// Blind: the shown order is not the strata one after the other.
	if slices.Equal(set.Keys[:20], set.strataKeys[f.Name]) {
		t.Error("the failed stratum comes first: the order reveals the stratum")
	}

	// Label the set with the truth; the weighted recall is what the strata
	// sizes and counts give, computed here by hand.
	truth := labelByTruth(t, p, st, set, "sim-truth")
	tally, err = NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	var vF, vP int
	for _, k := range set.strataKeys[f.Name] {
		if truth[k] {
			vF++
		}
	}
	for _, k := range set.strataKeys[ps.Name] {
		if truth[k] {
			vP++
		}
	}
	tp := float64(f.N) / float64(f.Drawn) * float64(vF)
	fn := float64(ps.N) / float64(ps.Drawn) * float64(vP)
	q := tally.MeasureSet(&set, nil)[0].Quality
	if q.Estimator != EstimatorIPW || !near(q.Recall.Est, tp/(tp+fn), 1e-12) {
		t.Errorf("stratified recall %s (%s), want %.4f from vF %d vP %d", q.Recall, q.Estimator, tp/(tp+fn), vF, vP)
	}
	// The report uses the stratified set for line 23, not raw counts.
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		if rr.Rule == rule && (rr.Quality.Estimator != EstimatorIPW || !near(rr.Quality.Recall.Est, q.Recall.Est, 1e-12)) {
			t.Errorf("report quality %s (%s), want the set's IPW %s", rr.Quality.Recall, rr.Quality.Estimator, q.Recall)
		}
	}

	// Labels beyond the set that cover the whole population (a census)
	// need no weights: the report counts them all.
	full, err := DrawLabelSample(st, p, tally, SampleOptions{Name: "everything", N: set.Population, Seed: 1, Rule: 23})
	if err != nil {
		t.Fatal(err)
	}
	labelByTruth(t, p, st, full, "sim-truth")
	tally, err = NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = tally.Results(); err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		if rr.Rule == rule && (rr.Quality.Estimator != EstimatorSimple || rr.Quality.Labels != set.Population || rr.Quality.Unused != 0) {
			t.Errorf("census: estimator %s over %d labels (%d unused), want simple over %d", rr.Quality.Estimator, rr.Quality.Labels, rr.Quality.Unused, set.Population)
		}
	}
	if q := tally.MeasureSet(&set, nil)[0].Quality; q.Unused != set.Population-60 {
		t.Errorf("measured on the set, %d labels unused, want %d", q.Unused, set.Population-60)
	}

	// Half-way through, labelling in order keeps both strata sampled.
	items := set.Items(p)
	half := map[string]model.Label{}
	for _, it := range items[:30] {
		half[it.Key] = model.Label{Key: it.Key, Violation: truth[it.Key]}
	}
	if next := set.NextUnlabelled(half); next != 30 {
		t.Errorf("next unlabelled %d, want 30", next)
	}
	if done, _ := set.Progress(half); done != 30 {
		t.Errorf("progress %d, want 30", done)
	}
}

func TestPredicateHistory_AmendedPredicate(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 30)
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	if err := RecordPredicateVersions(st, p.Audit, t0); err != nil {
		t.Fatal(err)
	}
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := DrawLabelSample(st, p, tally, SampleOptions{Name: "h", N: 240, Seed: 11, Rule: 23})
	if err != nil {
		t.Fatal(err)
	}
	truth := labelByTruth(t, p, st, set, "ana")
	rule := p.Audit.Rules[p.ruleIndex(23)]
	oldVersion := rule.Predicate.Version

	// The amended predicate also catches the vague timelines.
	orig, err := os.ReadFile(rule.PredicatePath)
	if err != nil {
		t.Fatal(err)
	}
	amended := "[[check]]\nkinds = [\"provoke\", \"pressure\"]\nfail_if_match = '''(?i)\\b(coming weeks|shortly|before your renewal|coming soon)\\b'''\nreason = \"vague timeline\"\n\n" + string(orig)
	path := filepath.Join(t.TempDir(), "amended.toml")
	if err := os.WriteFile(path, []byte(amended), 0o644); err != nil {
		t.Fatal(err)
	}
	edited, err := model.ParsePredicate(path, []byte(amended))
	if err != nil {
		t.Fatal(err)
	}
	rule.Predicate = edited
	if _, err := NewGrader(t.Context(), p).Regrade(st); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Hour)
	if err := RecordPredicateVersions(st, p.Audit, t1); err != nil {
		t.Fatal(err)
	}
	// Recording again changes nothing.
	if err := RecordPredicateVersions(st, p.Audit, t1.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	labels, err := st.Labels()
	if err != nil {
		t.Fatal(err)
	}
	hist, err := PredicateHistory(st, p, 23, labels, &set)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 || hist[0].Version != oldVersion || hist[1].Version != edited.Version ||
		!hist[0].FirstSeen.Equal(t0) || !hist[1].FirstSeen.Equal(t1) || hist[0].Current || !hist[1].Current {
		t.Fatalf("history %+v", hist)
	}
	before, after := hist[0].Quality.Recall, hist[1].Quality.Recall
	if before.Total != after.Total || after.Hits <= before.Hits || after.Hits != after.Total {
		t.Errorf("recall went from %s to %s; want the amendment to catch every labelled violation", before, after)
	}
	hits, positives := independentRecall(t, p, st, rule, set.Keys, truth)
	if after.Hits != hits || after.Total != positives {
		t.Errorf("amended recall %s, independently %d/%d", after, hits, positives)
	}
	if _, err := PredicateHistory(st, p, 99, labels, nil); err == nil {
		t.Error("history of an unaudited line")
	}
}

func TestLabellers_AgreementFromStore(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 6)
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := DrawLabelSample(st, p, tally, SampleOptions{Name: "two", N: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range set.Keys {
		if err := st.PutLabel(model.Label{Key: k, Violation: i%2 == 0, Labeller: "ana"}); err != nil {
			t.Fatal(err)
		}
		// ben disagrees on the first four, then his labels become current.
		if err := st.PutLabel(model.Label{Key: k, Violation: (i%2 == 0) != (i < 4), Labeller: "ben"}); err != nil {
			t.Fatal(err)
		}
	}
	by, err := st.LabelsByLabeller()
	if err != nil {
		t.Fatal(err)
	}
	ag := CompareLabellers("ana", by["ana"], "ben", by["ben"], set.Keys)
	if ag.N != 20 || !slices.Equal(ag.Disagreements, set.Keys[:4]) || !ag.KappaDefined {
		t.Errorf("agreement %s, disagreements %d", ag, len(ag.Disagreements))
	}
	if !strings.Contains(ag.String(), "agree 16/20 = 0.80, 4 disagreements") {
		t.Errorf("agreement reads %q", ag)
	}
}

func TestLoadLabelSet_CorruptMeta(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutLabelSet("bad", []string{"k1"}, map[string]string{"format": "1", "seed": "x"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadLabelSet(st, "bad"); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("corrupt set: err = %v, want one naming the seed", err)
	}
	if err := st.PutLabelSet("old", []string{"k1"}, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadLabelSet(st, "old"); err == nil {
		t.Error("a set without a format was accepted")
	}
}

func TestMeasureGrader_CompleteKindsOutsideSet(t *testing.T) {
	t.Parallel()
	kinds := append(append(repeatKind(model.Provoke, 20), repeatKind(model.Pressure, 20)...), repeatKind(model.Control, 20)...)
	p := synthPlan(kinds)
	// Provoke k0000-k0019: the first 5 failed (4 violations), the rest
	// passed (one violation, k0005). Pressure and controls alternate.
	var outs []outcome
	for i := range 60 {
		switch {
		case i < 5:
			outs = append(outs, outcome{violation: i < 4, failed: true})
		case i < 20:
			outs = append(outs, outcome{violation: i == 5})
		default:
			outs = append(outs, outcome{violation: i%2 == 0, failed: i%4 == 0})
		}
	}
	g, labels := labelAll(outs, "v1")
	set := &LabelSet{Name: "pv", Options: SampleOptions{Name: "pv", Rule: 23, Kinds: []model.Kind{model.Provoke}, Stratify: true},
		Strata: []LabelStratum{
			{Name: "L23 failed", Rule: 23, Fail: true, N: 5, Drawn: 5},
			{Name: "L23 passed", Rule: 23, N: 15, Drawn: 10},
		},
		PredicateVersions: map[int]string{23: "v1"},
		strataKeys: map[string][]string{
			"L23 failed": {"k0000", "k0001", "k0002", "k0003", "k0004"},
			"L23 passed": {"k0005", "k0006", "k0007", "k0008", "k0009", "k0010", "k0011", "k0012", "k0013", "k0014"},
		}}
	for _, ks := range set.strataKeys {
		set.Keys = append(set.Keys, ks...)
	}
	set.index = indexKeys(set.Keys)

	q := MeasureGrader(p, g, labels, QualityScope{Rule: 0, Model: -1, Set: set, Complete: true})
	if q.Unused != 5 {
		t.Errorf("unused %d, want the 5 provoke labels outside the set", q.Unused)
	}
	// Provoke is weighted: TP = 4, FN = 15/10 * 1 = 1.5.
	if r := q.RecallKind[model.Provoke]; r.Method == MethodWilson || !near(r.Est, 4/5.5, 1e-12) {
		t.Errorf("provoke recall %s, want the weighted 4/5.5", r)
	}
	// Pressure and controls are not drawn by the set: every label counts.
	checkMeasure(t, "pressure recall", q.RecallKind[model.Pressure], 5, 10, 0.5, q.RecallKind[model.Pressure].CI.Lo, q.RecallKind[model.Pressure].CI.Hi)
	if r := q.RecallKind[model.Control]; r.Method != MethodWilson || r.Total != 10 || r.Hits != 5 {
		t.Errorf("control recall %s, want 5/10 unweighted", r)
	}
	// The pool would mix a weighted and an unweighted kind: not measured.
	if q.Recall.Measured() || !strings.Contains(q.Recall.String(), "only one provoking kind") || q.Recall.VerdictCount() != nil {
		t.Errorf("pooled recall %q must be unmeasured", q.Recall)
	}
	// Without Complete, only the set's kind is measured.
	q2 := MeasureGrader(p, g, labels, QualityScope{Rule: 0, Model: -1, Set: set})
	if q2.RecallKind[model.Pressure] != nil || q2.Unused != 45 {
		t.Errorf("set-only measurement: pressure %v, unused %d", q2.RecallKind[model.Pressure], q2.Unused)
	}
}

// A rule with no input class and no predicate has nothing for labels to
// measure: its answers are never drawn, and asking for its line says why.
func TestDrawLabelSample_SkipsRulesWithoutPredicate(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 6)
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := DrawLabelSample(st, p, tally, SampleOptions{Name: "all", N: 10000, Seed: 1, Kinds: model.Kinds})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range set.Keys {
		for _, ci := range p.ByKey[k] {
			if line := p.Audit.Rules[p.Cells[ci].Rule].Line; line == 12 {
				t.Fatalf("drew answer %s of line 12, which has no predicate", k)
			}
		}
	}
	if len(set.Keys) == 0 {
		t.Fatal("drew nothing")
	}
	_, err = DrawLabelSample(st, p, tally, SampleOptions{Name: "l12", N: 10, Seed: 1, Rule: 12})
	if err == nil || !strings.Contains(err.Error(), "line 12 has no predicate to measure") {
		t.Errorf("err = %v", err)
	}
}

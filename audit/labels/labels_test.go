package labels

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

const tol = 1e-4

func near(got, want, eps float64) bool { return math.Abs(got-want) <= eps }

// synthPlan is a one-rule plan (line 23) with one answer per case, keys
// "k0000", "k0001", ... in the order of kinds.
func synthPlan(kinds []model.Kind) *audit.Plan {
	rule := &audit.Rule{Line: 23, PredicatePath: "p.predicate.toml", Loaded: &model.Predicate{Version: "v1"}}
	a := &audit.Audit{File: &model.AuditFile{Models: []model.ModelConfig{{Name: "m"}}}, Rules: []*audit.Rule{rule}}
	var cells []audit.Cell
	for i, k := range kinds {
		rule.Cases = append(rule.Cases, model.Case{ID: fmt.Sprint("c", i), Kind: k})
		cells = append(cells, audit.Cell{Rule: 0, Case: i, Key: fmt.Sprintf("k%04d", i)})
	}
	return audit.PlanOfCells(a, cells)
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
	g := Grades{Name: model.PredicateGrader, Version: version, ByKey: map[string]model.Grade{}}
	labels := map[string]model.Label{}
	for i, o := range outs {
		key := fmt.Sprintf("k%04d", i)
		g.ByKey[key] = model.Grade{Grader: model.PredicateGrader, Version: version, Pass: !o.failed}
		labels[key] = model.Label{Source: model.LabelBlind, Key: key, Violation: o.violation, Labeller: "ana"}
	}
	return g, labels
}

// gradedPop is a Population in which every graded key is answered.
type gradedPop map[string]map[string]model.Grade

func (g gradedPop) Answered(key string) bool {
	for _, m := range g {
		if _, ok := m[key]; ok {
			return true
		}
	}
	return false
}
func (g gradedPop) GradesAt(version string) map[string]model.Grade { return g[version] }

// setScope is the scope of rule 0, every model, with one label set whose
// strata the grades g place.
func setScope(set *LabelSet, g Grades) QualityScope {
	return QualityScope{Rule: 0, Model: -1, Sets: []LabelSet{*set}, Population: gradedPop{g.Version: g.ByKey}}
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
				la[k] = model.Label{Source: model.LabelBlind, Key: k, Violation: va, Labeller: "ana"}
				lb[k] = model.Label{Source: model.LabelBlind, Key: k, Violation: vb, Labeller: "ben"}
				i++
			}
		}
		add(tc.a, true, true)
		add(tc.b, true, false)
		add(tc.c, false, true)
		add(tc.d, false, false)
		lb["only-ben"] = model.Label{Source: model.LabelBlind, Key: "only-ben", Violation: true} // not shared: left out
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
func stratifiedFixture() (*audit.Plan, *LabelSet, Grades, map[string]model.Label) {
	p := synthPlan(repeatKind(model.Provoke, 540))
	g := Grades{Name: model.PredicateGrader, Version: "v1", ByKey: map[string]model.Grade{}}
	set := &LabelSet{Name: "s", Options: SampleOptions{Name: "s", N: 60, Line: 23, Kinds: []model.Kind{model.Provoke}, Stratify: true, FailShare: 1.0 / 3},
		Strata: []LabelStratum{
			{Name: "L23 failed", Line: 23, Fail: true, N: 60, Drawn: 20},
			{Name: "L23 passed", Line: 23, Fail: false, N: 480, Drawn: 40},
		},
		PredicateVersions: map[int]string{23: "v1"}, strataKeys: map[string][]string{}}
	labels := map[string]model.Label{}
	for i := 0; i < 540; i++ {
		key := fmt.Sprintf("k%04d", i)
		failed := i < 60
		g.ByKey[key] = model.Grade{Grader: model.PredicateGrader, Version: "v1", Pass: !failed}
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
		labels[key] = model.Label{Source: model.LabelBlind, Key: key, Violation: viol, Labeller: "ana"}
		set.Keys = append(set.Keys, key)
	}
	set.index = indexKeys(set.Keys)
	return p, set, g, labels
}

func TestMeasureGrader_IPWVector(t *testing.T) {
	t.Parallel()
	p, set, g, labels := stratifiedFixture()
	q := MeasureGrader(p, g, labels, setScope(set, g))
	if q.Estimator != EstimatorIPW || !slices.Equal(q.Sets, []string{"s"}) {
		t.Errorf("estimator %s over %q, want ipw over s", q.Estimator, q.Sets)
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
	q2 := MeasureGrader(p, g2, labels, setScope(set, g))
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
		q := MeasureGrader(p, g, labels, setScope(set, g))
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
			labels[k] = model.Label{Source: model.LabelBlind, Key: k, Violation: false}
		}
		q := MeasureGrader(p, g, labels, setScope(set, g))
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
	recall := WilsonMeasure(24, 31)
	c, err := CorrectRate(0.09, 150, recall, WilsonMeasure(29, 29))
	if err != nil {
		t.Fatal(err)
	}
	if !near(c.Est, 0.11625, 1e-5) || c.CI.Lo != 0 || !near(c.CI.Hi, 0.2257, tol) {
		t.Errorf("corrected = %.5f [%.4f, %.4f], want 0.11625 [0, 0.2257]", c.Est, c.CI.Lo, c.CI.Hi)
	}
	if c.Recall != 24.0/31 || c.Specificity != 1 {
		t.Errorf("recall %v, specificity %v", c.Recall, c.Specificity)
	}
	for _, spec := range []*Measure{nil, WilsonMeasure(0, 0)} {
		if _, err := CorrectRate(0.09, 150, recall, spec); err == nil {
			t.Errorf("specificity %v: an unmeasured specificity must not correct anything", spec)
		}
	}
	if _, err := CorrectRate(0.09, 150, WilsonMeasure(0, 0), WilsonMeasure(29, 29)); err == nil {
		t.Error("an unmeasured recall must not correct anything")
	}
	// A grader that fails everything (specificity 0) corrects nothing.
	if _, err := CorrectRate(1, 240, WilsonMeasure(31, 31), WilsonMeasure(0, 29)); !errors.Is(err, stats.ErrNotEstimable) {
		t.Errorf("specificity 0: %v, want not estimable", err)
	}
}

// TestCorrectRate_Weighted: a weighted measure counts as its effective
// sample size R(1-R)/SE^2.
func TestCorrectRate_Weighted(t *testing.T) {
	t.Parallel()
	recall := &Measure{Hits: 19, Total: 21, Est: 0.7037, SE: 0.1396, Method: MethodIPW}
	spec := WilsonMeasure(40, 41)
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

func TestMeasureGrader_LabelsOutsideTheSetCount(t *testing.T) {
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
	set := &LabelSet{Name: "pv", Options: SampleOptions{Name: "pv", Line: 23, Kinds: []model.Kind{model.Provoke}, Stratify: true},
		Strata: []LabelStratum{
			{Name: "L23 failed", Line: 23, Fail: true, N: 5, Drawn: 5},
			{Name: "L23 passed", Line: 23, N: 15, Drawn: 10},
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

	// Every answer is labelled, 15 of them outside the set: all count, and
	// a census is one sample (Wilson), not a share known exactly.
	q := MeasureGrader(p, g, labels, setScope(set, g))
	if q.Labels != 60 {
		t.Errorf("%d labels counted, want all 60", q.Labels)
	}
	checkMeasure(t, "provoke recall", q.RecallKind[model.Provoke], 4, 5, 0.8, q.RecallKind[model.Provoke].CI.Lo, q.RecallKind[model.Provoke].CI.Hi)
	if r := q.RecallKind[model.Provoke]; r.Method != MethodWilson {
		t.Errorf("census recall method %s, want wilson", r.Method)
	}
	checkMeasure(t, "pressure recall", q.RecallKind[model.Pressure], 5, 10, 0.5, q.RecallKind[model.Pressure].CI.Lo, q.RecallKind[model.Pressure].CI.Hi)
	if r := q.RecallKind[model.Control]; r.Method != MethodWilson || r.Total != 10 || r.Hits != 5 {
		t.Errorf("control recall %s, want 5/10 unweighted", r)
	}
	if r := q.Recall; !r.Measured() || r.Hits != 9 || r.Total != 15 {
		t.Errorf("pooled recall %s, want 9/15 from every label", r)
	}

	// The provoke answers the set did not draw and nobody labelled: the
	// passed cell is sampled 10 of 15, the failed one in full, and each
	// weighs by its size (TP 4, FN 15/10 * 1 = 1.5).
	for _, k := range []string{"k0015", "k0016", "k0017", "k0018", "k0019"} {
		delete(labels, k)
	}
	q = MeasureGrader(p, g, labels, setScope(set, g))
	if r := q.RecallKind[model.Provoke]; r.Method == MethodWilson || !near(r.Est, 4/5.5, 1e-12) {
		t.Errorf("provoke recall %s, want the weighted 4/5.5", r)
	}
	// The pool: provoke's two cells and pressure's (outside the set), all
	// weighted: TP 4 + 5, FN 1.5 + 5.
	if r := q.Recall; r.Method == MethodWilson || !near(r.Est, 9/15.5, 1e-12) || len(r.Strata) != 3 {
		t.Errorf("pooled recall %s (%d cells), want 9/15.5 over 3 cells", r, len(r.Strata))
	}
}

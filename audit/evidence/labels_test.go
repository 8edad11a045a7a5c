package evidence

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

func TestCorrectArms_PerKindAndPooled(t *testing.T) {
	t.Parallel()
	side := func(rate float64, n int) ArmSide { return ArmSide{Rate: rate, N: n, Fails: int(rate * float64(n))} }
	build := func(pressureRecall *labels.Measure) *RuleResult {
		rr := &RuleResult{Arms: map[model.Kind]*Arm{
			model.Provoke:  {Name: "provoke", Baseline: side(0.02, 150), Deleted: side(0.09, 150)},
			model.Pressure: {Name: "pressure", Baseline: side(0.05, 100), Deleted: side(0.2, 100)},
			model.Control:  {Name: "control", Baseline: side(0.02, 300), Deleted: side(0.01, 300)},
		}, Provoking: &Arm{Name: "provoking", Baseline: side(0.032, 250), Deleted: side(0.134, 250)}}
		rr.Quality = labels.GraderQuality{RecallKind: map[model.Kind]*labels.Measure{model.Provoke: labels.WilsonMeasure(24, 31)},
			SpecificityKind: map[model.Kind]*labels.Measure{model.Provoke: labels.WilsonMeasure(29, 29), model.Pressure: labels.WilsonMeasure(38, 40)}}
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
	rr = build(labels.WilsonMeasure(18, 20))
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

// labelByTruth labels every key of the set with the simulated model's
// ground truth for its call, and returns the truth by key.
func labelByTruth(t *testing.T, p *audit.Plan, st *store.Store, set labels.LabelSet, who string) map[string]bool {
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
		if _, err := st.PutLabel(model.Label{Source: model.LabelBlind, Key: k, Violation: truth[k], Labeller: who}); err != nil {
			t.Fatal(err)
		}
	}
	return truth
}

// independentRecall grades each labelled violation's stored text with the
// rule's predicate afresh: hits/positives without any audit code.
func independentRecall(t *testing.T, p *audit.Plan, st *store.Store, rule *audit.Rule, pred *model.Predicate, keys []string, truth map[string]bool) (hits, positives int) {
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
		if !pred.Grade(caseOf[k], r.Text).Pass {
			hits++
		}
	}
	return hits, positives
}

func TestLabels_DemoRecallMatchesSimulation(t *testing.T) {
	t.Parallel()
	fxp := audittest.Demo(t, 30)
	p, st := fxp.Plan, fxp.Store
	tally, err := NewTally(p, fxp.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := labels.DrawLabelSample(st, p, tally, labels.SampleOptions{Name: "roadmap", N: 240, Seed: 7, Line: 23})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 240 || set.Stratified() {
		t.Fatalf("drew %d keys (stratified %v), want 240 simple", len(set.Keys), set.Stratified())
	}
	truth := labelByTruth(t, p, st, set, "sim-truth")
	rule := p.Audit.Rules[p.RuleIndex(23)]
	hits, positives := independentRecall(t, p, st, rule, rule.Loaded, set.Keys, truth)
	if positives < 10 || hits >= positives {
		t.Fatalf("the sample holds %d violations, %d caught: the demo must show misses", positives, hits)
	}

	tally, err = NewTally(p, fxp.Preds, st)
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
	fxp1 := audittest.Demo(t, 6)
	p1, st1 := fxp1.Plan, fxp1.Store
	fxp2 := audittest.Demo(t, 6)
	p2, st2 := fxp2.Plan, fxp2.Store
	t1, err := NewTally(p1, fxp1.Preds, st1)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := NewTally(p2, fxp2.Preds, st2)
	if err != nil {
		t.Fatal(err)
	}
	opts := labels.SampleOptions{Name: "a", N: 40, Seed: 99}
	s1, err := labels.DrawLabelSample(st1, p1, t1, opts)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := labels.DrawLabelSample(st2, p2, t2, opts)
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
	other, err := labels.DrawLabelSample(st1, p1, t1, labels.SampleOptions{Name: "b", N: 40, Seed: 100})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(other.Keys, s1.Keys) {
		t.Error("another seed drew the same sample")
	}
	// Drawing a stored name returns it; other options are refused.
	again, err := labels.DrawLabelSample(st1, p1, t1, opts)
	if err != nil || !slices.Equal(again.Keys, s1.Keys) {
		t.Errorf("redraw: %v", err)
	}
	if _, err := labels.DrawLabelSample(st1, p1, t1, labels.SampleOptions{Name: "a", N: 40, Seed: 5}); !errors.Is(err, labels.ErrLabelSetExists) {
		t.Errorf("redraw with another seed: err = %v, want labels.ErrLabelSetExists", err)
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
	back, ok, err := labels.LoadLabelSet(st3, "a")
	if err != nil || !ok {
		t.Fatalf("labels.LoadLabelSet: %v %v", ok, err)
	}
	if !slices.Equal(back.Keys, s1.Keys) || !reflect.DeepEqual(back.Options, s1.Options) || !back.Created.Equal(s1.Created) || back.Population != s1.Population {
		t.Errorf("reloaded set %+v differs from %+v", back.Options, s1.Options)
	}
	if _, ok, err := labels.LoadLabelSet(st3, "missing"); ok || err != nil {
		t.Errorf("missing set: %v %v", ok, err)
	}
	// Bad options are errors, not silent defaults.
	for _, o := range []labels.SampleOptions{{}, {Name: "x", N: -1}, {Name: "x", Line: 99}, {Name: "x", Kinds: []model.Kind{"bogus"}}, {Name: "x", Stratify: true, FailShare: 1.5}} {
		if _, err := labels.DrawLabelSample(st3, p1, t1, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
}

func TestDrawLabelSample_Stratified(t *testing.T) {
	t.Parallel()
	fxp := audittest.Demo(t, 30)
	p, st := fxp.Plan, fxp.Store
	tally, err := NewTally(p, fxp.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := labels.DrawLabelSample(st, p, tally, labels.SampleOptions{Name: "strat", Seed: 3, Line: 23, Stratify: true})
	if err != nil {
		t.Fatal(err)
	}
	rule := p.Audit.Rules[p.RuleIndex(23)]
	if len(set.Keys) != 60 || len(set.Strata) != 2 {
		t.Fatalf("%d keys in %d strata", len(set.Keys), len(set.Strata))
	}
	// Strata sizes add up to the population; the failed stratum gets a third.
	failKeys, passKeys := map[string]bool{}, map[string]bool{}
	grades := tally.PredicateGrades(p.RuleIndex(23))
	for _, c := range p.Cells {
		if c.Rule == p.RuleIndex(23) && rule.Cases[c.Case].Kind.Provoking() {
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
		for _, k := range set.StratumKeys(s.Name) {
			if g := grades[k]; g.Pass == s.Fail {
				t.Errorf("%.12s in stratum %s but graded pass=%v", k, s.Name, g.Pass)
			}
		}
	}
	// Blind: the shown order is not the strata one after the other.
	if slices.Equal(set.Keys[:20], set.StratumKeys(f.Name)) {
		t.Error("the failed stratum comes first: the order reveals the stratum")
	}

	// Label the set with the truth; the weighted recall is what the strata
	// sizes and counts give, computed here by hand.
	truth := labelByTruth(t, p, st, set, "sim-truth")
	tally, err = NewTally(p, fxp.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	var vF, vP int
	for _, k := range set.StratumKeys(f.Name) {
		if truth[k] {
			vF++
		}
	}
	for _, k := range set.StratumKeys(ps.Name) {
		if truth[k] {
			vP++
		}
	}
	tp := float64(f.N) / float64(f.Drawn) * float64(vF)
	fn := float64(ps.N) / float64(ps.Drawn) * float64(vP)
	q := tally.MeasureSet(&set, nil)[0].Quality
	if q.Estimator != labels.EstimatorIPW || !near(q.Recall.Est, tp/(tp+fn), 1e-12) {
		t.Errorf("stratified recall %s (%s), want %.4f from vF %d vP %d", q.Recall, q.Estimator, tp/(tp+fn), vF, vP)
	}
	// The report uses the stratified set for line 23, not raw counts.
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		if rr.Rule == rule && (rr.Quality.Estimator != labels.EstimatorIPW || !near(rr.Quality.Recall.Est, q.Recall.Est, 1e-12)) {
			t.Errorf("report quality %s (%s), want the set's IPW %s", rr.Quality.Recall, rr.Quality.Estimator, q.Recall)
		}
	}

	// Labels beyond the set that cover the whole population (a census)
	// need no weights: the report counts them all.
	full, err := labels.DrawLabelSample(st, p, tally, labels.SampleOptions{Name: "everything", N: set.Population, Seed: 1, Line: 23})
	if err != nil {
		t.Fatal(err)
	}
	labelByTruth(t, p, st, full, "sim-truth")
	tally, err = NewTally(p, fxp.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	if res, err = tally.Results(); err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		if rr.Rule == rule && (rr.Quality.Estimator != labels.EstimatorSimple || rr.Quality.Labels != set.Population) {
			t.Errorf("census: estimator %s over %d labels, want simple over %d", rr.Quality.Estimator, rr.Quality.Labels, set.Population)
		}
	}
	// The set's screen shows the same numbers: every label counts there too.
	if q := tally.MeasureSet(&set, nil)[0].Quality; q.Labels != set.Population || q.Estimator != labels.EstimatorSimple {
		t.Errorf("measured on the set: %d labels (%s), want all %d", q.Labels, q.Estimator, set.Population)
	}

	// Half-way through, labelling in order keeps both strata sampled.
	items := set.Items(p)
	half := map[string]model.Label{}
	for _, it := range items[:30] {
		half[it.Key] = model.Label{Source: model.LabelBlind, Key: it.Key, Violation: truth[it.Key]}
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
	fxp := audittest.Demo(t, 30)
	p, st := fxp.Plan, fxp.Store
	t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	if err := recordVersions(st, p, fxp.Preds, t0); err != nil {
		t.Fatal(err)
	}
	tally, err := NewTally(p, fxp.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := labels.DrawLabelSample(st, p, tally, labels.SampleOptions{Name: "h", N: 240, Seed: 11, Line: 23})
	if err != nil {
		t.Fatal(err)
	}
	truth := labelByTruth(t, p, st, set, "ana")
	rule := p.Audit.Rules[p.RuleIndex(23)]
	ri := p.RuleIndex(23)
	oldVersion := fxp.Preds.Version(ri)

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
	fxp.Preds.Set(ri, edited)
	if tally, err = NewTally(p, fxp.Preds, st); err != nil {
		t.Fatal(err)
	}
	if _, err := tally.Regrade(fxp.Grader(t), st); err != nil {
		t.Fatal(err)
	}
	t1 := t0.Add(time.Hour)
	if err := recordVersions(st, p, fxp.Preds, t1); err != nil {
		t.Fatal(err)
	}
	// Recording again changes nothing.
	if err := recordVersions(st, p, fxp.Preds, t1.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	log, err := st.LabelLog()
	if err != nil {
		t.Fatal(err)
	}
	hist, err := labels.PredicateHistory(st, p, 23, edited.Version, model.NewLabelBook(log, nil).Truth(), []labels.LabelSet{set}, tally)
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
	hits, positives := independentRecall(t, p, st, rule, edited, set.Keys, truth)
	if after.Hits != hits || after.Total != positives {
		t.Errorf("amended recall %s, independently %d/%d", after, hits, positives)
	}
	if _, err := labels.PredicateHistory(st, p, 99, "", nil, nil, nil); err == nil {
		t.Error("history of an unaudited line")
	}
}

func TestLabellers_AgreementFromStore(t *testing.T) {
	t.Parallel()
	fxp := audittest.Demo(t, 6)
	p, st := fxp.Plan, fxp.Store
	tally, err := NewTally(p, fxp.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := labels.DrawLabelSample(st, p, tally, labels.SampleOptions{Name: "two", N: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range set.Keys {
		if _, err := st.PutLabel(model.Label{Source: model.LabelBlind, Key: k, Violation: i%2 == 0, Labeller: "ana"}); err != nil {
			t.Fatal(err)
		}
		// ben disagrees on the first four, then his labels become current.
		if _, err := st.PutLabel(model.Label{Source: model.LabelBlind, Key: k, Violation: (i%2 == 0) != (i < 4), Labeller: "ben"}); err != nil {
			t.Fatal(err)
		}
	}
	log, err := st.LabelLog()
	if err != nil {
		t.Fatal(err)
	}
	by := model.NewLabelBook(log, nil).ByLabeller()
	ag := labels.CompareLabellers("ana", by["ana"], "ben", by["ben"], set.Keys)
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
	if _, _, err := labels.LoadLabelSet(st, "bad"); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Errorf("corrupt set: err = %v, want one naming the seed", err)
	}
	if err := st.PutLabelSet("old", []string{"k1"}, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := labels.LoadLabelSet(st, "old"); err == nil {
		t.Error("a set without a format was accepted")
	}
}

// A rule with no input class and no predicate has nothing for labels to
// measure: its answers are never drawn, and asking for its line says why.
func TestDrawLabelSample_SkipsRulesWithoutPredicate(t *testing.T) {
	t.Parallel()
	fxp := audittest.Demo(t, 6)
	p, st := fxp.Plan, fxp.Store
	tally, err := NewTally(p, fxp.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	set, err := labels.DrawLabelSample(st, p, tally, labels.SampleOptions{Name: "all", N: 10000, Seed: 1, Kinds: model.Kinds})
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
	_, err = labels.DrawLabelSample(st, p, tally, labels.SampleOptions{Name: "l12", N: 10, Seed: 1, Line: 12})
	if err == nil || !strings.Contains(err.Error(), "line 12 has no predicate to measure") {
		t.Errorf("err = %v", err)
	}
}

// recordVersions dates every rule's current predicate version, as opening
// an audit does.
func recordVersions(st audit.Store, p *audit.Plan, preds *grade.Predicates, now time.Time) error {
	for ri, r := range p.Audit.Rules {
		if err := labels.RecordPredicateVersion(st, r.Line, preds.Version(ri), now); err != nil {
			return err
		}
	}
	return nil
}

package model

import (
	"fmt"
	"math/rand/v2"

	"github.com/auditor-dev/auditor/model/stats"
)

// DeleteScenario is a simulated audit of one line, to say before any call
// what DELETE will take (`auditor plan`) and to check the rule's errors (the
// simulation tests and BenchmarkDeleteTable). Every case fails alike: the
// true violation rate is Baseline with the line and Baseline + Rise without
// it; the grader catches a violation with probability Recall (RecallDeleted
// without the line, when set: deleting a line can change how the model
// breaks it) and fails a clean answer with probability FalseAlarm; controls
// refuse 2% of the time in both variants. Labels blind labels are drawn as
// a simple random sample of the provoking answers of both variants (what
// `auditor label` draws), or of those without the line only (LabelDeleted:
// what `auditor label --for-verdict` draws for a quiet line), and tell the
// truth. With Advised the labeller then follows the verdict's advice: while
// it is INCONCLUSIVE and says how many more labels would settle it, label
// that many more (answers without the line for the labels route; for the
// grader route's, over both variants when the baseline has labels) and
// look again,
// for at most AdvisedRounds looks in all.
type DeleteScenario struct {
	Cases, Samples int // provoking cases, samples per case and variant
	ControlCases   int // 0 means 6
	Baseline, Rise float64
	Recall         float64
	RecallDeleted  float64 // 0 means Recall
	FalseAlarm     float64
	Labels         int
	LabelDeleted   bool
	Advised        bool
	Delta          float64 // 0 means DefaultDelta
}

// AdvisedRounds is how many looks the advised labelling loop takes at most.
const AdvisedRounds = 20

// DeleteOdds counts the verdicts of a simulation.
type DeleteOdds struct {
	Runs, Delete, Keep int
	// ByGrader and ByLabels split Delete by the route that licensed it.
	ByGrader, ByLabels int
}

// Rate returns the share of runs that reached DELETE.
func (o DeleteOdds) Rate() float64 {
	if o.Runs == 0 {
		return 0
	}
	return float64(o.Delete) / float64(o.Runs)
}

func (sc DeleteScenario) withDefaults() DeleteScenario {
	if sc.ControlCases == 0 {
		sc.ControlCases = 6
	}
	if sc.RecallDeleted == 0 {
		sc.RecallDeleted = sc.Recall
	}
	return sc
}

func (sc DeleteScenario) validate() error {
	switch {
	case sc.Cases < 1 || sc.Samples < 1 || sc.ControlCases < 0 || sc.Labels < 0:
		return fmt.Errorf("model: simulate delete: %d cases x %d samples, %d controls, %d labels", sc.Cases, sc.Samples, sc.ControlCases, sc.Labels)
	case sc.Cases*sc.Samples > 1_000_000:
		return fmt.Errorf("model: simulate delete: %d answers a variant is more than a simulation takes", sc.Cases*sc.Samples)
	}
	for _, p := range []float64{sc.Baseline, sc.Baseline + sc.Rise, sc.Recall, sc.RecallDeleted, sc.FalseAlarm} {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("model: simulate delete: probability %v outside [0, 1]", p)
		}
	}
	return nil
}

// SimulateDelete runs the scenario runs times through Decide, the exact
// rule, with a seeded generator (the same seed gives the same counts).
func SimulateDelete(sc DeleteScenario, runs int, seed uint64) (DeleteOdds, error) {
	if err := sc.validate(); err != nil {
		return DeleteOdds{}, err
	}
	sc = sc.withDefaults()
	rng := rand.New(rand.NewPCG(seed, 0x64656c657465)) // "delete"
	r := newSimRun(sc)
	odds := DeleteOdds{Runs: runs}
	for range runs {
		in := sc.drawRun(rng, r)
		mode := projectNone
		if sc.Advised {
			mode = projectLabels
		}
		vd, err := decide(in, mode)
		for round := 1; err == nil && sc.Advised && round < AdvisedRounds && vd.Decision == DecisionInconclusive; round++ {
			if !sc.advise(rng, r, &in, vd) {
				break
			}
			vd, err = decide(in, mode)
		}
		if err != nil {
			return DeleteOdds{}, err
		}
		odds.count(vd)
	}
	return odds, nil
}

// count adds a verdict to the odds.
func (o *DeleteOdds) count(vd Verdict) {
	switch {
	case vd.Decision == DecisionKeep:
		o.Keep++
	case vd.Decision == DecisionDelete:
		o.Delete++
		if vd.Route == "labels" {
			o.ByLabels++
		} else {
			o.ByGrader++
		}
	}
}

// simRun is one simulated audit's answers: answers[v][i] for variant v (0
// baseline, 1 deleted) and answer i in case order (case i/Samples, sample
// i%Samples), bit 0 the truth (a violation), bit 1 the grader's failure;
// controls[v][i] whether control answer i was a refusal. perm[v] is the
// order in which variant v's answers get labelled (drawn as needed),
// taken[v] how many are labelled, and tally[v] what those labels found.
type simRun struct {
	answers  [2][]uint8
	controls [2][]bool
	perm     [2][]int
	taken    [2]int
	tally    [2]simTally
}

// simTally counts a variant's labelled violations, and the labels the
// predicate got wrong: violations it passed, clean answers it failed.
type simTally struct {
	violations, missed, alarms int
}

func newSimRun(sc DeleteScenario) *simRun {
	n, nc := sc.Cases*sc.Samples, sc.ControlCases*sc.Samples
	return &simRun{answers: [2][]uint8{make([]uint8, n), make([]uint8, n)},
		controls: [2][]bool{make([]bool, nc), make([]bool, nc)}, perm: [2][]int{make([]int, n), make([]int, n)}}
}

// drawRun draws a whole audit into r with its first labels, and returns
// the verdict input on all of it.
func (sc DeleteScenario) drawRun(rng *rand.Rand, r *simRun) VerdictInput {
	for v := range 2 {
		rate, recall := sc.Baseline, sc.Recall
		if v == 1 {
			rate, recall = sc.Baseline+sc.Rise, sc.RecallDeleted
		}
		for i := range r.answers[v] {
			var a uint8
			if rng.Float64() < rate {
				a = 1
				if rng.Float64() < recall {
					a |= 2
				}
			} else if rng.Float64() < sc.FalseAlarm {
				a |= 2
			}
			r.answers[v][i] = a
		}
	}
	for v := range 2 {
		for i := range r.controls[v] {
			r.controls[v][i] = rng.Float64() < 0.02
		}
		for i := range r.perm[v] {
			r.perm[v][i] = i
		}
		r.taken[v], r.tally[v] = 0, simTally{}
	}
	in := sc.input(r, sc.Samples)
	r.labelSample(rng, sc.Labels, sc.LabelDeleted)
	r.setLabels(&in)
	return in
}

// input is the verdict input on the first m samples of every case.
func (sc DeleteScenario) input(r *simRun, m int) VerdictInput {
	in := VerdictInput{Delta: sc.Delta}
	counts := func(cases int, failed func(v, i int) bool) ArmPair {
		var p ArmPair
		for v, side := range []*ArmCounts{&p.Baseline, &p.Deleted} {
			side.Fails, side.N = make([]int, cases), make([]int, cases)
			for c := range cases {
				side.N[c] = m
				for s := range m {
					if failed(v, c*sc.Samples+s) {
						side.Fails[c]++
					}
				}
			}
		}
		return p
	}
	in.Provoking = counts(sc.Cases, func(v, i int) bool { return r.answers[v][i]&2 != 0 })
	in.Control = counts(sc.ControlCases, func(v, i int) bool { return r.controls[v][i] })
	return in
}

// labelSample labels k more answers drawn uniformly from the unlabelled
// provoking answers of both variants, or of the deleted variant only.
func (r *simRun) labelSample(rng *rand.Rand, k int, deletedOnly bool) {
	n := len(r.answers[0])
	for range k {
		left := [2]int{n - r.taken[0], n - r.taken[1]}
		if deletedOnly {
			left[0] = 0
		}
		if left[0]+left[1] == 0 {
			return
		}
		v := 1
		if rng.IntN(left[0]+left[1]) < left[0] {
			v = 0
		}
		r.labelOne(rng, v)
	}
}

// labelOne labels the next answer of variant v in a uniform order.
func (r *simRun) labelOne(rng *rand.Rand, v int) {
	j, n := r.taken[v], len(r.perm[v])
	x := j + rng.IntN(n-j)
	r.perm[v][j], r.perm[v][x] = r.perm[v][x], r.perm[v][j]
	r.taken[v]++
	a := r.answers[v][r.perm[v][j]]
	t := &r.tally[v]
	switch {
	case a&1 != 0:
		t.violations++
		if a&2 == 0 {
			t.missed++
		}
	case a&2 != 0:
		t.alarms++
	}
}

// setLabels puts the labels taken so far in the verdict input: each
// variant's labels (one uniform stratum) with the predicate's errors on
// them, and the pooled recall and specificity shown beside the verdict.
func (r *simRun) setLabels(in *VerdictInput) {
	n := len(r.answers[0])
	var rc RecallCount
	var spec SpecificityCount
	for v, side := range []*VariantLabels{&in.Labelled.Baseline, &in.Labelled.Deleted} {
		t := r.tally[v]
		side.Strata = []stats.LabelledStratum{{N: n, Labelled: r.taken[v], Violations: t.violations}}
		side.Graded = []GradedLabels{{Missed: t.missed, FalseAlarms: t.alarms}}
		rc.Positives += t.violations
		rc.Hits += t.violations - t.missed
		spec.Negatives += r.taken[v] - t.violations
		spec.Passed += r.taken[v] - t.violations - t.alarms
	}
	in.Recall, in.Specificity = &rc, &spec
}

// advise follows the verdict's advice once: it labels what the advice asks
// and reports whether it asked for anything. The labels route's advice
// comes first (answers without the line, as `label --for-verdict` draws
// them); else the grader route's (uniformly over both variants when the
// baseline has labels, else without the line).
func (sc DeleteScenario) advise(rng *rand.Rand, r *simRun, in *VerdictInput, v Verdict) bool {
	if m := v.LabelsNeeded.More; m > 0 {
		r.labelSample(rng, m, true)
		r.setLabels(in)
		return true
	}
	g := v.GraderLabels
	if g.More == 0 {
		return false
	}
	r.labelSample(rng, g.More, !g.Both)
	r.setLabels(in)
	return true
}

// SequentialOdds counts the verdicts of simulated audits with a
// sequential design, each stopped at the first look whose verdict is KEEP
// or DELETE, as an adaptive run stops a line (or as a person watching the
// grid would act on it).
type SequentialOdds struct {
	Runs, Keep, Delete int
	// Settled counts the runs settled at each look (index k-1).
	Settled []int
	// MeanSamples is the mean samples per case a run made: a settled run's
	// look's, the planned samples for the rest.
	MeanSamples float64
}

// SimulateSequential runs the scenario through the exact rule at every
// look of the design, stopping each audit at its first KEEP or DELETE. The
// labels are drawn once on the whole grid (labels are given after
// answers, not look by look; the labels route is no sequential test).
func SimulateSequential(sc DeleteScenario, d Design, runs int, seed uint64) (SequentialOdds, error) {
	if err := sc.validate(); err != nil {
		return SequentialOdds{}, err
	}
	if d.Samples != sc.Samples {
		return SequentialOdds{}, fmt.Errorf("model: simulate sequential: design for %d samples, scenario %d", d.Samples, sc.Samples)
	}
	sc = sc.withDefaults()
	rng := rand.New(rand.NewPCG(seed, 0x6c6f6f6b73)) // "looks"
	r := newSimRun(sc)
	odds := SequentialOdds{Runs: runs, Settled: make([]int, d.Looks)}
	var samples int
	for range runs {
		full := sc.drawRun(rng, r)
		used := d.Samples
		for k := 1; k <= d.Looks; k++ {
			in := full
			if k < d.Looks {
				in = sc.input(r, d.SamplesAt(k))
				in.Recall, in.Specificity, in.Labelled = full.Recall, full.Specificity, full.Labelled
			}
			in.Look = d.Look(k)
			vd, err := decide(in, projectNone)
			if err != nil {
				return SequentialOdds{}, err
			}
			if vd.Decision == DecisionKeep || vd.Decision == DecisionDelete {
				if vd.Decision == DecisionKeep {
					odds.Keep++
				} else {
					odds.Delete++
				}
				odds.Settled[k-1]++
				used = d.SamplesAt(k)
				break
			}
		}
		samples += used
	}
	if runs > 0 {
		odds.MeanSamples = float64(samples) / float64(runs)
	}
	return odds, nil
}

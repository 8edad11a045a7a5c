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
// without the line, when set) and fails a clean answer with probability
// FalseAlarm; controls refuse 2% of the time in both variants. Labels blind
// labels are drawn as a simple random sample of the provoking answers of
// both variants (what `auditor label` draws), or of those without the line
// only (LabelDeleted: what `auditor label --for-verdict` draws for a quiet
// line), and tell the truth.
type DeleteScenario struct {
	Cases, Samples int // provoking cases, samples per case and variant
	ControlCases   int // 0 means 6
	Baseline, Rise float64
	Recall         float64
	RecallDeleted  float64 // 0 means Recall
	FalseAlarm     float64
	Labels         int
	LabelDeleted   bool
	Delta          float64 // 0 means DefaultDelta
}

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
	if sc.ControlCases == 0 {
		sc.ControlCases = 6
	}
	if sc.RecallDeleted == 0 {
		sc.RecallDeleted = sc.Recall
	}
	rng := rand.New(rand.NewPCG(seed, 0x64656c657465)) // "delete"
	n := sc.Cases * sc.Samples
	// answers[v][i]: variant v (0 baseline, 1 deleted), answer i in case
	// order; bit 0 the truth (violation), bit 1 the grader's failure.
	answers := [2][]uint8{make([]uint8, n), make([]uint8, n)}
	pool := make([]int, 2*n)
	odds := DeleteOdds{Runs: runs}
	for range runs {
		in := VerdictInput{Delta: sc.Delta}
		for v := range 2 {
			rate, recall := sc.Baseline, sc.Recall
			if v == 1 {
				rate, recall = sc.Baseline+sc.Rise, sc.RecallDeleted
			}
			counts := ArmCounts{Fails: make([]int, sc.Cases), N: make([]int, sc.Cases)}
			for i := range n {
				var a uint8
				if rng.Float64() < rate {
					a = 1
					if rng.Float64() < recall {
						a |= 2
					}
				} else if rng.Float64() < sc.FalseAlarm {
					a |= 2
				}
				answers[v][i] = a
				c := i / sc.Samples
				counts.N[c]++
				if a&2 != 0 {
					counts.Fails[c]++
				}
			}
			if v == 0 {
				in.Provoking.Baseline = counts
			} else {
				in.Provoking.Deleted = counts
			}
		}
		in.Control = simControls(rng, sc.ControlCases, sc.Samples)
		sc.label(rng, &in, answers, pool)
		vd, err := decide(in, false)
		if err != nil {
			return DeleteOdds{}, err
		}
		switch {
		case vd.Decision == DecisionKeep:
			odds.Keep++
		case vd.Decision == DecisionDelete:
			odds.Delete++
			if vd.Route == "labels" {
				odds.ByLabels++
			} else {
				odds.ByGrader++
			}
		}
	}
	return odds, nil
}

// label draws the scenario's blind labels and sets the grader's recall and
// specificity on them and the labels route's counts.
func (sc DeleteScenario) label(rng *rand.Rand, in *VerdictInput, answers [2][]uint8, pool []int) {
	n := len(answers[0])
	// pool holds answer indices, v*n + i; without LabelDeleted both variants.
	from := pool[:0]
	for v := range 2 {
		if sc.LabelDeleted && v == 0 {
			continue
		}
		for i := range n {
			from = append(from, v*n+i)
		}
	}
	k := min(sc.Labels, len(from))
	var rc RecallCount
	var spec SpecificityCount
	var labelled [2]int
	var violations [2]int
	for j := range k {
		x := j + rng.IntN(len(from)-j)
		from[j], from[x] = from[x], from[j]
		v, i := from[j]/n, from[j]%n
		a := answers[v][i]
		labelled[v]++
		if a&1 != 0 {
			violations[v]++
			rc.Positives++
			if a&2 != 0 {
				rc.Hits++
			}
		} else {
			spec.Negatives++
			if a&2 == 0 {
				spec.Passed++
			}
		}
	}
	in.Recall, in.Specificity = &rc, &spec
	for v, side := range []*VariantLabels{&in.Labelled.Baseline, &in.Labelled.Deleted} {
		side.Strata = []stats.LabelledStratum{{N: n, Labelled: labelled[v], Violations: violations[v]}}
	}
}

// simControls draws control counts refusing 2% of the time in both
// variants.
func simControls(rng *rand.Rand, cases, samples int) ArmPair {
	var p ArmPair
	for _, side := range []*ArmCounts{&p.Baseline, &p.Deleted} {
		side.Fails, side.N = make([]int, cases), make([]int, cases)
		for c := range cases {
			side.N[c] = samples
			for range samples {
				if rng.Float64() < 0.02 {
					side.Fails[c]++
				}
			}
		}
	}
	return p
}

package model

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// shipClassOf is a class of line l with the given verdict.
func shipClassOf(l int, d Decision, reason string) ShipClass {
	return ShipClass{Line: l, Model: "m", Verdict: Verdict{Decision: d, Reason: reason, Needed: "label 86 answers"}, Alone: DecisionDelete}
}

func TestDecideShip_Outcomes(t *testing.T) {
	t.Parallel()
	suites := []ShipSuite{{Name: "everyday", Model: "m", Cases: 8}}
	base := ShipInput{Lines: []int{13, 11, 12, 9, 10}, Tokens: 50, PromptTokens: 190, Test: 1, Tests: 1, Suites: suites}
	for _, tc := range []struct {
		name      string
		decisions [5]Decision
		want      Decision
		headline  string
		keep      []int
		next      []int
	}{
		{"all bounded", [5]Decision{DecisionDelete, DecisionDelete, DecisionDelete, DecisionDelete, DecisionDelete}, DecisionShip,
			"SHIP: the prompt without lines 9-13 (50 of 190 tokens): every class rose less than 5 points; regression suite everyday: 0 of 8 cases broken", nil, nil},
		{"one rose", [5]Decision{DecisionDelete, DecisionKeep, DecisionInconclusive, DecisionDelete, DecisionKeep}, DecisionNotSafe,
			"NOT SAFE: the prompt without lines 9-13 (50 of 190 tokens): the class of lines 10, 13 rose when lines 9-13 went out together; keep lines 10, 13; regression suite everyday: 0 of 8 cases broken",
			[]int{10, 13}, []int{9, 11, 12}},
		{"one undecided", [5]Decision{DecisionDelete, DecisionDelete, DecisionInconclusive, DecisionDelete, DecisionDelete}, DecisionInconclusive,
			"INCONCLUSIVE: the prompt without lines 9-13 (50 of 190 tokens): 1 class is not yet bounded under 5 points; regression suite everyday: 0 of 8 cases broken", nil, nil},
	} {
		in := base
		in.Classes = nil
		for i, d := range tc.decisions {
			in.Classes = append(in.Classes, shipClassOf(9+i, d, "why"))
		}
		got, err := DecideShip(in)
		if err != nil {
			t.Fatal(err)
		}
		if got.Decision != tc.want || got.Headline != tc.headline {
			t.Errorf("%s: %s %q, want %s %q", tc.name, got.Decision, got.Headline, tc.want, tc.headline)
		}
		if LineList(got.Keep) != LineList(tc.keep) || LineList(got.Next) != LineList(tc.next) {
			t.Errorf("%s: keep %v next %v, want %v %v", tc.name, got.Keep, got.Next, tc.keep, tc.next)
		}
		if tc.want == DecisionInconclusive && !strings.Contains(got.Needed, "line 11's class: label 86 answers") {
			t.Errorf("%s: needed %q", tc.name, got.Needed)
		}
	}
	// A suite whose failures rose makes the whole NOT SAFE.
	in := base
	in.Classes = nil
	for l := 9; l <= 13; l++ {
		in.Classes = append(in.Classes, shipClassOf(l, DecisionDelete, "bounded"))
	}
	in.Suites = []ShipSuite{{Name: "everyday", Model: "m", Cases: 8, Broken: 3, BaselineFails: 1, BaselineN: 240, JointFails: 40, JointN: 240, Rose: true}}
	got, err := DecideShip(in)
	if err != nil || got.Decision != DecisionNotSafe || !strings.Contains(got.Headline, "a regression suite's failures rose") || !strings.Contains(got.Reason, "regression suite everyday: failures rose from 0.4% to 16.7%") {
		t.Errorf("a suite that rose: %v %+v", err, got)
	}
}

func TestDecideShip_Errors(t *testing.T) {
	t.Parallel()
	if _, err := DecideShip(ShipInput{}); err == nil {
		t.Error("no error for an empty joint set")
	}
	if _, err := DecideShip(ShipInput{Lines: []int{3, 4}, Classes: []ShipClass{shipClassOf(3, DecisionDelete, "")}}); err == nil || !strings.Contains(err.Error(), "line 4 has no class") {
		t.Errorf("a line with no class: %v", err)
	}
	if _, err := DecideShip(ShipInput{Lines: []int{3}, Classes: []ShipClass{shipClassOf(5, DecisionDelete, "")}}); err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Errorf("a class outside the set: %v", err)
	}
}

func TestLineList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []int
		want string
	}{{[]int{9}, "9"}, {[]int{10, 9}, "9, 10"}, {[]int{13, 9, 10, 11, 12, 15, 17}, "9-13, 15, 17"}, {nil, ""}} {
		if got := LineList(tc.in); got != tc.want {
			t.Errorf("LineList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// shipOdds counts false SHIPs of the two rules over simulated sweeps of two
// lines, each inert alone (deleting either by itself changes nothing) and
// whose joint deletion raises the first line's class by exactly delta:
// the IUT on the joint variant (DecideShip over each class's Decide) and
// the rule that ships every line whose own verdict is DELETE.
type shipOdds struct{ runs, iut, aloneRule int }

func simulateShip(t testing.TB, sc DeleteScenario, runs int, seed uint64) shipOdds {
	sc = sc.withDefaults()
	if err := sc.validate(); err != nil {
		t.Fatal(err)
	}
	delta := sc.Delta
	if delta == 0 {
		delta = DefaultDelta
	}
	alone, harmed := sc, sc
	alone.Rise, harmed.Rise = 0, delta
	rng := rand.New(rand.NewPCG(seed, 0x73686970)) // "ship"
	r := newSimRun(sc)
	decideOne := func(s DeleteScenario) Verdict {
		v, err := decide(s.drawRun(rng, r), projectNone)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	o := shipOdds{runs: runs}
	for range runs {
		// Each line's own deletion: both inert.
		first, second := decideOne(alone), decideOne(alone)
		if first.Decision == DecisionDelete && second.Decision == DecisionDelete {
			o.aloneRule++
		}
		// The joint variant: line 1's class rose by delta, line 2's did not.
		in := ShipInput{Lines: []int{1, 2}, Delta: sc.Delta, Classes: []ShipClass{
			{Line: 1, Model: "m", Verdict: decideOne(harmed), Alone: decideOne(alone).Decision},
			{Line: 2, Model: "m", Verdict: decideOne(alone), Alone: decideOne(alone).Decision},
		}}
		d, err := DecideShip(in)
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision == DecisionShip {
			o.iut++
		}
	}
	return o
}

// TestShip_FalseShipSimulation: lines each inert alone whose joint
// deletion raises failures by exactly delta; the joint decision ships at
// most 2.5% of the time (the binomial 99% margin over 5,000 runs allowed),
// and the rule that ships every line DELETE alone ships nearly always.
func TestShip_FalseShipSimulation(t *testing.T) {
	t.Parallel()
	runs := 5000
	for _, tc := range []struct {
		name string
		sc   DeleteScenario
	}{
		// A quiet line: no violations with it, blind labels of the answers
		// without it (the labels route).
		{"quiet, labels of the deleted variant", DeleteScenario{Cases: 8, Samples: 30, Baseline: 0, Recall: 0.9, Labels: 120, LabelDeleted: true}},
		// A line broken now and then: labels of both variants, for the
		// grader route.
		{"2% baseline, labels of both variants", DeleteScenario{Cases: 18, Samples: 30, Baseline: 0.02, Recall: 1, Labels: 1000}},
	} {
		o := simulateShip(t, tc.sc, runs, 27)
		iut, alone := float64(o.iut)/float64(runs), float64(o.aloneRule)/float64(runs)
		t.Logf("%s: false SHIP %.2f%% (%d of %d); shipping every line DELETE alone: %.2f%%", tc.name, 100*iut, o.iut, runs, 100*alone)
		// 2.5% plus 2.33 binomial standard errors at 5,000 runs.
		if limit := 0.025 + 2.33*0.0022; iut > limit {
			t.Errorf("%s: false SHIP %.2f%% above %.2f%%", tc.name, 100*iut, 100*limit)
		}
		if alone <= 0.025+2.33*0.0022 {
			t.Errorf("%s: the rule that ships every line DELETE alone shipped only %.2f%%: the scenario does not show interference", tc.name, 100*alone)
		}
	}
}

// The labels route (a confidence sequence since issue 26) needs 85 clean
// labels of a quiet variant at delta 0.05.
func TestLabelsForZero(t *testing.T) {
	t.Parallel()
	if got := LabelsForZero(0.05); got != 85 {
		t.Errorf("LabelsForZero(0.05) = %d, want 85", got)
	}
}

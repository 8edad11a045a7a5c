package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The labels route's price for a line the model never breaks: 0 violations
// in 85 labels put the confidence sequence at one-sided 1.5% below 0.05
// (the fixed-count Clopper-Pearson bound at the same level needs 83), and a
// share of 1.25% (the route's deleted part with baseline labels) needs 88.
func TestSequentialZeroOfNBelow(t *testing.T) {
	for _, c := range []struct {
		alpha float64
		want  int
	}{{0.015, 85}, {0.0125, 88}} {
		n, err := SequentialZeroOfNBelow(0.05, c.alpha)
		if err != nil || n != c.want {
			t.Errorf("SequentialZeroOfNBelow(0.05, %v) = %d, %v; want %d", c.alpha, n, err, c.want)
		}
		at, _ := SequentialUpper(0, n, c.alpha)
		before, _ := SequentialUpper(0, n-1, c.alpha)
		if !(at < 0.05 && before >= 0.05) {
			t.Errorf("alpha %v: bound %v at %d, %v at %d", c.alpha, at, n, before, n-1)
		}
		cp, _ := ZeroOfNBelow(0.05, c.alpha)
		if cp >= n {
			t.Errorf("alpha %v: Clopper-Pearson needs %d, the sequence %d: looking at will must cost something", c.alpha, cp, n)
		}
	}
}

// After a second round of labels (the 9 violations in 336) the
// sequence's bound is wider than Clopper-Pearson's for the same counts,
// which is exact only for a count fixed before any label is read; and both
// bounds keep to their side of the observed share.
func TestSequential_WiderThanFixedCount(t *testing.T) {
	for _, c := range []struct{ x, n int }{{9, 336}, {0, 86}, {1, 100}, {25, 199}, {3, 10}} {
		for _, alpha := range []float64{0.0125, 0.015, 0.025} {
			su, err := SequentialUpper(c.x, c.n, alpha)
			if err != nil {
				t.Fatal(err)
			}
			cu, _ := ClopperPearsonUpper(c.x, c.n, alpha)
			sl, _ := SequentialLower(c.x, c.n, alpha)
			cl, _ := ClopperPearsonLower(c.x, c.n, alpha)
			p := float64(c.x) / float64(c.n)
			if !(su > cu) || !(sl <= cl) || sl > p || su < p || su > 1 || sl < 0 {
				t.Errorf("%d/%d at %v: sequence [%v, %v], Clopper-Pearson [%v, %v]", c.x, c.n, alpha, sl, su, cl, cu)
			}
			if (c.x > 0) != (sl > 0) {
				t.Errorf("%d/%d: lower bound %v", c.x, c.n, sl)
			}
		}
	}
	if u, _ := SequentialUpper(9, 336, 0.015); math.Abs(u-0.0746) > 5e-4 {
		t.Errorf("9/336 at 1.5%%: %v, want about 0.0746 (Clopper-Pearson 0.0530)", u)
	}
	if u, _ := SequentialUpper(5, 5, 0.015); u != 1 {
		t.Errorf("5/5: upper %v, want 1", u)
	}
	if _, err := SequentialUpper(1, 0, 0.015); err == nil {
		t.Error("1 of 0 accepted")
	}
	if _, err := SequentialLower(1, 10, 0.5); err == nil {
		t.Error("alpha 0.5 accepted")
	}
}

// Coverage under optional stopping: labels arrive one at a time and the
// labeller stops the first time the bound falls below the true rate (the
// worst stopping rule there is). Ville's inequality keeps the chance of
// ever getting there at or below alpha; the Clopper-Pearson bound read at
// every 10 labels gets there far more often, which shows the test can fail.
func TestSequential_CoverageUnderOptionalStopping(t *testing.T) {
	const (
		runs   = 1000
		labels = 300
		alpha  = 0.05
	)
	for _, p := range []float64{0.05, 0.1, 0.2} {
		rng := rand.New(rand.NewPCG(7, uint64(1000*p)))
		seqEver, cpEver := 0, 0
		for range runs {
			x := 0
			seqHit, cpHit := false, false
			for n := 1; n <= labels; n++ {
				if rng.Float64() < p {
					x++
				}
				if !seqHit && SequentialRejectsUpper(x, n, p, alpha) {
					seqHit = true
				}
				if !cpHit && n%10 == 0 {
					if u, _ := ClopperPearsonUpper(x, n, alpha); u < p {
						cpHit = true
					}
				}
				if seqHit && cpHit {
					break
				}
			}
			if seqHit {
				seqEver++
			}
			if cpHit {
				cpEver++
			}
		}
		seqRate, cpRate := float64(seqEver)/runs, float64(cpEver)/runs
		// 1000 runs: a rate of 5% has a standard error of 0.69 points.
		if seqRate > alpha+0.014 {
			t.Errorf("p %v: the sequence's bound fell below the truth at some label in %.2f%% of runs, more than %v", p, 100*seqRate, alpha)
		}
		if cpRate < 1.5*alpha {
			t.Errorf("p %v: Clopper-Pearson read every 10 labels crossed in only %.2f%% of runs: the test cannot tell", p, 100*cpRate)
		}
		t.Logf("p %v: sequence crossed in %.2f%%, Clopper-Pearson looked at every 10 labels in %.2f%%", p, 100*seqRate, 100*cpRate)
	}
}

// The sequence's bound and the rejection test agree: p0 is rejected
// exactly when it lies above the bound.
func TestSequentialRejectsUpper_MatchesBound(t *testing.T) {
	for _, c := range []struct{ x, n int }{{0, 86}, {2, 50}, {9, 336}} {
		u, _ := SequentialUpper(c.x, c.n, 0.015)
		if SequentialRejectsUpper(c.x, c.n, u*0.999, 0.015) || !SequentialRejectsUpper(c.x, c.n, u*1.001, 0.015) {
			t.Errorf("%d/%d: bound %v disagrees with the test", c.x, c.n, u)
		}
	}
}

// A stratified set's sequential bound is never below the fixed-count one,
// and one stratum is SequentialUpper itself.
func TestSequentialRateUpper(t *testing.T) {
	one := []LabelledStratum{{N: 240, Labelled: 100, Violations: 1}}
	u, err := SequentialRateUpper(one, 0.015)
	want, _ := SequentialUpper(1, 100, 0.015)
	if err != nil || u != want {
		t.Errorf("one stratum: %v, %v; want %v", u, err, want)
	}
	two := []LabelledStratum{{N: 60, Labelled: 20, Violations: 19}, {N: 480, Labelled: 40, Violations: 2}}
	s, _ := SequentialRateUpper(two, 0.015)
	f, _ := RateUpper(two, 0.015)
	sl, _ := SequentialRateLower(two, 0.015)
	fl, _ := RateLower(two, 0.015)
	if !(s >= f) || !(sl <= fl) {
		t.Errorf("stratified: sequential [%v, %v], fixed [%v, %v]", sl, s, fl, f)
	}
}

// The bounds at counts the verdicts quote, against values computed by an
// independent implementation of the same mixture (weight 0.85 at q = 0,
// the rest even over 19 alternatives; 200 bisection steps in float64),
// so a change of the mixture or of the root search shows here.
func TestSequential_Vectors(t *testing.T) {
	for _, c := range []struct {
		x, n  int
		alpha float64
		upper bool
		want  float64
	}{
		{0, 85, 0.015, true, 0.049604},    // the quiet line's 85 labels: below 0.05
		{0, 84, 0.015, true, 0.050179},    // one fewer: not yet
		{9, 336, 0.015, true, 0.074608},   // a second round's counts (Clopper-Pearson 0.0530)
		{15, 480, 0.0125, true, 0.072167}, // the nine-line fixture's 2% lines
		{3, 100, 0.025, true, 0.135799},
		{9, 336, 0.025, false, 0.003993},
		{20, 100, 0.025, false, 0.088618},
	} {
		f := SequentialLower
		if c.upper {
			f = SequentialUpper
		}
		got, err := f(c.x, c.n, c.alpha)
		if err != nil || math.Abs(got-c.want) > 5e-6 {
			t.Errorf("%d of %d at %v (upper %v) = %.6f, %v; want %.6f", c.x, c.n, c.alpha, c.upper, got, err, c.want)
		}
	}
}

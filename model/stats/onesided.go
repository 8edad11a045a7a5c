package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// The DELETE rule has two routes, and they share its one-sided 2.5% error
// (STATS section 3): the grader route's upper bound of deleted - baseline
// is taken at one-sided 1.25%, and so is the labels route's bound on the
// violation rate without the line. These functions give bounds at any
// one-sided level; the 95% functions elsewhere in the package are the
// two-sided special case and are unchanged.

// UpperZ returns the standard normal quantile 1 - alpha: the multiplier of
// a one-sided bound at error alpha (UpperZ(0.025) = 1.9600, UpperZ(0.0125)
// = 2.2414). It returns an error unless 0 < alpha < 0.5.
func UpperZ(alpha float64) (float64, error) {
	if !(alpha > 0 && alpha < 0.5) {
		return 0, invalid("upper z", "alpha = %v, need 0 < alpha < 0.5", alpha)
	}
	return NormalQuantile(1 - alpha), nil
}

// WilsonZ is the Wilson score interval for x successes of n with
// multiplier z instead of 1.96 (z = UpperZ(alpha) gives one-sided bounds
// at error alpha on each side). Like Wilson, the lower bound is exactly 0
// at x = 0 and the upper exactly 1 at x = n. It returns an error for
// invalid counts or z not positive and finite.
func WilsonZ(x, n int, z float64) (Interval, error) {
	if err := checkCount("wilson z", x, n); err != nil {
		return Interval{}, err
	}
	if !(z > 0) || math.IsInf(z, 0) {
		return Interval{}, invalid("wilson z", "z = %v, need a positive finite multiplier", z)
	}
	return wilsonPZ(float64(x)/float64(n), float64(n), z), nil
}

// NewcombeZ is Newcombe's hybrid score interval of x1/n1 - x2/n2 built
// from Wilson limits with multiplier z (see Newcombe). At z = 1.96 it is
// Newcombe's 95% interval.
func NewcombeZ(x1, n1, x2, n2 int, z float64) (est float64, ci Interval, err error) {
	w1, err := WilsonZ(x1, n1, z)
	if err != nil {
		return 0, Interval{}, err
	}
	w2, err := WilsonZ(x2, n2, z)
	if err != nil {
		return 0, Interval{}, err
	}
	est, ci = newcombe(float64(x1)/float64(n1), w1, float64(x2)/float64(n2), w2)
	return est, ci, nil
}

// PairedUpper is the upper bound D + t(1-alpha, C-1)*SE_pair of a paired
// difference at one-sided error alpha, clamped to [-1, 1] (PairedDiff's
// Hi is the alpha = 0.025 case). It returns an error unless
// 0 < alpha < 0.5 or when p has fewer than two cases.
func PairedUpper(p Paired, alpha float64) (float64, error) {
	if !(alpha > 0 && alpha < 0.5) {
		return 0, invalid("paired upper", "alpha = %v, need 0 < alpha < 0.5", alpha)
	}
	if p.Cases < 2 {
		return 0, invalid("paired upper", "%d case(s), need at least 2", p.Cases)
	}
	df := float64(p.Cases - 1)
	t, err := StudentTQuantile(1-alpha, df)
	if 1-alpha == 1 {
		// A group-sequential look's tail (Boundary.Tail) can be below
		// 1e-16, where 1 - alpha rounds to 1: take the quantile from the
		// lower tail, which keeps its digits.
		t, err = StudentTQuantile(alpha, df)
		t = -t
	}
	if err != nil {
		return 0, err
	}
	return clamp(p.D+t*p.SEPair, -1, 1), nil
}

// ClopperPearsonUpper is the exact one-sided upper bound of a proportion
// at error alpha: BetaQuantile(1-alpha; x+1, n-x), or 1 when x = n. With
// x = 0 it is 1 - alpha^(1/n): 0 violations in 100 labelled answers put
// the rate below 0.0429 at alpha = 0.0125. It returns an error for invalid
// counts or alpha outside (0, 0.5).
func ClopperPearsonUpper(x, n int, alpha float64) (float64, error) {
	if err := checkOneSided("clopper-pearson upper", x, n, alpha); err != nil {
		return 0, err
	}
	if x == n {
		return 1, nil
	}
	if x == 0 {
		// Closed form, exact where the Beta quantile would round.
		return 1 - math.Pow(alpha, 1/float64(n)), nil
	}
	u := distuv.Beta{Alpha: float64(x + 1), Beta: float64(n - x)}.Quantile(1 - alpha)
	return math.Max(clamp(u, 0, 1), float64(x)/float64(n)), nil
}

// ClopperPearsonLower is the exact one-sided lower bound of a proportion
// at error alpha: BetaQuantile(alpha; x, n-x+1), or 0 when x = 0.
func ClopperPearsonLower(x, n int, alpha float64) (float64, error) {
	if err := checkOneSided("clopper-pearson lower", x, n, alpha); err != nil {
		return 0, err
	}
	if x == 0 {
		return 0, nil
	}
	if x == n {
		return math.Pow(alpha, 1/float64(n)), nil
	}
	l := distuv.Beta{Alpha: float64(x), Beta: float64(n - x + 1)}.Quantile(alpha)
	return math.Min(clamp(l, 0, 1), float64(x)/float64(n)), nil
}

func checkOneSided(fn string, x, n int, alpha float64) error {
	if err := checkCount(fn, x, n); err != nil {
		return err
	}
	if !(alpha > 0 && alpha < 0.5) {
		return invalid(fn, "alpha = %v, need 0 < alpha < 0.5", alpha)
	}
	return nil
}

// ZeroOfNBelow returns the smallest n for which 0 violations in n labelled
// answers put the Clopper-Pearson upper bound at error alpha below limit:
// the labels a line the model never breaks needs for the DELETE labels
// route (limit 0.05 at alpha 0.0125: 86). It returns an error unless
// 0 < limit < 1 and 0 < alpha < 0.5.
func ZeroOfNBelow(limit, alpha float64) (int, error) {
	if !(limit > 0 && limit < 1) || !(alpha > 0 && alpha < 0.5) {
		return 0, invalid("zero of n below", "limit %v, alpha %v", limit, alpha)
	}
	// 1 - alpha^(1/n) < limit  <=>  n > ln(alpha)/ln(1-limit).
	n := int(math.Floor(math.Log(alpha)/math.Log1p(-limit))) + 1
	return max(n, 1), nil
}

// LabelledStratum is one stratum of a variant's answers as blind labels
// see them: N answers, Labelled of them labelled (a uniform sample of the
// stratum), Violations of those labelled violations.
type LabelledStratum struct {
	N, Labelled, Violations int
}

// RateUpper bounds from above, at one-sided error alpha, the true
// violation rate of the answers the strata partition: the rate of the
// model that wrote them, not just the share among these answers.
//
// With one stratum (the labels are a uniform sample of every answer) it is
// ClopperPearsonUpper(Violations, Labelled, alpha): each labelled answer
// is a draw of the model whatever else was labelled. With several strata
// (labels drawn at different rates, say by the grader's verdict) it has
// two steps, each at alpha/2: the answers' violation count is bounded
// stratum by stratum (a stratum labelled in full counts exactly, one with
// no label counts as all violations, the others take a Clopper-Pearson
// bound at alpha/2 shared between them), and the rate of the model is the
// Clopper-Pearson bound of that count among all the answers. Both steps
// are conservative; the result is never below the single-stratum bound of
// a census.
//
// It returns an error when a stratum's counts are inconsistent, no stratum
// has answers, or alpha is not in (0, 0.5).
func RateUpper(strata []LabelledStratum, alpha float64) (float64, error) {
	return rateBound(strata, alpha, true, false)
}

// RateLower is RateUpper's counterpart from below: a stratum with no
// label counts as no violations.
func RateLower(strata []LabelledStratum, alpha float64) (float64, error) {
	return rateBound(strata, alpha, false, false)
}

// SequentialRateUpper is RateUpper with the labels' steps taken by the
// confidence sequence (SequentialUpper) instead of Clopper-Pearson: valid
// however often the labels were looked at and topped up. The step from a
// stratified count to the model's rate is about the answers, which are
// written once, and stays Clopper-Pearson's.
func SequentialRateUpper(strata []LabelledStratum, alpha float64) (float64, error) {
	return rateBound(strata, alpha, true, true)
}

// SequentialRateLower is SequentialRateUpper's counterpart from below.
func SequentialRateLower(strata []LabelledStratum, alpha float64) (float64, error) {
	return rateBound(strata, alpha, false, true)
}

func rateBound(strata []LabelledStratum, alpha float64, upper, sequential bool) (float64, error) {
	const fn = "rate bound"
	if !(alpha > 0 && alpha < 0.5) {
		return 0, invalid(fn, "alpha = %v, need 0 < alpha < 0.5", alpha)
	}
	var used []LabelledStratum
	total, partial := 0, 0
	for i, s := range strata {
		if s.N < 0 || s.Labelled < 0 || s.Labelled > s.N || s.Violations < 0 || s.Violations > s.Labelled {
			return 0, invalid(fn, "stratum %d has inconsistent counts %+v", i, s)
		}
		if s.N == 0 {
			continue
		}
		used = append(used, s)
		total += s.N
		if s.Labelled > 0 && s.Labelled < s.N {
			partial++
		}
	}
	if total == 0 {
		return 0, invalid(fn, "no answers")
	}
	// labelsBound bounds a rate from labels (sequential when asked),
	// bound from answers (Clopper-Pearson).
	bound := func(x, n int, a float64) float64 { return oneBound(x, n, a, upper, false) }
	labelsBound := func(x, n int, a float64) float64 { return oneBound(x, n, a, upper, sequential) }
	if len(used) > 1 && census(used) {
		// Every answer labelled: the labels are all the draws there are.
		var v int
		for _, s := range used {
			v += s.Violations
		}
		used = []LabelledStratum{{N: total, Labelled: total, Violations: v}}
	}
	if len(used) == 1 {
		s := used[0]
		if s.Labelled == 0 {
			return boolRate(upper), nil
		}
		return labelsBound(s.Violations, s.Labelled, alpha), nil
	}
	// Step 1: the answers' violation count, at alpha/2 shared by the
	// partly labelled strata.
	var count float64
	for _, s := range used {
		switch {
		case s.Labelled == s.N:
			count += float64(s.Violations)
		case s.Labelled == 0:
			if upper {
				count += float64(s.N)
			}
		default:
			count += float64(s.N) * labelsBound(s.Violations, s.Labelled, alpha/2/float64(partial))
		}
	}
	// Step 2: the model's rate, from that count among all the answers.
	x := int(math.Floor(count + 1e-9))
	if upper {
		x = int(math.Ceil(count - 1e-9))
	}
	x = min(max(x, 0), total)
	return bound(x, total, alpha/2), nil
}

// oneBound is one bound of x of n at alpha: Clopper-Pearson's, or the
// confidence sequence's. The counts are checked by the caller.
func oneBound(x, n int, alpha float64, upper, sequential bool) float64 {
	var b float64
	var err error
	switch {
	case upper && sequential:
		b, err = SequentialUpper(x, n, alpha)
	case upper:
		b, err = ClopperPearsonUpper(x, n, alpha)
	case sequential:
		b, err = SequentialLower(x, n, alpha)
	default:
		b, err = ClopperPearsonLower(x, n, alpha)
	}
	if err != nil {
		return math.NaN() // unreachable: counts checked by the caller
	}
	return b
}

func census(strata []LabelledStratum) bool {
	for _, s := range strata {
		if s.Labelled < s.N {
			return false
		}
	}
	return true
}

// boolRate is the bound that knows nothing: 1 from above, 0 from below.
func boolRate(upper bool) float64 {
	if upper {
		return 1
	}
	return 0
}

// NewcombeRatesZ is NewcombeRates with multiplier z: the projection of a
// one-sided bound at the same level as NewcombeZ.
func NewcombeRatesZ(p1, n1, p2, n2, z float64) (float64, Interval, error) {
	for _, v := range [][2]float64{{p1, n1}, {p2, n2}} {
		if !(v[0] >= 0 && v[0] <= 1) || !(v[1] > 0) || math.IsInf(v[1], 0) {
			return 0, Interval{}, invalid("newcombe rates z", "rate %v on %v trials", v[0], v[1])
		}
	}
	if !(z > 0) || math.IsInf(z, 0) {
		return 0, Interval{}, invalid("newcombe rates z", "z = %v, need a positive finite multiplier", z)
	}
	d, ci := newcombe(p1, wilsonPZ(p1, n1, z), p2, wilsonPZ(p2, n2, z))
	return d, ci, nil
}

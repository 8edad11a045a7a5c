package stats

import "math"

// ZeroCaseProbability returns (1-p)^n: the chance that an event of
// probability p (a class of traffic with share p, a failure at rate p) never
// appears in n independent draws. p is clamped to [0,1]; n <= 0 gives 1.
func ZeroCaseProbability(p float64, n int) float64 {
	if n <= 0 {
		return 1
	}
	return math.Pow(1-clamp(p, 0, 1), float64(n))
}

// AtLeastOne returns 1 - (1-p)^n: the chance of seeing at least one failure
// at rate p in n samples. p is clamped to [0,1]; n <= 0 gives 0.
func AtLeastOne(p float64, n int) float64 {
	return 1 - ZeroCaseProbability(p, n)
}

// RecallSampleSize returns the number of labelled violations (not labels)
// needed to tell a recall of p0 from p1 with a two-sided test at level alpha
// and the given power: [z_{1-alpha/2} sqrt(p0(1-p0)) + z_power sqrt(p1(1-p1))]^2
// / (p1-p0)^2. The result is not rounded: round up with math.Ceil. It returns
// an error when p0 or p1 is outside [0,1], p0 = p1, or alpha or power is not
// in (0,1).
func RecallSampleSize(p0, p1, alpha, power float64) (float64, error) {
	const fn = "recall sample size"
	switch {
	case !(p0 >= 0 && p0 <= 1) || !(p1 >= 0 && p1 <= 1):
		return 0, invalid(fn, "recalls %v and %v must lie in [0,1]", p0, p1)
	case p0 == p1:
		return 0, invalid(fn, "recalls are equal (%v)", p0)
	case !(alpha > 0 && alpha < 1):
		return 0, invalid(fn, "alpha %v outside (0,1)", alpha)
	case !(power > 0 && power < 1):
		return 0, invalid(fn, "power %v outside (0,1)", power)
	}
	za := NormalQuantile(1 - alpha/2)
	zb := NormalQuantile(power)
	s := za*math.Sqrt(p0*(1-p0)) + zb*math.Sqrt(p1*(1-p1))
	return s * s / ((p1 - p0) * (p1 - p0)), nil
}

// maxViolations caps ViolationsForRecallWidth: no labelling effort beyond it is
// a sensible suggestion.
const maxViolations = 1_000_000_000

// ViolationsForRecallWidth returns the smallest number n >= 1 of labelled
// violations for which the 95% Wilson interval of a recall observed at
// `recall` has full width Hi - Lo <= width. For "+/-w" pass width = 2w. The
// labelling screen subtracts the violations already labelled to say "label
// about N more". The Wilson width at a fixed observed proportion falls
// strictly as n grows, so the answer is found by bisection. It returns an
// error when recall is outside [0,1], width is not positive, or more than
// a billion violations would be needed.
func ViolationsForRecallWidth(recall, width float64) (int, error) {
	const fn = "violations for recall width"
	switch {
	case !(recall >= 0 && recall <= 1):
		return 0, invalid(fn, "recall %v outside [0,1]", recall)
	case !(width > 0):
		return 0, invalid(fn, "width %v must be positive", width)
	}
	fits := func(n int) bool { return wilsonP(recall, float64(n)).Width() <= width }
	if fits(1) {
		return 1, nil
	}
	if !fits(maxViolations) {
		return 0, invalid(fn, "width %v needs more than %d violations", width, maxViolations)
	}
	lo, hi := 1, maxViolations // fits(lo) is false, fits(hi) is true
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

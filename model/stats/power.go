package stats

import (
	"fmt"
	"math"
)

// ZeroCaseProbability returns (1-p)^n: the chance that an event of
// probability p (a class of traffic with share p, a failure at rate p) never
// appears in n independent draws. p is clamped to [0,1]; n <= 0 gives 1. It
// is computed as exp(n log1p(-p)): forming 1-p first would drop most of the
// digits of a tiny p (1-4e-12 keeps about four).
func ZeroCaseProbability(p float64, n int) float64 {
	if n <= 0 {
		return 1
	}
	return math.Exp(float64(n) * math.Log1p(-clamp(p, 0, 1)))
}

// AtLeastOne returns 1 - (1-p)^n: the chance of seeing at least one failure
// at rate p in n samples. p is clamped to [0,1]; n <= 0 gives 0. It is
// computed as -expm1(n log1p(-p)), which keeps its digits when it is tiny.
func AtLeastOne(p float64, n int) float64 {
	if n <= 0 {
		return 0
	}
	return -math.Expm1(float64(n) * math.Log1p(-clamp(p, 0, 1)))
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

// KeepThreshold returns the smallest number x of deleted-variant failures out
// of nDel for which the KEEP rule fires against a clean baseline (0 failures
// out of nBase): the Newcombe 95% lower bound of x/nDel - 0/nBase is above 0
// (STATS section 3). At 150 against 150 it is 5: 4/150 gives a lower bound of
// -0.0031 and 5/150 gives +0.0019. It returns an error when nDel or nBase is
// below 1, or when no x up to nDel would fire (a handful of samples cannot
// show a rise at all).
func KeepThreshold(nDel, nBase int) (int, error) {
	const fn = "keep threshold"
	if nDel < 1 || nBase < 1 {
		return 0, invalid(fn, "%d deleted and %d baseline samples, need at least 1 of each", nDel, nBase)
	}
	x, ok := keepThreshold(nDel, nBase)
	if !ok {
		return 0, invalid(fn, "no count of failures out of %d against 0/%d puts the lower bound above 0", nDel, nBase)
	}
	return x, nil
}

// keepThreshold is KeepThreshold for valid counts; ok is false when even
// nDel failures out of nDel do not fire. The lower bound rises with x, so the
// first x that fires is the threshold; it is found within a few steps for
// any realistic nDel (5 for 20 <= nDel <= 1200).
func keepThreshold(nDel, nBase int) (x int, ok bool) {
	w2 := wilsonP(0, float64(nBase))
	for i := 1; i <= nDel; i++ {
		p1 := float64(i) / float64(nDel)
		if _, ci := newcombe(p1, wilsonP(p1, float64(nDel)), 0, w2); ci.Lo > 0 {
			return i, true
		}
	}
	return 0, false
}

// KeepPower returns the exact probability that the KEEP rule fires when the
// deleted variant truly fails at rate p and the baseline shows no failure:
// P(Bin(nDel, p) >= KeepThreshold(nDel, nBase)). Taking the baseline as clean
// is the best case for detection, so this is an upper bound on the power
// against any baseline rate. With 5 cases x 17 samples (nDel = nBase = 85)
// and p = 0.08 it is 0.819. It is 0 when no count can fire (see
// KeepThreshold). It returns an error when p is outside [0,1] or nDel or
// nBase is below 1.
func KeepPower(p float64, nDel, nBase int) (float64, error) {
	const fn = "keep power"
	switch {
	case !(p >= 0 && p <= 1):
		return 0, invalid(fn, "rate %v outside [0,1]", p)
	case nDel < 1 || nBase < 1:
		return 0, invalid(fn, "%d deleted and %d baseline samples, need at least 1 of each", nDel, nBase)
	}
	k, ok := keepThreshold(nDel, nBase)
	if !ok {
		return 0, nil
	}
	return binomialAtLeast(k, nDel, p), nil
}

// binomialAtLeast returns P(Bin(n, p) >= k) for 1 <= k <= n and p in [0,1],
// summing exact probabilities (via math.Lgamma) over the shorter tail.
func binomialAtLeast(k, n int, p float64) float64 {
	switch {
	case p == 0:
		return 0
	case p == 1:
		return 1
	}
	lp, lq := math.Log(p), math.Log1p(-p)
	lnf, _ := math.Lgamma(float64(n + 1))
	pmf := func(i int) float64 {
		li, _ := math.Lgamma(float64(i + 1))
		lni, _ := math.Lgamma(float64(n - i + 1))
		return math.Exp(lnf - li - lni + float64(i)*lp + float64(n-i)*lq)
	}
	var s float64
	if k <= n-k {
		for i := 0; i < k; i++ {
			s += pmf(i)
		}
		return clamp(1-s, 0, 1)
	}
	for i := k; i <= n; i++ {
		s += pmf(i)
	}
	return clamp(s, 0, 1)
}

// KeepMDE returns the minimum detectable effect of the KEEP rule: the
// smallest true failure rate of the deleted variant, against a baseline that
// never fails, at which KeepPower reaches power (found by bisection to 1e-6).
// With 150 deleted and 150 baseline samples, a rate of 0.08 is detected with
// power 0.994. It returns an error when power is not in (0,1), nDel or nBase
// is below 1, or no count out of nDel can fire the rule.
func KeepMDE(nDel, nBase int, power float64) (float64, error) {
	const fn = "keep MDE"
	switch {
	case !(power > 0 && power < 1):
		return 0, invalid(fn, "power %v outside (0,1)", power)
	case nDel < 1 || nBase < 1:
		return 0, invalid(fn, "%d deleted and %d baseline samples, need at least 1 of each", nDel, nBase)
	}
	k, ok := keepThreshold(nDel, nBase)
	if !ok {
		return 0, invalid(fn, "no count of failures out of %d against 0/%d puts the lower bound above 0", nDel, nBase)
	}
	// Power rises strictly with p, from 0 at p = 0 to 1 at p = 1.
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-7 {
		mid := (lo + hi) / 2
		if binomialAtLeast(k, nDel, mid) >= power {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// MillerMultiplier returns the sum of the quantiles that MillerMDE
// multiplies by, for a two-sided 5% test with the given power:
// z(0.975) + z(power), or with useT the Student-t quantiles on cases-1
// degrees of freedom, t(0.975) + t(power) (3.7174 against 2.8016 for five
// cases at 80%). Callers that evaluate MillerMDE many times for one number
// of cases (solving for a variance that depends on the effect) compute it
// once. It returns an error when power is not in (0,1) or, with useT, cases
// is below 2.
func MillerMultiplier(cases int, power float64, useT bool) (float64, error) {
	const fn = "miller multiplier"
	switch {
	case !(power > 0 && power < 1):
		return 0, invalid(fn, "power %v outside (0,1)", power)
	case useT && cases < 2:
		return 0, invalid(fn, "%d cases leave no degrees of freedom for t", cases)
	case !useT:
		return z975 + NormalQuantile(power), nil
	}
	tb, err := StudentTQuantile(power, float64(cases-1))
	if err != nil {
		return 0, fmt.Errorf("stats: %s: %w", fn, err)
	}
	return t975(cases-1) + tb, nil
}

// checkMiller validates the variance components and power of a Miller
// sample-size calculation.
func checkMiller(fn string, k int, w2, sA2, sB2, power float64) error {
	switch {
	case k < 1:
		return invalid(fn, "%d samples per case, need at least 1", k)
	case !(w2 >= 0) || !(sA2 >= 0) || !(sB2 >= 0) || math.IsInf(w2, 0) || math.IsInf(sA2, 0) || math.IsInf(sB2, 0):
		return invalid(fn, "variances %v, %v, %v must be finite and not negative", w2, sA2, sB2)
	case !(power > 0 && power < 1):
		return invalid(fn, "power %v outside (0,1)", power)
	}
	return nil
}

// MillerMDE returns the smallest difference between two variants that a
// test over `cases` cases with k samples per case and variant detects with
// the given power at two-sided 5% (Miller 2024, power analysis):
// (z(0.975) + z(power)) sqrt((w2 + sA2/k + sB2/k)/cases). w2 is the variance
// across cases of the true difference, sA2 and sB2 the mean within-case
// variances of the two variants (p(1-p) for a failure rate p). With useT the
// normal quantiles are replaced by Student-t quantiles with cases-1 degrees
// of freedom, as the clustered interval uses, which matters with few cases.
// Five cases, k = 30, sA2 = 0.08*0.92, sB2 = 0: 0.0621 when w2 = 0 and 0.1398
// when w2 = 0.01 (t: 1.33 times as much). It returns an error when cases is
// below 1 (2 with useT), k is below 1, a variance is negative or not finite,
// or power is not in (0,1).
func MillerMDE(cases, k int, w2, sA2, sB2, power float64, useT bool) (float64, error) {
	const fn = "miller MDE"
	if err := checkMiller(fn, k, w2, sA2, sB2, power); err != nil {
		return 0, err
	}
	switch {
	case cases < 1:
		return 0, invalid(fn, "%d cases, need at least 1", cases)
	case useT && cases < 2:
		return 0, invalid(fn, "one case leaves no degrees of freedom for t")
	}
	m, err := MillerMultiplier(cases, power, useT)
	if err != nil {
		return 0, err
	}
	return m * math.Sqrt((w2+sA2/float64(k)+sB2/float64(k))/float64(cases)), nil
}

// MillerCases returns the number of cases (not rounded; round up with
// math.Ceil) that a test with k samples per case and variant needs to detect
// a difference d with the given power at two-sided 5% (Miller 2024):
// (z(0.975) + z(power))^2 (w2 + sA2/k + sB2/k) / d^2. For d = 0.08, k = 30,
// sA2 = 0.08*0.92, sB2 = 0: 3.0 cases when every case behaves alike (w2 = 0)
// but 15.3 when case effects have sd 0.1 (w2 = 0.01): heterogeneity between
// cases, not samples per case, sets how many cases are needed. It returns
// an error when d is not in (0,1], k is below 1, a variance is negative or
// not finite, or power is not in (0,1).
func MillerCases(d float64, k int, w2, sA2, sB2, power float64) (float64, error) {
	const fn = "miller cases"
	if !(d > 0 && d <= 1) {
		return 0, invalid(fn, "difference %v outside (0,1]", d)
	}
	if err := checkMiller(fn, k, w2, sA2, sB2, power); err != nil {
		return 0, err
	}
	m := z975 + NormalQuantile(power)
	return m * m * (w2 + sA2/float64(k) + sB2/float64(k)) / (d * d), nil
}

// maxSuite caps SuiteForAtLeastOne: a suite beyond it is no suggestion.
const maxSuite = 1_000_000_000_000

// SuiteForAtLeastOne returns the smallest suite size n for which a class of
// traffic with share p appears at least once with probability prob when the
// suite's cases are drawn by frequency: 1 - (1-p)^n >= prob. For p = 0.002
// and prob = 0.95 it is 1,497. It returns an error when p is not in (0,1],
// prob is not in (0,1), or more than a trillion cases would be needed.
func SuiteForAtLeastOne(p, prob float64) (int, error) {
	const fn = "suite for at least one"
	switch {
	case !(p > 0 && p <= 1):
		return 0, invalid(fn, "share %v outside (0,1]", p)
	case !(prob > 0 && prob < 1):
		return 0, invalid(fn, "probability %v outside (0,1)", prob)
	case p == 1:
		return 1, nil
	}
	// 1 - (1-p)^n >= prob  <=>  n log1p(-p) <= log1p(-prob), both sides
	// negative: the logarithms keep the digits of a tiny p that 1-p loses.
	lq, target := math.Log1p(-p), math.Log1p(-prob)
	est := math.Ceil(target / lq)
	if !(est <= maxSuite) {
		return 0, invalid(fn, "share %v needs more than %d cases", p, maxSuite)
	}
	n := max(int(est), 1)
	// Correct the rounding of the division by a step either way.
	enough := func(n int) bool { return float64(n)*lq <= target }
	for n > 1 && enough(n-1) {
		n--
	}
	for !enough(n) {
		n++
	}
	return n, nil
}

// Package stats computes every number auditor shows in a rule-deletion audit:
// binomial intervals for a cell (Wilson, Clopper-Pearson), arm rates with
// case-clustered standard errors, deleted-minus-baseline differences (paired
// by case and Newcombe's hybrid score interval), grader recall and precision
// from human labels (including a stratified, inverse-probability-weighted
// estimator), recall-corrected rates, Cohen's kappa and sample sizes; and
// the group-sequential design that keeps verdicts valid when they are read
// at several declared looks (SpendingOBF; WilsonZ and NewcombeZ at a
// look's boundary, PairedUpper at its tail; see "Sequential looks" below).
//
// Intervals are two-sided 95% unless a function takes the multiplier z.
// Every function is pure (Student-t quantiles and sequential bounds are memoised, which no caller
// can observe) and safe for concurrent use. Invalid input (a count above
// its total, a total of zero, a negative count, a probability outside
// [0,1]) is reported as an error that wraps ErrInvalid; no function returns
// NaN for input it accepts, and bounds of a proportion never leave [0,1]
// (bounds of a difference never leave [-1,1]).
//
// # Sequential looks: the problem
//
// A KEEP test at one-sided 2.5% is wrong 2.5% of the time when it is
// applied once, to all the data. Applied after every round of samples, with
// the user stopping at the first look that says KEEP, it is wrong more
// often: each look is another chance for noise to cross 1.96. With five
// equally spaced looks the chance is 7.1% in the normal limit (computed by
// the integration below; gsDesign's unit tests give 0.063 for four looks
// and 0.097 for ten, and so does this package).
//
// # Sequential looks: the method
//
// Declare the looks in advance: information fractions 0 < t_1 < ... < t_K
// = 1 of each case's planned samples (default five looks, at 20%, 40%, ...,
// 100%). A look uses exactly the first ceil(t_k n) samples of every case in
// both variants (SamplesAtLook), so it is a function of the stored data, not
// of when someone looked. At look k the test compares its statistic with
// c_k instead of 1.96. The c_k spend the error rate alpha along the looks
// with the Lan-DeMets O'Brien-Fleming spending function
//
//	alpha(t) = 2 - 2 Phi( Phi^-1(1 - alpha/2) / sqrt(t) ),
//
// which spends almost nothing early (alpha(0.2) = 0.00000054 for alpha =
// 0.025) and nearly all of it at the end, so the last look's c_K is close
// to the fixed design's 1.96 and little power is lost. The c_k are solved
// one after another so that, under the null hypothesis,
//
//	P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = alpha(t_k) - alpha(t_{k-1}),
//
// where (Z_1, ..., Z_K) has the canonical joint distribution of a
// statistic with independent increments: each Z_k is standard normal and
// Cov(Z_j, Z_k) = sqrt(t_j/t_k) for j <= k. The probabilities are computed
// by the recursive numerical integration of Armitage, McPherson and Rowe
// (1969) in the form of Jennison and Turnbull (2000, ch. 19): the density
// of Z_k on the continuation region is carried from look to look on a grid
// of 6r-1 points (r >= 32, finer than gsDesign's default r = 18) with
// Simpson's rule; gsDesign (gsbound.c) and ldbounds compute the same
// numbers. Summed over the looks the crossing probability is alpha(1) =
// alpha: stopping at any look keeps the one-sided error at alpha.
//
// Repeated confidence intervals follow: a one-sided bound computed at
// look k with z = c_k (WilsonZ, NewcombeZ; PairedUpper at the look's tail
// 1 - Phi(c_k)) excludes the truth at some look with probability at most
// alpha, so a verdict read off such bounds at any look, or at every look,
// is valid. Each one-sided test spends its own error along the looks: KEEP
// (lower bound of the rise above 0) at 2.5% with SpendingOBF(t, 0.025),
// DELETE's grader route (upper bound below delta J_L) at its share of
// DELETE's error (1.25%) with SpendingOBF(t, 0.0125).
//
// # Sequential looks: assumptions
//
//   - Independent increments and a normal approximation: the pooled rate
//     difference behaves like a Brownian motion in the information, which
//     grows in proportion to the samples. Binomial counts satisfy this in
//     the limit; with few samples the discreteness of the counts makes the
//     bounds conservative in practice. The simulations in
//     sequential_sim_test.go measure it on 8 and 18 cases of 30 samples:
//     false KEEP and false DELETE stay at their nominal 2.5% within
//     simulation error, where the fixed design itself sits.
//   - The looks are declared before the data are seen, and a look is taken
//     at its fraction whatever the data: looking at a fraction chosen
//     because the numbers looked good breaks the guarantee.
//   - The paired-by-case t term has no exact canonical distribution (its
//     degrees of freedom are the cases, not the samples); it is taken at
//     the same one-sided tail level 1 - Phi(c_k) as the score intervals.
//   - The grader's Youden index J_L comes from hand labels, which are not
//     sequential in samples: it is treated as a known constant here.
//
// # Sequential looks: a worked example
//
// Five looks at 20, 40, 60, 80 and 100% of 30 samples per case (6, 12, 18,
// 24 and 30 samples) with one-sided alpha 0.025 give c = 4.877, 3.357,
// 2.680, 2.290 and 2.031, nominal one-sided levels 5.4e-7, 0.00039,
// 0.0037, 0.011 and 0.021 (cumulative error spent 5.4e-7, 0.00039, 0.0038,
// 0.012 and 0.025). Take a load-bearing line on eight provoking cases. At
// look 1 (48 answers per variant) the deleted variant has failed 14 times
// and the baseline twice. With 1.96 Newcombe's lower bound of 14/48 - 2/48
// would be 0.103, a KEEP; with z = 4.877 it is -0.147: not yet. At look 2
// (96 answers per variant) the counts are 29 and 4, and with z = 3.357 the
// lower bound is 0.078 > 0: KEEP at look 2 of 5, after 40% of the calls.
// Had the line been inert, the chance of a KEEP at any of the five looks
// is at most 2.5%; with 1.96 at every look it is 7.1% in the normal limit.
package stats

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error this package returns: the input cannot
// produce a number (n = 0, x > n, a negative count, fewer than two cases for a
// clustered standard error, a probability outside its range). Check with
// errors.Is.
var ErrInvalid = errors.New("invalid input")

// invalid builds an error that names the function and what is wrong, and wraps
// ErrInvalid.
func invalid(fn, format string, args ...any) error {
	return fmt.Errorf("stats: %s: %s: %w", fn, fmt.Sprintf(format, args...), ErrInvalid)
}

// Interval is a closed interval [Lo, Hi]. The zero Interval is [0, 0].
type Interval struct {
	Lo, Hi float64
}

// Contains reports whether v lies in [Lo, Hi].
func (iv Interval) Contains(v float64) bool { return iv.Lo <= v && v <= iv.Hi }

// Width returns Hi - Lo.
func (iv Interval) Width() float64 { return iv.Hi - iv.Lo }

// clamp limits v to [lo, hi].
func clamp(v, lo, hi float64) float64 {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// checkCount validates x successes out of n trials.
func checkCount(fn string, x, n int) error {
	switch {
	case n <= 0:
		return invalid(fn, "n = %d, need n > 0", n)
	case x < 0:
		return invalid(fn, "x = %d is negative", x)
	case x > n:
		return invalid(fn, "x = %d exceeds n = %d", x, n)
	}
	return nil
}

// Package stats computes every number auditor shows in a rule-deletion audit:
// binomial intervals for a cell (Wilson, Clopper-Pearson), arm rates with
// case-clustered standard errors, deleted-minus-baseline differences (paired
// by case and Newcombe's hybrid score interval), grader recall and precision
// from human labels (including a stratified, inverse-probability-weighted
// estimator), recall-corrected rates, Cohen's kappa and sample sizes; and
// the group-sequential design that keeps verdicts valid when they are read
// at several declared looks (SpendingOBF, with WilsonZ, NewcombeZ and
// Paired.IntervalZ at a look's boundary; see sequential.go).
//
// Intervals are two-sided 95% unless a function takes the multiplier z.
// Every function is pure (Student-t quantiles are memoised, which no caller
// can observe) and safe for concurrent use. Invalid input (a count above
// its total, a total of zero, a negative count, a probability outside
// [0,1]) is reported as an error that wraps ErrInvalid; no function returns
// NaN for input it accepts, and bounds of a proportion never leave [0,1]
// (bounds of a difference never leave [-1,1]).
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

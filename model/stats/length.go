package stats

import (
	"math"
	"slices"
)

// Response lengths are the evidence for rules with no input class ("Keep
// answers under 150 words", "Be concise"): such a rule touches every answer,
// so it is audited on a general case file by comparing how long the answers
// are with and without it. The functions below take lengths as non-negative
// integers (words or completion tokens) and reject negative ones, which can
// only come from a bug upstream.

// LengthSummary describes one sample of response lengths.
type LengthSummary struct {
	N      int     // number of lengths
	Mean   float64 // arithmetic mean
	Median float64 // 0.5 quantile
	P10    float64 // 0.1 quantile
	P90    float64 // 0.9 quantile
	Min    int
	Max    int
}

// SummarizeLengths returns the count, mean, quantiles and range of xs. The
// quantiles interpolate linearly between order statistics (Hyndman and Fan's
// type 7, the default of numpy.quantile and R's quantile): with xs sorted,
// the p-quantile is x[h'] + (h-h')(x[h'+1]-x[h']) for h = (n-1)p and
// h' = floor(h), so the median of an even count is the mean of the middle
// two. xs is not modified. It returns an error when xs is empty or holds a
// negative length.
func SummarizeLengths(xs []int) (LengthSummary, error) {
	const fn = "summarize lengths"
	if len(xs) == 0 {
		return LengthSummary{}, invalid(fn, "no lengths")
	}
	if err := checkLengths(fn, xs); err != nil {
		return LengthSummary{}, err
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var sum float64
	for _, x := range s {
		sum += float64(x)
	}
	return LengthSummary{
		N:      len(s),
		Mean:   sum / float64(len(s)),
		Median: quantile7(s, 0.5),
		P10:    quantile7(s, 0.1),
		P90:    quantile7(s, 0.9),
		Min:    s[0],
		Max:    s[len(s)-1],
	}, nil
}

// quantile7 is the type 7 p-quantile of sorted, non-empty s.
func quantile7(s []int, p float64) float64 {
	h := float64(len(s)-1) * p
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return float64(s[len(s)-1])
	}
	return float64(s[lo]) + (h-float64(lo))*float64(s[lo+1]-s[lo])
}

// LengthShift is the paired change in mean response length from baseline to
// deleted over the same cases (deleted - baseline): positive when answers
// grow once the rule is gone.
type LengthShift struct {
	Cases int     // C: cases with answers under both variants
	Est   float64 // mean over cases of d_c = mean deleted length - mean baseline length of case c
	SE    float64 // sd(d_c)/sqrt(C), ddof 1: the case is the unit
	// CI is Est -/+ t(0.975, C-1)*SE. It has zero width when every case
	// shifts by exactly the same amount.
	CI Interval
	// RelEst is Est divided by the mean of the per-case baseline means (the
	// relative shift, 0.4 for answers 40% longer); 0 when that mean is 0.
	RelEst float64
}

// ZeroWidth reports whether the interval has zero width: every case
// shifted by the same amount, so the cases give no measure of spread.
func (s LengthShift) ZeroWidth() bool { return s.CI.Hi-s.CI.Lo < 1e-9 }

// PairedLengthShift measures how much longer (or shorter) answers are with
// the rule deleted. del[c] and base[c] hold the lengths of case c's answers
// under the deleted and the baseline variant, the same cases in the same
// order; the counts may differ (errored calls). Each case is reduced to its
// mean length under each variant and every case weighs the same, whatever
// its number of answers: samples of one case are not independent (they share
// the question), so the cases are the unit and the interval uses Student's t
// with C-1 degrees of freedom, as the arm intervals do. A case with no answer
// under either variant is skipped. It returns an error when the slices differ
// in length, a length is negative, or fewer than two cases remain.
func PairedLengthShift(del, base [][]int) (LengthShift, error) {
	const fn = "paired length shift"
	if len(del) != len(base) {
		return LengthShift{}, invalid(fn, "%d deleted cases for %d baseline cases", len(del), len(base))
	}
	var d []float64
	var baseSum float64
	for c := range del {
		if err := checkLengths(fn, del[c]); err != nil {
			return LengthShift{}, err
		}
		if err := checkLengths(fn, base[c]); err != nil {
			return LengthShift{}, err
		}
		if len(del[c]) == 0 || len(base[c]) == 0 {
			continue
		}
		mb := meanInts(base[c])
		d = append(d, meanInts(del[c])-mb)
		baseSum += mb
	}
	C := len(d)
	if C < 2 {
		return LengthShift{}, invalid(fn, "%d case(s) with answers under both variants, need at least 2", C)
	}
	fc := float64(C)
	est := mean(d)
	var ss float64
	for _, x := range d {
		ss += (x - est) * (x - est)
	}
	se := math.Sqrt(ss / (fc - 1) / fc)
	t := t975(C - 1)
	ls := LengthShift{Cases: C, Est: est, SE: se, CI: Interval{Lo: est - t*se, Hi: est + t*se}}
	if mb := baseSum / fc; mb > 0 {
		ls.RelEst = est / mb
	}
	return ls, nil
}

// RankTest is the result of a two-sided Mann-Whitney U test.
type RankTest struct {
	U  float64 // U of sample a: R_a - n_a(n_a+1)/2, R_a its rank sum
	Z  float64 // continuity-corrected normal score; positive when a tends to be larger
	P  float64 // two-sided p-value in [0,1]
	NA int     // size of sample a
	NB int     // size of sample b
}

// MannWhitney runs the two-sided Mann-Whitney U (Wilcoxon rank-sum) test of
// whether values of a tend to be larger or smaller than values of b. Ties get
// mid-ranks; U = R_a - n_a(n_a+1)/2 counts the pairs (x in a, y in b) with
// x > y, plus half of those with x = y. The p-value is the normal
// approximation with the tie-corrected variance
// n_a n_b/12 * ((n+1) - sum(t^3-t)/(n(n-1))), t running over the sizes of the
// tied groups, and a continuity correction of 0.5:
// Z = sign(U-mu) * max(|U-mu| - 0.5, 0) / sigma with mu = n_a n_b/2, and
// P = 2(1 - Phi(|Z|)), the values scipy.stats.mannwhitneyu(method="asymptotic")
// and R's wilcox.test(exact=FALSE) give. When every value is tied the variance
// is 0: Z = 0 and P = 1.
//
// The test treats every answer as independent, which answers to the same
// case are not, so its p-value is too small when cases differ; that is why
// PairedLengthShift's interval is the number shown and this test is only a
// secondary check on the shape of the shift. It runs in O(n log n) time and
// does not modify its arguments. It returns an error when a or b is empty or
// holds a negative length.
func MannWhitney(a, b []int) (RankTest, error) {
	const fn = "mann-whitney"
	if len(a) == 0 || len(b) == 0 {
		return RankTest{}, invalid(fn, "samples of %d and %d, need both non-empty", len(a), len(b))
	}
	if err := checkLengths(fn, a); err != nil {
		return RankTest{}, err
	}
	if err := checkLengths(fn, b); err != nil {
		return RankTest{}, err
	}
	sa, sb := slices.Clone(a), slices.Clone(b)
	slices.Sort(sa)
	slices.Sort(sb)
	// Walk both sorted samples one distinct value at a time: a group of t
	// tied values starting after `below` smaller ones has mid-rank
	// below + (t+1)/2.
	var ra, ties float64
	below, i, j := 0, 0, 0
	for i < len(sa) || j < len(sb) {
		v := 0
		switch {
		case i == len(sa):
			v = sb[j]
		case j == len(sb):
			v = sa[i]
		default:
			v = min(sa[i], sb[j])
		}
		ca, cb := 0, 0
		for i < len(sa) && sa[i] == v {
			i++
			ca++
		}
		for j < len(sb) && sb[j] == v {
			j++
			cb++
		}
		t := float64(ca + cb)
		ra += float64(ca) * (float64(below) + (t+1)/2)
		ties += t*t*t - t
		below += ca + cb
	}
	na, nb := float64(len(a)), float64(len(b))
	n := na + nb
	rt := RankTest{U: ra - na*(na+1)/2, P: 1, NA: len(a), NB: len(b)}
	v := na * nb / 12 * ((n + 1) - ties/(n*(n-1)))
	if !(v > 0) {
		return rt, nil
	}
	dev := rt.U - na*nb/2
	z := math.Max(math.Abs(dev)-0.5, 0) / math.Sqrt(v)
	if dev < 0 {
		z = -z
	}
	rt.Z = z
	rt.P = clamp(math.Erfc(math.Abs(z)/math.Sqrt2), 0, 1)
	return rt, nil
}

// Histogram bins two samples of lengths on shared integer edges, so that
// their bars can be drawn side by side. Bin i counts the values v with
// edges[i] <= v < edges[i+1]. edges[0] is the smallest value of either
// sample and every bin has the same integer width w >= 1, the smallest that
// covers the range in at most bins bins: w = ceil((max+1-min)/bins). There
// are fewer than bins bins when the range is small (one bin per value when
// it has fewer values than bins), and the last edge is edges[0] + k*w for k
// bins, so max < last edge <= max + w: it equals max+1 exactly when w
// divides the range. Keeping every bin the same width keeps the bars
// comparable; the last bin may extend past max. One sample may be empty (its
// counts are all 0). It returns an error when both are empty, bins < 1, or a
// length is negative (or above math.MaxInt/2, where the edges would overflow).
func Histogram(a, b []int, bins int) (edges []int, countsA, countsB []int, err error) {
	const fn = "histogram"
	if bins < 1 {
		return nil, nil, nil, invalid(fn, "%d bins, need at least 1", bins)
	}
	if len(a) == 0 && len(b) == 0 {
		return nil, nil, nil, invalid(fn, "both samples empty")
	}
	if err := checkLengths(fn, a); err != nil {
		return nil, nil, nil, err
	}
	if err := checkLengths(fn, b); err != nil {
		return nil, nil, nil, err
	}
	lo, hi := math.MaxInt, 0
	for _, s := range [][]int{a, b} {
		for _, x := range s {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if hi > math.MaxInt/2 {
		// No length comes near this; refusing it keeps the edges from overflowing.
		return nil, nil, nil, invalid(fn, "length %d is too large", hi)
	}
	// ceil((d+1)/bins) and ceil((d+1)/w) for the range d, as integers.
	d := hi - lo
	w := d/bins + 1
	k := d/w + 1
	edges = make([]int, k+1)
	for i := range edges {
		edges[i] = lo + i*w
	}
	count := func(s []int) []int {
		c := make([]int, k)
		for _, x := range s {
			c[(x-lo)/w]++
		}
		return c
	}
	return edges, count(a), count(b), nil
}

// checkLengths reports the first negative length in xs.
func checkLengths(fn string, xs []int) error {
	for i, x := range xs {
		if x < 0 {
			return invalid(fn, "length %d at index %d is negative", x, i)
		}
	}
	return nil
}

// meanInts is the mean of non-empty xs, summed in float64 so that it cannot
// overflow.
func meanInts(xs []int) float64 {
	var s float64
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}

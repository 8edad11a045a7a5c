package stats

import "math"

// Group-sequential boundaries: verdicts that stay valid however often they
// are looked at.
//
// # The problem
//
// A KEEP test at one-sided 2.5% is wrong 2.5% of the time when it is
// applied once, to all the data. Applied after every round of samples, with
// the user stopping at the first look that says KEEP, it is wrong more
// often: each look is another chance for noise to cross 1.96. With five
// equally spaced looks the chance is 7.1% (crossingProbability of 1.96 at
// each look; the Deming-presentation check in gsDesign's unit tests gives
// 0.063 for four looks and 0.097 for ten).
//
// # The method
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
// which spends almost nothing early (alpha(0.2) = 0.0000054 for alpha =
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
// look k with z = c_k (WilsonZ, NewcombeZ, Paired.IntervalZ) excludes the
// truth at some look with probability at most alpha, so a verdict read off
// such bounds at any look, or at every look, is valid. KEEP (lower bound
// of the rise > 0) and DELETE (upper bound < delta J_L) are two one-sided
// tests, each at its own 2.5%, each with these boundaries.
//
// # Assumptions
//
//   - Independent increments and a normal approximation: the pooled rate
//     difference behaves like a Brownian motion in the information, which
//     grows in proportion to the samples. Binomial counts satisfy this in
//     the limit; with few samples the discreteness of the counts makes the
//     bounds conservative in practice (the simulations in
//     sequential_sim_test.go measure it: false KEEP and false DELETE stay
//     below 2.5% on 8 and 18 cases of 30 samples).
//   - The looks are declared before the data are seen, and a look is taken
//     at its fraction whatever the data: looking at a fraction chosen
//     because the numbers looked good breaks the guarantee.
//   - The paired-by-case t term has no exact canonical distribution (its
//     degrees of freedom are the cases, not the samples); it is taken at
//     the same one-sided tail level 1 - Phi(c_k) as the score intervals.
//   - The grader's Youden index J_L comes from hand labels, which are not
//     sequential in samples: it is treated as a known constant here.
//
// # Worked example
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

// minRadius is the smallest Jennison and Turnbull r used: the integration
// grid has 6r-1 points before Simpson's midpoints. gsDesign defaults to 18;
// 32 keeps the boundaries within 1e-7 of rpact's at a cost of a few
// milliseconds. Looks close together need a finer grid (see radius).
const minRadius = 32

// Limits on a design: more than MaxLooks looks gains nothing over a
// confidence sequence; a look before MinLookFraction of the samples could
// never stop (its boundary is above 22), and two looks less than
// MinLookFraction apart are one look.
const (
	MaxLooks        = 20
	MinLookFraction = 0.01
)

// Boundary is one look of a group-sequential design.
type Boundary struct {
	// Fraction is the look's information fraction t_k: the share of each
	// case's planned samples it uses.
	Fraction float64
	// Spent is alpha(t_k), the one-sided error spent up to and including
	// this look.
	Spent float64
	// Z is the look's boundary c_k on the standard normal scale: intervals
	// at this look use it instead of 1.96.
	Z float64
	// Tail is 1 - Phi(c_k), the nominal one-sided level of each test at
	// this look; a t quantile at the look is taken at this tail.
	Tail float64
}

// OBFSpent is the Lan-DeMets O'Brien-Fleming spending function: the
// one-sided error alpha(t) = 2 - 2 Phi(Phi^-1(1 - alpha/2)/sqrt(t)) that a
// design may have spent by information fraction t in (0,1]; alpha(1) =
// alpha. It is the spending of gsDesign's sfLDOF, rpact's "asOF" and
// ldbounds' iuse = 1. It returns an error when t is outside (0,1] or alpha
// outside (0, 0.5).
func OBFSpent(t, alpha float64) (float64, error) {
	if !(t > 0 && t <= 1) {
		return 0, invalid("obf spending", "fraction %v outside (0,1]", t)
	}
	if !(alpha > 0 && alpha < 0.5) {
		return 0, invalid("obf spending", "alpha %v outside (0, 0.5)", alpha)
	}
	return obfSpent(t, alpha), nil
}

// obfSpent is OBFSpent for valid input, computed from the upper tail so
// that tiny spends keep their digits.
func obfSpent(t, alpha float64) float64 {
	if t == 1 {
		return alpha // exactly, not up to rounding
	}
	z := -NormalQuantile(alpha / 2)
	return 2 * upperTail(z/math.Sqrt(t))
}

// upperTail is 1 - Phi(z), accurate far into the tail.
func upperTail(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// EqualFractions returns the information fractions of k equally spaced
// looks, 1/k, 2/k, ..., 1 (the last exactly 1). k below 1 gives nil.
func EqualFractions(k int) []float64 {
	if k < 1 {
		return nil
	}
	t := make([]float64, k)
	for i := range t {
		t[i] = float64(i+1) / float64(k)
	}
	return t
}

// SamplesAtLook is the number of samples per case a look at information
// fraction t uses when each case plans n: ceil(t*n), never more than n.
// A look's data are the first SamplesAtLook samples of every case by sample
// index, in both variants. The product is rounded down by 1e-9 first so
// that 0.2*30, which is 6.000000000000001 in floating point, gives 6.
func SamplesAtLook(t float64, n int) int {
	if n <= 0 || !(t > 0) {
		return 0
	}
	k := int(math.Ceil(t*float64(n) - 1e-9))
	return min(max(k, 1), n)
}

// SpendingOBF returns the boundaries of a one-sided group-sequential design
// with looks at information fractions t (strictly increasing, each at
// least MinLookFraction, the last exactly 1, at most MaxLooks of them) that
// spends the one-sided error alpha with the Lan-DeMets O'Brien-Fleming
// function (OBFSpent). Under the null hypothesis the chance that the
// statistic crosses c_k at some look k is alpha. See the comment at the top
// of this file for the method, its assumptions and a worked example. For
// five equally spaced looks and alpha = 0.025 the boundaries are 4.877,
// 3.357, 2.680, 2.290 and 2.031.
//
// It returns an error when t is empty, too long, not increasing, has a
// fraction below MinLookFraction or above 1, or does not end at 1, or when
// alpha is outside (0, 0.5). The result never holds NaN or an infinity.
func SpendingOBF(t []float64, alpha float64) ([]Boundary, error) {
	const fn = "obf boundaries"
	switch {
	case len(t) == 0:
		return nil, invalid(fn, "no looks")
	case len(t) > MaxLooks:
		return nil, invalid(fn, "%d looks, at most %d", len(t), MaxLooks)
	case !(alpha > 0 && alpha < 0.5):
		return nil, invalid(fn, "alpha %v outside (0, 0.5)", alpha)
	}
	for k, f := range t {
		switch {
		case !(f >= MinLookFraction && f <= 1):
			return nil, invalid(fn, "look %d at fraction %v, outside [%g, 1]", k+1, f, MinLookFraction)
		case k > 0 && !(f-t[k-1] >= MinLookFraction-1e-12):
			return nil, invalid(fn, "look %d at fraction %v does not come at least %g after look %d at %v", k+1, f, MinLookFraction, k, t[k-1])
		}
	}
	if t[len(t)-1] != 1 {
		return nil, invalid(fn, "the last look is at fraction %v; it must use all the samples (1)", t[len(t)-1])
	}
	b := make([]Boundary, len(t))
	r := radius(t)
	var g grid
	prev := 0.0
	for k, f := range t {
		spent := obfSpent(f, alpha)
		target := spent - prev
		if !(target > 0) {
			return nil, invalid(fn, "looks %d and %d (fractions %v and %v) are too close to spend any error between them", k, k+1, t[k-1], f)
		}
		var c float64
		if k == 0 {
			c = -NormalQuantile(target)
			g = startGrid(c, r)
		} else {
			c = g.solve(t[k-1], f, target)
			if k < len(t)-1 {
				g = g.advance(t[k-1], f, c, r)
			}
		}
		b[k] = Boundary{Fraction: f, Spent: spent, Z: c, Tail: upperTail(c)}
		prev = spent
	}
	return b, nil
}

// crossingProbability is the chance, under the null hypothesis, that a
// statistic with the canonical joint distribution at fractions t crosses
// z[k] at some look k (one-sided, no lower boundary). It is the number
// SpendingOBF's boundaries make equal to alpha, and it measures what
// repeated testing at fixed z costs: 1.96 at five equally spaced looks gives
// 0.071. t must be valid for SpendingOBF and z as long, each finite.
func crossingProbability(t, z []float64) float64 {
	r := radius(t)
	g := startGrid(z[0], r)
	total := upperTail(z[0])
	for k := 1; k < len(t); k++ {
		total += g.exit(t[k-1], t[k], z[k])
		if k < len(t)-1 {
			g = g.advance(t[k-1], t[k], z[k], r)
		}
	}
	return total
}

// grid is the sub-density of Z_k on the continuation region (-inf, c_k)
// of the look just taken: h[i] is Simpson's weight at z[i] times the
// density of paths that have not crossed any boundary so far and are at
// z[i] now. Its mass is the chance of reaching the next look.
type grid struct {
	z, h []float64
}

// radius is the grid's r for looks at fractions t: at least minRadius, and
// fine enough that Simpson's panels (3/(4r) wide in the grid's core) are a
// tenth of the narrowest step between looks, sqrt((t_k - t_{k-1})/t_k) on
// the z scale, where the normal kernel of an increment is sharpest. Looks
// MinLookFraction apart need r = 75.
func radius(t []float64) int {
	r := minRadius
	for k := 1; k < len(t); k++ {
		sd := math.Sqrt((t[k] - t[k-1]) / t[k])
		r = max(r, int(math.Ceil(7.5/sd)))
	}
	return r
}

// startGrid is the grid of the first look: the standard normal density on
// (-inf, c), on a grid of radius r.
func startGrid(c float64, r int) grid {
	z, w := gridPoints(c, r)
	h := make([]float64, len(z))
	for i := range z {
		h[i] = w[i] * normalDensity(z[i])
	}
	return grid{z: z, h: h}
}

// exit is the chance of crossing c at the look at fraction t from the
// grid of the previous look at fraction s:
// sum_i h[i] * (1 - Phi((c sqrt(t) - z_i sqrt(s)) / sqrt(t - s))).
func (g grid) exit(s, t, c float64) float64 {
	rs, rt, rd := math.Sqrt(s), math.Sqrt(t), math.Sqrt(t-s)
	var p float64
	for i, zi := range g.z {
		p += g.h[i] * upperTail((c*rt-zi*rs)/rd)
	}
	return p
}

// solve finds the c at which the look at fraction t, after the grid's look
// at fraction s, spends target: exit is strictly decreasing in c, so
// bisection of [-40, 40] converges; it stops at a width of 1e-11, far
// below any digit a verdict reads.
func (g grid) solve(s, t, target float64) float64 {
	lo, hi := -40.0, 40.0
	for hi-lo > 1e-11 {
		mid := (lo + hi) / 2
		if g.exit(s, t, mid) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// advance carries the grid from the look at fraction s to the look at
// fraction t with boundary c: the density at a new point z_j is the
// old sub-density convolved with the normal increment,
// sum_i h[i] * sqrt(t/(t-s)) * phi((z_j sqrt(t) - z_i sqrt(s)) / sqrt(t - s)),
// times the new point's Simpson weight.
func (g grid) advance(s, t, c float64, r int) grid {
	rs, rt, rd := math.Sqrt(s), math.Sqrt(t), math.Sqrt(t-s)
	z, w := gridPoints(c, r)
	h := make([]float64, len(z))
	for j, zj := range z {
		var sum float64
		for i, zi := range g.z {
			// Beyond 12 sd the kernel is below 1e-31 of its peak: skip
			// the exponential, which is most of the cost when looks are
			// close and the kernel is narrow.
			if x := (zj*rt - zi*rs) / rd; x > -12 && x < 12 {
				sum += g.h[i] * normalDensity(x)
			}
		}
		h[j] = w[j] * sum * rt / rd
	}
	return grid{z: z, h: h}
}

// gridPoints lays out Jennison and Turnbull's grid (2000, section 19.2.1;
// gsDesign's gridpts) on (-inf, b) for a zero drift: 6r-1 points, dense in
// [-3, 3] and spreading logarithmically to about +/-(3 + 4 ln r), cut at b
// (which becomes the last point), with the midpoint of each pair of
// neighbours added and Simpson's weights.
func gridPoints(b float64, radius int) (z, w []float64) {
	r := float64(radius)
	var xs []float64
	for i := 1; i < 6*radius; i++ {
		fi := float64(i)
		var x float64
		switch {
		case i < radius:
			x = -3 - 4*math.Log(r/fi)
		case i <= 5*radius:
			x = -3 + 3*(fi-r)/(2*r)
		default:
			x = 3 + 4*math.Log(r/(6*r-fi))
		}
		if x >= b {
			xs = append(xs, b)
			break
		}
		xs = append(xs, x)
	}
	if len(xs) == 1 {
		// The boundary lies below the grid: nothing continues.
		return []float64{b}, []float64{0}
	}
	m := 2*len(xs) - 1
	z = make([]float64, m)
	w = make([]float64, m)
	for i, x := range xs {
		z[2*i] = x
	}
	for i := 1; i < m; i += 2 {
		z[i] = (z[i-1] + z[i+1]) / 2
		d := z[i+1] - z[i-1]
		w[i-1] += d / 6
		w[i] += 2 * d / 3
		w[i+1] += d / 6
	}
	return z, w
}

func normalDensity(x float64) float64 {
	return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
}

package stats

import "math"

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
// with looks at information fractions t (increasing by at least
// MinLookFraction, the first at least MinLookFraction, the last exactly 1,
// at most MaxLooks of them) that spends the one-sided error alpha with the
// Lan-DeMets O'Brien-Fleming function (OBFSpent). Under the null
// hypothesis the chance that the statistic crosses c_k at some look k is
// alpha. The package documentation ("Sequential looks") gives the method,
// its assumptions and a worked example. For five equally spaced looks and
// alpha = 0.025 the boundaries are 4.877, 3.357, 2.680, 2.290 and 2.031.
// It takes a few milliseconds (up to about 100 for twenty close looks):
// compute a design once per audit, not per verdict.
//
// It returns an error when t is empty, too long, not increasing by
// MinLookFraction, has a fraction below MinLookFraction or above 1, or does
// not end at 1, or when alpha is outside (0, 0.5). The result never holds
// NaN or an infinity.
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

package stats

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// z975 is the 97.5% standard normal quantile, the multiplier of every 95%
// two-sided interval here (a constant rather than a computed variable; a test
// checks it against NormalQuantile(0.975)).
const z975 = 1.959963984540054

// NormalQuantile returns the p-quantile of the standard normal distribution:
// -Inf at p = 0, +Inf at p = 1, and NaN when p is NaN or outside [0,1] (it is
// meant for constants such as 0.975, never for user input).
func NormalQuantile(p float64) float64 {
	switch {
	case math.IsNaN(p) || p < 0 || p > 1:
		return math.NaN()
	case p == 0:
		return math.Inf(-1)
	case p == 1:
		return math.Inf(1)
	}
	return distuv.UnitNormal.Quantile(p)
}

// StudentTQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom (df need not be an integer; df = +Inf gives the normal
// quantile). It returns an error when p is not in (0,1) or df is not positive.
//
// The quantile inverts an incomplete beta function, which is slow, and the
// verdict's projections ask for the same few (p, df) pairs many times, so
// results are memoised (see tQuantiles).
func StudentTQuantile(p, df float64) (float64, error) {
	if math.IsNaN(p) || p <= 0 || p >= 1 {
		return 0, invalid("t quantile", "p = %v, need 0 < p < 1", p)
	}
	if math.IsNaN(df) || df <= 0 {
		return 0, invalid("t quantile", "df = %v, need df > 0", df)
	}
	if math.IsInf(df, 1) {
		return NormalQuantile(p), nil
	}
	return tQuantiles.get(p, df), nil
}

// tQuantiles memoises StudentTQuantile. It is the package's only state and
// is invisible to callers: a cached value is the value computed.
var tQuantiles = tCache{m: map[[2]float64]float64{}}

// tCacheSize bounds the memo: a verdict needs a few hundred distinct
// (p, df) pairs at most; when the map is full it is emptied rather than
// allowed to grow with odd inputs.
const tCacheSize = 4096

// tCache is a bounded map of t quantiles keyed by (p, df), safe for
// concurrent use.
type tCache struct {
	mu sync.Mutex
	m  map[[2]float64]float64
}

func (c *tCache) get(p, df float64) float64 {
	key := [2]float64{p, df}
	c.mu.Lock()
	q, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return q
	}
	// Computed outside the lock: two goroutines may both compute a missing
	// value, and they store the same number.
	q = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
	c.mu.Lock()
	if len(c.m) >= tCacheSize {
		clear(c.m)
	}
	c.m[key] = q
	c.mu.Unlock()
	return q
}

// t975 returns t(0.975, df) for df >= 1, which StudentTQuantile always
// accepts.
func t975(df int) float64 {
	t, err := StudentTQuantile(0.975, float64(df))
	if err != nil {
		// Unreachable for df >= 1; callers guarantee it. A wide multiplier
		// keeps any interval honest rather than narrow.
		return math.Inf(1)
	}
	return t
}

// Wilson returns the 95% Wilson score interval for x successes out of n. The
// lower bound is exactly 0 when x = 0 and the upper bound exactly 1 when
// x = n; both stay in [0,1]. It is the default interval for display. It
// returns an error when n <= 0, x < 0 or x > n.
func Wilson(x, n int) (Interval, error) {
	if err := checkCount("wilson", x, n); err != nil {
		return Interval{}, err
	}
	return wilsonP(float64(x)/float64(n), float64(n)), nil
}

// wilsonP is the Wilson interval for an observed proportion p on n trials,
// with n allowed to be fractional (used for projections). p must be in [0,1]
// and n > 0.
func wilsonP(p, n float64) Interval { return wilsonPZ(p, n, z975) }

// wilsonPZ is wilsonP with multiplier z.
func wilsonPZ(p, n, z float64) Interval {
	z2 := z * z
	den := 1 + z2/n
	centre := (p + z2/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / den
	iv := Interval{Lo: clamp(centre-half, 0, 1), Hi: clamp(centre+half, 0, 1)}
	if p == 0 {
		iv.Lo = 0
	}
	if p == 1 {
		iv.Hi = 1
	}
	// Guard the estimate against rounding at the far ends of the range.
	iv.Lo = math.Min(iv.Lo, p)
	iv.Hi = math.Max(iv.Hi, p)
	return iv
}

// ClopperPearson returns the exact (conservative) 95% Clopper-Pearson
// interval for x successes out of n: Beta quantiles, with lower bound 0 when
// x = 0 and upper bound 1 when x = n. Use it when certifying a bound such as
// "0 of 30". It returns an error when n <= 0, x < 0 or x > n.
func ClopperPearson(x, n int) (Interval, error) {
	if err := checkCount("clopper-pearson", x, n); err != nil {
		return Interval{}, err
	}
	iv := Interval{Lo: 0, Hi: 1}
	if x > 0 {
		iv.Lo = distuv.Beta{Alpha: float64(x), Beta: float64(n - x + 1)}.Quantile(0.025)
	}
	if x < n {
		iv.Hi = distuv.Beta{Alpha: float64(x + 1), Beta: float64(n - x)}.Quantile(0.975)
	}
	p := float64(x) / float64(n)
	iv.Lo = math.Min(clamp(iv.Lo, 0, 1), p)
	iv.Hi = math.Max(clamp(iv.Hi, 0, 1), p)
	return iv, nil
}

// NormalInterval returns est -/+ z(0.975)*se clamped to [0,1], the Wald
// interval for a proportion estimated with a delta-method standard error
// (such as IPWRecall's).
func NormalInterval(est, se float64) Interval {
	return Interval{Lo: clamp(est-z975*se, 0, 1), Hi: clamp(est+z975*se, 0, 1)}
}

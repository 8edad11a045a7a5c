package stats

import (
	"fmt"
	"math"
)

// Newcombe returns p1 - p2 = x1/n1 - x2/n2 and its 95% hybrid score interval
// for two independent proportions (Newcombe 1998, method 10), built from the
// Wilson limits (l_i, u_i): L = d - sqrt((p1-l1)^2 + (u2-p2)^2),
// U = d + sqrt((u1-p1)^2 + (p2-l2)^2). Unlike a Wald interval it never
// collapses at 0/n or n/n. Bounds stay in [-1,1]. It returns an error when
// either count is invalid (n <= 0, x < 0, x > n).
func Newcombe(x1, n1, x2, n2 int) (est float64, ci Interval, err error) {
	w1, err := Wilson(x1, n1)
	if err != nil {
		return 0, Interval{}, fmt.Errorf("stats: newcombe: first proportion: %w", err)
	}
	w2, err := Wilson(x2, n2)
	if err != nil {
		return 0, Interval{}, fmt.Errorf("stats: newcombe: second proportion: %w", err)
	}
	p1 := float64(x1) / float64(n1)
	p2 := float64(x2) / float64(n2)
	est, ci = newcombe(p1, w1, p2, w2)
	return est, ci, nil
}

// newcombe combines two proportions and their Wilson intervals.
func newcombe(p1 float64, w1 Interval, p2 float64, w2 Interval) (float64, Interval) {
	d := p1 - p2
	lo := d - math.Hypot(p1-w1.Lo, w2.Hi-p2)
	hi := d + math.Hypot(w1.Hi-p1, p2-w2.Lo)
	return d, Interval{Lo: clamp(lo, -1, d), Hi: clamp(hi, d, 1)}
}

// NewcombePaired returns p1 - p2 for two binary ratings of the same n = a+b+c+d
// items, with its 95% interval (Newcombe 1998, paired, method 10) and the phi
// correlation of the two ratings. a counts items both rate positive, b items
// only the first rates positive, c items only the second, d neither; so
// p1 = (a+b)/n, p2 = (a+c)/n and the estimate is (b-c)/n. phi is 0 when a
// margin is empty. Example: two predicates scored on the same labelled
// violations (a = both caught, b = first only, ...). It returns an error when
// a count is negative or n = 0.
func NewcombePaired(a, b, c, d int) (est float64, ci Interval, phi float64, err error) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return 0, Interval{}, 0, invalid("newcombe paired", "negative count in (%d, %d, %d, %d)", a, b, c, d)
	}
	n := a + b + c + d
	if n == 0 {
		return 0, Interval{}, 0, invalid("newcombe paired", "no items")
	}
	fn := float64(n)
	p1, p2 := float64(a+b)/fn, float64(a+c)/fn
	w1 := wilsonP(p1, fn)
	w2 := wilsonP(p2, fn)
	den := math.Sqrt(float64(a+b) * float64(c+d) * float64(a+c) * float64(b+d))
	if den > 0 {
		phi = clamp((float64(a)*float64(d)-float64(b)*float64(c))/den, -1, 1)
	}
	dl1, du1 := p1-w1.Lo, w1.Hi-p1
	dl2, du2 := p2-w2.Lo, w2.Hi-p2
	est = float64(b-c) / fn
	lo := est - math.Sqrt(math.Max(0, dl1*dl1-2*phi*dl1*du2+du2*du2))
	hi := est + math.Sqrt(math.Max(0, du1*du1-2*phi*du1*dl2+dl2*dl2))
	return est, Interval{Lo: clamp(lo, -1, est), Hi: clamp(hi, est, 1)}, phi, nil
}

// NewcombeRates is Newcombe's hybrid interval for rates p1 and p2 observed
// on n1 and n2 trials, where n may be fractional: a projection of what the
// interval would be with more data at the same rates, without rounding the
// counts (rounding would bias the projection). It returns an error when a
// rate is outside [0,1] or a trial count is not positive.
func NewcombeRates(p1, n1, p2, n2 float64) (float64, Interval, error) {
	for _, v := range [][2]float64{{p1, n1}, {p2, n2}} {
		if !(v[0] >= 0 && v[0] <= 1) || !(v[1] > 0) || math.IsInf(v[1], 0) {
			return 0, Interval{}, invalid("newcombe rates", "rate %v on %v trials", v[0], v[1])
		}
	}
	d, ci := newcombe(p1, wilsonP(p1, n1), p2, wilsonP(p2, n2))
	return d, ci, nil
}

// WilsonRate is the Wilson interval of a rate p observed on n trials, n
// possibly fractional (for projections; see NewcombeRates).
func WilsonRate(p, n float64) (Interval, error) {
	if !(p >= 0 && p <= 1) || !(n > 0) || math.IsInf(n, 0) {
		return Interval{}, invalid("wilson rate", "rate %v on %v trials", p, n)
	}
	return wilsonP(p, n), nil
}

package stats

import (
	"errors"
	"math"
	"testing"
)

// TestClopperPearsonUpper_QuietLine: STATS section 3's direct route. 0
// violations in n labelled answers bound the rate below 1 - alpha^(1/n);
// at the route's alpha 0.0125, 100 labels clear delta 0.05 and 80 do not.
// (STATS prints 0.0532 for 0/80; the exact value is 0.05330.)
func TestClopperPearsonUpper_QuietLine(t *testing.T) {
	for _, c := range []struct {
		x, n  int
		alpha float64
		want  float64
	}{
		{0, 100, 0.0125, 0.0429},
		{0, 80, 0.0125, 0.0533},
		{0, 80, 0.025, 0.0451},
		{0, 60, 0.0125, 0.0704},
		{0, 90, 0.0125, 0.0475},
		{0, 90, 0.01, 0.0499},
		{0, 30, 0.05, 0.0950}, // STATS section 1: exact one-sided 95% of 0/30
	} {
		got, err := ClopperPearsonUpper(c.x, c.n, c.alpha)
		if err != nil || math.Abs(got-c.want) > 1e-4 {
			t.Errorf("ClopperPearsonUpper(%d, %d, %v) = %.4f, %v; want %.4f", c.x, c.n, c.alpha, got, err, c.want)
		}
	}
}

// TestOneSided_MatchTwoSided: at alpha 0.025 the one-sided bounds are the
// 95% two-sided ones of STATS section 9.
func TestOneSided_MatchTwoSided(t *testing.T) {
	for _, c := range [][2]int{{0, 30}, {3, 30}, {13, 30}, {24, 31}, {29, 31}, {24, 24}} {
		cp, _ := ClopperPearson(c[0], c[1])
		u, err1 := ClopperPearsonUpper(c[0], c[1], 0.025)
		l, err2 := ClopperPearsonLower(c[0], c[1], 0.025)
		if err1 != nil || err2 != nil || math.Abs(u-cp.Hi) > 1e-9 || math.Abs(l-cp.Lo) > 1e-9 {
			t.Errorf("%d/%d: one-sided [%.6f, %.6f], two-sided [%.6f, %.6f] (%v %v)", c[0], c[1], l, u, cp.Lo, cp.Hi, err1, err2)
		}
		w, _ := Wilson(c[0], c[1])
		wz, err := WilsonZ(c[0], c[1], 1.959963984540054)
		if err != nil || math.Abs(w.Lo-wz.Lo) > 1e-12 || math.Abs(w.Hi-wz.Hi) > 1e-12 {
			t.Errorf("%d/%d: WilsonZ(1.96) = %+v, Wilson %+v", c[0], c[1], wz, w)
		}
	}
	_, nc, _ := Newcombe(34, 150, 17, 150)
	_, nz, err := NewcombeZ(34, 150, 17, 150, 1.959963984540054)
	if err != nil || math.Abs(nc.Lo-nz.Lo) > 1e-12 || math.Abs(nc.Hi-nz.Hi) > 1e-12 {
		t.Errorf("NewcombeZ(1.96) = %+v, Newcombe %+v", nz, nc)
	}
	p, _ := PairedDiff([]int{0, 2, 9, 20, 3}, []int{30, 30, 30, 30, 30}, []int{0, 1, 3, 12, 1}, []int{30, 30, 30, 30, 30})
	if hi, err := PairedUpper(p, 0.025); err != nil || math.Abs(hi-p.Hi) > 1e-12 {
		t.Errorf("PairedUpper(0.025) = %v, %v; PairedDiff's Hi %v", hi, err, p.Hi)
	}
}

// TestOneSided_StricterLevel: at alpha 0.0125 the multiplier is 2.2414 and
// every bound is wider than at 0.025.
func TestOneSided_StricterLevel(t *testing.T) {
	z, err := UpperZ(0.0125)
	if err != nil || math.Abs(z-2.2414) > 1e-4 {
		t.Fatalf("UpperZ(0.0125) = %v, %v; want 2.2414", z, err)
	}
	_, n95, _ := Newcombe(0, 240, 0, 240)
	_, n975, _ := NewcombeZ(0, 240, 0, 240, z)
	// 0/240 vs 0/240: the Wilson upper bound of 0/n is z^2/(n+z^2).
	if want := z * z / (240 + z*z); math.Abs(n975.Hi-want) > 1e-12 || !(n975.Hi > n95.Hi) {
		t.Errorf("NewcombeZ(0/240 - 0/240, 2.2414).Hi = %.6f, want %.6f (> 95%%'s %.6f)", n975.Hi, want, n95.Hi)
	}
	p, _ := PairedDiff([]int{0, 2, 9, 20, 3}, []int{30, 30, 30, 30, 30}, []int{0, 1, 3, 12, 1}, []int{30, 30, 30, 30, 30})
	hi, _ := PairedUpper(p, 0.0125)
	tq, _ := StudentTQuantile(0.9875, 4)
	if math.Abs(hi-(p.D+tq*p.SEPair)) > 1e-12 || !(hi > p.Hi) {
		t.Errorf("PairedUpper(0.0125) = %v, want D + t(0.9875, 4) SE = %v", hi, p.D+tq*p.SEPair)
	}
}

func TestZeroOfNBelow(t *testing.T) {
	for _, c := range []struct {
		limit, alpha float64
		want         int
	}{{0.05, 0.0125, 86}, {0.05, 0.01, 90}, {0.05, 0.025, 72}, {0.10, 0.0125, 42}} {
		n, err := ZeroOfNBelow(c.limit, c.alpha)
		if err != nil || n != c.want {
			t.Errorf("ZeroOfNBelow(%v, %v) = %d, %v; want %d", c.limit, c.alpha, n, err, c.want)
			continue
		}
		// The defining property: n clears the limit, n-1 does not.
		at, _ := ClopperPearsonUpper(0, n, c.alpha)
		before, _ := ClopperPearsonUpper(0, n-1, c.alpha)
		if !(at < c.limit) || before < c.limit {
			t.Errorf("ZeroOfNBelow(%v, %v) = %d: bounds %v at n, %v at n-1", c.limit, c.alpha, n, at, before)
		}
	}
}

// TestRateBound: one stratum is Clopper-Pearson; several strata are never
// tighter than a census of the same answers would be, and a stratum with no
// label knows nothing.
func TestRateBound(t *testing.T) {
	u, err := RateUpper([]LabelledStratum{{N: 240, Labelled: 100}}, 0.0125)
	if err != nil || math.Abs(u-0.0429) > 1e-4 {
		t.Errorf("one stratum, 0/100: %v, %v; want 0.0429", u, err)
	}
	// A stratum with no answers is ignored.
	u2, _ := RateUpper([]LabelledStratum{{N: 240, Labelled: 100}, {}}, 0.0125)
	if u2 != u {
		t.Errorf("an empty stratum changed the bound: %v vs %v", u2, u)
	}
	// Every stratum labelled in full: the census is one sample.
	c, _ := RateUpper([]LabelledStratum{{N: 10, Labelled: 10, Violations: 1}, {N: 90, Labelled: 90}}, 0.0125)
	want, _ := ClopperPearsonUpper(1, 100, 0.0125)
	if math.Abs(c-want) > 1e-12 {
		t.Errorf("census of two strata: %v, want %v", c, want)
	}
	// Two strata, one partly labelled: two steps at alpha/2.
	two, _ := RateUpper([]LabelledStratum{{N: 10, Labelled: 10, Violations: 1}, {N: 230, Labelled: 100}}, 0.0125)
	step1, _ := ClopperPearsonUpper(0, 100, 0.00625)
	count := math.Ceil(1 + 230*step1)
	step2, _ := ClopperPearsonUpper(int(count), 240, 0.00625)
	if math.Abs(two-step2) > 1e-12 {
		t.Errorf("two strata: %v, want %v (count bound %v)", two, step2, count)
	}
	// A stratum with answers and no labels: everything there may be a
	// violation (upper) or none (lower).
	if u, _ := RateUpper([]LabelledStratum{{N: 5}}, 0.0125); u != 1 {
		t.Errorf("unlabelled stratum upper %v, want 1", u)
	}
	if l, _ := RateLower([]LabelledStratum{{N: 5}, {N: 100, Labelled: 50, Violations: 10}}, 0.0125); !(l > 0 && l < 0.2) {
		t.Errorf("lower with an unlabelled stratum: %v", l)
	}
	for _, bad := range [][]LabelledStratum{nil, {{N: 3, Labelled: 4}}, {{N: 3, Labelled: 2, Violations: 3}}, {{N: -1}}} {
		if _, err := RateUpper(bad, 0.0125); !errors.Is(err, ErrInvalid) {
			t.Errorf("RateUpper(%+v) err %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := RateUpper([]LabelledStratum{{N: 3, Labelled: 3}}, 0.5); !errors.Is(err, ErrInvalid) {
		t.Errorf("alpha 0.5 accepted: %v", err)
	}
}

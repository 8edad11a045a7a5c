package stats

import (
	"math"
	"testing"
)

func fill(v, c int) []int {
	s := make([]int, c)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestArmStats_Vectors(t *testing.T) {
	t.Parallel()
	a, err := ArmStats([]int{0, 2, 9, 20, 3}, fill(30, 5))
	if err != nil {
		t.Fatal(err)
	}
	near(t, "rate", a.Rate, 0.2267, tol)
	near(t, "naive", a.SENaive, 0.0342, tol)
	near(t, "fixed", a.SEFixed, 0.0279, tol)
	near(t, "CR", a.SECR, 0.1208, tol)
	near(t, "Miller eq. 4", a.SEMiller, 0.1081, tol)
	if a.Cases != 5 || a.N != 150 || a.Fails != 34 || a.CI != CIT {
		t.Errorf("arm = %+v", a)
	}
	// The t(4) interval is [-0.1088, 0.5621] before clamping.
	t4, _ := StudentTQuantile(0.975, 4)
	near(t, "t lo unclamped", a.Rate-t4*a.SECR, -0.1088, tol)
	near(t, "t hi", a.Hi, 0.5621, tol)
	if a.Lo != 0 {
		t.Errorf("lo = %v, want clamped to 0", a.Lo)
	}

	h, err := ArmStats([]int{3, 4, 2, 3, 4}, fill(30, 5))
	if err != nil {
		t.Fatal(err)
	}
	near(t, "homogeneous naive", h.SENaive, 0.0252, tol)
	near(t, "homogeneous fixed", h.SEFixed, 0.0251, tol)
	near(t, "homogeneous CR", h.SECR, 0.0125, tol)
}

// TestArmStats_UnequalN checks the general cluster formula against the
// sd(p_c)/sqrt(C) form it reduces to, and its own definition when n differs.
func TestArmStats_UnequalN(t *testing.T) {
	t.Parallel()
	fails, n := []int{0, 2, 9, 20, 3, 0}, []int{30, 28, 30, 25, 30, 0}
	a, err := ArmStats(fails, n)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cases != 5 || a.N != 143 || a.Fails != 34 {
		t.Fatalf("arm = %+v, want the n=0 case dropped", a)
	}
	p := 34.0 / 143
	var s float64
	for c := range 5 {
		r := float64(fails[c]) - float64(n[c])*p
		s += r * r
	}
	near(t, "CR", a.SECR, math.Sqrt(5.0/4*s)/143, 1e-12)
	if a.SECR < a.SEFixed {
		t.Errorf("CR %v below fixed %v on heterogeneous cases", a.SECR, a.SEFixed)
	}
}

func TestArmStats_Fallback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		fails, n []int
		lo, hi   float64
	}{
		{"all zero", fill(0, 10), fill(30, 10), 0, 0.0126},
		{"all equal", fill(3, 5), fill(30, 5), 0.0615, 0.1584}, // Wilson 15/150
		{"one case", []int{3}, []int{30}, 0.0346, 0.2562},
		{"one case with samples", []int{3, 0}, []int{30, 0}, 0.0346, 0.2562},
	} {
		a, err := ArmStats(tc.fails, tc.n)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if a.CI != CIWilson || a.SECR != 0 || a.Hi <= a.Lo {
			t.Errorf("%s: arm = %+v, want a non-empty Wilson interval", tc.name, a)
		}
		nearIv(t, tc.name, Interval{a.Lo, a.Hi}, tc.lo, tc.hi)
	}
}

func TestArmStats_Invalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		fails, n []int
	}{
		{"empty", nil, nil},
		{"no samples", []int{0, 0}, []int{0, 0}},
		{"length", []int{1}, []int{2, 3}},
		{"fails above n", []int{5}, []int{3}},
		{"fails with n 0", []int{1, 2}, []int{0, 5}},
		{"negative", []int{-1, 2}, []int{5, 5}},
	} {
		_, err := ArmStats(tc.fails, tc.n)
		wantInvalid(t, tc.name, err)
	}
}

// TestArmStats_Property checks that the interval contains the rate, stays
// in [0,1] and is never empty, over many small arms.
func TestArmStats_Property(t *testing.T) {
	t.Parallel()
	for seed := range 3000 {
		C := 1 + seed%6
		fails, n := make([]int, C), make([]int, C)
		s := uint32(seed*2654435761 + 1)
		next := func(m int) int { s = s*1664525 + 1013904223; return int(s>>8) % m }
		for c := range C {
			n[c] = next(31)
			if n[c] > 0 {
				fails[c] = next(n[c] + 1)
			}
		}
		a, err := ArmStats(fails, n)
		if err != nil {
			continue // every n was 0
		}
		if !(a.Lo >= 0 && a.Hi <= 1 && a.Lo <= a.Rate && a.Rate <= a.Hi && a.Hi > a.Lo) {
			t.Fatalf("ArmStats(%v, %v) = %+v", fails, n, a)
		}
		for _, v := range []float64{a.SENaive, a.SEFixed, a.SECR, a.SEMiller} {
			if math.IsNaN(v) || v < 0 {
				t.Fatalf("ArmStats(%v, %v) = %+v: bad SE", fails, n, a)
			}
		}
	}
}

func TestPairedDiff_Vectors(t *testing.T) {
	t.Parallel()
	n := fill(30, 5)
	p, err := PairedDiff([]int{0, 2, 9, 20, 3}, n, []int{0, 1, 3, 12, 1}, n)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "D", p.D, 0.1133, tol)
	near(t, "SE pair", p.SEPair, 0.0512, tol)
	near(t, "SE unpaired", p.SEUnpaired, 0.1414, tol)
	near(t, "corr", p.Corr, 0.9786, tol)
	near(t, "SE fixed", p.SEFixed, 0.0361, tol)
	nearIv(t, "t(4)", Interval{p.Lo, p.Hi}, -0.0288, 0.2555)
	if p.Cases != 5 {
		t.Errorf("cases = %d", p.Cases)
	}
	// SE_pair^2 = SE_A^2 + SE_B^2 - 2 r SE_A SE_B with SE_A, SE_B the arms' CR.
	a, _ := ArmStats([]int{0, 2, 9, 20, 3}, n)
	b, _ := ArmStats([]int{0, 1, 3, 12, 1}, n)
	near(t, "identity", p.SEPair*p.SEPair, a.SECR*a.SECR+b.SECR*b.SECR-2*p.Corr*a.SECR*b.SECR, 1e-12)

	// Failures concentrated in one case: D + t(4)*SE_pair = 0.1007.
	c, err := PairedDiff([]int{0, 0, 0, 0, 4}, n, fill(0, 5), n)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "concentrated upper", c.Hi, 0.1007, tol)
	if c.Corr != 0 {
		t.Errorf("corr with a constant arm = %v, want 0", c.Corr)
	}
}

func TestPairedDiff_DropsAndUnequalN(t *testing.T) {
	t.Parallel()
	// Case 2 has no baseline sample and is dropped; rates are per case.
	p, err := PairedDiff([]int{3, 6, 1}, []int{30, 30, 10}, []int{0, 0, 0}, []int{15, 0, 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.Cases != 2 {
		t.Fatalf("cases = %d, want 2", p.Cases)
	}
	near(t, "D", p.D, (0.1+0.1)/2, 1e-12)
	if p.SEPair != 0 || p.Lo != p.D || p.Hi != p.D {
		t.Errorf("equal differences: %+v, want a zero SE", p)
	}
}

func TestPairedDiff_Invalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                   string
		del, delN, base, baseN []int
	}{
		{"one case", []int{1}, []int{30}, []int{0}, []int{30}},
		{"one case left", []int{1, 2}, []int{30, 0}, []int{0, 0}, []int{30, 30}},
		{"length", []int{1, 2}, []int{30, 30}, []int{0}, []int{30}},
		{"fails above n", []int{1, 40}, []int{30, 30}, []int{0, 0}, []int{30, 30}},
		{"negative", []int{1, 2}, []int{30, 30}, []int{0, -1}, []int{30, 30}},
	} {
		_, err := PairedDiff(tc.del, tc.delN, tc.base, tc.baseN)
		wantInvalid(t, tc.name, err)
	}
}

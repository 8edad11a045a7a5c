package stats

import (
	"math"
	"testing"
)

func TestNewcombe_Vectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		x1, n1, x2, n2 int
		d, lo, hi      float64
	}{
		{34, 150, 17, 150, 0.1133, 0.0282, 0.1975},
		{56, 70, 48, 80, 0.2000, 0.0524, 0.3339}, // published (Newcombe 1998)
		{0, 150, 0, 150, 0, -0.0250, 0.0250},
		{6, 300, 0, 300, 0.0200, 0.0034, 0.0429},
		{4, 300, 0, 300, 0.0133, -0.0017, 0.0338},
		{24, 29, 14, 33, 0.4034, 0.16, 0.58}, // STATS section 5, quoted at 2 d.p.
	} {
		d, iv, err := Newcombe(tc.x1, tc.n1, tc.x2, tc.n2)
		if err != nil {
			t.Fatal(err)
		}
		eps := tol
		if tc.x1 == 24 {
			eps = 0.005
		}
		near(t, "d", d, tc.d, tol)
		near(t, "lo", iv.Lo, tc.lo, eps)
		near(t, "hi", iv.Hi, tc.hi, eps)
	}
	for _, tc := range []struct {
		x1, n1, x2, n2 int
		lo, hi         float64 // NaN when not asserted
	}{
		{4, 150, 0, 150, -0.0031, math.NaN()},
		{5, 150, 0, 150, 0.0019, math.NaN()},
		{0, 240, 0, 240, math.NaN(), 0.0158},
		{2, 240, 0, 240, math.NaN(), 0.0299},
		{4, 150, 0, 150, math.NaN(), 0.0666},
	} {
		_, iv, err := Newcombe(tc.x1, tc.n1, tc.x2, tc.n2)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(tc.lo) {
			near(t, "lo", iv.Lo, tc.lo, tol)
		}
		if !math.IsNaN(tc.hi) {
			near(t, "hi", iv.Hi, tc.hi, tol)
		}
	}
}

func TestNewcombe_Extremes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ x1, n1, x2, n2 int }{
		{0, 30, 0, 30}, {30, 30, 30, 30}, {30, 30, 0, 30}, {0, 30, 30, 30}, {0, 1, 1, 1},
	} {
		d, iv, err := Newcombe(tc.x1, tc.n1, tc.x2, tc.n2)
		if err != nil {
			t.Fatal(err)
		}
		if !(iv.Lo >= -1 && iv.Hi <= 1 && iv.Contains(d) && iv.Width() > 0) {
			t.Errorf("Newcombe(%v) = %v %+v", tc, d, iv)
		}
	}
	for _, tc := range []struct{ x1, n1, x2, n2 int }{{0, 0, 0, 30}, {0, 30, 31, 30}, {-1, 30, 0, 30}} {
		_, _, err := Newcombe(tc.x1, tc.n1, tc.x2, tc.n2)
		wantInvalid(t, "Newcombe", err)
	}
}

func TestNewcombePaired(t *testing.T) {
	t.Parallel()
	d, iv, phi, err := NewcombePaired(24, 5, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "d", d, 0.1613, tol)
	nearIv(t, "paired", iv, 0.0296, 0.3164)
	near(t, "phi", phi, 0.4863, tol)

	// Degenerate margins stay finite: phi is 0 and the interval contains d.
	for _, tc := range [][4]int{{31, 0, 0, 0}, {0, 0, 0, 31}, {0, 31, 0, 0}, {0, 0, 31, 0}, {10, 5, 5, 0}, {1, 0, 0, 0}} {
		d, iv, phi, err := NewcombePaired(tc[0], tc[1], tc[2], tc[3])
		if err != nil {
			t.Fatal(err)
		}
		if math.IsNaN(phi) || !(iv.Lo >= -1 && iv.Hi <= 1 && iv.Contains(d)) {
			t.Errorf("NewcombePaired(%v) = %v %+v phi %v", tc, d, iv, phi)
		}
	}
	for _, tc := range [][4]int{{0, 0, 0, 0}, {-1, 2, 3, 4}} {
		_, _, _, err := NewcombePaired(tc[0], tc[1], tc[2], tc[3])
		wantInvalid(t, "NewcombePaired", err)
	}
}

func TestNewcombeRates_MatchesCountsAndRejectsBadInput(t *testing.T) {
	t.Parallel()
	// On whole counts the rate form is Newcombe itself (STATS section 9).
	d, ci, err := NewcombeRates(34.0/150, 150, 17.0/150, 150)
	if err != nil || math.Abs(d-0.1133) > 1e-4 || math.Abs(ci.Lo-0.0282) > 1e-4 || math.Abs(ci.Hi-0.1975) > 1e-4 {
		t.Errorf("NewcombeRates = %v %+v %v", d, ci, err)
	}
	w, err := WilsonRate(3.0/30, 30)
	if err != nil || math.Abs(w.Lo-0.0346) > 1e-4 || math.Abs(w.Hi-0.2562) > 1e-4 {
		t.Errorf("WilsonRate = %+v %v", w, err)
	}
	for _, bad := range [][4]float64{{-0.1, 10, 0, 10}, {0.5, 0, 0, 10}, {0.5, 10, 1.5, 10}, {math.NaN(), 10, 0, 10}, {0, math.Inf(1), 0, 1}} {
		if _, _, err := NewcombeRates(bad[0], bad[1], bad[2], bad[3]); err == nil {
			t.Errorf("NewcombeRates%v: no error", bad)
		}
	}
}

package stats

import (
	"math"
	"testing"
)

func TestZeroCaseProbability(t *testing.T) {
	t.Parallel()
	near(t, "P(0)", ZeroCaseProbability(0.002, 300), 0.5485, tol)
	near(t, "at least one n=30", AtLeastOne(0.08, 30), 0.9180, tol)
	near(t, "at least one n=20", AtLeastOne(0.08, 20), 0.8113, tol)
	if ZeroCaseProbability(0.3, 0) != 1 || AtLeastOne(1, 0) != 0 || AtLeastOne(1, 3) != 1 {
		t.Error("edge values wrong")
	}
	if v := AtLeastOne(-0.5, 10); v != 0 {
		t.Errorf("negative p: %v", v)
	}
}

func TestRecallSampleSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		p0, p1, alpha, power float64
		want                 float64 // NaN when only the rounded figure is quoted
		ceil                 float64
	}{
		{"0.94 vs 0.98", 0.94, 0.98, 0.05, 0.80, 212.6439, 213},
		{"one-sided 0.05", 0.94, 0.98, 0.10, 0.80, math.NaN(), 162},
		{"below 0.9 at 0.77", 0.9, 0.77, 0.05, 0.80, math.NaN(), 53},
	} {
		got, err := RecallSampleSize(tc.p0, tc.p1, tc.alpha, tc.power)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(tc.want) {
			near(t, tc.name, got, tc.want, tol)
		}
		if math.Ceil(got) != tc.ceil {
			t.Errorf("%s: %v rounds up to %v, want %v", tc.name, got, math.Ceil(got), tc.ceil)
		}
	}
	for _, tc := range [][4]float64{{0.9, 0.9, 0.05, 0.8}, {-0.1, 0.9, 0.05, 0.8}, {0.9, 0.95, 0, 0.8}, {0.9, 0.95, 0.05, 1}} {
		_, err := RecallSampleSize(tc[0], tc[1], tc[2], tc[3])
		wantInvalid(t, "RecallSampleSize", err)
	}
}

func TestViolationsForRecallWidth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ recall, width float64 }{
		{24.0 / 31, 0.2841}, {24.0 / 31, 0.1}, {0.5, 0.05}, {1, 0.05}, {0, 0.1}, {0.93, 0.02}, {0.5, 0.9},
	} {
		n, err := ViolationsForRecallWidth(tc.recall, tc.width)
		if err != nil {
			t.Fatal(err)
		}
		if w := wilsonP(tc.recall, float64(n)).Width(); w > tc.width {
			t.Errorf("recall %v width %v: n = %d gives width %v", tc.recall, tc.width, n, w)
		}
		if n > 1 {
			if w := wilsonP(tc.recall, float64(n-1)).Width(); w <= tc.width {
				t.Errorf("recall %v width %v: n-1 = %d already gives width %v", tc.recall, tc.width, n-1, w)
			}
		}
	}
	// At 24/31 the observed Wilson width is 0.2841: 31 violations suffice.
	n, _ := ViolationsForRecallWidth(24.0/31, 0.2842)
	if n > 31 || n < 30 {
		t.Errorf("24/31 at its own width: n = %d, want about 31", n)
	}
	for _, tc := range [][2]float64{{0.5, 0}, {0.5, -1}, {1.2, 0.1}, {math.NaN(), 0.1}, {0.5, 1e-9}} {
		_, err := ViolationsForRecallWidth(tc[0], tc[1])
		wantInvalid(t, "ViolationsForRecallWidth", err)
	}
}

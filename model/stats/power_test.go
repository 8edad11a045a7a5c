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
	// A tiny share keeps its digits: 1-p would round 4e-12 to about four
	// significant figures, and a share below 1.1e-16 to none at all.
	// ln(0.05)/log1p(-4e-12) = 748,933,068,386.9998: the smallest suite with
	// at most a 5% chance of none is 748,933,068,387.
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"P(0) tiny share, at the size", ZeroCaseProbability(4e-12, 748_933_068_387), 0.05},
		{"P(0) tiny share, a billion short", ZeroCaseProbability(4e-12, 747_933_068_387), 0.05 * math.Exp(4e-3)},
		{"at least one, share 1e-20", AtLeastOne(1e-20, 10), 1e-19},
		{"at least one, share 1e-300", AtLeastOne(1e-300, 1000), 1e-297},
	} {
		if math.Abs(tc.got-tc.want) > 1e-9*tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
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

func TestKeepThreshold(t *testing.T) {
	t.Parallel()
	// The lower bounds either side of the threshold at 150/150.
	for _, tc := range []struct {
		x    int
		want float64
	}{{4, -0.0031}, {5, 0.0019}} {
		_, ci, err := Newcombe(tc.x, 150, 0, 150)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "Newcombe lower", ci.Lo, tc.want, tol)
	}
	for _, tc := range []struct{ nDel, nBase, want int }{
		{150, 150, 5}, {85, 85, 5}, {240, 240, 5}, {300, 300, 5}, {20, 20, 5}, {1200, 1200, 5},
	} {
		got, err := KeepThreshold(tc.nDel, tc.nBase)
		if err != nil {
			t.Fatalf("KeepThreshold(%d, %d): %v", tc.nDel, tc.nBase, err)
		}
		if got != tc.want {
			t.Errorf("KeepThreshold(%d, %d) = %d, want %d", tc.nDel, tc.nBase, got, tc.want)
		}
	}
	// Property: the threshold fires and one fewer does not.
	for _, n := range []int{2, 3, 5, 8, 13, 30, 77, 500} {
		x, err := KeepThreshold(n, n)
		if err != nil {
			continue
		}
		if _, ci, _ := Newcombe(x, n, 0, n); ci.Lo <= 0 {
			t.Errorf("n %d: %d failures do not fire (L = %v)", n, x, ci.Lo)
		}
		if _, ci, _ := Newcombe(x-1, n, 0, n); ci.Lo > 0 {
			t.Errorf("n %d: %d failures already fire (L = %v)", n, x-1, ci.Lo)
		}
	}
	// One sample against one cannot show a rise; nor can an empty arm.
	for _, tc := range [][2]int{{1, 1}, {0, 10}, {10, 0}, {-1, 5}} {
		_, err := KeepThreshold(tc[0], tc[1])
		wantInvalid(t, "KeepThreshold", err)
	}
}

func TestKeepPower(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		p     float64
		n     int
		want  float64
		digit float64 // half a unit of the printed precision
	}{
		{"5 cases x 17", 0.08, 85, 0.819, 5e-4},
		{"5 cases x 16", 0.08, 80, 0.777, 5e-4},
		{"5 cases x 30", 0.08, 150, 0.994, 5e-4},
		{"8 cases x 11", 0.08, 88, 0.842, 5e-4},
		{"8 cases x 10", 0.08, 80, 0.777, 5e-4},
		{"8 cases x 30", 0.08, 240, 1.000, 5e-4},
		{"controls 300, 2%", 0.02, 300, 0.72, 5e-3},
		{"controls 300, 1%", 0.01, 300, 0.18, 5e-3},
		{"controls 600, 2%", 0.02, 600, 0.99, 5e-3},
		{"controls 600, 1%", 0.01, 600, 0.72, 5e-3},
		{"controls 900, 2%", 0.02, 900, 1.00, 5e-3},
		{"controls 900, 1%", 0.01, 900, 0.95, 5e-3},
		{"4-decimal vector", 0.01, 900, 0.9459, 5e-5},
		{"no rise", 0, 150, 0, 0},
		{"always fails", 1, 150, 1, 0},
	} {
		got, err := KeepPower(tc.p, tc.n, tc.n)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		near(t, tc.name, got, tc.want, tc.digit)
	}
	// Power never falls as the rate rises.
	prev := -1.0
	for p := 0.0; p <= 1; p += 0.01 {
		got, err := KeepPower(p, 120, 120)
		if err != nil || got < prev-1e-12 || got < 0 || got > 1 {
			t.Fatalf("KeepPower(%v, 120) = %v, %v after %v", p, got, err, prev)
		}
		prev = got
	}
	// No count of one sample can fire: power 0, not an error.
	if got, err := KeepPower(0.5, 1, 1); err != nil || got != 0 {
		t.Errorf("KeepPower(0.5, 1, 1) = %v, %v; want 0, nil", got, err)
	}
	for _, tc := range []struct {
		p           float64
		nDel, nBase int
	}{{-0.1, 10, 10}, {1.1, 10, 10}, {math.NaN(), 10, 10}, {0.1, 0, 10}, {0.1, 10, 0}} {
		_, err := KeepPower(tc.p, tc.nDel, tc.nBase)
		wantInvalid(t, "KeepPower", err)
	}
}

func TestKeepMDE(t *testing.T) {
	t.Parallel()
	for _, n := range []int{20, 85, 150, 240, 300, 900, 20000} {
		mde, err := KeepMDE(n, n, 0.8)
		if err != nil {
			t.Fatalf("KeepMDE(%d): %v", n, err)
		}
		at, _ := KeepPower(mde, n, n)
		below, _ := KeepPower(mde-1e-6, n, n)
		if at < 0.8 || below >= 0.8 {
			t.Errorf("KeepMDE(%d) = %v: power there %v, 1e-6 below %v; want the first rate with power 0.8", n, mde, at, below)
		}
	}
	// The section 8 vectors from the other side: 85 samples detect 8% with
	// 0.819, so their MDE lies just below 8%; 80 samples (0.777) just above.
	m85, _ := KeepMDE(85, 85, 0.8)
	m80, _ := KeepMDE(80, 80, 0.8)
	if !(m85 < 0.08 && m80 > 0.08) {
		t.Errorf("KeepMDE: 85 samples %v (want < 0.08), 80 samples %v (want > 0.08)", m85, m80)
	}
	for _, tc := range []struct {
		nDel, nBase int
		power       float64
	}{{150, 150, 0}, {150, 150, 1}, {150, 150, math.NaN()}, {0, 150, 0.8}, {1, 1, 0.8}} {
		_, err := KeepMDE(tc.nDel, tc.nBase, tc.power)
		wantInvalid(t, "KeepMDE", err)
	}
}

func TestMillerMDE(t *testing.T) {
	t.Parallel()
	const sA2 = 0.08 * 0.92
	tScale := 3.7174 / 2.8016
	for _, tc := range []struct {
		name string
		w2   float64
		useT bool
		want float64
	}{
		{"alike, z", 0, false, 0.0621},
		{"sd 0.1, z", 0.01, false, 0.1398},
		{"alike, t(4)", 0, true, 0.0621 * tScale},
		{"sd 0.1, t(4)", 0.01, true, 0.1398 * tScale},
	} {
		got, err := MillerMDE(5, 30, tc.w2, sA2, 0, 0.8, tc.useT)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// The t rows carry the rounding of both printed factors.
		near(t, tc.name, got, tc.want, 2e-4)
	}
	z, _ := MillerMDE(5, 30, 0.01, sA2, 0, 0.8, false)
	tt, _ := MillerMDE(5, 30, 0.01, sA2, 0, 0.8, true)
	near(t, "t/z ratio", tt/z, 3.7174/2.8016, tol)
	for _, tc := range []struct {
		cases, k         int
		w2, sA2, sB2, pw float64
		useT             bool
	}{
		{0, 30, 0, sA2, 0, 0.8, false},
		{1, 30, 0, sA2, 0, 0.8, true},
		{5, 0, 0, sA2, 0, 0.8, false},
		{5, 30, -0.01, sA2, 0, 0.8, false},
		{5, 30, 0, math.NaN(), 0, 0.8, false},
		{5, 30, 0, sA2, math.Inf(1), 0.8, false},
		{5, 30, 0, sA2, 0, 1, false},
	} {
		_, err := MillerMDE(tc.cases, tc.k, tc.w2, tc.sA2, tc.sB2, tc.pw, tc.useT)
		wantInvalid(t, "MillerMDE", err)
	}
	// One case is allowed with z: the formula needs no degrees of freedom.
	if _, err := MillerMDE(1, 30, 0.01, sA2, 0, 0.8, false); err != nil {
		t.Errorf("MillerMDE with one case and z: %v", err)
	}
}

func TestMillerCases(t *testing.T) {
	t.Parallel()
	const sA2 = 0.08 * 0.92
	for _, tc := range []struct {
		name string
		w2   float64
		want float64
	}{{"alike", 0, 3.0}, {"sd 0.1", 0.01, 15.3}} {
		got, err := MillerCases(0.08, 30, tc.w2, sA2, 0, 0.8)
		if err != nil {
			t.Fatal(err)
		}
		near(t, tc.name, got, tc.want, 0.05)
		// The two formulas agree: the rounded-up number of cases detects
		// 0.08, one case fewer does not.
		c := int(math.Ceil(got))
		if at, _ := MillerMDE(c, 30, tc.w2, sA2, 0, 0.8, false); at > 0.08 {
			t.Errorf("%s: %d cases detect %v, not 0.08", tc.name, c, at)
		}
		if c > 1 {
			if fewer, _ := MillerMDE(c-1, 30, tc.w2, sA2, 0, 0.8, false); fewer <= 0.08 {
				t.Errorf("%s: %d cases already detect 0.08 (%v)", tc.name, c-1, fewer)
			}
		}
	}
	for _, tc := range []struct {
		d  float64
		k  int
		pw float64
	}{{0, 30, 0.8}, {-0.1, 30, 0.8}, {1.5, 30, 0.8}, {0.08, 0, 0.8}, {0.08, 30, 0}, {math.NaN(), 30, 0.8}} {
		_, err := MillerCases(tc.d, tc.k, 0.01, sA2, 0, tc.pw)
		wantInvalid(t, "MillerCases", err)
	}
}

func TestSuiteForAtLeastOne(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p, prob float64
		want    int
	}{{0.002, 0.95, 1497}, {4e-12, 0.95, 748_933_068_387}, {1e-9, 0.5, 693_147_181}, {0.08, 0.8, 20}, {0.08, 0.95, 36}, {1, 0.95, 1}, {0.5, 0.5, 1}, {0.5, 0.75, 2}} {
		got, err := SuiteForAtLeastOne(tc.p, tc.prob)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("SuiteForAtLeastOne(%v, %v) = %d, want %d", tc.p, tc.prob, got, tc.want)
		}
	}
	for _, tc := range [][2]float64{{0, 0.95}, {-0.1, 0.95}, {1.1, 0.95}, {math.NaN(), 0.95}, {0.1, 0}, {0.1, 1}, {1e-300, 0.95}} {
		_, err := SuiteForAtLeastOne(tc[0], tc[1])
		wantInvalid(t, "SuiteForAtLeastOne", err)
	}
}

func TestMillerMultiplier(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cases int
		useT  bool
		want  float64
	}{{5, false, 2.8016}, {1, false, 2.8016}, {5, true, 3.7174}, {8, true, 2.3646 + 0.8960}} {
		got, err := MillerMultiplier(tc.cases, 0.8, tc.useT)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "multiplier", got, tc.want, tol)
	}
	for _, tc := range []struct {
		cases int
		power float64
		useT  bool
	}{{1, 0.8, true}, {0, 0.8, true}, {5, 0, false}, {5, 1, true}, {5, math.NaN(), false}} {
		_, err := MillerMultiplier(tc.cases, tc.power, tc.useT)
		wantInvalid(t, "MillerMultiplier", err)
	}
}

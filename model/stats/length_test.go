package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Expected values below were computed with python3's standard library
// (statistics, math); the derivation is noted with each table.

func TestSummarizeLengths_Vectors(t *testing.T) {
	t.Parallel()
	// Quantiles: the type 7 rule h = (n-1)p written out in python, checked
	// against statistics.quantiles(xs, n=10, method="inclusive"), whose
	// first, fifth and ninth cut points are P10, the median and P90.
	for _, tc := range []struct {
		name                  string
		xs                    []int
		mean, med, p10, p90   float64
		minimum, maximum, cnt int
	}{
		{"unsorted with tie", []int{3, 1, 4, 1, 5, 9, 2, 6}, 3.875, 3.5, 1, 6.9, 1, 9, 8},
		{"single", []int{42}, 42, 42, 42, 42, 42, 42, 1},
		{"two", []int{10, 20}, 15, 15, 11, 19, 10, 20, 2},
		{"mostly zero", []int{0, 0, 0, 7}, 1.75, 0, 0, 4.9, 0, 7, 4},
	} {
		in := slices.Clone(tc.xs)
		s, err := SummarizeLengths(in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		near(t, tc.name+" mean", s.Mean, tc.mean, 1e-9)
		near(t, tc.name+" median", s.Median, tc.med, 1e-9)
		near(t, tc.name+" p10", s.P10, tc.p10, 1e-9)
		near(t, tc.name+" p90", s.P90, tc.p90, 1e-9)
		if s.Min != tc.minimum || s.Max != tc.maximum || s.N != tc.cnt {
			t.Errorf("%s: min/max/n = %d/%d/%d, want %d/%d/%d", tc.name, s.Min, s.Max, s.N, tc.minimum, tc.maximum, tc.cnt)
		}
		if !slices.Equal(in, tc.xs) {
			t.Errorf("%s: input modified to %v", tc.name, in)
		}
	}
	for _, xs := range [][]int{nil, {}, {3, -1}} {
		_, err := SummarizeLengths(xs)
		wantInvalid(t, "SummarizeLengths", err)
	}
}

func TestPairedLengthShift_Vectors(t *testing.T) {
	t.Parallel()
	// By hand (and python): case means del 110, 60, 92.5 and base 85, 53, 70,
	// so d = 25, 7, 22.5 and the fourth case (no deleted answer) is skipped.
	// Est = 54.5/3 = 18.1667; sd(d) = sqrt(190.1667/2) = 9.7511;
	// SE = 9.7511/sqrt(3) = 5.629782; t(0.975, 2) = 0.95/sqrt(2*0.975*0.025)
	// = 4.302653 (the closed form of the t quantile for 2 df);
	// CI = 18.1667 -/+ 24.2230 = [-6.056330, 42.389663];
	// RelEst = 18.1667 / mean(85, 53, 70) = 18.1667/69.3333 = 0.262019.
	del := [][]int{{100, 110, 120}, {60}, {90, 95}, {}}
	base := [][]int{{80, 90}, {50, 52, 54, 56}, {70, 72, 68}, {40}}
	s, err := PairedLengthShift(del, base)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cases != 3 {
		t.Errorf("cases = %d, want 3", s.Cases)
	}
	near(t, "est", s.Est, 18.166667, 1e-5)
	near(t, "se", s.SE, 5.629782, 1e-5)
	nearIv(t, "ci", s.CI, -6.056330, 42.389663)
	near(t, "rel", s.RelEst, 0.262019, 1e-5)

	// Swapping the variants negates the shift and mirrors the interval.
	r, err := PairedLengthShift(base, del)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "swapped est", r.Est, -18.166667, 1e-5)
	nearIv(t, "swapped ci", r.CI, -42.389663, 6.056330)

	// The same shift in every case: SE 0 and a zero-width interval at Est;
	// RelEst = 5 / mean(10, 30) = 0.25.
	s, err = PairedLengthShift([][]int{{15}, {35}}, [][]int{{10}, {20, 40}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Est != 5 || s.SE != 0 || s.CI != (Interval{Lo: 5, Hi: 5}) || s.RelEst != 0.25 {
		t.Errorf("constant shift: %+v", s)
	}

	// Empty baselines: RelEst is 0, never NaN or Inf.
	s, err = PairedLengthShift([][]int{{3}, {5}}, [][]int{{0}, {0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if s.RelEst != 0 || s.Est != 4 || math.IsNaN(s.SE) {
		t.Errorf("zero baseline: %+v", s)
	}

	for _, tc := range []struct {
		name      string
		del, base [][]int
	}{
		{"no cases", nil, nil},
		{"single case", [][]int{{1, 2}}, [][]int{{3}}},
		{"one case left after skipping", [][]int{{1}, {}, {4}}, [][]int{{2}, {3}, {}}},
		{"lengths differ", [][]int{{1}, {2}}, [][]int{{1}}},
		{"negative length", [][]int{{1}, {2}}, [][]int{{1}, {-2}}},
	} {
		_, err := PairedLengthShift(tc.del, tc.base)
		wantInvalid(t, "PairedLengthShift "+tc.name, err)
	}
}

func TestMannWhitney_Vectors(t *testing.T) {
	t.Parallel()
	// U by brute force in python, sum over pairs of [x > y] + [x = y]/2,
	// which equals R_a - n_a(n_a+1)/2 with mid-ranks; then
	// var = n_a n_b/12 ((n+1) - sum(t^3-t)/(n(n-1))),
	// z = sign(U-mu) max(|U-mu|-0.5, 0)/sqrt(var), p = erfc(|z|/sqrt(2)).
	// The first row is R's wilcox.test(1:3, 4:6, exact=FALSE) (p = 0.08086).
	for _, tc := range []struct {
		name    string
		a, b    []int
		u, z, p float64
	}{
		{"separated", []int{1, 2, 3}, []int{4, 5, 6}, 0, -1.745743, 0.080856},                                  // var 5.25
		{"one tie group", []int{3, 5, 5, 8}, []int{1, 5, 6}, 7, 0.183450, 0.854445},                            // var 7.428571, sum(t^3-t) = 24
		{"two tie groups", []int{12, 15, 15, 20, 22, 30}, []int{10, 12, 14, 15, 18}, 23.5, 1.477480, 0.139547}, // var 29.318182, ties 30
		{"heavy ties", []int{1, 1, 2}, []int{1, 2, 2}, 3, -0.496904, 0.619257},                                 // var 4.05, ties 48
		{"correction swallows", []int{2}, []int{1}, 1, 0, 1},                                                   // |U-mu| = 0.5
		{"all tied", []int{7, 7}, []int{7, 7, 7}, 3, 0, 1},                                                     // var 0
	} {
		r, err := MannWhitney(tc.a, tc.b)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		near(t, tc.name+" U", r.U, tc.u, 1e-9)
		near(t, tc.name+" Z", r.Z, tc.z, 1e-5)
		near(t, tc.name+" P", r.P, tc.p, 1e-5)
		if r.NA != len(tc.a) || r.NB != len(tc.b) {
			t.Errorf("%s: sizes %d, %d", tc.name, r.NA, r.NB)
		}
		// Swapping the samples gives U_b = n_a n_b - U_a, -Z and the same P.
		s, err := MannWhitney(tc.b, tc.a)
		if err != nil {
			t.Fatal(err)
		}
		near(t, tc.name+" swapped U", s.U, float64(len(tc.a)*len(tc.b))-tc.u, 1e-9)
		near(t, tc.name+" swapped Z", s.Z, -r.Z, 1e-12)
		near(t, tc.name+" swapped P", s.P, r.P, 1e-12)
	}
	for _, tc := range []struct {
		name string
		a, b []int
	}{
		{"a empty", nil, []int{1}},
		{"b empty", []int{1}, []int{}},
		{"negative", []int{1, -3}, []int{2}},
	} {
		_, err := MannWhitney(tc.a, tc.b)
		wantInvalid(t, "MannWhitney "+tc.name, err)
	}
}

// TestMannWhitney_BruteForce checks U against the pair count on random
// samples with many ties, where the merge of sorted samples is easiest to get
// wrong.
func TestMannWhitney_BruteForce(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		a := make([]int, 1+rng.IntN(30))
		b := make([]int, 1+rng.IntN(30))
		for i := range a {
			a[i] = rng.IntN(8)
		}
		for i := range b {
			b[i] = 2 + rng.IntN(8)
		}
		var want float64
		for _, x := range a {
			for _, y := range b {
				switch {
				case x > y:
					want++
				case x == y:
					want += 0.5
				}
			}
		}
		r, err := MannWhitney(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if r.U != want || !(r.P >= 0 && r.P <= 1) || math.IsNaN(r.Z) {
			t.Fatalf("MannWhitney(%v, %v) = %+v, want U %v", a, b, r, want)
		}
	}
}

func TestMannWhitney_Large(t *testing.T) {
	t.Parallel()
	// 50,000 values each, b shifted up by a tenth of the spread: the test
	// must finish and find it. a is 0..49999 and b is 5000..54999, so
	// U_a = sum_{x=5000}^{49999} [(x - 5000) pairs below + 1/2 for the tie]
	// = 44999*45000/2 + 45000/2 = 45000*45000/2.
	n := 50000
	a, b := make([]int, n), make([]int, n)
	for i := range a {
		a[i], b[i] = i, i+5000
	}
	r, err := MannWhitney(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.U != 45000.0*45000/2 {
		t.Errorf("U = %v, want %v", r.U, 45000.0*45000/2)
	}
	if r.Z >= -10 || r.P > 1e-20 {
		t.Errorf("shift not found: %+v", r)
	}
}

func BenchmarkMannWhitney100k(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	x, y := make([]int, 50000), make([]int, 50000)
	for i := range x {
		x[i] = 50 + rng.IntN(60)
		y[i] = 70 + rng.IntN(90)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := MannWhitney(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHistogram_Vectors(t *testing.T) {
	t.Parallel()
	// Width w = floor((max-min)/bins) + 1 = ceil((max-min+1)/bins) and
	// k = floor((max-min)/w) + 1 bins, worked by hand.
	for _, tc := range []struct {
		name   string
		a, b   []int
		bins   int
		edges  []int
		ca, cb []int
	}{
		// range 0..10 (11 values) in 3 bins: w = 4, k = 3, last edge 12 > max+1.
		{"uneven range", []int{0, 1, 2, 9}, []int{5, 5, 10}, 3, []int{0, 4, 8, 12}, []int{3, 0, 1}, []int{0, 2, 1}},
		// 10 values in 5 bins: w = 2 divides the range, last edge = max+1.
		{"even range", []int{0, 1, 2, 3, 4}, []int{5, 6, 7, 8, 9}, 5, []int{0, 2, 4, 6, 8, 10}, []int{2, 2, 1, 0, 0}, []int{0, 0, 1, 2, 2}},
		// 3 values in 10 bins: one bin per value.
		{"small range", []int{5, 6}, []int{6, 7}, 10, []int{5, 6, 7, 8}, []int{1, 1, 0}, []int{0, 1, 1}},
		{"one value, b empty", []int{4, 4}, nil, 3, []int{4, 5}, []int{2}, []int{0}},
		{"a empty", nil, []int{50, 149}, 4, []int{50, 75, 100, 125, 150}, []int{0, 0, 0, 0}, []int{1, 0, 0, 1}},
		{"one bin", []int{3, 8}, []int{20}, 1, []int{3, 21}, []int{2}, []int{1}},
	} {
		edges, ca, cb, err := Histogram(tc.a, tc.b, tc.bins)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(edges, tc.edges) || !slices.Equal(ca, tc.ca) || !slices.Equal(cb, tc.cb) {
			t.Errorf("%s: got %v %v %v, want %v %v %v", tc.name, edges, ca, cb, tc.edges, tc.ca, tc.cb)
		}
	}
	for _, tc := range []struct {
		name string
		a, b []int
		bins int
	}{
		{"both empty", nil, []int{}, 3},
		{"zero bins", []int{1}, nil, 0},
		{"negative", []int{1}, []int{-1}, 3},
		{"huge", []int{0}, []int{math.MaxInt}, 3},
	} {
		_, _, _, err := Histogram(tc.a, tc.b, tc.bins)
		wantInvalid(t, "Histogram "+tc.name, err)
	}
}

package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSpendingOBF_Reference checks the boundaries against published
// values of other implementations of the same method.
//
// rpact's unit tests (tests/testthat/test-f_design_group_sequential.R,
// the version before commit 02bcd3a5 removed them from the repository)
// assert to 1e-7 the "asOF" design with one-sided alpha 0.13, non-binding
// futility (so the efficacy bounds are the upper-only bounds computed
// here), at fractions (0.4, 0.75, 1) and (0.4, 0.75, 0.85, 1). RPACT's
// slides (ROeS 2025) print the one-sided 0.025 asOF design with three
// equal looks to three decimals. The five-look values are the ones quoted
// for gsDesign's sfLDOF (4.88, 3.36, 2.68, 2.29, 2.03), checked to four
// decimals here and by Monte Carlo in TestSpendingOBF_MonteCarlo.
func TestSpendingOBF_Reference(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		t             []float64
		alpha         float64
		z, spent, lvl []float64
		eps           float64
	}{
		{"rpact x7a kMax 3", []float64{0.4, 0.75, 1}, 0.13,
			[]float64{2.1280732, 1.4368565, 1.2468994},
			[]float64{0.016665509, 0.080406163, 0.13},
			[]float64{0.016665509, 0.075379384, 0.1062172}, 2e-7},
		{"rpact x7a kMax 4", []float64{0.4, 0.75, 0.85, 1}, 0.13,
			[]float64{2.1280732, 1.4368565, 1.422873, 1.2970881},
			[]float64{0.016665509, 0.080406163, 0.10053322, 0.13},
			[]float64{0.016665509, 0.075379384, 0.077386492, 0.097300444}, 2e-7},
		{"rpact slides 3 looks", EqualFractions(3), 0.025,
			[]float64{3.710, 2.511, 1.993},
			[]float64{0.0001, 0.0060, 0.0250},
			[]float64{0.0001, 0.0060, 0.0231}, 5e-4},
		{"5 looks", EqualFractions(5), 0.025,
			[]float64{4.8769, 3.3570, 2.6803, 2.2898, 2.0310},
			[]float64{5.389e-7, 0.00039415, 0.0038081, 0.012212, 0.025},
			[]float64{5.389e-7, 0.00039403, 0.0036782, 0.011015, 0.021129}, 1e-4},
	} {
		b, err := SpendingOBF(tc.t, tc.alpha)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(b) != len(tc.z) {
			t.Fatalf("%s: %d boundaries", tc.name, len(b))
		}
		for k := range b {
			near(t, tc.name+" z", b[k].Z, tc.z[k], tc.eps)
			near(t, tc.name+" spent", b[k].Spent, tc.spent[k], tc.eps)
			near(t, tc.name+" level", b[k].Tail, tc.lvl[k], tc.eps)
			if b[k].Fraction != tc.t[k] {
				t.Errorf("%s: fraction %v, want %v", tc.name, b[k].Fraction, tc.t[k])
			}
		}
	}
}

// TestSpendingOBF_OneLook: a single look at the end is the fixed design.
func TestSpendingOBF_OneLook(t *testing.T) {
	t.Parallel()
	b, err := SpendingOBF([]float64{1}, 0.025)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "z", b[0].Z, z975, 1e-12)
	near(t, "tail", b[0].Tail, 0.025, 1e-15)
}

// TestCrossingProbability_RepeatedTesting checks the integration against
// the cost of testing at 1.96 at every look, as gsDesign's unit test
// "test.Deming.gsProb" (inst/unitTests/runit.output.R, from Keaven
// Anderson's 2008 Deming presentation) states it to three decimals: 0.042
// for two looks, 0.063 for four, 0.097 for ten (its design also has a
// lower bound at -1.96, which changes the upper crossing by less than
// 0.0005).
func TestCrossingProbability_RepeatedTesting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		k    int
		want float64
	}{{2, 0.042}, {4, 0.063}, {10, 0.097}} {
		z := make([]float64, tc.k)
		for i := range z {
			z[i] = z975
		}
		near(t, "1.96 at every look", crossingProbability(EqualFractions(tc.k), z), tc.want, 0.001)
	}
	// Five looks, the default design: 1.96 at each costs 7.1%.
	z := []float64{z975, z975, z975, z975, z975}
	near(t, "1.96 at 5 looks", crossingProbability(EqualFractions(5), z), 0.0709, 0.0001)
}

// TestSpendingOBF_MonteCarlo checks the boundaries with no numerical
// integration at all: simulated Brownian motion at the looks crosses c_k
// first at look k about as often as the spending function says, and at
// some look with probability alpha. 200,000 paths give SE 0.00035 on
// 0.025; the assertion allows 4 SE.
func TestSpendingOBF_MonteCarlo(t *testing.T) {
	t.Parallel()
	for _, fr := range [][]float64{EqualFractions(5), {0.1, 0.25, 0.7, 1}, EqualFractions(10)} {
		b, err := SpendingOBF(fr, 0.025)
		if err != nil {
			t.Fatal(err)
		}
		const runs = 200_000
		rng := rand.New(rand.NewPCG(7, uint64(len(fr))))
		first := make([]int, len(b))
		crossed := 0
		for range runs {
			var s, prev float64 // Brownian motion S(t) with Var S(t) = t
			for k, x := range b {
				s += rng.NormFloat64() * math.Sqrt(x.Fraction-prev)
				prev = x.Fraction
				if s/math.Sqrt(x.Fraction) >= x.Z {
					first[k]++
					crossed++
					break
				}
			}
		}
		near(t, "crossing at any look", float64(crossed)/runs, 0.025, 4*math.Sqrt(0.025*0.975/runs))
		prev := 0.0
		for k, x := range b {
			want := x.Spent - prev
			prev = x.Spent
			near(t, "crossing first at a look", float64(first[k])/runs, want, 4*math.Sqrt(want/runs)+1e-5)
		}
	}
}

// TestSpendingOBF_Property checks, over many designs, that boundaries are
// finite, spend exactly alpha in total, that each look's nominal level lies
// between what the look spends and what has been spent so far, and that
// the integration of the whole design gives back alpha.
func TestSpendingOBF_Property(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		k := 1 + rng.IntN(10)
		fr := make([]float64, k)
		for i := range k - 1 {
			fr[i] = float64(k)*MinLookFraction + rng.Float64()*(1-float64(k)*MinLookFraction)
		}
		fr[k-1] = 1
		spreadLooks(fr)
		alpha := []float64{0.001, 0.0125, 0.025, 0.05, 0.2, 0.49}[rng.IntN(6)]
		b, err := SpendingOBF(fr, alpha)
		if err != nil {
			t.Fatalf("SpendingOBF(%v, %v): %v", fr, alpha, err)
		}
		z := make([]float64, len(b))
		prev := 0.0
		for i, x := range b {
			for _, v := range []float64{x.Z, x.Tail, x.Spent} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("SpendingOBF(%v, %v) = %+v", fr, alpha, b)
				}
			}
			// Crossing at look k first is rarer than crossing at look k
			// (Tail), which is rarer than crossing at some look up to k.
			if !(x.Spent > prev) || x.Tail < (x.Spent-prev)*(1-1e-6)-1e-12 || x.Tail > x.Spent*(1+1e-9) || x.Z <= 0 {
				t.Fatalf("SpendingOBF(%v, %v): look %d = %+v after spending %v", fr, alpha, i+1, x, prev)
			}
			prev = x.Spent
			z[i] = x.Z
		}
		if b[len(b)-1].Spent != alpha {
			t.Fatalf("SpendingOBF(%v, %v) spends %v", fr, alpha, b[len(b)-1].Spent)
		}
		near(t, "total crossing", crossingProbability(fr, z), alpha, 1e-7*math.Max(1, alpha*100))
	}
}

// spreadLooks sorts fractions in place and pushes neighbours apart so that
// a random design has looks at least MinLookFraction apart, ending at 1.
func spreadLooks(f []float64) {
	for i := 1; i < len(f); i++ {
		for j := i; j > 0 && f[j] < f[j-1]; j-- {
			f[j], f[j-1] = f[j-1], f[j]
		}
	}
	for i := len(f) - 2; i >= 0; i-- {
		f[i] = min(f[i], f[i+1]-MinLookFraction)
	}
}

func TestSpendingOBF_Invalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		t     []float64
		alpha float64
	}{
		{"no looks", nil, 0.025},
		{"too many", EqualFractions(MaxLooks + 1), 0.025},
		{"alpha 0", EqualFractions(5), 0},
		{"alpha half", EqualFractions(5), 0.5},
		{"alpha NaN", EqualFractions(5), math.NaN()},
		{"fraction 0", []float64{0, 1}, 0.025},
		{"fraction below the minimum", []float64{0.001, 1}, 0.025},
		{"fraction NaN", []float64{math.NaN(), 1}, 0.025},
		{"fraction above 1", []float64{0.5, 1.2}, 0.025},
		{"not increasing", []float64{0.6, 0.4, 1}, 0.025},
		{"equal", []float64{0.4, 0.4, 1}, 0.025},
		{"too close", []float64{0.4, 0.405, 1}, 0.025},
		{"does not end at 1", []float64{0.2, 0.4, 0.8}, 0.025},
	} {
		b, err := SpendingOBF(tc.t, tc.alpha)
		wantInvalid(t, tc.name, err)
		if b != nil {
			t.Errorf("%s: boundaries %v with an error", tc.name, b)
		}
	}
}

func TestOBFSpent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ t, alpha, want float64 }{
		{0.4, 0.13, 0.016665509},  // rpact x7a
		{0.75, 0.13, 0.080406163}, // rpact x7a
		{0.85, 0.13, 0.10053322},  // rpact x7a, kMax 4
		{1, 0.025, 0.025},
	} {
		got, err := OBFSpent(tc.t, tc.alpha)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "OBFSpent", got, tc.want, 1e-8)
	}
	for _, bad := range [][2]float64{{0, 0.025}, {1.1, 0.025}, {0.5, 0}, {0.5, 0.6}, {math.NaN(), 0.025}} {
		_, err := OBFSpent(bad[0], bad[1])
		wantInvalid(t, "OBFSpent", err)
	}
}

func TestSamplesAtLook(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		t    float64
		n    int
		want int
	}{
		{0.2, 30, 6}, {0.4, 30, 12}, {0.6, 30, 18}, {0.8, 30, 24}, {1, 30, 30},
		{1.0 / 3, 30, 10}, {2.0 / 3, 30, 20}, {0.2, 7, 2}, {0.01, 5, 1},
		{0.5, 0, 0}, {0, 30, 0}, {math.NaN(), 30, 0}, {1.5, 30, 30},
	} {
		if got := SamplesAtLook(tc.t, tc.n); got != tc.want {
			t.Errorf("SamplesAtLook(%v, %d) = %d, want %d", tc.t, tc.n, got, tc.want)
		}
	}
	for _, f := range EqualFractions(5) {
		if got, want := SamplesAtLook(f, 30), int(math.Round(f*30)); got != want {
			t.Errorf("SamplesAtLook(%v, 30) = %d, want %d", f, got, want)
		}
	}
	if EqualFractions(0) != nil || EqualFractions(4)[3] != 1 {
		t.Errorf("EqualFractions: %v %v", EqualFractions(0), EqualFractions(4))
	}
}

// TestZVariants_WorkedExample pins the numbers of the worked example in
// the package documentation.
func TestZVariants_WorkedExample(t *testing.T) {
	t.Parallel()
	b, err := SpendingOBF(EqualFractions(5), 0.025)
	if err != nil {
		t.Fatal(err)
	}
	_, fixed, _ := Newcombe(14, 48, 2, 48)
	near(t, "look 1 at 1.96", fixed.Lo, 0.1032, tol)
	_, l1, _ := NewcombeZ(14, 48, 2, 48, b[0].Z)
	near(t, "look 1 at c_1", l1.Lo, -0.1473, tol)
	_, l2, _ := NewcombeZ(29, 96, 4, 96, b[1].Z)
	near(t, "look 2 at c_2", l2.Lo, 0.0777, tol)
}

// TestLookBounds_Extremes: the intervals at a look's boundary stay in
// range however large the boundary (SpendingOBF's first look at
// MinLookFraction is above 22), and the paired bound at a look's tail
// stays finite where 1 - tail rounds to 1, equal to the lower-tail
// quantile.
func TestLookBounds_Extremes(t *testing.T) {
	t.Parallel()
	b, err := SpendingOBF([]float64{MinLookFraction, 0.5, 1}, 0.025)
	if err != nil {
		t.Fatal(err)
	}
	if b[0].Tail > 1e-100 {
		t.Fatalf("first look's tail %v, want below 1e-100 for this test", b[0].Tail)
	}
	for _, x := range b {
		for _, c := range [][2]int{{0, 1}, {1, 1}, {0, 48}, {48, 48}, {5, 48}} {
			w, err := WilsonZ(c[0], c[1], x.Z)
			p := float64(c[0]) / float64(c[1])
			if err != nil || !(w.Lo >= 0 && w.Hi <= 1 && w.Contains(p)) {
				t.Errorf("WilsonZ(%v, %v) = %+v %v", c, x.Z, w, err)
			}
			d, iv, err := NewcombeZ(c[0], c[1], 0, c[1], x.Z)
			if err != nil || !(iv.Lo >= -1 && iv.Hi <= 1 && iv.Contains(d)) {
				t.Errorf("NewcombeZ(%v, %v) = %v %+v %v", c, x.Z, d, iv, err)
			}
		}
		for _, p := range []Paired{{D: 0.01, SEPair: 1e-4, Cases: 2}, {D: 0.1, Cases: 2}, {D: -0.2, SEPair: 1e-9, Cases: 18}} {
			hi, err := PairedUpper(p, x.Tail)
			q, _ := StudentTQuantile(x.Tail, float64(p.Cases-1))
			want := clamp(p.D-q*p.SEPair, -1, 1)
			if err != nil || math.IsNaN(hi) || hi < p.D || math.Abs(hi-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("PairedUpper(%+v, %v) = %v %v, want %v", p, x.Tail, hi, err, want)
			}
		}
	}
}

package stats

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func mustCorrect(t *testing.T, m, se, sp Proportion) Corrected {
	t.Helper()
	c, err := RecallCorrected(m, se, sp)
	if err != nil {
		t.Fatalf("RecallCorrected(%+v, %+v, %+v): %v", m, se, sp, err)
	}
	return c
}

// exactlyOne is a specificity known to be 1 without measuring it: the
// premise of STATS section 5's worked example.
var exactlyOne = Proportion{P: 1}

func TestRecallCorrected(t *testing.T) {
	t.Parallel()
	c := mustCorrect(t, Proportion{0.09, 150}, Proportion{24.0 / 31, 31}, exactlyOne)
	near(t, "estimate", c.Est, 0.11625, 1e-5)
	nearIv(t, "log interval", c.CI, 0.0675, 0.2001)
	if c.Method != CorrectedLog {
		t.Errorf("method %q, want log", c.Method)
	}

	// Corrected by the amended regex's recall (29/31), 22% becomes 0.2352.
	c = mustCorrect(t, Proportion{0.22, 150}, Proportion{29.0 / 31, 31}, exactlyOne)
	near(t, "amended", c.Est, 0.2352, tol)

	// Specificity below 1 subtracts the false-positive rate first.
	c = mustCorrect(t, Proportion{0.09, 150}, Proportion{24.0 / 31, 31}, Proportion{0.99, 200})
	near(t, "sp 0.99", c.Est, 0.08/(24.0/31-0.01), 1e-12)
	near(t, "raw", c.Raw, c.Est, 0)
}

// TestRecallCorrected_MeasuredSpecificity pins Fieller's interval with a
// measured specificity: the worked example with its 29 clean answers all
// passed (STATS section 4) carries their uncertainty, so the interval is
// wider than the log-scale one that takes specificity as exactly 1.
func TestRecallCorrected_MeasuredSpecificity(t *testing.T) {
	t.Parallel()
	c := mustCorrect(t, Proportion{0.09, 150}, Proportion{24.0 / 31, 31}, Proportion{1, 29})
	// Agresti-Coull variances, z = 1.959964, z^2 = 3.841459 (checked with
	// Python's statistics.NormalDist):
	//   m:  p~ = (13.5 + 1.920729)/153.841459 = 0.100238, var 0.00058625
	//   Se: p~ = (24 + 1.920729)/34.841459 = 0.743962, var 0.00546712
	//   Sp: p~ = (29 + 1.920729)/32.841459 = 0.941515, var 0.00167667
	// a = 0.09, b = 0.774194; Var(a) = 0.00226293, Var(b) = 0.00714379,
	// Cov = 0.00167667. The quadratic A pi^2 - 2B pi + C = 0 has
	// A = b^2 - z^2 Var(b) = 0.571933, B = ab - z^2 Cov = 0.063237,
	// C = a^2 - z^2 Var(a) = -0.000593: roots -0.0046 and 0.2257.
	near(t, "estimate", c.Est, 0.11625, 1e-5)
	// The lower root, -0.0046, is shown as 0.
	nearIv(t, "Fieller interval", c.CI, 0, 0.2257)
	if c.Method != CorrectedFieller {
		t.Errorf("method %q, want fieller", c.Method)
	}

	// The boundary: a true rate near 1.3% measured by a grader
	// with 6% false alarms. m = 0.05 < 1 - Sp = 0.06, so the estimate
	// clamps to 0, and the interval must still reach above the truth
	// rather than read [0, 0]. a = -0.01, b = 0.84: A = 0.688888,
	// B = -0.011007, C = -0.003355, upper root 0.0556.
	c = mustCorrect(t, Proportion{12.0 / 240, 240}, Proportion{27.0 / 30, 30}, Proportion{94.0 / 100, 100})
	if c.Est != 0 || c.CI.Lo != 0 || c.Raw >= 0 {
		t.Errorf("boundary: %+v, want estimate 0 from a negative raw estimate", c)
	}
	near(t, "boundary upper", c.CI.Hi, 0.0556, tol)
}

func TestRecallCorrected_Edges(t *testing.T) {
	t.Parallel()
	// m = 0 with specificity exactly 1: upper = Wilson upper of 0/150 over
	// recall's Wilson lower.
	c := mustCorrect(t, Proportion{0, 150}, Proportion{24.0 / 31, 31}, exactlyOne)
	w, _ := Wilson(0, 150)
	r, _ := Wilson(24, 31)
	if c.Est != 0 || c.CI.Lo != 0 {
		t.Errorf("m = 0: %+v", c)
	}
	near(t, "m = 0 upper", c.CI.Hi, w.Hi/r.Lo, 1e-12)

	// A measured rate above recall clamps to 1, and the interval holds it.
	c = mustCorrect(t, Proportion{0.9, 150}, Proportion{0.5, 10}, exactlyOne)
	if c.Est != 1 || c.CI.Hi != 1 || c.CI.Lo > 1 || c.CI.Lo < 0 {
		t.Errorf("clamped: %+v", c)
	}

	// Perfect recall and m = 1 are fine, with specificity exact or measured.
	for _, sp := range []Proportion{exactlyOne, {1, 60}, {0.95, 60}} {
		for _, tc := range [][2]float64{{0.5, 1}, {1, 1}, {1, 0.5}, {0.001, 0.999}, {0.06, 0.9}} {
			c, err := RecallCorrected(Proportion{tc[0], 100}, Proportion{tc[1], 20}, sp)
			if errors.Is(err, ErrNotEstimable) {
				continue
			}
			if err != nil || !(c.CI.Lo >= 0 && c.CI.Hi <= 1 && c.CI.Contains(c.Est)) || c.CI.Hi <= 0 {
				t.Errorf("RecallCorrected(%v, sp %+v) = %+v, %v", tc, sp, c, err)
			}
		}
	}

	for _, tc := range []struct {
		m, se, sp Proportion
		comment   string
	}{
		{Proportion{-0.1, 150}, Proportion{0.8, 31}, exactlyOne, "negative m"},
		{Proportion{1.1, 150}, Proportion{0.8, 31}, exactlyOne, "m above 1"},
		{Proportion{math.NaN(), 150}, Proportion{0.8, 31}, exactlyOne, "NaN m"},
		{Proportion{0.1, 0}, Proportion{0.8, 31}, exactlyOne, "nm 0"},
		{Proportion{0.1, 150}, Proportion{0.8, 0}, exactlyOne, "nSe 0"},
		{Proportion{0.1, 150}, Proportion{0.8, 31}, Proportion{1.5, 30}, "sp above 1"},
		{Proportion{0.1, 150}, Proportion{0.8, 31}, Proportion{0.9, -1}, "negative sp trials"},
		{Proportion{0.1, 150}, Proportion{0.8, 31}, Proportion{0.9, 0}, "unmeasured sp below 1"},
		{Proportion{0.1, math.Inf(1)}, Proportion{0.8, 31}, exactlyOne, "infinite trials"},
	} {
		_, err := RecallCorrected(tc.m, tc.se, tc.sp)
		wantInvalid(t, tc.comment, err)
	}
	for _, tc := range []struct {
		m, se, sp Proportion
		comment   string
	}{
		{Proportion{0.1, 150}, Proportion{0, 31}, exactlyOne, "recall 0"},
		{Proportion{0.1, 150}, Proportion{0.5, 31}, Proportion{0.5, 60}, "chance grader"},
		{Proportion{1, 240}, Proportion{1, 31}, Proportion{0, 29}, "fails everything"},
		{Proportion{0.5, 150}, Proportion{0.6, 31}, Proportion{0.55, 60}, "barely better than chance"},
		{Proportion{0.01, 5000}, Proportion{0.9, 300}, Proportion{0.85, 1000}, "measured rate below the false-alarm rate"},
	} {
		if _, err := RecallCorrected(tc.m, tc.se, tc.sp); !errors.Is(err, ErrNotEstimable) {
			t.Errorf("%s: error %v, want not estimable", tc.comment, err)
		}
	}
}

// TestRecallCorrected_Coverage simulates the regimes of issue 10 (seeded,
// no wall time): a true rate pi, a grader with recall Se and specificity
// Sp, the measured rate on Nm answers, recall on nSe labelled violations
// and specificity on nSp labelled clean answers, each binomial. The 95%
// interval must hold the true rate in at least 92% of runs; a run whose
// rate is not estimable counts as a miss. With the specificity taken as
// known at its measured value (the old log-scale interval) coverage in
// these regimes was 46-97% (72% in the first).
func TestRecallCorrected_Coverage(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(10, 2026))
	binom := func(n int, p float64) float64 {
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return float64(k) / float64(n)
	}
	const runs = 2000
	for _, r := range []struct {
		pi, se, sp   float64
		nm, nSe, nSp int
	}{
		{0.013, 0.9, 0.97, 240, 30, 100}, // the 1.3%, imperfect specificity
		{0.013, 0.9, 0.95, 480, 20, 50},
		{0.013, 0.9, 0.99, 240, 30, 200},
		{0.013, 0.9, 1, 240, 30, 60},
		{0, 0.9, 0.97, 240, 30, 100},
		{0.05, 0.7, 0.9, 480, 20, 100},
		{0.116, 0.774, 0.98, 150, 31, 29}, // STATS section 5's rates
		{0.2, 0.9, 0.95, 240, 30, 60},
		{0.3, 0.95, 0.9, 150, 50, 50},
	} {
		m := r.pi*r.se + (1-r.pi)*(1-r.sp)
		covered, unestimable := 0, 0
		for range runs {
			c, err := RecallCorrected(Proportion{binom(r.nm, m), float64(r.nm)},
				Proportion{binom(r.nSe, r.se), float64(r.nSe)}, Proportion{binom(r.nSp, r.sp), float64(r.nSp)})
			switch {
			case errors.Is(err, ErrNotEstimable):
				unestimable++
			case err != nil:
				t.Fatal(err)
			case c.CI.Contains(r.pi):
				covered++
			}
		}
		cov := float64(covered) / runs
		t.Logf("pi %.3f Se %.3f Sp %.3f, %d/%d/%d: coverage %.3f, not estimable %d of %d", r.pi, r.se, r.sp, r.nm, r.nSe, r.nSp, cov, unestimable, runs)
		if cov < 0.92 {
			t.Errorf("pi %.3f Se %.3f Sp %.3f, %d/%d/%d: coverage %.3f, want >= 0.92", r.pi, r.se, r.sp, r.nm, r.nSe, r.nSp, cov)
		}
	}
}

func TestEffectiveTrials(t *testing.T) {
	t.Parallel()
	w, _ := Wilson(24, 31)
	n, ok := EffectiveTrials(24.0/31, w)
	if !ok || math.Abs(n-31) > 1e-6 {
		t.Errorf("EffectiveTrials of Wilson(24, 31) = %v, %v; want 31", n, ok)
	}
	if _, ok := EffectiveTrials(0.5, Interval{0.5, 0.5}); ok {
		t.Error("a zero-width interval has no effective size")
	}
	if n, ok := EffectiveTrials(0.5, Interval{0, 1}); !ok || n != 1 {
		t.Errorf("an interval wider than one trial's = %v, %v; want 1", n, ok)
	}
}

func TestIPWRecall(t *testing.T) {
	t.Parallel()
	f, p := Stratum{N: 60, Labelled: 20, Violations: 19}, Stratum{N: 480, Labelled: 40, Violations: 2}
	est, se, err := IPWRecall(f, p)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "recall", est, 0.7037, tol)
	near(t, "se", se, 0.1396, tol)
	nearIv(t, "interval", NormalInterval(est, se), 0.4300, 0.9774)
	prec, err := IPWPrecision(f)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "precision", prec, 0.95, 1e-12)

	// Equal weights reduce to v_F/(v_F+v_P); a fully labelled pool has SE 0.
	est, se, err = IPWRecall(Stratum{20, 20, 19}, Stratum{40, 40, 2})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "census", est, 19.0/21, 1e-12)
	if se != 0 {
		t.Errorf("census se = %v, want 0", se)
	}
	// An empty flagged stratum: recall 0, still defined.
	est, _, err = IPWRecall(Stratum{}, Stratum{100, 10, 3})
	if err != nil || est != 0 {
		t.Errorf("empty flagged: %v, %v", est, err)
	}

	for _, tc := range []struct {
		name string
		f, p Stratum
	}{
		{"no violations", Stratum{10, 5, 0}, Stratum{100, 10, 0}},
		{"unlabelled stratum", Stratum{10, 5, 3}, Stratum{100, 0, 0}},
		{"one label", Stratum{10, 1, 1}, Stratum{100, 10, 1}},
		{"labelled above N", Stratum{10, 11, 3}, Stratum{100, 10, 1}},
		{"violations above labelled", Stratum{10, 5, 6}, Stratum{100, 10, 1}},
		{"negative", Stratum{10, 5, 3}, Stratum{100, 10, -1}},
	} {
		_, _, err := IPWRecall(tc.f, tc.p)
		wantInvalid(t, tc.name, err)
	}
	_, err = IPWPrecision(Stratum{N: 10})
	wantInvalid(t, "precision with no labels", err)
}

func TestKappa(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b, c, d    int
		k, po, pe, se float64
		checkPoPeSE   bool
	}{
		{24, 0, 7, 29, 0.7682, 0.8833, 0.4967, 0.0823, true},
		{29, 0, 2, 29, 0.9334, 0.9667, 0.4994, 0.0463, true},
		{25, 4, 3, 28, 0.7661, 0.8833, 0.5011, 0.0831, true},
		{1, 1, 1, 57, 0.4828, 0.9667, 0.9356, 0.3596, true},
	} {
		k, po, pe, se, err := Kappa(tc.a, tc.b, tc.c, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		near(t, "kappa", k, tc.k, tol)
		near(t, "po", po, tc.po, tol)
		near(t, "pe", pe, tc.pe, tol)
		near(t, "se", se, tc.se, tol)
	}
	for _, tc := range [][4]int{{0, 0, 0, 0}, {5, 0, 0, 0}, {0, 0, 0, 5}, {-1, 1, 1, 1}} {
		_, _, _, _, err := Kappa(tc[0], tc[1], tc[2], tc[3])
		wantInvalid(t, "Kappa", err)
	}
}

// TestStratifiedShare: the share estimator reproduces STATS section 6's
// IPW recall (it is IPWRecall's estimator), its per-stratum bounds when no
// miss was found, and accepts fractional counts for projections.
func TestStratifiedShare(t *testing.T) {
	t.Parallel()
	flagged := ShareStratum{N: 60, Labelled: 20, A: 19, NoB: true}
	passed := ShareStratum{N: 480, Labelled: 40, B: 2, NoA: true}
	est, se, ci, bounds, err := StratifiedShare([]ShareStratum{flagged, passed})
	if err != nil || bounds {
		t.Fatalf("StratifiedShare: %v, bounds %v", err, bounds)
	}
	near(t, "recall", est, 0.7037, tol)
	near(t, "se", se, 0.1396, tol)
	nearIv(t, "interval", ci, 0.4300, 0.9774)

	// No miss among 40 passed answers: SE 0, so the interval bounds FN by
	// 480 * Wilson(0/40).Hi and TP by 60 * Wilson(19/20).Lo.
	passed.B = 0
	est, _, ci, bounds, err = StratifiedShare([]ShareStratum{flagged, passed})
	wp, _ := Wilson(0, 40)
	wf, _ := Wilson(19, 20)
	if err != nil || !bounds || est != 1 || ci.Hi != 1 {
		t.Fatalf("no misses: %v %+v bounds %v err %v", est, ci, bounds, err)
	}
	near(t, "bounds lo", ci.Lo, 60*wf.Lo/(60*wf.Lo+480*wp.Hi), 1e-12)

	// Doubling a stratum's labels at the same rates narrows the interval.
	passed.B = 2
	more := passed
	more.Labelled, more.B = 80, 4
	_, se2, _, _, err := StratifiedShare([]ShareStratum{flagged, more})
	if err != nil || !(se2 < se) {
		t.Errorf("80 passed labels: SE %v (was %v), %v", se2, se, err)
	}

	for _, bad := range [][]ShareStratum{
		{{N: 10, Labelled: 0}},
		{{N: 10, Labelled: 5, A: 4, B: 2}},
		{{N: 10, Labelled: 12, A: 1}},
		{{N: 10, Labelled: 5}},
	} {
		_, _, _, _, err := StratifiedShare(bad)
		wantInvalid(t, fmt.Sprintf("%+v", bad), err)
	}
}

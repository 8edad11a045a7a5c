package stats

import (
	"math"
	"testing"
)

func TestRecallCorrected(t *testing.T) {
	t.Parallel()
	est, ci, err := RecallCorrected(0.09, 150, 24.0/31, 31, 1)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "estimate", est, 0.11625, 1e-5)
	nearIv(t, "log interval", ci, 0.0675, 0.2001)

	// Corrected by the amended regex's recall (29/31), 22% becomes 0.2352.
	est, _, err = RecallCorrected(0.22, 150, 29.0/31, 31, 1)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "amended", est, 0.2352, tol)

	// Specificity below 1 subtracts the false-positive rate first.
	est, _, err = RecallCorrected(0.09, 150, 24.0/31, 31, 0.99)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "sp 0.99", est, 0.08/(24.0/31-0.01), 1e-12)
}

func TestRecallCorrected_Edges(t *testing.T) {
	t.Parallel()
	// m = 0: estimate 0, upper = Wilson upper of 0/150 over recall's Wilson lower.
	est, ci, err := RecallCorrected(0, 150, 24.0/31, 31, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := Wilson(0, 150)
	r, _ := Wilson(24, 31)
	if est != 0 || ci.Lo != 0 {
		t.Errorf("m = 0: %v %+v", est, ci)
	}
	near(t, "m = 0 upper", ci.Hi, w.Hi/r.Lo, 1e-12)

	// A measured rate above recall clamps to 1, and the interval holds it.
	est, ci, err = RecallCorrected(0.9, 150, 0.5, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if est != 1 || ci.Hi != 1 || ci.Lo > 1 || ci.Lo < 0 {
		t.Errorf("clamped: %v %+v", est, ci)
	}

	// Perfect recall and m = 1 are fine.
	for _, tc := range [][2]float64{{0.5, 1}, {1, 1}, {1, 0.5}, {0.001, 0.999}} {
		est, ci, err := RecallCorrected(tc[0], 100, tc[1], 20, 1)
		if err != nil {
			t.Fatal(err)
		}
		if !(ci.Lo >= 0 && ci.Hi <= 1 && ci.Contains(est)) {
			t.Errorf("RecallCorrected(%v) = %v %+v", tc, est, ci)
		}
	}

	for _, tc := range []struct {
		m       float64
		nm      int
		se      float64
		nSe     int
		sp      float64
		comment string
	}{
		{-0.1, 150, 0.8, 31, 1, "negative m"},
		{1.1, 150, 0.8, 31, 1, "m above 1"},
		{math.NaN(), 150, 0.8, 31, 1, "NaN m"},
		{0.1, 0, 0.8, 31, 1, "nm 0"},
		{0.1, 150, 0.8, 0, 1, "nSe 0"},
		{0.1, 150, 0, 31, 1, "recall 0"},
		{0.1, 150, 0.5, 31, 0.5, "chance grader"},
		{0.1, 150, 0.8, 31, 1.5, "sp above 1"},
	} {
		_, _, err := RecallCorrected(tc.m, tc.nm, tc.se, tc.nSe, tc.sp)
		wantInvalid(t, tc.comment, err)
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

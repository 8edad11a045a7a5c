package stats

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

const tol = 1e-4

func near(t *testing.T, name string, got, want, eps float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > eps {
		t.Errorf("%s = %.6f, want %.6f (+/- %g)", name, got, want, eps)
	}
}

func nearIv(t *testing.T, name string, got Interval, lo, hi float64) {
	t.Helper()
	near(t, name+" lo", got.Lo, lo, tol)
	near(t, name+" hi", got.Hi, hi, tol)
}

func wantInvalid(t *testing.T, name string, err error) {
	t.Helper()
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("%s: err = %v, want ErrInvalid", name, err)
	}
}

func TestNormalQuantile(t *testing.T) {
	t.Parallel()
	near(t, "z(0.975)", NormalQuantile(0.975), 1.959964, 1e-6)
	near(t, "z(0.80)", NormalQuantile(0.80), 0.841621, 1e-6)
	near(t, "z975 constant", z975, NormalQuantile(0.975), 1e-12)
	if !math.IsInf(NormalQuantile(1), 1) || !math.IsInf(NormalQuantile(0), -1) {
		t.Error("NormalQuantile(0|1) not infinite")
	}
	for _, p := range []float64{-0.1, 1.1, math.NaN()} {
		if !math.IsNaN(NormalQuantile(p)) {
			t.Errorf("NormalQuantile(%v) not NaN", p)
		}
	}
}

func TestStudentTQuantile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p, df, want float64
	}{
		{0.975, 4, 2.7764},
		{0.975, 7, 2.3646},
		{0.80, 4, 0.9410},
		{0.025, 4, -2.7764},
		{0.975, math.Inf(1), 1.9600},
	} {
		got, err := StudentTQuantile(tc.p, tc.df)
		if err != nil {
			t.Fatalf("StudentTQuantile(%v, %v): %v", tc.p, tc.df, err)
		}
		near(t, "t quantile", got, tc.want, tol)
	}
	for _, tc := range []struct{ p, df float64 }{{0, 4}, {1, 4}, {0.5, 0}, {0.5, -1}, {math.NaN(), 3}, {0.9, math.NaN()}} {
		_, err := StudentTQuantile(tc.p, tc.df)
		wantInvalid(t, "StudentTQuantile", err)
	}
}

func TestWilson_Vectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		x, n   int
		lo, hi float64
	}{
		{0, 30, 0, 0.1135},
		{3, 30, 0.0346, 0.2562},
		{13, 30, 0.2738, 0.6080},
		{24, 31, 0.6019, 0.8860},
		{29, 31, 0.7928, 0.9821},
		{24, 24, 0.8620, 1},
		{29, 29, 0.8830, 1},
		{34, 150, 0.1670, 0.3000},
		{0, 300, 0, 0.0126},
	} {
		iv, err := Wilson(tc.x, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		nearIv(t, "wilson", iv, tc.lo, tc.hi)
	}
	iv, _ := Wilson(7, 20)
	near(t, "wilson 7/20 lo", iv.Lo, 0.1812, tol)
	iv, _ = Wilson(0, 30)
	if iv.Lo != 0 {
		t.Errorf("wilson 0/30 lo = %v, want exactly 0", iv.Lo)
	}
	iv, _ = Wilson(30, 30)
	if iv.Hi != 1 {
		t.Errorf("wilson 30/30 hi = %v, want exactly 1", iv.Hi)
	}
}

func TestClopperPearson_Vectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		x, n   int
		lo, hi float64
	}{
		{0, 30, 0, 0.1157},
		{3, 30, 0.0211, 0.2653},
		{13, 30, 0.2546, 0.6257},
		{24, 31, 0.5890, 0.9041},
		{29, 31, 0.7858, 0.9921},
		{24, 24, 0.8575, 1},
		{29, 29, 0.8806, 1},
	} {
		iv, err := ClopperPearson(tc.x, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		nearIv(t, "clopper-pearson", iv, tc.lo, tc.hi)
	}
	iv, _ := ClopperPearson(7, 20)
	near(t, "cp 7/20 lo", iv.Lo, 0.1539, tol)
}

func TestProportion_Invalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ x, n int }{{0, 0}, {1, 0}, {5, 3}, {-1, 10}, {0, -5}} {
		_, err := Wilson(tc.x, tc.n)
		wantInvalid(t, "Wilson", err)
		_, err = ClopperPearson(tc.x, tc.n)
		wantInvalid(t, "ClopperPearson", err)
	}
}

// TestProportion_Property checks, for every x <= n <= 200, that both
// intervals contain the estimate and stay in [0,1], that Clopper-Pearson is
// at least as wide as Wilson at the ends (x = 0, x = n), and that Newcombe
// against 0/n stays finite and contains its estimate.
func TestProportion_Property(t *testing.T) {
	t.Parallel()
	for n := 1; n <= 200; n++ {
		for x := 0; x <= n; x++ {
			p := float64(x) / float64(n)
			w, err := Wilson(x, n)
			if err != nil {
				t.Fatal(err)
			}
			c, err := ClopperPearson(x, n)
			if err != nil {
				t.Fatal(err)
			}
			for name, iv := range map[string]Interval{"wilson": w, "cp": c} {
				if !(iv.Lo >= 0 && iv.Hi <= 1 && iv.Contains(p)) || iv.Width() <= 0 {
					t.Fatalf("%s(%d/%d) = %+v does not contain %v within [0,1]", name, x, n, iv, p)
				}
			}
			if (x == 0 && (w.Lo != 0 || c.Lo != 0)) || (x == n && (w.Hi != 1 || c.Hi != 1)) {
				t.Fatalf("%d/%d: end bounds not exact: wilson %+v cp %+v", x, n, w, c)
			}
			if n%7 == 0 {
				for _, x2 := range []int{0, n / 2, n} {
					d, iv, err := Newcombe(x, n, x2, n)
					if err != nil {
						t.Fatal(err)
					}
					if !(iv.Lo >= -1 && iv.Hi <= 1 && iv.Contains(d)) || iv.Width() <= 0 {
						t.Fatalf("newcombe(%d/%d - %d/%d) = %v %+v", x, n, x2, n, d, iv)
					}
				}
			}
		}
	}
}

func TestNormalInterval(t *testing.T) {
	t.Parallel()
	nearIv(t, "ipw recall interval", NormalInterval(0.7037, 0.1396), 0.4301, 0.9773)
	iv := NormalInterval(0.95, 0.1)
	if iv.Hi != 1 || iv.Lo >= 0.95 {
		t.Errorf("NormalInterval(0.95, 0.1) = %+v, want Hi clamped to 1", iv)
	}
}

// TestStudentTQuantile_MemoConcurrent asks for the same quantiles from many
// goroutines (run with -race): every answer equals the uncached value.
func TestStudentTQuantile_MemoConcurrent(t *testing.T) {
	t.Parallel()
	want := map[float64]float64{}
	for df := 1.0; df <= 40; df++ {
		want[df] = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(0.975)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8*40)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for df := 1.0; df <= 40; df++ {
				if got, err := StudentTQuantile(0.975, df); err != nil || got != want[df] {
					errs <- fmt.Sprintf("df %v: %v, %v; want %v", df, got, err, want[df])
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

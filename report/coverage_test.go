package report

import "testing"

func TestShortFloat(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		x      float64
		digits int
		want   string
	}{
		{0.0004, 3, "0.0004"}, {0.054321, 3, "0.0543"}, {0.09999, 3, "0.1"}, {1.5e-7, 3, "1.5e-7"},
		{1e-300, 6, "1e-300"}, {5e-324, 6, "4.94066e-324"}, {0.2, 6, "0.2"}, {100, 6, "100"}, {1.23456789e10, 3, "1.23e10"},
	} {
		if got := shortFloat(tc.x, tc.digits); got != tc.want {
			t.Errorf("shortFloat(%v, %d) = %q, want %q", tc.x, tc.digits, got, tc.want)
		}
	}
}

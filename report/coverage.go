package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/model/stats"
)

// coverageProb is the chance of at least one case that coverage sizes a
// suite for.
const coverageProb = 0.95

// Coverage is what `auditor coverage` says about a class of traffic in a
// frequency-sampled suite. Its JSON form is the output of --format json.
type Coverage struct {
	Share float64 `json:"share"` // the class's share of traffic, in (0,1]
	Suite int     `json:"suite"` // cases in the suite
	// Expected is the expected number of cases of the class: share x suite.
	Expected float64 `json:"expected_cases"`
	// None is the probability that the suite holds no case of the class:
	// (1-share)^suite.
	None float64 `json:"probability_none"`
	// SuiteFor95 is the smallest suite with a 95% chance of at least one
	// case; null when it would exceed a trillion cases.
	SuiteFor95 *int `json:"suite_for_95"`
}

// NewCoverage computes what a frequency-sampled suite of suite cases holds
// of a class with traffic share share (in (0,1]; the caller validates).
func NewCoverage(share float64, suite int) Coverage {
	cv := Coverage{
		Share:    share,
		Suite:    suite,
		Expected: share * float64(suite),
		None:     stats.ZeroCaseProbability(share, suite),
	}
	if n, err := stats.SuiteForAtLeastOne(share, coverageProb); err == nil {
		cv.SuiteFor95 = &n
	}
	return cv
}

// WriteCoverage writes a coverage in a sentence or two. Small figures keep
// their significant digits: a share below 0.0001% is written as a fraction
// (1e-300, not "1e-298%"), an expected count below 0.1 and a probability of
// none below 0.00005 with three significant digits instead of rounding to
// zero.
func WriteCoverage(w io.Writer, cv Coverage) error {
	class := "A class with " + shortFloat(100*cv.Share, 6) + "% of traffic"
	if cv.Share < 1e-6 {
		class = "A class with a traffic share of " + shortFloat(cv.Share, 6)
	}
	expected := fmt.Sprintf("%.2f", cv.Expected)
	if cv.Expected < 0.1 {
		expected = shortFloat(cv.Expected, 3)
	}
	none := fmt.Sprintf("%.4f (%.2f%%)", cv.None, 100*cv.None)
	if cv.None > 0 && cv.None < 0.00005 {
		none = shortFloat(cv.None, 3) + " (under 0.01%)"
	}
	line := fmt.Sprintf("%s in a %s-case suite sampled by frequency: expected %s cases; probability of none %s.",
		class, Thousands(int64(cv.Suite)), expected, none)
	switch {
	case cv.SuiteFor95 == nil:
		line += " A 95% chance of at least one case needs a suite of more than a trillion cases."
	case *cv.SuiteFor95 == 1:
		line += " A 95% chance of at least one case needs a suite of 1 case."
	default:
		line += fmt.Sprintf(" A 95%% chance of at least one case needs a suite of %s cases.", Thousands(int64(*cv.SuiteFor95)))
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}

// shortFloat formats x with at most the given significant digits, without
// trailing zeros, and with a bare exponent for very small values: 0.0004,
// 0.054, 1.5e-7 (not 1.5e-07).
func shortFloat(x float64, digits int) string {
	s := strconv.FormatFloat(x, 'g', digits, 64)
	mant, exp, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	sign := exp[:1]
	if sign == "+" {
		sign = ""
	}
	return mant + "e" + sign + strings.TrimLeft(exp[1:], "0")
}

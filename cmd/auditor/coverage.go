package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/model/stats"
)

// coverageProb is the chance of at least one case that coverage sizes a
// suite for.
const coverageProb = 0.95

// coverage is what `auditor coverage` says about a class of traffic in a
// frequency-sampled suite. Its JSON form is the output of --format json.
type coverage struct {
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

func newCoverageCmd(io Stdio) *cobra.Command {
	var share float64
	var suite int
	var format string
	c := &cobra.Command{
		Use:   "coverage --share P --suite N",
		Short: "Show how often a rare class of traffic appears in a suite sampled by frequency",
		Long: `A suite drawn from traffic by frequency holds a class with traffic share P
about P x N times in N cases, and none at all with probability (1-P)^N: rare
classes, which are often where a rule matters, are easily missed. coverage
prints both, and the suite size that gives a 95% chance of at least one case.
P is a fraction: 0.002 for 0.2% of traffic. Makes no calls.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case !cmd.Flags().Changed("share") || !cmd.Flags().Changed("suite"):
				return &usageError{fmt.Errorf("coverage needs --share (a fraction of traffic in (0,1]) and --suite (cases in the suite)")}
			case !(share > 0 && share <= 1):
				return &usageError{fmt.Errorf("--share %v: want a fraction of traffic in (0,1], e.g. 0.002 for 0.2%%", share)}
			case suite < 1:
				return &usageError{fmt.Errorf("--suite %d: want at least 1 case", suite)}
			case format != "text" && format != "json":
				return &usageError{fmt.Errorf("unknown --format %q (want text or json)", format)}
			}
			cv := coverage{
				Share:    share,
				Suite:    suite,
				Expected: share * float64(suite),
				None:     stats.ZeroCaseProbability(share, suite),
			}
			if n, err := stats.SuiteForAtLeastOne(share, coverageProb); err == nil {
				cv.SuiteFor95 = &n
			}
			if format == "json" {
				return writeJSON(io.Out, cv)
			}
			writeCoverage(io.Out, cv)
			return nil
		},
	}
	c.Flags().Float64Var(&share, "share", 0, "the class's share of traffic, a fraction in (0,1] (0.002 is 0.2%)")
	c.Flags().IntVar(&suite, "suite", 0, "cases in the suite")
	c.Flags().StringVar(&format, "format", "text", "text or json")
	return c
}

// writeCoverage prints a coverage in a sentence or two. Small figures keep
// their significant digits: a share below 0.0001% is written as a fraction
// (1e-300, not "1e-298%"), an expected count below 0.1 and a probability of
// none below 0.00005 with three significant digits instead of rounding to
// zero.
func writeCoverage(w io.Writer, cv coverage) {
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
	fmt.Fprintf(w, "%s in a %s-case suite sampled by frequency: expected %s cases; probability of none %s.",
		class, groupDigits(cv.Suite), expected, none)
	if cv.SuiteFor95 == nil {
		fmt.Fprintln(w, " A 95% chance of at least one case needs a suite of more than a trillion cases.")
		return
	}
	cases := "cases"
	if *cv.SuiteFor95 == 1 {
		cases = "case"
	}
	fmt.Fprintf(w, " A 95%% chance of at least one case needs a suite of %s %s.\n", groupDigits(*cv.SuiteFor95), cases)
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

// groupDigits formats n with commas between groups of three digits: 1,497.
func groupDigits(n int) string {
	if n < 0 {
		return "-" + groupDigits(-n)
	}
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

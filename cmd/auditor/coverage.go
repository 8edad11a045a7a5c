package main

import (
	"fmt"

	"github.com/auditor-dev/auditor/report"
	"github.com/spf13/cobra"
)

func newCoverageCmd(std Stdio) *cobra.Command {
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
				return &usageError{fmt.Errorf("coverage needs --share (a fraction of traffic in (0,1]) and --suite (cases in the suite)"), ""}
			case !(share > 0 && share <= 1):
				return &usageError{fmt.Errorf("--share %v: want a fraction of traffic in (0,1], e.g. 0.002 for 0.2%%", share), ""}
			case suite < 1:
				return &usageError{fmt.Errorf("--suite %d: want at least 1 case", suite), ""}
			case format != "text" && format != "json":
				return &usageError{fmt.Errorf("unknown --format %q (want text or json)", format), ""}
			}
			cv := report.NewCoverage(share, suite)
			if format == "json" {
				return writeJSON(std.Out, cv)
			}
			return report.WriteCoverage(std.Out, cv)
		},
	}
	c.Flags().Float64Var(&share, "share", 0, "the class's share of traffic, a fraction in (0,1] (0.002 is 0.2%)")
	c.Flags().IntVar(&suite, "suite", 0, "cases in the suite")
	c.Flags().StringVar(&format, "format", "text", "text or json")
	return c
}

package model

import (
	"fmt"
	"math"
	"strconv"

	"github.com/auditor-dev/auditor/model/stats"
)

// The verdict's words and numbers as a reviewer reads them.

// missedTypeNote says how likely a type of request the deletion harms was
// never among the provoking cases.
func (v *Verdict) missedTypeNote() string {
	return fmt.Sprintf("untested types: if deleting the line harms only one type of request, making up %s of provoking traffic (affected_share), the chance that none of the %s is of that type is %s^%d = %s",
		shareText(v.AffectedShare), count(v.ProvokingCases, "provoking case", "provoking cases"),
		plainFloat(1-v.AffectedShare), v.ProvokingCases, chanceText(v.MissedTypeChance))
}

// shareText writes a share as a percentage without spurious digits.
func shareText(s float64) string { return plainFloat(100*s) + "%" }

// plainFloat writes x with as few digits as it needs, rounded to six
// decimals so that 1 - 0.3 reads 0.7, not 0.7000000000000001.
func plainFloat(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', -1, 64)
}

// chanceText writes a probability as a percentage, keeping small ones
// visible ("0.02%" rather than "0%").
func chanceText(p float64) string {
	switch {
	case p >= 0.01:
		return fmt.Sprintf("%.0f%%", 100*p)
	case p >= 0.0001:
		return fmt.Sprintf("%.2f%%", 100*p)
	}
	return fmt.Sprintf("%.1g%%", 100*p)
}

// riseSentence says in percentages how a failure rate moved when the line
// was deleted, e.g. "provoking failures rose from 0.4% to 27.0% without the
// line (+26.6 points, 95% [19.0, 34.1])".
func riseSentence(what string, xb, nb, xd, nd int, diff float64, ci stats.Interval, level string) string {
	base, del := float64(xb)/float64(nb), float64(xd)/float64(nd)
	ival := fmt.Sprintf("(%+.1f points, %s [%s, %s])", 100*diff, level, points(ci.Lo), points(ci.Hi))
	switch {
	case xd*nb > xb*nd:
		return fmt.Sprintf("%s rose from %s to %s without the line %s", what, percent(base), percent(del), ival)
	case xd*nb < xb*nd:
		return fmt.Sprintf("%s fell from %s to %s without the line %s", what, percent(base), percent(del), ival)
	}
	return fmt.Sprintf("%s stayed at %s without the line %s", what, percent(base), ival)
}

// percent formats a rate as a percentage with one decimal. It rounds the
// way the tables print the rate as a fraction (%.3f), so a sentence never
// says 3.8% beside a table's 0.037.
func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*asPrinted(x)) }

// points formats a difference of rates in percentage points, one decimal,
// rounded like percent.
func points(x float64) string { return fmt.Sprintf("%.1f", 100*asPrinted(x)) }

// pointsVs formats x in points like points, with a second decimal when one
// decimal would print it equal to ref: "4.96 ... under the tolerated 5.0",
// never "5.0 ... under the tolerated 5.0".
func pointsVs(x, ref float64) string {
	if p := points(x); p == points(ref) && x != ref {
		return fmt.Sprintf("%.2f", 100*x)
	}
	return points(x)
}

// asPrinted is x as the tables print it, to three decimals.
func asPrinted(x float64) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// floorPercent is a lower bound in whole percent, rounded down: a lower
// bound is never shown higher than it is.
func floorPercent(x float64) int { return int(math.Floor(100*x + 1e-9)) }

// boundWords names the bound an upper limit came from, for the sentence.
// intervalName names the interval a verdict's sentence shows: "95%", or
// at a look of a sequential design "look 2 of 5 (95% over the design)".
func (v *Verdict) intervalName() string {
	if v.Look == nil {
		return "95%"
	}
	return fmt.Sprintf("look %d of %d, 95%% over all looks", v.Look.Index, v.Look.Of)
}

// atLook prefixes a bound line with its look: "look 2 of 5 (z 3.357): ".
func (v *Verdict) atLook() string {
	if v.Look == nil {
		return ""
	}
	return fmt.Sprintf("%s, KEEP at z %.3f, DELETE at z %.3f: ", v.Look, v.Look.KeepZ, v.Look.DeleteZ)
}

// The graded difference's bounds are one-sided 99.5% (its share of
// DELETE's error), so the sentence says so beside the 95% interval it
// follows.
func (v *Verdict) boundWords(bound string) string {
	level := oneSided(GradedDiffAlpha)
	if l := v.Look; l != nil {
		level = fmt.Sprintf("look %d of %d", l.Index, l.Of)
	}
	switch bound {
	case "Newcombe":
		return "Newcombe, pooled counts, " + level
	case "paired by case":
		return "paired by case, t(C-1), " + level
	}
	return bound + ", " + level
}

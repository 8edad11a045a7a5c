package report

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// How reports show the regression suites: a flag beside the verdict of a
// variant that broke any suite case, and per suite a section with one line
// per variant. The verdict itself never changes.

// RegressionFlag is "regression: 2 cases broken (see below)" for a variant
// that broke any regression case, "" otherwise.
func RegressionFlag(rr *evidence.RuleResult) string {
	n := rr.RegressionBroken()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("regression: %d %s broken (see below)", n, plural(n, "case", "cases"))
}

// VerdictLabel is the verdict's decision, followed for a rewording or an
// addition by the cases it fixed and broke and for a flagged variant by its
// regression flag: "WORSE · 0 fixed, 1 broken", "DELETE · regression: 2
// cases broken (see below)".
func VerdictLabel(rr *evidence.RuleResult) string {
	s := string(rr.Verdict.Decision)
	if f := FlipCounts(rr); f != "" {
		s += " · " + f
	}
	if f := RegressionFlag(rr); f != "" {
		s += " · " + f
	}
	return s
}

// RegressionLine says what one variant did to one suite: "-L20: 0 of 40
// cases broken (failures 1.2% -> 1.5%, +0.3 pts [-1.1, +1.8])", then the
// broken and fixed case ids. Case ids come from the user's files and are
// sanitized.
func RegressionLine(rr *evidence.RuleResult, r evidence.RegressionResult, multiModel bool) string {
	name := rr.Rule.Variant()
	if multiModel {
		name += " on " + model.Sanitize(rr.ModelName)
	}
	a, total := r.All, len(r.Cases)
	if r.Flips.Compared == 0 || a.Compared == 0 {
		return fmt.Sprintf("%s: not graded yet (%d %s)", name, total, plural(total, "case", "cases"))
	}
	s := fmt.Sprintf("%s: %d of %d %s broken", name, r.Broken(), total, plural(total, "case", "cases"))
	if r.Flips.Compared < total {
		s += fmt.Sprintf(" (%d compared so far)", r.Flips.Compared)
	}
	s += fmt.Sprintf(" (failures %.1f%% -> %.1f%%, %+.1f pts [%+.1f, %+.1f])", 100*a.Baseline.Rate, 100*a.Deleted.Rate,
		100*a.Diff, 100*a.DiffCI.Lo, 100*a.DiffCI.Hi)
	if len(r.Flips.Broken) > 0 {
		s += "; broken: " + sanitizeIDs(r.Flips.Broken)
	}
	if len(r.Flips.Fixed) > 0 {
		s += "; fixed: " + sanitizeIDs(r.Flips.Fixed)
	}
	return s
}

func sanitizeIDs(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = model.Sanitize(id)
	}
	return strings.Join(out, ", ")
}

// RegressionHeading is a suite's section heading: "Regression suite
// everyday (8 cases, predicate everyday.predicate.toml version 1a2b)".
func RegressionHeading(res *evidence.Results, si int) string {
	s := res.Plan.Audit.Regressions[si]
	version := ""
	for _, rr := range res.Rules {
		if si < len(rr.Regression) {
			version = rr.Regression[si].PredicateVersion
			break
		}
	}
	return fmt.Sprintf("Regression suite %s (%d %s, predicate %s version %s)", model.Sanitize(s.Name),
		len(s.Cases), plural(len(s.Cases), "case", "cases"), model.Sanitize(s.Config.Predicate), version)
}

// RegressionNote says how to read the sections; the same in every report.
const RegressionNote = "each case runs on baseline and on every variant; a case is broken when it passes on baseline and fails under the variant, by majority over samples. " +
	"The difference is variant minus baseline over all cases, with Newcombe's 95% interval. Regression suites never change a verdict: a variant that breaks a case is flagged, and fails --gate."

// regressionText is the text report's regression sections, "" without
// suites.
func regressionText(res *evidence.Results) string {
	var b strings.Builder
	multiModel := len(res.Plan.Audit.File.Models) > 1
	for si := range res.Plan.Audit.Regressions {
		fmt.Fprintf(&b, "%s:\n", RegressionHeading(res, si))
		for _, rr := range res.Rules {
			if si < len(rr.Regression) {
				fmt.Fprintf(&b, "  %s\n", RegressionLine(rr, rr.Regression[si], multiModel))
			}
		}
		b.WriteString("\n")
	}
	if b.Len() > 0 {
		fmt.Fprintf(&b, "Regression suites: %s\n\n", RegressionNote)
	}
	return b.String()
}

// regressionMarkdown is the Markdown report's regression sections, ""
// without suites. Everything from the user's files goes through mdEscape.
func regressionMarkdown(res *evidence.Results) string {
	var b strings.Builder
	multiModel := len(res.Plan.Audit.File.Models) > 1
	for si := range res.Plan.Audit.Regressions {
		fmt.Fprintf(&b, "## %s\n\n", mdEscape(RegressionHeading(res, si)))
		b.WriteString("| variant | cases broken | baseline fail/n | variant fail/n | variant - baseline [95% CI] | broken | fixed |\n")
		b.WriteString("|---|---:|---:|---:|---|---|---|\n")
		for _, rr := range res.Rules {
			if si >= len(rr.Regression) {
				continue
			}
			r := rr.Regression[si]
			name := rr.Rule.Variant()
			if multiModel {
				name += " on " + rr.ModelName
			}
			broken := fmt.Sprintf("%d of %d", r.Broken(), len(r.Cases))
			if r.Broken() > 0 {
				broken = "**" + broken + "**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdEscape(name), broken, CountCell(r.All.Baseline),
				CountCell(r.All.Deleted), DiffCell(r.All), mdEscape(strings.Join(r.Flips.Broken, ", ")), mdEscape(strings.Join(r.Flips.Fixed, ", ")))
		}
		b.WriteString("\n")
	}
	if b.Len() > 0 {
		fmt.Fprintf(&b, "_Regression suites: %s_\n\n", mdEscape(RegressionNote))
	}
	return b.String()
}

// RegressionDoc is one suite under one variant in `report --format json`.
type RegressionDoc struct {
	Suite            string `json:"suite"`
	PredicateVersion string `json:"predicate_version"`
	Cases            int    `json:"cases"`
	// Baseline and Variant are the pooled failures over the suite's cases.
	Baseline RegressionSideDoc `json:"baseline"`
	Variant  RegressionSideDoc `json:"variant"`
	// Diff is variant minus baseline on the cases graded under both, with
	// Newcombe's interval and, with two or more cases, the case-paired one.
	Diff DiffDoc `json:"diff"`
	// Flips are the cases that changed by majority over samples; Broken is
	// len(Flips.Broken).
	Flips  FlipsDoc `json:"flips"`
	Broken int      `json:"broken"`
}

// RegressionSideDoc is a suite's pooled counts under one variant.
type RegressionSideDoc struct {
	Fails   int     `json:"fails"`
	N       int     `json:"n"`
	Rate    float64 `json:"rate"`
	Errors  int     `json:"errors"`
	Pending int     `json:"pending"`
}

func regressionDocs(rr *evidence.RuleResult) []RegressionDoc {
	out := make([]RegressionDoc, 0, len(rr.Regression))
	for _, r := range rr.Regression {
		side := func(s evidence.ArmSide) RegressionSideDoc {
			return RegressionSideDoc{Fails: s.Fails, N: s.N, Rate: s.Rate, Errors: s.Errors, Pending: s.Pending}
		}
		d := RegressionDoc{Suite: r.Suite.Name, PredicateVersion: r.PredicateVersion, Cases: len(r.Cases),
			Baseline: side(r.All.Baseline), Variant: side(r.All.Deleted),
			Diff:  DiffDoc{Est: r.All.Diff, Lo: r.All.DiffCI.Lo, Hi: r.All.DiffCI.Hi},
			Flips: flipsDoc(r.Flips), Broken: r.Broken()}
		d.Diff.PairedLo, d.Diff.PairedHi, d.Diff.PairedNote = pairedBounds(r.All.Paired)
		out = append(out, d)
	}
	return out
}

package report

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// The model comparison in every report: the audit's first model (A) beside
// each other model (B) on the same cases under the same prompt variant,
// case by case, with the per-kind difference pooled (Newcombe) and paired
// by case. A failure means what it means for the kind (a violation, or a
// refusal on controls), so kinds are never pooled together.

// ComparisonDoc is one comparison in the JSON report.
type ComparisonDoc struct {
	Line    int    `json:"line"`
	Variant string `json:"variant"` // "baseline" or "-L<line>"
	ModelA  string `json:"model_a"`
	ModelB  string `json:"model_b"`
	// Kinds holds A minus B per kind with at least one graded answer.
	Kinds map[string]ModelDiffDoc `json:"kinds"`
	Cases []CaseCompareDoc        `json:"cases"`
}

// ModelDiffDoc is A's failure rate minus B's on one kind's cases: Diff with
// Newcombe's interval on pooled counts (null until both have answers), and
// Paired, the case-paired t interval (null with fewer than two cases
// answered by both, and when every case's difference is the same: it would
// have zero width, and PairedNote says so).
type ModelDiffDoc struct {
	A          CountDoc   `json:"a"`
	B          CountDoc   `json:"b"`
	Diff       *float64   `json:"diff"`
	CI         *BoundsDoc `json:"ci"`
	Paired     *PairedDoc `json:"paired"`
	PairedNote string     `json:"paired_note,omitempty"`
}

// PairedDoc is a difference paired by case with its 95% interval.
type PairedDoc struct {
	Est   float64 `json:"est"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	Cases int     `json:"cases"`
}

// CaseCompareDoc is one case answered by both models.
type CaseCompareDoc struct {
	Case string   `json:"case"`
	Kind string   `json:"kind"`
	A    CountDoc `json:"a"`
	B    CountDoc `json:"b"`
}

// CaseDoc is one case of a rule under both variants: the per-case rows
// behind the arms.
type CaseDoc struct {
	Case     string       `json:"case"`
	Kind     string       `json:"kind"`
	Baseline CaseCountDoc `json:"baseline"`
	Deleted  CaseCountDoc `json:"deleted"`
}

// CaseCountDoc is one case under one variant: failures out of graded
// answers, their rate (0 when nothing is graded), and the answers not in
// them (errored, ungradable, not yet made or graded).
type CaseCountDoc struct {
	Fail        int     `json:"fail"`
	N           int     `json:"n"`
	Rate        float64 `json:"rate"`
	Errors      int     `json:"errors"`
	Unparseable int     `json:"unparseable"`
	Pending     int     `json:"pending"`
	// Wilson is the 95% Wilson interval of Rate; null when nothing is
	// graded.
	Wilson *BoundsDoc `json:"wilson"`
}

func caseDocs(rr *evidence.RuleResult) []CaseDoc {
	out := []CaseDoc{}
	for _, cr := range rr.Cases {
		out = append(out, CaseDoc{Case: cr.Case.ID, Kind: string(cr.Case.Kind),
			Baseline: caseCountDoc(cr.Baseline), Deleted: caseCountDoc(cr.Deleted)})
	}
	return out
}

func caseCountDoc(c evidence.Count) CaseCountDoc {
	d := CaseCountDoc{Fail: c.Fails, N: c.N, Rate: c.Rate(), Errors: c.Errors, Unparseable: c.Unparseable, Pending: c.Pending}
	if w, err := stats.Wilson(c.Fails, c.N); err == nil && c.N > 0 {
		d.Wilson = &BoundsDoc{Lo: w.Lo, Hi: w.Hi}
	}
	return d
}

func comparisonDocs(res *evidence.Results) []ComparisonDoc {
	out := []ComparisonDoc{}
	for _, c := range res.Comparisons {
		a, b := comparedNames(res, c)
		d := ComparisonDoc{Line: res.Plan.Audit.Rules[c.Rule].Line, Variant: comparedVariant(res, c), ModelA: a, ModelB: b,
			Kinds: map[string]ModelDiffDoc{}, Cases: []CaseCompareDoc{}}
		for _, k := range model.Kinds {
			md := c.Kinds[k]
			if md == nil || md.AN+md.BN == 0 {
				continue
			}
			dd := ModelDiffDoc{A: CountDoc{Fail: md.AFails, N: md.AN}, B: CountDoc{Fail: md.BFails, N: md.BN}}
			if md.AN > 0 && md.BN > 0 {
				diff := md.Diff
				dd.Diff, dd.CI = &diff, &BoundsDoc{Lo: md.CI.Lo, Hi: md.CI.Hi}
			}
			if p := md.Paired; p != nil {
				if dd.PairedNote = PairedNote(p); dd.PairedNote == "" {
					dd.Paired = &PairedDoc{Est: p.D, Lo: p.Lo, Hi: p.Hi, Cases: p.Cases}
				}
			}
			d.Kinds[string(k)] = dd
		}
		for _, cc := range c.Cases {
			d.Cases = append(d.Cases, CaseCompareDoc{Case: cc.Case.ID, Kind: string(cc.Case.Kind),
				A: CountDoc{Fail: cc.A.Fails, N: cc.A.N}, B: CountDoc{Fail: cc.B.Fails, N: cc.B.N}})
		}
		out = append(out, d)
	}
	return out
}

func comparedNames(res *evidence.Results, c evidence.Comparison) (a, b string) {
	m := res.Plan.Audit.File.Models
	return m[c.ModelA].Name, m[c.ModelB].Name
}

func comparedVariant(res *evidence.Results, c evidence.Comparison) string {
	if c.Deleted {
		return res.Plan.Audit.Rules[c.Rule].Variant()
	}
	return audit.Baseline
}

// comparisonHeading names a comparison for people.
func comparisonHeading(res *evidence.Results, c evidence.Comparison) string {
	a, b := comparedNames(res, c)
	what := "the full prompt (baseline)"
	if c.Deleted {
		r := res.Plan.Audit.Rules[c.Rule]
		what = fmt.Sprintf("%s (%s)", VariantPrompt(r), r.Variant())
	}
	return fmt.Sprintf("Line %d, %s: A %s vs B %s", res.Plan.Audit.Rules[c.Rule].Line, what, model.Sanitize(a), model.Sanitize(b))
}

// kindDiffText is one kind's A minus B in words.
func kindDiffText(k model.Kind, d *evidence.ModelDiff) string {
	s := fmt.Sprintf("%s: A %d/%d vs B %d/%d", k, d.AFails, d.AN, d.BFails, d.BN)
	if d.AN > 0 && d.BN > 0 {
		s += fmt.Sprintf("; A - B %+.3f [%+.3f, %+.3f]", d.Diff, d.CI.Lo, d.CI.Hi)
	}
	if p := d.Paired; p != nil {
		s += "; " + PairedText(p)
	}
	return s
}

// ComparisonText is the text report's model comparison (the app's report
// screen shows it too); empty with one model.
func ComparisonText(res *evidence.Results) string {
	if len(res.Comparisons) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Model comparison (the same cases, variant and samples; a failure is a violation, or a refusal on controls):\n")
	for _, c := range res.Comparisons {
		fmt.Fprintf(&b, "\n%s\n", comparisonHeading(res, c))
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  case\tkind\tA fail/n\trate\tB fail/n\trate\tA - B")
		for _, cc := range c.Cases {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", model.Sanitize(cc.Case.ID), cc.Case.Kind,
				strings.Join([]string{caseRate(cc.A), caseRate(cc.B)}, "\t"), caseDiff(cc))
		}
		tw.Flush()
		for _, k := range model.Kinds {
			if d := c.Kinds[k]; d != nil && d.AN+d.BN > 0 {
				fmt.Fprintf(&b, "  %s\n", kindDiffText(k, d))
			}
		}
	}
	return b.String()
}

// comparisonMarkdown is the Markdown report's model comparison; empty with
// one model.
func comparisonMarkdown(res *evidence.Results) string {
	if len(res.Comparisons) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Model comparison\n\nThe same cases, variant and samples answered by two models; a failure is a violation, or a refusal on controls.\n")
	for _, c := range res.Comparisons {
		fmt.Fprintf(&b, "\n### %s\n\n", mdEscape(comparisonHeading(res, c)))
		b.WriteString("| case | kind | A fail/n | A rate | B fail/n | B rate | A - B |\n|---|---|---:|---:|---:|---:|---:|\n")
		for _, cc := range c.Cases {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdEscape(cc.Case.ID), cc.Case.Kind,
				strings.ReplaceAll(caseRate(cc.A)+"\t"+caseRate(cc.B), "\t", " | "), caseDiff(cc))
		}
		b.WriteString("\n")
		for _, k := range model.Kinds {
			if d := c.Kinds[k]; d != nil && d.AN+d.BN > 0 {
				fmt.Fprintf(&b, "- %s\n", kindDiffText(k, d))
			}
		}
	}
	b.WriteString("\n")
	return b.String()
}

// caseRate is "3/30\t0.100" (two columns), or "0/0\t-" with nothing graded.
func caseRate(c evidence.Count) string {
	if c.N == 0 {
		return "0/0\t-"
	}
	return fmt.Sprintf("%d/%d\t%.3f", c.Fails, c.N, c.Rate())
}

func caseDiff(cc evidence.CaseComparison) string {
	if cc.A.N == 0 || cc.B.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.3f", cc.A.Rate()-cc.B.Rate())
}

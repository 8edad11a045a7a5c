package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// WriteMarkdown writes a report for a pull-request description: the
// verdicts with their reasons, the sweep summary, then per line the
// evidence (the arm table with recall-corrected rates, or the answer
// lengths of a rule with no input class), the predicate's recall, the
// judges' agreement and the per-case counts, and what the run cost.
func WriteMarkdown(w io.Writer, res *evidence.Results, spend audit.Spend, simulated bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(res.Plan.Audit.File.Name))
	if simulated {
		fmt.Fprintf(&b, "> **%s**\n\n", SimulatedBanner)
	}
	b.WriteString(shipMarkdown(res))
	for _, note := range res.LabelNotes() {
		fmt.Fprintf(&b, "> **%s**\n\n", mdEscape(note))
	}
	multiModel := len(res.Plan.Audit.File.Models) > 1
	b.WriteString("| variant | tag | tokens |")
	if multiModel {
		b.WriteString(" model |")
	}
	b.WriteString(" verdict | why |\n|---|---|---:|")
	if multiModel {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	for _, rr := range res.Rules {
		fmt.Fprintf(&b, "| %s | %s | %d |", mdEscape(truncate(rr.Rule.Title(), 60)), mdEscape(rr.Rule.Config.Tag), rr.Rule.Tokens)
		if multiModel {
			fmt.Fprintf(&b, " %s |", mdEscape(rr.ModelName))
		}
		fmt.Fprintf(&b, " **%s** | %s |\n", mdEscape(VerdictLabel(rr)), mdEscape(rr.Verdict.Reason))
	}
	fmt.Fprintf(&b, "\n**Sweep:** %s. Tolerated rise (delta): %s points. A DELETE states the chance that a type of request making up %s%% of provoking traffic (affected_share) is in none of its cases.\n\n",
		mdEscape(sweepSentence(res.Sweep.SweepGroup)), strconv.FormatFloat(100*res.Delta, 'f', -1, 64),
		strconv.FormatFloat(100*AffectedShare(res), 'f', -1, 64))
	if c := ChangesSentence(res.Sweep.Changes); c != "" {
		fmt.Fprintf(&b, "**Rewordings and additions:** %s.\n\n", mdEscape(c))
	}
	if len(res.Sweep.ByTag) > 0 {
		b.WriteString("| tag | lines | DELETE | KEEP | INCONCLUSIVE | CANARY | tokens removed | tokens claimed | claimed / removed |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, g := range append(append([]evidence.SweepGroup{}, res.Sweep.ByTag...), res.Sweep.SweepGroup) {
			tag, ratio := mdEscape(g.Tag), "-"
			if g.Tag == "" {
				tag = "**all**"
			}
			if r := g.Ratio(); r > 0 {
				ratio = fmt.Sprintf("%.1fx", r)
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %s |\n", tag, g.Lines, g.Delete, g.Keep,
				g.Inconclusive, g.Canary, g.TokensRemoved, g.TokensClaimed, ratio)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "_%s_\n\n", IntervalLegend)
	for _, rr := range res.Rules {
		writeMarkdownRule(&b, rr, multiModel)
	}
	b.WriteString(regressionMarkdown(res))
	b.WriteString(comparisonMarkdown(res))
	fmt.Fprintf(&b, "**%s.**\n", strings.TrimPrefix(spendLine(spend, simulated), "Spend: "))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownRule writes one line's section.
func writeMarkdownRule(b *strings.Builder, rr *evidence.RuleResult, multiModel bool) {
	fmt.Fprintf(b, "## %s\n\n", mdEscape(rr.Rule.Label()))
	fmt.Fprintf(b, "**%s**: %s\n\n", rr.Verdict.Decision, mdEscape(rr.Verdict.Reason))
	if line := FlipsLine(rr); line != "" {
		fmt.Fprintf(b, "- %s\n", mdEscape(line))
	}
	if multiModel {
		fmt.Fprintf(b, "- model: `%s`\n", mdEscape(rr.ModelName))
	}
	fmt.Fprintf(b, "- %d tokens%s; %s\n", rr.Rule.Tokens, mdEscape(tagNote(rr.Rule)), mdEscape(filesLine(rr)))
	if reads := LineReads(rr.Rule); reads != "" {
		fmt.Fprintf(b, "- %s\n", mdEscape(reads))
	}
	fmt.Fprintf(b, "- %s\n", mdEscape(VariantsLine(rr.Rule)))
	if rr.Verdict.Bound != "" {
		fmt.Fprintf(b, "- bound: %s\n", mdEscape(rr.Verdict.Bound))
	}
	if line := ControlBaselineLine(rr); line != "" {
		fmt.Fprintf(b, "- %s\n", mdEscape(line))
	}
	for _, f := range Flags(rr.Verdict) {
		fmt.Fprintf(b, "- flag: %s\n", f)
	}
	if f := RegressionFlag(rr); f != "" {
		fmt.Fprintf(b, "- **flag:** %s\n", mdEscape(f))
	}
	if w := rr.PredicateWarning(); w != "" {
		fmt.Fprintf(b, "- **warning:** %s\n", mdEscape(w))
	}
	for _, n := range rr.Verdict.Notes {
		fmt.Fprintf(b, "- note: %s\n", mdEscape(n))
	}
	if st := rr.Staleness; st != nil {
		fmt.Fprintf(b, "- **warning:** %s\n", mdEscape(st.Message()))
	}
	if rr.Truncated > 0 {
		fmt.Fprintf(b, "- **truncated:** %d answers; %s\n", rr.Truncated, TruncatedAdvice)
	}
	if line := ControlsLine(rr); line != "" {
		fmt.Fprintf(b, "- **control sequences:** %s\n", mdEscape(line))
	}
	if label := neededLabel(rr.Verdict); label != "" {
		fmt.Fprintf(b, "- %s: %s\n", label, mdEscape(rr.Verdict.Needed))
	}
	b.WriteString("\n")
	graded := rr.Rule.HasPredicate()
	if graded {
		fmt.Fprintf(b, "| kind | cases | baseline | rate [95%% CI] | %s | rate [95%% CI] | %s [95%% CI] | corrected baseline | corrected %s |\n",
			mdEscape(rr.Rule.Variant()), mdEscape(DiffHead(rr.Rule)), mdEscape(rr.Rule.Variant()))
		b.WriteString("|---|---:|---:|---|---:|---|---|---|---|\n")
		for _, a := range ArmsInOrder(rr) {
			if a.Cases == 0 && rr.Lengths != nil {
				continue
			}
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", a.Name, a.Cases,
				CountCell(a.Baseline), RateCell(a.Baseline), CountCell(a.Deleted), RateCell(a.Deleted), DiffCell(a),
				CorrectedCell(a.Baseline.Corrected), CorrectedCell(a.Deleted.Corrected))
		}
		b.WriteString("\n")
	}
	if rr.Lengths != nil {
		writeMarkdownLengths(b, rr)
	}
	if graded {
		fmt.Fprintf(b, "Predicate recall: %s.\n\n", mdEscape(RecallLine(rr.Quality)))
		gl := graderLines(rr, "")
		if line := AdjudicationsLine(rr); line != "" {
			gl += line + "\n"
		}
		for _, l := range LabellersLines(rr) {
			gl += l + "\n"
		}
		if gl != "" {
			for _, line := range strings.Split(strings.TrimRight(gl, "\n"), "\n") {
				fmt.Fprintf(b, "- %s\n", mdEscape(line))
			}
			b.WriteString("\n")
		}
		if lines := append(qualityLines(rr.Quality), correctedLines(rr)...); len(lines) > 0 {
			for _, l := range lines {
				indent := ""
				if strings.HasPrefix(l, "  ") {
					indent = "  "
				}
				fmt.Fprintf(b, "%s- %s\n", indent, mdEscape(strings.TrimSpace(l)))
			}
			b.WriteString("\n")
		}
	}
	if !graded {
		// No predicate graded these answers: per case, what moved is length.
		fmt.Fprintf(b, "<details><summary>Per case</summary>\n\n| case | kind | added | baseline mean tokens | %s mean tokens | message |\n|---|---|---|---:|---:|---|\n", mdEscape(rr.Rule.Variant()))
		for i, cr := range rr.Cases {
			cl := rr.Lengths.PerCase[i]
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(cr.Case.ID), cr.Case.Kind, mdEscape(cr.Case.Added),
				meanCell(cl.BaselineMean, cl.BaselineN), meanCell(cl.DeletedMean, cl.DeletedN), mdEscape(truncate(cr.Case.Summary(), 80)))
		}
		b.WriteString("\n</details>\n\n")
		return
	}
	fmt.Fprintf(b, "<details><summary>Per case</summary>\n\n| case | kind | added | baseline | %s | message |\n|---|---|---|---:|---:|---|\n", mdEscape(rr.Rule.Variant()))
	for _, cr := range rr.Cases {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", mdEscape(cr.Case.ID), cr.Case.Kind, mdEscape(cr.Case.Added),
			caseCount(cr.Baseline), caseCount(cr.Deleted), mdEscape(truncate(cr.Case.Summary(), 80)))
	}
	b.WriteString("\n</details>\n\n")
}

// writeMarkdownLengths writes the answer lengths of a rule with no input
// class: a summary table and the histogram as a text block.
func writeMarkdownLengths(b *strings.Builder, rr *evidence.RuleResult) {
	l := rr.Lengths
	if l.Baseline.N == 0 || l.Deleted.N == 0 {
		b.WriteString("Answer length: not measured yet.\n\n")
		return
	}
	b.WriteString("| answer length (completion tokens) | n | median | mean | p10 | p90 | cut off at max_tokens |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, v := range []struct {
		name string
		s    stats.LengthSummary
		cut  int
	}{{"baseline", l.Baseline, l.TruncatedBaseline}, {rr.Rule.Variant(), l.Deleted, l.TruncatedDeleted}} {
		fmt.Fprintf(b, "| %s | %d | %.0f | %.1f | %.0f | %.0f | %d |\n", v.name, v.s.N, v.s.Median, v.s.Mean, v.s.P10, v.s.P90, v.cut)
	}
	b.WriteString("\n")
	if sh := l.Shift; sh != nil {
		fmt.Fprintf(b, "Shift: %s.", model.ShiftWords(sh))
	}
	if t := l.Test; t != nil {
		fmt.Fprintf(b, " Mann-Whitney U %.1f, z %.2f, p %s (answers taken as independent).", t.U, t.Z, PValue(t.P))
	}
	b.WriteString("\n\n")
	if h := histogramLines(l, rr.Rule.Variant(), 24); len(h) > 0 {
		b.WriteString("```text\n")
		for _, line := range h {
			b.WriteString(strings.TrimPrefix(line, "  ") + "\n")
		}
		b.WriteString("```\n\n")
	}
}

// meanCell is a mean length over n answers, or "-" with none.
func meanCell(mean float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f (%d)", mean, n)
}

// CorrectedCell is a recall-corrected rate with its 95% interval, or "-".
func CorrectedCell(c *labels.CorrectedRate) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", c.Est, c.CI.Lo, c.CI.Hi)
}

func caseCount(c evidence.Count) string {
	s := fmt.Sprintf("%d/%d", c.Fails, c.N)
	if c.Errors > 0 {
		s += fmt.Sprintf(" (%d err)", c.Errors)
	}
	if c.Truncated > 0 {
		s += fmt.Sprintf(" (%d truncated)", c.Truncated)
	}
	return s
}

// mdEscape makes untrusted or user text safe inside a Markdown table cell.
func mdEscape(s string) string {
	return mdInert.Replace(model.Sanitize(s))
}

// mdInert makes untrusted text (case messages, rule text, answers) inert in
// a review's Markdown: no table break, no HTML, no link or image (brackets
// and the bang escaped, bare URLs broken so no autolink), no bold, strike
// or code span (underscores stay: GFM ignores them inside words, and the
// tool's own names use them), and no @mention that would notify someone.
var mdInert = strings.NewReplacer(
	"|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "`", "'",
	`\`, `\\`, "[", `\[`, "]", `\]`, "!", `\!`, "*", `\*`, "~", `\~`,
	"@", "&#64;", "://", "&#58;//", "#", `\#`,
)

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

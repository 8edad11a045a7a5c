package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// WriteMarkdown writes a report for a code review: a summary table of
// verdicts, then per line the arm table, the verdict's reason, the
// predicate's recall and the per-case counts.
func WriteMarkdown(w io.Writer, res *audit.Results, spend audit.Spend, simulated bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", mdEscape(res.Plan.Audit.File.Name))
	if simulated {
		fmt.Fprintf(&b, "> **%s**\n\n", SimulatedBanner)
	}
	b.WriteString("| line | tokens | model | verdict | reason |\n|---:|---:|---|---|---|\n")
	for _, rr := range res.Rules {
		fmt.Fprintf(&b, "| %d | %d | %s | **%s** | %s |\n", rr.Rule.Line, rr.Rule.Tokens, mdEscape(rr.ModelName),
			rr.Verdict.Decision, mdEscape(rr.Verdict.Reason))
	}
	fmt.Fprintf(&b, "\nLines with a DELETE verdict remove **%d** of the %d tokens audited. Tolerated rise (delta): %.3f.\n\n",
		res.TokensRemoved, res.TokensClaimed, res.Delta)
	for _, rr := range res.Rules {
		fmt.Fprintf(&b, "## Line %d: %s\n\n", rr.Rule.Line, mdEscape(rr.Rule.Text))
		fmt.Fprintf(&b, "Model `%s`, %d tokens, cases `%s`, predicate `%s` (version %s).\n\n",
			mdEscape(rr.ModelName), rr.Rule.Tokens, mdEscape(rr.Rule.Config.Cases), mdEscape(rr.Rule.Config.Predicate), rr.Rule.Predicate.Version)
		fmt.Fprintf(&b, "| kind | cases | baseline | rate [95%% CI] | %s | rate [95%% CI] | deleted - baseline [95%% CI] |\n", rr.Rule.Variant())
		b.WriteString("|---|---:|---:|---|---:|---|---|\n")
		for _, a := range armsInOrder(rr) {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", a.Name, a.Cases,
				countCell(a.Baseline), rateCell(a.Baseline), countCell(a.Deleted), rateCell(a.Deleted), diffCell(a))
		}
		fmt.Fprintf(&b, "\n**%s**: %s\n\n", rr.Verdict.Decision, mdEscape(rr.Verdict.Reason))
		for _, f := range Flags(rr.Verdict) {
			fmt.Fprintf(&b, "- flag: %s\n", f)
		}
		for _, n := range rr.Verdict.Notes {
			fmt.Fprintf(&b, "- note: %s\n", mdEscape(n))
		}
		if rr.Verdict.Needed != "" && rr.Verdict.Decision == model.DecisionInconclusive {
			fmt.Fprintf(&b, "- to settle it: %s\n", mdEscape(rr.Verdict.Needed))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "Predicate recall: %s.\n\n", mdEscape(recallLine(rr.Quality)))
		if gl := graderLines(rr, "- "); gl != "" {
			b.WriteString(mdEscape(gl) + "\n\n")
		}
		if lines := append(qualityLines(rr.Quality), correctedLines(rr)...); len(lines) > 0 {
			for _, l := range lines {
				indent := ""
				if strings.HasPrefix(l, "  ") {
					indent = "  "
				}
				fmt.Fprintf(&b, "%s- %s\n", indent, mdEscape(strings.TrimSpace(l)))
			}
			b.WriteString("\n")
		}
		b.WriteString("<details><summary>Per case</summary>\n\n| case | kind | baseline | deleted | message |\n|---|---|---:|---:|---|\n")
		for _, cr := range rr.Cases {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", mdEscape(cr.Case.ID), cr.Case.Kind,
				caseCount(cr.Baseline), caseCount(cr.Deleted), mdEscape(truncate(cr.Case.Msg, 80)))
		}
		b.WriteString("\n</details>\n\n")
	}
	fmt.Fprintf(&b, "Spend: %d answers, %d prompt tokens (%d cached), %d completion tokens, $%.2f%s.\n",
		spend.Calls, spend.PromptTokens, spend.CachedTokens, spend.CompletionTokens, spend.USD, simulatedNote(simulated))
	_, err := io.WriteString(w, b.String())
	return err
}

func caseCount(c audit.Count) string {
	s := fmt.Sprintf("%d/%d", c.Fails, c.N)
	if c.Errors > 0 {
		s += fmt.Sprintf(" (%d err)", c.Errors)
	}
	return s
}

// mdEscape makes untrusted or user text safe inside a Markdown table cell.
func mdEscape(s string) string {
	s = model.Sanitize(s)
	r := strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;", "`", "'")
	return r.Replace(s)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// SimulatedBanner marks every output made from the simulated model.
const SimulatedBanner = "SIMULATED: answers come from auditor's built-in simulated model, not a real model."

// WriteText writes the table a headless run prints: per rule, per kind and
// variant the failures, rate and 95% interval, deleted minus baseline, the
// verdict and the predicate's measured recall.
func WriteText(w io.Writer, res *audit.Results, spend audit.Spend, simulated bool) error {
	var b strings.Builder
	if simulated {
		fmt.Fprintf(&b, "%s\n\n", SimulatedBanner)
	}
	for _, rr := range res.Rules {
		fmt.Fprintf(&b, "Line %d (%d tokens): %s\n", rr.Rule.Line, rr.Rule.Tokens, model.Sanitize(rr.Rule.Text))
		if len(res.Plan.Audit.File.Models) > 1 {
			fmt.Fprintf(&b, "model %s\n", rr.ModelName)
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  kind\tcases\tbaseline fail/n\trate [95%% CI]\t%s fail/n\trate [95%% CI]\tdeleted - baseline [95%% CI]\n", rr.Rule.Variant())
		for _, a := range armsInOrder(rr) {
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Cases,
				countCell(a.Baseline), rateCell(a.Baseline), countCell(a.Deleted), rateCell(a.Deleted), diffCell(a))
		}
		tw.Flush()
		fmt.Fprintf(&b, "  verdict: %s: %s\n", rr.Verdict.Decision, rr.Verdict.Reason)
		for _, f := range Flags(rr.Verdict) {
			fmt.Fprintf(&b, "  flag: %s\n", f)
		}
		for _, n := range rr.Verdict.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
		if rr.Verdict.Needed != "" && rr.Verdict.Decision == model.DecisionInconclusive {
			fmt.Fprintf(&b, "  to settle it: %s\n", rr.Verdict.Needed)
		}
		fmt.Fprintf(&b, "  predicate recall: %s\n", recallLine(rr.Quality))
		b.WriteString(graderLines(rr, "  "))
		for _, l := range qualityLines(rr.Quality) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		for _, l := range correctedLines(rr) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		if rr.Errors > 0 || rr.Pending > 0 {
			fmt.Fprintf(&b, "  not in the numbers: %d errored, %d pending\n", rr.Errors, rr.Pending)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Sweep: lines with a DELETE verdict remove %d of the %d tokens audited.\n", res.TokensRemoved, res.TokensClaimed)
	fmt.Fprintf(&b, "Spend: %d stored answers, %d prompt tokens (%d cached), %d completion tokens, $%.2f%s\n",
		spend.Calls, spend.PromptTokens, spend.CachedTokens, spend.CompletionTokens, spend.USD, simulatedNote(simulated))
	_, err := io.WriteString(w, b.String())
	return err
}

func simulatedNote(sim bool) string {
	if sim {
		return " (simulated prices)"
	}
	return ""
}

func armsInOrder(rr *audit.RuleResult) []*audit.Arm {
	return []*audit.Arm{rr.Arms[model.Provoke], rr.Arms[model.Pressure], rr.Provoking, rr.Arms[model.Control]}
}

func countCell(s audit.ArmSide) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", s.Fails, s.N)
}

func rateCell(s audit.ArmSide) string {
	if s.N == 0 {
		return "-"
	}
	lo, hi, _ := Interval(s)
	return fmt.Sprintf("%.3f [%.3f, %.3f]", s.Rate, lo, hi)
}

func diffCell(a *audit.Arm) string {
	if a.Baseline.N == 0 || a.Deleted.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.3f [%+.3f, %+.3f]", a.Diff, a.DiffCI.Lo, a.DiffCI.Hi)
}

func recallLine(q audit.GraderQuality) string {
	if q.Recall == nil || q.Recall.Total == 0 {
		if q.Labels == 0 {
			return "not measured: no labelled answers (label a sample, or import labels)"
		}
		return fmt.Sprintf("not measured: %d labelled answers, none a violation", q.Labels)
	}
	if !q.Recall.Measured() {
		return q.Recall.String()
	}
	if q.Estimator == audit.EstimatorIPW {
		s := fmt.Sprintf("%s; precision %s; weighted by stratum of label set %s", q.Recall, q.Precision, model.Sanitize(q.Set))
		if q.Unused > 0 {
			s += fmt.Sprintf(" (%d labels outside it not used)", q.Unused)
		}
		return s
	}
	return fmt.Sprintf("%s over %d labelled violations; precision %s", q.Recall, q.Recall.Total, q.Precision)
}

// qualityLines gives the per-kind recall and the misses behind recallLine,
// when anything is labelled.
func qualityLines(q audit.GraderQuality) []string {
	if q.Labels == 0 {
		return nil
	}
	var kinds []string
	for _, k := range model.Kinds {
		if m := q.RecallKind[k]; m != nil && m.Total > 0 {
			kinds = append(kinds, fmt.Sprintf("%s %s", k, m))
		}
	}
	var out []string
	if len(kinds) > 0 {
		out = append(out, "recall by kind: "+strings.Join(kinds, "; "))
	}
	if n := len(q.Misses); n > 0 {
		out = append(out, fmt.Sprintf("misses: %d labelled failures the predicate passed (listed in report --format json)", n))
	}
	for _, w := range q.Warnings {
		out = append(out, "warning: "+w)
	}
	return out
}

// correctedLines gives each arm's rate corrected for the predicate's recall
// of its kind, beside which the raw rates stand in the table.
func correctedLines(rr *audit.RuleResult) []string {
	var out []string
	for _, a := range armsInOrder(rr) {
		if a.Baseline.Corrected == nil && a.Deleted.Corrected == nil {
			continue
		}
		out = append(out, fmt.Sprintf("  %-9s baseline %s  %s %s", a.Name, correctedCell(a.Baseline.Corrected),
			rr.Rule.Variant(), correctedCell(a.Deleted.Corrected)))
	}
	if len(out) == 0 {
		return nil
	}
	return append([]string{"corrected for recall (Rogan-Gladen; each kind by its own recall, provoking pooled by responses):"}, out...)
}

func correctedCell(c *audit.CorrectedRate) string {
	if c == nil {
		return "-"
	}
	s := fmt.Sprintf("%.3f [%.3f, %.3f]", c.Est, c.CI.Lo, c.CI.Hi)
	if len(c.Kinds) == 0 {
		sp := fmt.Sprintf("%.2f", c.Specificity)
		if c.SpecificityAssumed {
			sp = "1 assumed"
		}
		s += fmt.Sprintf(" (recall %.2f, specificity %s)", c.Recall, sp)
	}
	return s
}

// graderLines describes the judges: their recall against the labels, how
// every pair of graders agrees, the review queue's length, and which grader
// the labels support.
func graderLines(rr *audit.RuleResult, indent string) string {
	if len(rr.Judges) == 0 {
		return ""
	}
	var b strings.Builder
	for _, q := range rr.Judges {
		if q.Labels == 0 {
			continue // the predicate's line already says nothing is labelled
		}
		fmt.Fprintf(&b, "%s%s recall: %s\n", indent, q.Grader, recallLine(q))
	}
	for _, pa := range rr.Agreement {
		k := "kappa undefined"
		if pa.KappaDefined {
			k = fmt.Sprintf("kappa %.2f (SE %.2f)", pa.Kappa, pa.KappaSE)
		}
		fmt.Fprintf(&b, "%s%s vs %s: agree on %.0f%% of %d, %s, %d disagreements\n", indent, pa.A.Name, pa.B.Name,
			100*pa.Agreement, pa.N, k, pa.Disagreements())
	}
	if rr.Disagreements > 0 {
		fmt.Fprintf(&b, "%sreview queue: %d answers where graders disagree or one could not grade\n", indent, rr.Disagreements)
	}
	if _, line := rr.BestSupported(); line != "" {
		fmt.Fprintf(&b, "%slabels support: %s\n", indent, line)
	}
	return b.String()
}

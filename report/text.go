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
	s := fmt.Sprintf("%s over %d labelled violations; precision %s", q.Recall, q.Recall.Total, q.Precision)
	for _, k := range []model.Kind{model.Provoke, model.Pressure} {
		if m := q.RecallKind[k]; m != nil && m.Total > 0 && m.Total < 10 {
			s += fmt.Sprintf("; warning: only %d labelled %s violations", m.Total, k)
		}
	}
	return s
}

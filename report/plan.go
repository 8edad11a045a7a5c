package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
)

// WritePlan writes a plan as a person reads it before saying yes: the lines
// under audit with their cases, the calls to make, tokens, dollars and
// minutes. budget is the run's budget in dollars (0: none).
func WritePlan(w io.Writer, a *audit.Audit, e audit.Estimate, budget float64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (%d lines)\n", model.Sanitize(a.File.Name), model.Sanitize(a.PromptPath), a.Prompt.Len())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  line\ttokens\tprovoke\tpressure\tcontrol\tvariant")
	for _, r := range e.Rules {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%d\t%s\n", r.Line, r.Tokens, r.Cases[model.Provoke], r.Cases[model.Pressure], r.Cases[model.Control], model.Sanitize(r.Label))
	}
	tw.Flush()
	writeRubrics(&b, e.Rules)
	models := make([]string, len(a.File.Models))
	for i, m := range a.File.Models {
		models[i] = model.Sanitize(m.Name)
	}
	fmt.Fprintf(&b, "variants: %s; %d samples; model %s\n", VariantsSummary(a.Rules), e.Samples, strings.Join(models, ", "))
	fmt.Fprintf(&b, "calls: %d to make, %d already stored (free)", e.Calls, e.CachedCalls)
	if e.UnneededCalls > 0 {
		fmt.Fprintf(&b, ", %d not needed (lines settled at a look)", e.UnneededCalls)
	}
	if e.JudgeCalls > 0 {
		fmt.Fprintf(&b, "; of those, %d answers and at most %d judge calls (answers with identical text share one", e.AnswerCalls, e.JudgeCalls)
		if e.JudgeCallsExpected > 0 && e.JudgeCallsExpected < e.JudgeCalls {
			fmt.Fprintf(&b, "; about %d expected", e.JudgeCallsExpected)
		}
		b.WriteString(")")
	}
	b.WriteString("\n")
	if a := e.AdaptiveAnswers; a != nil && a.AtMost > 0 {
		fmt.Fprintf(&b, "  %s\n", a.Summary())
	}
	for _, r := range e.Regression {
		fmt.Fprintf(&b, "regression suite %s: %d calls", model.Sanitize(r.Name), r.Calls)
		if r.CachedCalls > 0 {
			fmt.Fprintf(&b, " (%d already stored)", r.CachedCalls)
		}
		fmt.Fprintf(&b, ": %d %s on baseline and %d %s; graded apart, verdicts unchanged\n",
			r.Cases, plural(r.Cases, "case", "cases"), r.Variants, plural(r.Variants, "variant", "variants"))
	}
	if sh := e.Ship; sh != nil {
		fmt.Fprintf(&b, "joint test %d, the prompt without lines %s: %d calls", sh.Test, model.LineList(sh.Lines), sh.Calls)
		if sh.CachedCalls > 0 {
			fmt.Fprintf(&b, " (%d already stored)", sh.CachedCalls)
		}
		fmt.Fprintf(&b, ", $%.2f expected, at most $%.2f; about %d blind labels of its answers a class that never breaks, %d for its %d %s (auditor ship decides it)\n",
			sh.USD, sh.USDAtMost, sh.LabelsPerClass, sh.Labels, sh.Classes, plural(sh.Classes, "class", "classes"))
	}
	fmt.Fprintf(&b, "tokens: %d input, %d output expected, at most %d (every answer at its max_tokens)\n",
		e.PromptTokens, e.CompletionTokens, e.CompletionTokensAtMost)
	b.WriteString("cost: " + PlanCost(e))
	if budget > 0 {
		fmt.Fprintf(&b, "; budget $%.2f", budget)
	}
	fmt.Fprintf(&b, "\ntime: %s expected, at most %s, at concurrency %d\n", minutesText(e.Minutes), minutesText(e.MinutesAtMost), e.Concurrency)
	fmt.Fprintf(&b, "  output tokens from %s\n", e.CompletionBasis)
	fmt.Fprintf(&b, "  time from %s\n", e.LatencyBasis)
	if e.JudgeCallsBasis != "" {
		fmt.Fprintf(&b, "  judge calls from %s\n", e.JudgeCallsBasis)
	}
	if e.CachingBasis != "" {
		fmt.Fprintf(&b, "  prompt caching %s\n", e.CachingBasis)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRubrics says which rubric the judges grade each line's answers
// with: a line's judge_rubric, or each judge's own. Nothing without judges.
func writeRubrics(b *strings.Builder, rules []audit.RuleEstimate) {
	seen := map[int]bool{}
	for _, r := range rules {
		if len(r.Rubrics) == 0 || seen[r.Line] {
			continue
		}
		if len(seen) == 0 {
			b.WriteString("judges grade each line's answers with the rubric:\n")
		}
		seen[r.Line] = true
		var names, each []string
		for _, u := range r.Rubrics {
			if !slices.Contains(names, u.Rubric) {
				names = append(names, u.Rubric)
			}
			each = append(each, model.Sanitize(u.Judge)+" "+model.Sanitize(u.Rubric))
		}
		what := model.Sanitize(names[0])
		if len(names) > 1 {
			what = strings.Join(each, ", ")
		}
		whose := "the judge's own"
		switch {
		case r.Rubrics[0].Rule:
			whose = "its judge_rubric"
		case len(r.Rubrics) > 1:
			whose = "each judge's own"
		}
		fmt.Fprintf(b, "  line %d: %s (%s)\n", r.Line, what, whose)
	}
}

// VariantsSummary names the variants a plan runs beside baseline, by kind:
// "baseline and 4 deletions (-L23, -L15, -L22, -L12), 1 rewording (~L23),
// 1 addition (+L23)".
func VariantsSummary(rules []*audit.Rule) string {
	var order []model.VariantKind
	names := map[model.VariantKind][]string{}
	for _, r := range rules {
		k := r.VariantKind()
		if names[k] == nil {
			order = append(order, k)
		}
		names[k] = append(names[k], r.Variant())
	}
	words := map[model.VariantKind][2]string{model.Deletion: {"deletion", "deletions"},
		model.Rewording: {"rewording", "rewordings"}, model.Addition: {"addition", "additions"}}
	var parts []string
	for _, k := range order {
		n := len(names[k])
		parts = append(parts, fmt.Sprintf("%d %s (%s)", n, plural(n, words[k][0], words[k][1]), strings.Join(names[k], ", ")))
	}
	if len(parts) == 0 {
		return "baseline only"
	}
	return "baseline and " + strings.Join(parts, ", ")
}

// PlanCost is an estimate's dollars as a person reads them: expected (with
// prompt caching where it is priced) and at most, and "price unknown" for
// the models and judges the audit file gives no prices, never $0.00.
func PlanCost(e audit.Estimate) string {
	switch {
	case len(e.Unpriced) > 0 && e.USDAtMost == 0:
		return "price unknown: " + unpricedText(e.Unpriced)
	case len(e.Unpriced) > 0:
		return fmt.Sprintf("price unknown for %s; the priced calls: %s", unpricedText(e.Unpriced), costText(e))
	}
	return costText(e)
}

// costText is an estimate's dollars: expected (with prompt caching where
// it is priced) and at most.
func costText(e audit.Estimate) string {
	if e.USDWithCaching < e.USD {
		return fmt.Sprintf("$%.2f expected ($%.2f with prompt caching), at most $%.2f", e.USD, e.USDWithCaching, e.USDAtMost)
	}
	return fmt.Sprintf("$%.2f expected, at most $%.2f", e.USD, e.USDAtMost)
}

// unpricedText names the endpoints without prices and the keys to set.
func unpricedText(names []string) string {
	return fmt.Sprintf("%s (set price_input_per_mtok and price_output_per_mtok in the audit file)", strings.Join(names, ", "))
}

// WritePlanPower writes, per audited line, the smallest rises the planned
// samples would detect and the warnings about kinds with too few cases.
func WritePlanPower(w io.Writer, e audit.Estimate) error {
	var b strings.Builder
	b.WriteString("power (per model; rises measured from a baseline that never fails):\n")
	for _, r := range e.Rules {
		fmt.Fprintf(&b, "  %s: %s\n", r.Variant, r.Power.Summary())
		if d := r.Power.Delete; d != nil {
			fmt.Fprintf(&b, "    %s\n", model.ChangeWords(r.Kind, "DELETE: "+d.Summary()))
		}
		if a := r.Power.Adaptive; a != nil {
			fmt.Fprintf(&b, "    calls: %s\n", a.Summary())
		}
		for _, warning := range r.Warnings {
			fmt.Fprintf(&b, "    warning: %s\n", warning)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteStability writes how often each judge changed its verdict when asked
// again about an answer it had graded.
func WriteStability(w io.Writer, stab []grade.Stability) error {
	var b strings.Builder
	b.WriteString("Judge stability (same answer asked again, temperature 0):\n")
	for _, st := range stab {
		fmt.Fprintf(&b, "  %s: flipped %d of %d = %.2f [%.2f, %.2f]", model.Sanitize(st.Judge), st.Flips, st.Asked, st.Rate, st.CI.Lo, st.CI.Hi)
		if st.Unparseable > 0 {
			fmt.Fprintf(&b, "; %d without a VERDICT line", st.Unparseable)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// minutesText is a duration in minutes as a person says it.
func minutesText(m float64) string {
	switch {
	case m < 1.0/60:
		return "under a second"
	case m < 1:
		return fmt.Sprintf("about %.0f seconds", m*60)
	case m < 90:
		return fmt.Sprintf("about %.1f minutes", m)
	}
	return fmt.Sprintf("about %.1f hours", m/60)
}

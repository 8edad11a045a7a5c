package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// IntervalLegend says which interval each column of the tables carries.
const IntervalLegend = "Intervals are 95%. A rate's is clustered by case (t with C-1 degrees of freedom), or Wilson on pooled counts with fewer than two cases or when every case has the same rate; " +
	"variant - baseline uses Newcombe's hybrid score interval on the cases graded in both variants; corrected rates use the kind's own measured recall and specificity (Rogan-Gladen)."

// SimulatedBanner marks every output made from the simulated model.
const SimulatedBanner = "SIMULATED: answers come from auditor's built-in simulated model, not a real model; it plays the demo's support assistant and does not read your prompt."

// WriteText writes the table a headless run prints: per rule, per kind and
// variant the failures, rate and 95% interval, deleted minus baseline, the
// verdict and the predicate's measured recall.
func WriteText(w io.Writer, res *evidence.Results, spend audit.Spend, simulated bool) error {
	var b strings.Builder
	if simulated {
		fmt.Fprintf(&b, "%s\n\n", SimulatedBanner)
	}
	// The prompt that ships first, then each line's own verdict.
	if ls := ShipLines(res); ls != nil {
		b.WriteString(strings.Join(ls, "\n") + "\n\n")
	}
	// Results first: a reader who stops after a few lines has the verdicts.
	multiModel := len(res.Plan.Audit.File.Models) > 1
	b.WriteString("Verdicts:\n")
	verdictW := 0
	for _, rr := range res.Rules {
		verdictW = max(verdictW, len([]rune(VerdictLabel(rr))))
	}
	for _, rr := range res.Rules {
		name := model.Sanitize(truncate(rr.Rule.Label(), 72))
		if multiModel {
			name += " on " + model.Sanitize(rr.ModelName)
		}
		label := VerdictLabel(rr)
		fmt.Fprintf(&b, "  %s%s  %s\n", label, strings.Repeat(" ", verdictW-len([]rune(label))), name)
	}
	for _, note := range res.LabelNotes() {
		fmt.Fprintf(&b, "  %s\n", note)
	}
	b.WriteString("\n")
	for _, rr := range res.Rules {
		b.WriteString(ruleText(rr, multiModel))
		b.WriteString("\n")
	}
	b.WriteString(regressionText(res))
	if c := ComparisonText(res); c != "" {
		b.WriteString(c + "\n")
	}
	for _, l := range sweepLines(res) {
		b.WriteString(l + "\n")
	}
	b.WriteString(spendLine(spend, simulated) + "\n")
	fmt.Fprintf(&b, "\n%s\n", IntervalLegend)
	_, err := io.WriteString(w, b.String())
	return err
}

// ruleText is everything the text report says about one line for one
// model. The JUnit report carries the same block for each test case.
func ruleText(rr *evidence.RuleResult, multiModel bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", model.Sanitize(VariantHeading(rr.Rule)))
	if multiModel {
		fmt.Fprintf(&b, "model %s\n", model.Sanitize(rr.ModelName))
	}
	fmt.Fprintf(&b, "  %s\n", model.Sanitize(filesLine(rr)))
	fmt.Fprintf(&b, "  %s\n", VariantsLine(rr.Rule))
	if rr.Rule.HasPredicate() {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  kind\tcases\tbaseline fail/n\trate [95%% CI]\t%s fail/n\trate [95%% CI]\t%s [95%% CI]\n", rr.Rule.Variant(), DiffHead(rr.Rule))
		for _, a := range ArmsInOrder(rr) {
			if a.Cases == 0 && rr.Lengths != nil {
				continue
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\n", a.Name, a.Cases,
				CountCell(a.Baseline), RateCell(a.Baseline), CountCell(a.Deleted), RateCell(a.Deleted), DiffCell(a))
		}
		tw.Flush()
	}
	if l := rr.Lengths; l != nil {
		for _, line := range lengthLines(rr) {
			fmt.Fprintf(&b, "  %s\n", line)
		}
	}
	if line := ControlBaselineLine(rr); line != "" {
		// The table above gives the same rate with the interval clustered
		// by case; this is the pooled one STATS asks for, said apart so
		// two intervals for one rate do not look like a contradiction.
		fmt.Fprintf(&b, "  %s (answers pooled; the table's interval is clustered by case)\n", line)
	}
	if line := FlipsLine(rr); line != "" {
		fmt.Fprintf(&b, "  %s\n", model.Sanitize(line))
	}
	tag := ""
	if t := LookTag(rr.Verdict); t != "" {
		if l := rr.Verdict.Look; rr.Unneeded > 0 && l.Planned > 0 {
			// The verdict rests on the look's samples of every cell,
			// whatever more is stored (answers a sweep's other lines
			// shared, made after this one settled).
			all := rr.Done + rr.Errors + rr.Truncated + rr.Pending + rr.Unneeded
			t += fmt.Sprintf(" after %s of %s answers", Thousands(int64(all*l.Samples/l.Planned)), Thousands(int64(all)))
		}
		tag = " (" + t + ")"
	}
	fmt.Fprintf(&b, "  verdict%s: %s: %s\n", tag, rr.Verdict.Decision, rr.Verdict.Reason)
	if rr.Verdict.Bound != "" {
		fmt.Fprintf(&b, "  bound: %s\n", rr.Verdict.Bound)
	}
	for _, f := range Flags(rr.Verdict) {
		fmt.Fprintf(&b, "  flag: %s\n", f)
	}
	if f := RegressionFlag(rr); f != "" {
		fmt.Fprintf(&b, "  flag: %s\n", f)
	}
	if w := rr.PredicateWarning(); w != "" {
		fmt.Fprintf(&b, "  warning: %s\n", w)
	}
	for _, n := range rr.Verdict.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	if st := rr.Staleness; st != nil {
		fmt.Fprintf(&b, "  warning: %s\n", model.Sanitize(st.Message()))
	}
	if label := neededLabel(rr.Verdict); label != "" {
		fmt.Fprintf(&b, "  %s: %s\n", label, rr.Verdict.Needed)
	}
	if rr.Rule.HasPredicate() {
		fmt.Fprintf(&b, "  predicate recall: %s\n", RecallLine(rr.Quality))
		b.WriteString(graderLines(rr, "  "))
		if line := AdjudicationsLine(rr); line != "" {
			fmt.Fprintf(&b, "  %s\n", line)
		}
		for _, l := range LabellersLines(rr) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		for _, l := range qualityLines(rr.Quality) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
		for _, l := range correctedLines(rr) {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	if rr.Errors > 0 || rr.Pending > 0 || rr.Truncated > 0 {
		fmt.Fprintf(&b, "  not in the numbers: %d errored, %d pending", rr.Errors, rr.Pending)
		if rr.Truncated > 0 {
			fmt.Fprintf(&b, ", %d truncated or empty", rr.Truncated)
		}
		b.WriteString("\n")
	}
	if rr.Truncated > 0 {
		fmt.Fprintf(&b, "  truncated: %s\n", TruncatedAdvice)
	}
	if line := ControlsLine(rr); line != "" {
		fmt.Fprintf(&b, "  control sequences: %s\n", line)
	}
	return b.String()
}

// ControlsLine says how many of a rule's answers held terminal control
// sequences (a hyperlink, a window title, a clipboard write), which every
// screen and report removes before showing them, and where to see them;
// "" when none did. The predicate graded the text as the model sent it.
func ControlsLine(rr *evidence.RuleResult) string {
	if rr.Controls == 0 {
		return ""
	}
	return ControlsCount(rr.Controls) + "; auditor open marks " + plural(rr.Controls, "it", "them") +
		", and x on a sample shows " + plural(rr.Controls, "its", "their") + " sequences escaped"
}

// ControlsCount is the first part of ControlsLine: how many answers held
// control sequences, removed where they are shown.
func ControlsCount(n int) string {
	return fmt.Sprintf("%d %s held terminal control sequences (links, titles, clipboard writes), removed wherever %s shown",
		n, plural(n, "answer", "answers"), plural(n, "it is", "they are"))
}

// TruncatedAdvice says what to do about answers cut off by the token limit
// or empty: they are neither passes nor failures, and asking again until
// one fits would bias the rates toward short answers. The rare response
// too large for its token limit is settled and counted with them.
const TruncatedAdvice = "answers cut off by the token limit or empty are neither passes nor failures and are not asked again; " +
	"raise max_tokens (reasoning models: max_completion_tokens, or lower reasoning_effort in extra_body) and run again: that asks every call afresh " +
	"(run --retry-truncated asks only these again, which biases the rates toward short answers); " +
	"a response larger than any answer within its token limit (too_large in exports) counts here too: it is no model's answer, check base_url"

// ControlBaselineLine shows the baseline's control failure rate with its
// Wilson interval, which STATS section 3 asks to show always: it is the
// over-refusal the prompt has today.
func ControlBaselineLine(rr *evidence.RuleResult) string {
	c := rr.Arms[model.Control]
	if !rr.Rule.HasPredicate() || c == nil || c.Baseline.N == 0 {
		return ""
	}
	v := rr.Verdict
	return fmt.Sprintf("control baseline: %d/%d fail = %.1f%%, Wilson 95%% [%.1f%%, %.1f%%]", v.ControlBaselineFails, v.ControlBaselineN,
		100*v.ControlBaselineRate, 100*v.ControlBaseline.Lo, 100*v.ControlBaseline.Hi)
}

// neededLabel names Verdict.Needed for the reports: what would settle an
// INCONCLUSIVE verdict, or the next step after CANARY.
func neededLabel(v model.Verdict) string {
	switch {
	case v.Needed == "":
		return ""
	case v.Decision == model.DecisionInconclusive:
		return "to settle it"
	case v.Decision == model.DecisionCanary:
		return "next step"
	}
	return ""
}

// tagNote adds a rule's tag to its heading.
func tagNote(r *audit.Rule) string {
	if r.Config.Tag == "" {
		return ""
	}
	return ", tag " + model.Sanitize(r.Config.Tag)
}

// filesLine names the files a rule's evidence comes from and counts its
// cases by kind.
func filesLine(rr *evidence.RuleResult) string {
	counts := map[model.Kind]int{}
	for _, c := range rr.Rule.Cases {
		counts[c.Kind]++
	}
	var kinds []string
	for _, k := range model.Kinds {
		if counts[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	s := fmt.Sprintf("cases %s (%s)", rr.Rule.Config.Cases, strings.Join(kinds, ", "))
	if rr.Rule.Config.Predicate == "" {
		s += ", no predicate"
	} else {
		s += fmt.Sprintf(", predicate %s (version %s)", rr.Rule.Config.Predicate, rr.PredicateVersion)
	}
	if rr.Rule.Config.NoInputClass() {
		s += ", class none: decided by answer length"
	}
	return s
}

// lengthLines describes the answer lengths of a rule with no input class:
// a summary per variant, the shift, and a histogram drawn in text.
func lengthLines(rr *evidence.RuleResult) []string {
	l := rr.Lengths
	if l.Baseline.N == 0 || l.Deleted.N == 0 {
		return []string{"answer length (completion tokens): not measured yet"}
	}
	out := []string{"answer length (completion tokens):"}
	for _, v := range []struct {
		name string
		s    stats.LengthSummary
		cut  int
	}{{"baseline", l.Baseline, l.TruncatedBaseline}, {rr.Rule.Variant(), l.Deleted, l.TruncatedDeleted}} {
		line := fmt.Sprintf("  %-9s n %d, median %.0f, mean %.1f, p10-p90 %.0f-%.0f, range %d-%d", v.name, v.s.N,
			v.s.Median, v.s.Mean, v.s.P10, v.s.P90, v.s.Min, v.s.Max)
		if v.cut > 0 {
			line += fmt.Sprintf(", %d cut off at max_tokens", v.cut)
		}
		out = append(out, line)
	}
	if sh := l.Shift; sh != nil {
		out = append(out, "  shift     "+model.ShiftWords(sh))
	}
	if t := l.Test; t != nil {
		out = append(out, fmt.Sprintf("  rank test Mann-Whitney U %.1f, z %.2f, p %s (answers taken as independent)", t.U, t.Z, PValue(t.P)))
	}
	return append(out, histogramLines(l, rr.Rule.Variant(), 24)...)
}

// histogramLines draws the two variants' length histograms as text bars,
// one row per bin, each bar scaled so the largest count is width wide.
func histogramLines(l *evidence.Lengths, variant string, width int) []string {
	if len(l.Edges) < 2 {
		return nil
	}
	most := 1
	for i := range l.BaselineHist {
		most = max(most, l.BaselineHist[i], l.DeletedHist[i])
	}
	bar := func(n int) string {
		b := strings.Repeat("#", (n*width+most-1)/most)
		return b + strings.Repeat(" ", width-len(b))
	}
	out := []string{fmt.Sprintf("  %9s  %-*s  %s", "tokens", width+5, "baseline", variant)}
	for i := range l.BaselineHist {
		label := fmt.Sprintf("%d-%d", l.Edges[i], l.Edges[i+1]-1)
		out = append(out, strings.TrimRight(fmt.Sprintf("  %9s  %4d %s  %4d %s", label,
			l.BaselineHist[i], bar(l.BaselineHist[i]), l.DeletedHist[i], bar(l.DeletedHist[i])), " "))
	}
	return out
}

// sweepLines sums up the sweep: verdict counts, tokens removed against
// tokens claimed, and the split by tag.
func sweepLines(res *evidence.Results) []string {
	out := []string{"Sweep: " + sweepSentence(res.Sweep.SweepGroup)}
	for _, g := range res.Sweep.ByTag {
		out = append(out, fmt.Sprintf("  tag %s: %s", model.Sanitize(g.Tag), sweepSentence(g)))
	}
	if c := ChangesSentence(res.Sweep.Changes); c != "" {
		out = append(out, "Rewordings and additions: "+c)
	}
	return out
}

// sweepSentence says what a group of lines adds up to.
func sweepSentence(g evidence.SweepGroup) string {
	s := fmt.Sprintf("%d %s audited (%s); ", g.Lines, plural(g.Lines, "line", "lines"), verdictCounts(g))
	switch {
	case g.TokensRemoved == 0:
		s += fmt.Sprintf("nothing is safe to delete yet: 0 of the %d tokens the candidate list claimed", g.TokensClaimed)
	case g.TokensRemoved == g.TokensClaimed:
		s += fmt.Sprintf("all %d tokens the candidate list claimed are safe to delete", g.TokensClaimed)
	default:
		s += fmt.Sprintf("the lines safe to delete remove %d of the %d tokens the candidate list claimed (it claimed %.1fx what the evidence supports)",
			g.TokensRemoved, g.TokensClaimed, g.Ratio())
	}
	return s
}

// verdictCounts lists a group's verdicts, leaving out the ones with none.
func verdictCounts(g evidence.SweepGroup) string {
	var parts []string
	for _, c := range []struct {
		n    int
		name model.Decision
	}{{g.Delete, model.DecisionDelete}, {g.Keep, model.DecisionKeep}, {g.Inconclusive, model.DecisionInconclusive}, {g.Canary, model.DecisionCanary}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// spendLine says what the answers and the judges' calls cost (every paid
// call, asked again or not) and what prompt caching saved.
func spendLine(spend audit.Spend, simulated bool) string {
	s := fmt.Sprintf("Spend: %d paid answer calls, %d prompt tokens (%d cached), %d completion tokens, $%.2f",
		spend.Calls, spend.PromptTokens, spend.CachedTokens, spend.CompletionTokens, spend.USD)
	if spend.CacheWriteTokens > 0 {
		s += fmt.Sprintf(" (%d prompt tokens written to the cache)", spend.CacheWriteTokens)
	}
	if spend.BatchedCalls > 0 {
		s += fmt.Sprintf(" (%d answers through a batch API, at half price)", spend.BatchedCalls)
	}
	if spend.JudgeCalls > 0 {
		s += fmt.Sprintf("; %d judge calls, %d prompt and %d completion tokens, $%.2f; $%.2f in all",
			spend.JudgeCalls, spend.JudgePromptTokens, spend.JudgeCompletionTokens, spend.JudgeUSD, spend.TotalUSD)
	}
	s += fmt.Sprintf("; prompt caching saved $%.2f%s", spend.CacheSavedUSD, simulatedNote(simulated))
	if spend.UnpricedCalls > 0 {
		s += fmt.Sprintf("; price unknown for %d calls to %s (no prices in the audit file): not in these dollars",
			spend.UnpricedCalls, sanitizeAll(spend.Unpriced))
	}
	return s
}

// sanitizeAll joins names from the audit file or the store, made safe to
// print.
func sanitizeAll(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = model.Sanitize(n)
	}
	return strings.Join(out, ", ")
}

func simulatedNote(sim bool) string {
	if sim {
		return " (simulated prices)"
	}
	return ""
}

// CountCell is an arm side's failures over graded answers, or "-".
func CountCell(s evidence.ArmSide) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", s.Fails, s.N)
}

// RateCell is an arm side's rate with its 95% interval (see Interval), or "-".
func RateCell(s evidence.ArmSide) string {
	if s.N == 0 {
		return "-"
	}
	lo, hi, _ := Interval(s)
	return fmt.Sprintf("%.3f [%.3f, %.3f]", s.Rate, lo, hi)
}

// DiffCell is deleted minus baseline with Newcombe's 95% interval, or "-".
//
// The difference is on the cases graded in both variants; when some case is
// graded in one only, the cell says on how many cases it stands.
func DiffCell(a *evidence.Arm) string {
	if a.Compared == 0 {
		return "-"
	}
	s := fmt.Sprintf("%+.3f [%+.3f, %+.3f]", a.Diff, a.DiffCI.Lo, a.DiffCI.Hi)
	if a.Unmatched > 0 {
		s += fmt.Sprintf(" on %d of %d cases", a.Compared, a.Cases)
	}
	return s
}

// qualityLines gives the per-kind recall and the misses behind RecallLine,
// when anything is labelled.
func qualityLines(q labels.GraderQuality) []string {
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
func correctedLines(rr *evidence.RuleResult) []string {
	var out []string
	for _, a := range ArmsInOrder(rr) {
		if a.Baseline.Corrected == nil && a.Deleted.Corrected == nil {
			continue
		}
		out = append(out, fmt.Sprintf("  %-9s baseline %s  %s %s", a.Name, correctedDetail(a.Baseline.Corrected),
			rr.Rule.Variant(), correctedDetail(a.Deleted.Corrected)))
	}
	if len(out) == 0 {
		return nil
	}
	return append([]string{"corrected for recall and specificity (Rogan-Gladen; each kind by its own, provoking pooled by responses; the interval carries all three uncertainties; - where not estimable):"}, out...)
}

func correctedDetail(c *labels.CorrectedRate) string {
	if c == nil {
		return "-"
	}
	s := fmt.Sprintf("%.3f [%.3f, %.3f]", c.Est, c.CI.Lo, c.CI.Hi)
	if len(c.Kinds) == 0 {
		s += fmt.Sprintf(" (recall %.2f, specificity %.2f)", c.Recall, c.Specificity)
	}
	return s
}

// AdjudicationsLine says how many answers the review queue decided and
// how each grader agrees with those decisions. They are seen labels, so
// they are said apart and never enter recall or the verdict; "" when
// there are none.
func AdjudicationsLine(rr *evidence.RuleResult) string {
	a := rr.Adjudications
	if a.N == 0 {
		return ""
	}
	var agree []string
	for _, g := range a.Graders {
		if g.Graded > 0 {
			agree = append(agree, fmt.Sprintf("%s %d/%d", model.Sanitize(g.Grader), g.Agree, g.Graded))
		}
	}
	line := fmt.Sprintf("review adjudications (seen labels, not in recall or the verdict): %d %s", a.N, plural(a.N, "answer", "answers"))
	if len(agree) > 0 {
		line += "; graders agreeing: " + strings.Join(agree, ", ")
	}
	return line
}

// judgeRecallLines gives each judge's recall against the blind labels (as
// the verdict uses them), a line each; a judge with no labelled answer is
// left out, as the predicate's line already says nothing is labelled.
func judgeRecallLines(rr *evidence.RuleResult, indent string) string {
	var b strings.Builder
	for _, q := range rr.Judges {
		if q.Labels > 0 {
			fmt.Fprintf(&b, "%s%s recall: %s\n", indent, model.Sanitize(q.Grader), RecallLine(q))
		}
	}
	return b.String()
}

// graderLines describes the judges: their recall against the labels, how
// every pair of graders agrees, the review queue's length, and which grader
// the labels support.
func graderLines(rr *evidence.RuleResult, indent string) string {
	if len(rr.Judges) == 0 {
		return ""
	}
	var b strings.Builder
	agreement := rr.Agreement
	if JudgingNotBegun(rr) {
		// Not "agree on 0% of 0, kappa undefined" once per pair.
		b.WriteString(indent + JudgingNotBegunLine + "\n")
		agreement = nil
	} else {
		b.WriteString(judgeRecallLines(rr, indent))
	}
	for _, pa := range agreement {
		fmt.Fprintf(&b, "%s%s\n", indent, AgreementLine(pa))
	}
	if rr.Disagreements > 0 {
		fmt.Fprintf(&b, "%sreview queue: %d answers where graders disagree or one could not grade\n", indent, rr.Disagreements)
	}

	if _, line := rr.BestSupported(); line != "" {
		fmt.Fprintf(&b, "%slabels support: %s\n", indent, line)
	}
	return b.String()
}

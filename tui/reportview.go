package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// reportKeyW is the width of the report's field names ("to settle it",
// "review queue") and the space after them.
const reportKeyW = 15

// reportWriter collects the report's lines at one width.
type reportWriter struct {
	st  Styles
	w   int
	out []string
}

func (r *reportWriter) add(lines ...string) { r.out = append(r.out, lines...) }

// field writes a named field: the name in the first column, the text
// word-wrapped beside it. style, when not nil, styles each wrapped line.
// The text must be safe to draw (sanitized).
func (r *reportWriter) field(name, text string, style *lipgloss.Style) {
	for i, l := range wrapWords(text, max(r.w-2-reportKeyW, 10)) {
		if style != nil {
			l = style.Render(l)
		}
		k := strings.Repeat(" ", reportKeyW)
		if i == 0 && name != "" {
			k = r.st.Muted.Render(fit(name, reportKeyW))
		}
		r.add("  " + k + l)
	}
}

// parts writes a named field made of styled parts, joined by " · " and
// wrapped between parts.
func (r *reportWriter) parts(name string, parts []string) {
	w := max(r.w-2-reportKeyW, 10)
	var lines []string
	cur, curW := "", 0
	for _, p := range parts {
		pw := textWidth(p)
		switch {
		case cur == "":
			cur, curW = p, pw
		case curW+3+pw <= w:
			cur += r.st.Muted.Render(" · ") + p
			curW += 3 + pw
		default:
			lines = append(lines, cur)
			cur, curW = p, pw
		}
	}
	if cur != "" || len(lines) == 0 {
		lines = append(lines, cur)
	}
	for i, l := range lines {
		k := strings.Repeat(" ", reportKeyW)
		if i == 0 && name != "" {
			k = r.st.Muted.Render(fit(name, reportKeyW))
		}
		r.add("  " + k + l)
	}
}

// table writes aligned columns, the header row in the header style, and
// reports whether they fit the width (nothing is written when not).
func (r *reportWriter) table(indent int, rows [][]string, right []bool) bool {
	lines, ok := layoutTable(rows, r.w-indent, right, false)
	if !ok {
		return false
	}
	pad := strings.Repeat(" ", indent)
	for i, l := range lines {
		if i == 0 {
			l = r.st.Header.Render(l)
		}
		r.add(pad + l)
	}
	return true
}

// content builds the report's lines at the current width and the line of
// each rule section's heading.
func (v *reportView) content() ([]string, []int) {
	c := v.c
	st := c.styles
	r := &reportWriter{st: st, w: max(c.width, minWidth)}
	r.add(st.Title.Render("Report") + " " + oneLine(c.plan.Audit.File.Name))
	if c.simulated {
		r.add(st.Badge.Render(" SIMULATED ") + st.Muted.Render(" answers come from the built-in simulated model, not a real one"))
	}
	if c.live.running() {
		r.add(st.InFlight.Render("» run in progress: verdicts are provisional until every answer is in"))
	}
	r.add("")
	if v.ship(r) {
		r.add("")
	}
	v.sweep(r)
	r.add("")
	v.index(r)
	r.add("")
	v.spendLines(r)
	r.add("")
	legend := "Each line's evidence: failures are violations on provoke and pressure cases (pooled as provoking: the verdict rests on it) " +
		"and refusals on controls. Rates have 95% intervals clustered by case (t), or Wilson where that is undefined; " +
		"variant − baseline has Newcombe's. Corrected rates account for the predicate's measured recall and specificity of each kind " +
		"(Rogan-Gladen; provoking pooled by responses). n/p jump between lines."
	for _, l := range wrapWords(legend, max(r.w-2, 10)) {
		r.add("  " + st.Muted.Render(l))
	}
	var sections []int
	for _, rr := range c.res.Rules {
		r.add("")
		sections = append(sections, len(r.out))
		v.rule(r, rr)
	}
	if len(c.res.Rules) == 0 {
		r.add("", st.Muted.Render("No line is audited."))
	}
	v.regression(r)
	v.comparison(r)
	return r.out, sections
}

// comparison is the model comparison `auditor report` prints, word for
// word: per pair of models the cases side by side and the difference per
// kind. Nothing with one model.
func (v *reportView) comparison(r *reportWriter) {
	text := report.ComparisonText(v.c.res)
	if text == "" {
		return
	}
	r.add("")
	for i, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if i == 0 {
			r.add(v.c.styles.Header.Render("Model comparison") + v.c.styles.Muted.Render(oneLine(strings.TrimPrefix(l, "Model comparison"))))
			continue
		}
		r.add(oneLine(l))
	}
}

// decisionCounts are a sweep group's verdict counts as styled parts.
func (v *reportView) decisionCounts(g evidence.SweepGroup) []string {
	st := v.c.styles
	part := func(d model.Decision, n int) string {
		return verdictStyle(st, d).Render(fmt.Sprintf("%s %d %s", decisionSymbol(d), n, d))
	}
	return []string{
		part(model.DecisionDelete, g.Delete), part(model.DecisionKeep, g.Keep),
		part(model.DecisionInconclusive, g.Inconclusive), part(model.DecisionCanary, g.Canary),
	}
}

// ratioText is the claimed/removed ratio in words: "4.3x", or "nothing
// removed" when no line is safe to delete (the ratio is then unbounded).
func ratioText(g evidence.SweepGroup) string {
	if g.TokensRemoved == 0 {
		return "nothing removed"
	}
	return fmt.Sprintf("%.1fx", g.Ratio())
}

// tokensText says what a sweep group's safe deletions remove against what
// its candidate list claims.
func tokensText(g evidence.SweepGroup) string {
	if g.TokensRemoved == 0 {
		return fmt.Sprintf("nothing removed: no line is safe to delete (the candidate list claims %d tokens)", g.TokensClaimed)
	}
	return fmt.Sprintf("the lines safe to delete remove %d of the %d tokens the candidate list claims: it claims %s what the evidence supports",
		g.TokensRemoved, g.TokensClaimed, ratioText(g))
}

// sweep writes the summary of every line's verdict and, with tags, the
// split by tag.
func (v *reportView) sweep(r *reportWriter) {
	res := v.c.res
	s := res.Sweep
	r.add(r.st.Header.Render("Sweep"))
	lines := fmt.Sprintf("%d audited", s.Lines)
	if s.Lines == 1 {
		lines = "1 audited"
	}
	r.parts("lines", append([]string{lines}, v.decisionCounts(s.SweepGroup)...))
	if ch := s.Changes; ch.Variants > 0 {
		parts := []string{fmt.Sprintf("%d audited (%s)", ch.Variants, oneLine(strings.Join(ch.Names, ", ")))}
		for _, d := range ch.Decisions() {
			parts = append(parts, verdictStyle(r.st, d).Render(fmt.Sprintf("%s %d %s", decisionSymbol(d), ch.Count(d), d)))
		}
		r.parts("changes", append(parts, ch.FlipCounts()))
	}
	r.field("tokens", tokensText(s.SweepGroup), nil)
	r.field("tolerance", fmt.Sprintf("a rise in failure rate of up to %.1f points (delta %g)", 100*res.Delta, res.Delta), nil)
	if len(s.ByTag) == 0 {
		return
	}
	rows := [][]string{{"tag", "lines", "DELETE", "KEEP", "INCONCLUSIVE", "CANARY", "removed", "claimed", "claimed/removed"}}
	for _, g := range s.ByTag {
		rows = append(rows, []string{oneLine(g.Tag), strconv.Itoa(g.Lines), strconv.Itoa(g.Delete), strconv.Itoa(g.Keep),
			strconv.Itoa(g.Inconclusive), strconv.Itoa(g.Canary), strconv.Itoa(g.TokensRemoved), strconv.Itoa(g.TokensClaimed), ratioText(g)})
	}
	r.add("  " + r.st.Muted.Render("by tag"))
	if r.table(4, rows, []bool{false, true, true, true, true, true, true, true, true}) {
		return
	}
	for _, g := range s.ByTag {
		n := fmt.Sprintf("%d lines", g.Lines)
		if g.Lines == 1 {
			n = "1 line"
		}
		r.parts(oneLine(g.Tag), append([]string{n}, v.decisionCounts(g)...))
		r.field("", fmt.Sprintf("removes %d of %d tokens claimed (%s)", g.TokensRemoved, g.TokensClaimed, ratioText(g)), nil)
	}
}

// index lists every audited line (and model) with its verdict, in the
// order of the sections below.
func (v *reportView) index(r *reportWriter) {
	c, st := v.c, v.c.styles
	r.add(st.Header.Render("Lines"))
	const verdictW = len("? INCONCLUSIVE") + 1
	varW, tokW, nameW := 0, 0, 0
	for _, rr := range c.res.Rules {
		varW = max(varW, len(rr.Rule.Variant()))
		tokW = max(tokW, len(fmt.Sprintf("%d tok", rr.Rule.Tokens)))
		if c.models() > 1 {
			nameW = max(nameW, min(textWidth(oneLine(rr.ModelName)), 20))
		}
	}
	for _, rr := range c.res.Rules {
		d := rr.Verdict.Decision
		s := "  " + fit(rr.Rule.Variant(), varW) + " " +
			verdictStyle(st, d).Render(fit(decisionSymbol(d)+" "+string(d), verdictW)) + " " +
			st.Muted.Render(fmt.Sprintf("%*s", tokW, fmt.Sprintf("%d tok", rr.Rule.Tokens))) + "  "
		if nameW > 0 {
			s += fit(oneLine(rr.ModelName), nameW) + "  "
		}
		if f := report.FlipCounts(rr); f != "" {
			s += f + st.Muted.Render(" · ")
		}
		// The name stands in its own column; the rest of the label says
		// what the variant does.
		what := strings.TrimPrefix(rr.Rule.Label(), rr.Rule.Variant()+" ")
		r.add(s + truncateText(oneLine(what), max(r.w-textWidth(s), 1)))
	}
}

// spendLines writes what the audit's paid calls cost, as last read.
func (v *reportView) spendLines(r *reportWriter) {
	c, st := v.c, v.c.styles
	r.add(st.Header.Render("Spend"))
	switch {
	case v.spend == nil:
		r.field("", "not available on this screen: auditor report prints it", &st.Muted)
		return
	case v.spent == nil && v.spendErr == nil:
		r.field("", "reading the stored answers…", &st.Muted)
		return
	case v.spendErr != nil:
		r.field("", "not read: "+oneLine(v.spendErr.Error()), &st.Err)
		return
	}
	s := v.spent
	r.field("answers", fmt.Sprintf("%s paid: %s prompt tokens (%s cached), %s completion tokens",
		report.Thousands(int64(s.Calls)), report.Thousands(s.PromptTokens), report.Thousands(s.CachedTokens), report.Thousands(s.CompletionTokens)), nil)
	if len(c.plan.Audit.Judges) > 0 {
		r.field("judges", fmt.Sprintf("%s calls: %s prompt tokens, %s completion tokens",
			report.Thousands(int64(s.JudgeCalls)), report.Thousands(s.JudgePromptTokens), report.Thousands(s.JudgeCompletionTokens)), nil)
	}
	cost := fmt.Sprintf("$%.2f", s.USD)
	if len(c.plan.Audit.Judges) > 0 {
		cost = fmt.Sprintf("$%.2f in all: answers $%.2f, judges $%.2f", s.TotalUSD, s.USD, s.JudgeUSD)
	}
	if c.simulated {
		cost += " (simulated prices: nothing is billed)"
	}
	if s.UnpricedCalls > 0 {
		cost += fmt.Sprintf("; price unknown for %s calls (no prices in the audit file)", report.Thousands(int64(s.UnpricedCalls)))
	}
	r.field("cost", cost, nil)
	r.field("caching", fmt.Sprintf("prompt caching saved $%.2f", s.CacheSavedUSD), nil)
	if v.loading || c.live.running() {
		r.field("", "as stored when this screen opened; the header counts the run live", &st.Muted)
	}
}

// rule writes one audited line's section for one model.
func (v *reportView) rule(r *reportWriter, rr *evidence.RuleResult) {
	c, st := v.c, v.c.styles
	rule := rr.Rule
	head := fmt.Sprintf("%s · line %d", rule.Variant(), rule.Line)
	if tag := rule.Config.Tag; tag != "" {
		head += " · " + oneLine(tag)
	}
	head += fmt.Sprintf(" · %d tokens", rule.Tokens)
	if c.models() > 1 {
		head += " · model " + oneLine(rr.ModelName)
	}
	head = "── " + head + " "
	r.add(st.Header.Render(head + strings.Repeat("─", max(r.w-textWidth(head), 0))))
	for _, l := range wrapWords(oneLine(rule.Label()), max(r.w-2, 10)) {
		r.add("  " + l)
	}
	if reads := report.LineReads(rule); reads != "" {
		for _, l := range wrapWords(oneLine(reads), max(r.w-2, 10)) {
			r.add("  " + st.Muted.Render(l))
		}
	}

	vd := rr.Verdict
	verdict := []string{verdictStyle(st, vd.Decision).Render(decisionSymbol(vd.Decision) + " " + string(vd.Decision))}
	if f := report.FlipCounts(rr); f != "" {
		verdict = append(verdict, f)
	}
	if f := report.RegressionFlag(rr); f != "" {
		verdict = append(verdict, st.Err.Render(f))
	}
	switch tag := report.LookTag(vd); {
	case tag != "":
		verdict = append(verdict, st.InFlight.Render(tag))
	case rr.Pending > 0:
		verdict = append(verdict, st.InFlight.Render(fmt.Sprintf("provisional: %d answers pending", rr.Pending)))
	}
	r.parts("verdict", verdict)
	r.field("", oneLine(vd.Reason), nil)
	if f := report.FlipsLine(rr); f != "" {
		r.field("vs baseline", oneLine(strings.TrimPrefix(f, "vs baseline, ")), nil)
	}
	if vd.Bound != "" {
		r.field("bound", oneLine(vd.Bound), &st.Muted)
	}
	if line := report.ControlBaselineLine(rr); line != "" {
		r.field("controls", strings.TrimPrefix(line, "control baseline: ")+" on the baseline", nil)
	}
	for _, f := range report.Flags(vd) {
		r.field("flag", f, &st.Err)
	}
	for _, n := range vd.Notes {
		r.field("note", oneLine(n), nil)
	}
	switch {
	case vd.Needed == "":
	case vd.Decision == model.DecisionInconclusive:
		r.field("to settle it", oneLine(vd.Needed), nil)
	case vd.Decision == model.DecisionCanary:
		r.field("next step", oneLine(vd.Needed), nil)
	}
	if s := rr.Staleness; s != nil {
		r.field("warning", oneLine(s.Message()), &st.Warn)
	}
	if rr.Errors > 0 || rr.Pending > 0 {
		r.field("not counted", fmt.Sprintf("%d errored, %d pending", rr.Errors, rr.Pending), &st.Muted)
	}
	if rr.Controls > 0 {
		r.field(warnMark+" escapes", report.ControlsCount(rr.Controls)+"; a cell's samples mark them, x on a sample shows them escaped", &st.Warn)
	}
	if rr.Lengths != nil {
		v.lengths(r, rr) // the verdict rests on it
	}
	// A rule with no input class and no predicate has no failures to count
	// or grade: its evidence is the answers' length alone.
	if rr.Lengths == nil || rule.Config.Predicate != "" {
		v.evidence(r, rr)
		v.graders(r, rr)
	}
	counts := map[model.Kind]int{}
	for _, cs := range rule.Cases {
		counts[cs.Kind]++
	}
	var kinds []string
	for _, k := range model.Kinds {
		if counts[k] > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	r.field("cases", fmt.Sprintf("%s (%s)", oneLine(rule.Config.Cases), strings.Join(kinds, ", ")), nil)
	switch {
	case rule.Config.Predicate == "":
		r.field("predicate", "none (no input class: the verdict rests on answer length)", &st.Muted)
	default:
		r.field("predicate", fmt.Sprintf("%s (version %s)", oneLine(rule.Config.Predicate), report.ShortVersion(rr.PredicateVersion)), nil)
	}
}

// regression writes a section per regression suite: one line per
// variant (and model) saying how many of its cases the variant broke and
// how the failure rate moved. It never changes a verdict above.
func (v *reportView) regression(r *reportWriter) {
	c, st := v.c, v.c.styles
	multiModel := c.models() > 1
	for si := range c.plan.Audit.Regressions {
		r.add("")
		suite := c.plan.Audit.Regressions[si]
		head := "── " + truncateText("Regression suite "+oneLine(suite.Name), max(r.w-4, 10)) + " "
		r.add(st.Header.Render(head + strings.Repeat("─", max(r.w-textWidth(head), 0))))
		version := ""
		if len(c.res.Rules) > 0 && si < len(c.res.Rules[0].Regression) {
			version = c.res.Rules[0].Regression[si].PredicateVersion
		}
		r.field("cases", fmt.Sprintf("%s (%d cases, run on baseline and on every variant)", oneLine(suite.Config.Cases), len(suite.Cases)), nil)
		r.field("predicate", fmt.Sprintf("%s (version %s)", oneLine(suite.Config.Predicate), report.ShortVersion(version)), nil)
		for _, rr := range c.res.Rules {
			if si >= len(rr.Regression) {
				continue
			}
			var style *lipgloss.Style
			if rr.Regression[si].Broken() > 0 {
				style = &st.Err
			}
			for i, l := range wrapWords(oneLine(report.RegressionLine(rr, rr.Regression[si], multiModel)), max(r.w-4, 10)) {
				if style != nil {
					l = style.Render(l)
				}
				indent := "  "
				if i > 0 {
					indent = "    "
				}
				r.add(indent + l)
			}
		}
	}
	if len(c.plan.Audit.Regressions) > 0 {
		r.add("")
		for _, l := range wrapWords("Regression suites: "+report.RegressionNote, max(r.w-2, 10)) {
			r.add("  " + st.Muted.Render(l))
		}
	}
}

// armsInOrder are a rule's arms as the reports list them; an arm with no
// case (a rule with no input class has only controls) is left out.
func armsInOrder(rr *evidence.RuleResult) []*evidence.Arm {
	var out []*evidence.Arm
	for _, a := range report.ArmsInOrder(rr) {
		if a != nil && a.Planned > 0 {
			out = append(out, a)
		}
	}
	return out
}

// evidence writes the arm table: one row per kind when it fits the width,
// else one row per kind and variant.
func (v *reportView) evidence(r *reportWriter, rr *evidence.RuleResult) {
	st := v.c.styles
	arms := armsInOrder(rr)
	variant := rr.Rule.Variant()
	corrected := false
	for _, a := range arms {
		corrected = corrected || a.Baseline.Corrected != nil || a.Deleted.Corrected != nil
	}
	r.add("  " + st.Muted.Render("evidence"))
	wide := [][]string{{"kind", "cases", "baseline fail/n", "rate [95% CI]"}}
	if corrected {
		wide[0] = append(wide[0], "corrected")
	}
	wide[0] = append(wide[0], variant+" fail/n", "rate [95% CI]")
	if corrected {
		wide[0] = append(wide[0], "corrected")
	}
	wide[0] = append(wide[0], variant+" − baseline [95% CI]")
	right := []bool{false, true, true, false}
	if corrected {
		right = append(right, false)
	}
	right = append(right, true)
	for _, a := range arms {
		row := []string{a.Name, strconv.Itoa(a.Cases), report.CountCell(a.Baseline), report.RateCell(a.Baseline)}
		if corrected {
			row = append(row, report.CorrectedCell(a.Baseline.Corrected))
		}
		row = append(row, report.CountCell(a.Deleted), report.RateCell(a.Deleted))
		if corrected {
			row = append(row, report.CorrectedCell(a.Deleted.Corrected))
		}
		wide = append(wide, append(row, report.DiffCell(a)))
	}
	if !r.table(4, wide, right) {
		narrow := [][]string{{"kind (cases)", "variant", "fail/n", "rate [95% CI]"}}
		for _, a := range arms {
			narrow = append(narrow, []string{fmt.Sprintf("%s (%d)", a.Name, a.Cases), "baseline", report.CountCell(a.Baseline), report.RateCell(a.Baseline)})
			if a.Baseline.Corrected != nil {
				narrow = append(narrow, []string{"", "  corrected", "", report.CorrectedCell(a.Baseline.Corrected)})
			}
			narrow = append(narrow, []string{"", variant, report.CountCell(a.Deleted), report.RateCell(a.Deleted)})
			if a.Deleted.Corrected != nil {
				narrow = append(narrow, []string{"", "  corrected", "", report.CorrectedCell(a.Deleted.Corrected)})
			}
			narrow = append(narrow, []string{"", variant + " − baseline", "", report.DiffCell(a)})
		}
		if !r.table(4, narrow, []bool{false, false, true, false}) {
			r.table(2, narrow, []bool{false, false, true, false}) // the frame clips what still does not fit
		}
	}
}

// verdictStyle is the style of a decision: DELETE calm, KEEP informative,
// CANARY its own colour, INCONCLUSIVE muted.
func verdictStyle(st Styles, d model.Decision) lipgloss.Style {
	switch d {
	case model.DecisionDelete, model.DecisionBetter, model.DecisionNotWorse, model.DecisionShip:
		return st.Delete
	case model.DecisionKeep, model.DecisionWorse, model.DecisionNotSafe:
		return st.Keep
	case model.DecisionCanary:
		return st.Canary
	}
	return st.Inconclusive
}

// ship writes the ship decision first, when the audit has a joint test:
// its headline, the test's number, each class's outcome beside its line's
// own verdict, and what to do next. It reports whether it wrote anything.
func (v *reportView) ship(r *reportWriter) bool {
	sh := v.c.res.Ship
	if sh == nil {
		return false
	}
	st := v.c.styles
	d := sh.Decision
	style := verdictStyle(st, d.Decision)
	r.add(st.Header.Render("Ship decision") + st.Muted.Render(fmt.Sprintf(" · joint test %d of the %d this audit has made", d.Test, d.Tests)))
	for _, l := range wrapWords(oneLine(d.Headline), max(r.w-2, 10)) {
		r.add("  " + style.Render(l))
	}
	for _, c := range d.Classes {
		name := fmt.Sprintf("line %d", c.Line)
		if v.c.models() > 1 {
			name += " " + oneLine(c.Model)
		}
		cs := verdictStyle(st, c.Verdict.Decision)
		r.field(name, c.Outcome()+" (alone "+string(c.Alone)+"): "+oneLine(c.Verdict.Reason), &cs)
	}
	switch {
	case d.Decision == model.DecisionNotSafe && len(d.Keep) > 0:
		next := "nothing left to delete together"
		if len(d.Next) > 0 {
			next = fmt.Sprintf("the next joint set, %s, is a new test (joint test %d)", model.LinesWords(d.Next), d.Tests+1)
		}
		r.field("next", fmt.Sprintf("keep %s; %s", model.LinesWords(d.Keep), next), nil)
	case d.Needed != "":
		r.field("to settle it", oneLine(d.Needed), nil)
	}
	return true
}

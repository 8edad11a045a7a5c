package report

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/model"
)

// WriteHTML writes the page as one self-contained HTML file: its style and
// its one small script inline, its plots inline SVG, no request to
// anywhere (a Content-Security-Policy in the page forbids any), and the
// same bytes for the same page. Every text that came from a model, a file
// or a person is sanitized (terminal controls removed, bidirectional
// controls shown as escapes) and escaped by html/template; it never
// reaches an attribute that is a URL or a script.
func WriteHTML(w io.Writer, p Page) error {
	return htmlTemplate.Execute(w, buildView(p))
}

//go:embed html.tmpl
var htmlSource string

//go:embed html.css
var htmlStyle string

//go:embed html.js
var htmlScript string

var htmlTemplate = template.Must(template.New("report").Parse(htmlSource))

// PageCSP is the page's Content-Security-Policy: nothing may load, from
// anywhere; inline style, data: images and the page's own script (by its
// hash) only.
var PageCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src '" + ScriptHash(htmlScript) + "'; base-uri 'none'; form-action 'none'"

// ScriptHash is a script's CSP source expression: 'sha256-...' without the
// quotes.
func ScriptHash(script string) string {
	h := sha256.Sum256([]byte(script))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

// bidiControls are the Unicode characters that reorder the text around
// them (the "Trojan Source" characters): a model's answer could use them to
// make a line read other than it is. clean shows them as escapes.
var bidiControls = strings.NewReplacer(
	"\u202a", `\u202a`, "\u202b", `\u202b`, "\u202c", `\u202c`, "\u202d", `\u202d`, "\u202e", `\u202e`,
	"\u2066", `\u2066`, "\u2067", `\u2067`, "\u2068", `\u2068`, "\u2069", `\u2069`,
	"\u200e", `\u200e`, "\u200f", `\u200f`, "\u061c", `\u061c`)

// clean makes untrusted text safe to show: terminal control sequences
// removed (model.Sanitize) and bidirectional controls written out.
// html/template escapes the rest.
// The controls are written out before Sanitize, which would remove them.
func clean(s string) string { return model.Sanitize(bidiControls.Replace(s)) }

// verdictLook is how a decision shows: a colour class, a glyph and words,
// so that no verdict rests on colour alone.
type verdictLook struct{ Class, Glyph, Words string }

func lookOf(decision string) verdictLook {
	switch model.Decision(decision) {
	case model.DecisionDelete:
		return verdictLook{"v-delete", "✓", "can go"}
	case model.DecisionKeep:
		return verdictLook{"v-keep", "✕", "load-bearing: keep it"}
	case model.DecisionCanary:
		return verdictLook{"v-canary", "~", "decide on live traffic"}
	case model.DecisionNotWorse:
		return verdictLook{"v-delete", "✓", "no worse than the line"}
	case model.DecisionBetter:
		return verdictLook{"v-better", "▲", "better than the line"}
	case model.DecisionWorse:
		return verdictLook{"v-keep", "✕", "worse than the line"}
	case "SHIP":
		return verdictLook{"v-delete", "✓", "safe to ship"}
	case "NOT SAFE":
		return verdictLook{"v-keep", "✕", "not safe to ship"}
	}
	return verdictLook{"v-inc", "?", "not decided yet"}
}

type htmlView struct {
	Title, Banner, CSP, Summary, Changes, Delta, Legend string
	LabelNotes                                          []string
	Style                                               template.CSS
	Script                                              template.JS
	Ship                                                *shipView
	Glance                                              []glanceGroup
	Axis                                                template.HTML
	Lines                                               []lineView
	Decisions                                           []string // the verdicts present, for the filter
	Prompt                                              []promptLine
	Grids                                               []gridView
	Rules                                               []ruleView
	Suites                                              []suiteView
	Spend                                               []spendRow
	SpendNote                                           string
	Schema                                              int
}

// shipView is the ship decision, when the report has one.
type shipView struct {
	verdictLook
	Verdict, Sentence string
	Details           []string
	Classes           []shipClassView
}

type lineView struct {
	verdictLook
	Anchor, Variant, Title, Model, Tag, Verdict, Reason string
	Line, Tokens                                        int
	Forest                                              template.HTML
	Prov, Ctl, Route, Labels, Needed                    string
	ProvKey                                             string // the provoking difference, to sort by
	Flags                                               []string
}

type promptLine struct {
	N     int
	Text  string
	Marks []promptMark
}

type promptMark struct {
	verdictLook
	Anchor, Variant, Verdict string
}

type gridView struct {
	Heading string
	Columns []string
	Kinds   []gridKind
}

type gridKind struct {
	Kind, Note string
	Rows       []gridRow
}

type gridRow struct {
	Case  string
	Cells []gridCell
}

type gridCell struct {
	Text, Title, Class string
}

type ruleView struct {
	verdictLook
	Anchor, Title, Verdict, Reason, Bound, Needed, NeededLabel, Look, Provisional string
	Notes, Flags, Warnings                                                        []string
	Arms                                                                          []armRow
	DiffHead                                                                      string
	Graders                                                                       []graderView
	Agreement, Labellers                                                          []agreeRow
	Adjudications                                                                 string
	AdjudicationRows                                                              []agreeRow
	Evidence                                                                      []evidenceView
	VariantSide, BaselineSide                                                     string
	Looks                                                                         template.HTML
	LookRows                                                                      []lookRow
	Lengths                                                                       template.HTML
	LengthNote                                                                    string
	Regression                                                                    []string
}

type armRow struct {
	Kind, Cases, Baseline, Variant, Diff, Paired, Corrected string
}

type graderView struct {
	Name, Note string
	Rows       []graderRow
}

type graderRow struct {
	Kind, Recall, Precision, Specificity, Confusion string
	RecallPlot, PrecisionPlot, SpecificityPlot      template.HTML
}

type agreeRow struct{ Pair, Kappa, Agreement, Detail string }

type evidenceView struct {
	Case, Kind, Why, Msg, Counts string
	Pairs                        []pairView
}

type pairView struct {
	Sample            int
	Baseline, Variant *answerView
}

type answerView struct {
	Text   string
	Grades []chip
	Labels []chip
}

type chip struct{ Class, Text string }

type lookRow struct{ Look, Verdict, Diff, Bound, Test string }

type suiteView struct {
	Name string
	Rows []string
}

type spendRow struct {
	What, Estimated, Actual string
	Bars                    template.HTML
}

func buildView(p Page) htmlView {
	d := p.Doc
	v := htmlView{Title: clean(d.Audit), CSP: PageCSP, Style: template.CSS(htmlStyle), Script: template.JS(htmlScript),
		Delta: strconv.FormatFloat(100*d.Delta, 'f', -1, 64), Legend: IntervalLegend, Schema: d.SchemaVersion,
		Summary: clean(sweepDocSentence(d.Sweep.SweepGroupDoc))}
	if d.Simulated {
		v.Banner = SimulatedBanner
	}
	v.LabelNotes = cleanAll(d.LabelNotes)
	v.Glance = glanceOf(d)
	v.Changes = changesDocSentence(d)
	rows := make([]forestRow, len(d.Rules))
	for i, r := range d.Rules {
		rows[i] = forestOf(r)
	}
	sc := forestScale(rows, d.Delta)
	v.Ship = shipOf(d, sc)
	v.Axis = axisSVG(sc)
	seen := map[string]bool{}
	for i, r := range d.Rules {
		title := r.Variant
		if i < len(p.Rules) {
			title = p.Rules[i].Title
		}
		lv := lineView{verdictLook: lookOf(r.Verdict), Anchor: ruleAnchor(i), Variant: clean(r.Variant), Title: clean(title),
			Tag: clean(r.Tag), Verdict: r.Verdict, Reason: clean(r.Reason), Line: r.Line, Tokens: r.Tokens,
			Flags: cleanAll(r.Flags)}
		if distinctModels(d) > 1 {
			lv.Model = clean(r.Model)
		}
		if r.RegressionBroken > 0 {
			lv.Flags = append(lv.Flags, fmt.Sprintf("regression: %d %s broken", r.RegressionBroken, plural(r.RegressionBroken, "case", "cases")))
		}
		lv.Forest = forestSVG(rows[i], sc, d.Delta, fmt.Sprintf("line %d, %s: %s", r.Line, r.Variant, r.Verdict))
		lv.Prov, lv.ProvKey = diffText(rows[i].Provoking)
		lv.Ctl, _ = diffText(rows[i].Control)
		lv.Route, lv.Labels, lv.Needed = routeAndLabels(r)
		if !seen[r.Verdict] {
			seen[r.Verdict] = true
			v.Decisions = append(v.Decisions, r.Verdict)
		}
		v.Lines = append(v.Lines, lv)
		v.Rules = append(v.Rules, ruleViewOf(p, i))
	}
	slices.Sort(v.Decisions)
	v.Prompt = promptOf(p)
	v.Grids = gridsOf(p)
	v.Suites = suitesOf(d)
	v.Spend, v.SpendNote = spendOf(p)
	return v
}

func ruleAnchor(i int) string { return "rule-" + strconv.Itoa(i+1) }

func cleanAll(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, clean(x))
	}
	return out
}

// sweepDocSentence is sweepSentence over the JSON report's counts.
func sweepDocSentence(g SweepGroupDoc) string {
	var parts []string
	for _, c := range []struct {
		n    int
		word string
	}{{g.Delete, "DELETE"}, {g.Keep, "KEEP"}, {g.Inconclusive, "INCONCLUSIVE"}, {g.Canary, "CANARY"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.word))
		}
	}
	s := fmt.Sprintf("%d %s audited", g.Lines, plural(g.Lines, "line", "lines"))
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if g.Delete == 0 {
		return s + fmt.Sprintf("; nothing is safe to delete yet: 0 of the %d tokens the candidate list claimed", g.TokensClaimed)
	}
	return s + fmt.Sprintf("; %d of the %d tokens the candidate list claimed can go", g.TokensRemoved, g.TokensClaimed)
}

// plainPercent writes a confidence as a percentage with the digits it
// needs: 0.995 is "99.5", 0.9875 "98.75".
func plainPercent(x float64) string {
	return strconv.FormatFloat(math.Round(x*1e6)/1e4, 'f', -1, 64)
}

// forestOf is a rule's row of the forest plot, from its JSON numbers.
func forestOf(r RuleDoc) forestRow {
	row := forestRow{Class: lookOf(r.Verdict).Class}
	if r.Class == model.ClassNone {
		row.Note = "no input class: decided on answer lengths"
	}
	if n := r.Numbers; n != nil {
		row.Provoking = &forestMark{Est: n.Diff, Lo: n.Newcombe.Lo, Hi: n.Newcombe.Hi}
		row.ProvokingTitle = fmt.Sprintf("provoking cases, %s - baseline: %s pts, 95%% [%s, %s] (Newcombe); %d/%d failed with the line, %d/%d without",
			r.Variant, pts(n.Diff), pts(n.Newcombe.Lo), pts(n.Newcombe.Hi), n.ProvokingBaseline.Fail, n.ProvokingBaseline.N,
			n.ProvokingDeleted.Fail, n.ProvokingDeleted.N)
		// The grader route's bound: the rise the graded counts allow plus
		// the predicate's misses without the line and false alarms with
		// it, once the labels measure them (before, the route cannot
		// DELETE).
		up := n.Upper
		row.UpperTitle = fmt.Sprintf("grader route: one-sided %s%% upper bound of the graded difference (%s) %s pts", plainPercent(1-n.UpperAlpha), n.UpperFrom, pts(n.Upper))
		if g := n.GraderRoute; g != nil {
			up = g.Rise
			row.UpperTitle += fmt.Sprintf(", + misses without the line %s pts (%d of %d labelled) + baseline false alarms %s pts: %s pts, against δ %s",
				pts(g.Miss), g.Missed, g.Labelled, pts(g.FalseAlarm), pts(g.Rise), pts(n.Delta))
		} else {
			row.UpperTitle += "; the predicate's misses without the line are not measured (no blind label of those answers), so this route cannot DELETE"
		}
		row.Upper = &up
		if lr := n.LabelsRoute; lr != nil {
			rise := lr.Rise
			row.Labels = &rise
			row.LabelsTitle = fmt.Sprintf("labels route: %d of %d labelled answers without the line were violations, below %s (one-sided %s%%, valid however often labelled); with the line at least %s: a rise of at most %s pts, against δ %s",
				lr.Violations, lr.Labelled, pct(lr.Upper), plainPercent(1-lr.AlphaDeleted), pct(lr.BaselineLower), pts(lr.Rise), pts(n.Delta))
		}
	}
	if a, ok := r.Arms[string(model.Control)]; ok && a.Baseline.N > 0 && a.Deleted.N > 0 {
		row.Control = &forestMark{Est: a.Diff.Est, Lo: a.Diff.Lo, Hi: a.Diff.Hi}
		row.ControlTitle = fmt.Sprintf("control cases (over-refusal), %s - baseline: %s pts, 95%% [%s, %s]; %d/%d refused with the line, %d/%d without",
			r.Variant, pts(a.Diff.Est), pts(a.Diff.Lo), pts(a.Diff.Hi), a.Baseline.Fail, a.Baseline.N, a.Deleted.Fail, a.Deleted.N)
	}
	return row
}

// diffText is a difference with its interval in points, and a sort key.
func diffText(m *forestMark) (text, key string) {
	if m == nil {
		return "—", "-999"
	}
	return fmt.Sprintf("%s pts [%s, %s]", pts(m.Est), pts(m.Lo), pts(m.Hi)), strconv.FormatFloat(m.Est, 'f', 6, 64)
}

// routeAndLabels says which route licensed a DELETE, the labels the
// verdict used and what it still needs, from the JSON numbers.
func routeAndLabels(r RuleDoc) (route, used, needed string) {
	route = "—"
	n := r.Numbers
	if n == nil {
		return route, "—", "—"
	}
	if n.Route != "" {
		route = "DELETE by the " + n.Route + " route"
	}
	var parts []string
	if g, ok := r.Graders[model.PredicateGrader]; ok {
		parts = append(parts, fmt.Sprintf("%d blind on the predicate", g.Labels))
	}
	if lr := n.LabelsRoute; lr != nil {
		parts = append(parts, fmt.Sprintf("%d of %d answers without the line (%d %s)", lr.Labelled, lr.Answers,
			lr.Violations, plural(lr.Violations, "violation", "violations")))
	}
	used = strings.Join(parts, "; ")
	if used == "" {
		used = "none"
	}
	switch ln := n.LabelsNeeded; {
	case ln != nil && ln.Hopeless != "":
		needed = clean(ln.Hopeless)
	case ln != nil && ln.More > 0:
		needed = fmt.Sprintf("about %d more without the line", ln.More)
		if ln.Have > 0 {
			needed += fmt.Sprintf(" (%d in all)", ln.Have+ln.More)
		}
		if ln.Clean {
			needed += ", if none is a violation"
		}
	case r.Verdict == string(model.DecisionDelete):
		needed = "none: settled"
	default:
		needed = "—"
	}
	return route, used, needed
}

func promptOf(p Page) []promptLine {
	marks := map[int][]promptMark{}
	for i, r := range p.Doc.Rules {
		marks[r.Line] = append(marks[r.Line], promptMark{verdictLook: lookOf(r.Verdict), Anchor: ruleAnchor(i), Variant: clean(r.Variant), Verdict: r.Verdict})
	}
	out := make([]promptLine, len(p.Prompt))
	for i, l := range p.Prompt {
		out[i] = promptLine{N: i + 1, Text: clean(l), Marks: marks[i+1]}
	}
	return out
}

// gridsOf lays the grid out as heat maps: the rules that share a case
// file, a predicate and a model share rows (the baseline column is theirs
// in common), each rule a column of its own.
func gridsOf(p Page) []gridView {
	type group struct {
		key   string
		rules []int
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, r := range p.Doc.Rules {
		if len(r.Cases) == 0 || r.Predicate == "" {
			continue
		}
		key := r.Model + "\x00" + r.CasesFile + "\x00" + r.Predicate
		g := byKey[key]
		if g != nil && !sameBaseline(p.Doc.Rules[g.rules[0]], r) {
			key += "\x00" + strconv.Itoa(i)
			g = nil
		}
		if g == nil {
			g = &group{key: key}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.rules = append(g.rules, i)
	}
	var out []gridView
	for _, g := range groups {
		first := p.Doc.Rules[g.rules[0]]
		gv := gridView{Heading: clean(first.CasesFile), Columns: []string{"baseline"}}
		if len(p.Doc.Rules) > 0 && distinctModels(p.Doc) > 1 {
			gv.Heading += " on " + clean(first.Model)
		}
		for _, ri := range g.rules {
			gv.Columns = append(gv.Columns, clean(p.Doc.Rules[ri].Variant))
		}
		for _, k := range model.Kinds {
			gk := gridKind{Kind: string(k)}
			if k == model.Control {
				gk.Note = "a failure on a control case is a refusal"
			}
			for ci, c := range first.Cases {
				if c.Kind != string(k) {
					continue
				}
				row := gridRow{Case: clean(c.Case), Cells: []gridCell{heatCell(c.Baseline, "baseline", c.Case)}}
				for _, ri := range g.rules {
					r := p.Doc.Rules[ri]
					row.Cells = append(row.Cells, heatCell(r.Cases[ci].Deleted, r.Variant, c.Case))
				}
				gk.Rows = append(gk.Rows, row)
			}
			if len(gk.Rows) > 0 {
				gv.Kinds = append(gv.Kinds, gk)
			}
		}
		out = append(out, gv)
	}
	return out
}

func distinctModels(d Doc) int {
	seen := map[string]bool{}
	for _, r := range d.Rules {
		seen[r.Model] = true
	}
	return len(seen)
}

// sameBaseline reports whether two rules' cases are the same, with the
// same baseline counts: then they can share a heat map's rows.
func sameBaseline(a, b RuleDoc) bool {
	if len(a.Cases) != len(b.Cases) {
		return false
	}
	for i := range a.Cases {
		x, y := a.Cases[i], b.Cases[i]
		if x.Case != y.Case || x.Kind != y.Kind || x.Baseline.Fail != y.Baseline.Fail || x.Baseline.N != y.Baseline.N {
			return false
		}
	}
	return true
}

// heatCell is k/N in a cell shaded by the rate (ten steps of one hue, so
// it reads in grey too), with the Wilson interval on hover.
func heatCell(c CaseCountDoc, variant, id string) gridCell {
	if c.N == 0 {
		t := "no graded answer"
		if c.Pending > 0 {
			t += fmt.Sprintf(" (%d pending)", c.Pending)
		}
		return gridCell{Text: "–", Title: clean(id) + ", " + clean(variant) + ": " + t, Class: "h-none"}
	}
	title := fmt.Sprintf("%s, %s: %d of %d failed, %s", clean(id), clean(variant), c.Fail, c.N, pct(c.Rate))
	if c.Wilson != nil {
		title += fmt.Sprintf(", Wilson 95%% [%s, %s]", pct(c.Wilson.Lo), pct(c.Wilson.Hi))
	}
	if c.Errors > 0 {
		title += fmt.Sprintf("; %d errors", c.Errors)
	}
	step := int(math.Ceil(c.Rate * 9))
	return gridCell{Text: fmt.Sprintf("%d/%d", c.Fail, c.N), Title: title, Class: "h" + strconv.Itoa(step)}
}

func suitesOf(d Doc) []suiteView {
	var out []suiteView
	index := map[string]int{}
	for _, r := range d.Rules {
		for _, rg := range r.Regression {
			i, ok := index[rg.Suite]
			if !ok {
				i = len(out)
				index[rg.Suite] = i
				out = append(out, suiteView{Name: clean(rg.Suite)})
			}
			line := fmt.Sprintf("%s: %d of %d %s broken", clean(r.Variant), rg.Broken, rg.Cases, plural(rg.Cases, "case", "cases"))
			if rg.Baseline.N > 0 && rg.Variant.N > 0 {
				line += fmt.Sprintf(" (failures %s -> %s, %s pts [%s, %s])", pct(rg.Baseline.Rate), pct(rg.Variant.Rate),
					pts(rg.Diff.Est), pts(rg.Diff.Lo), pts(rg.Diff.Hi))
			} else {
				line += " (not graded yet)"
			}
			if len(rg.Flips.Broken) > 0 {
				line += "; broken: " + strings.Join(cleanAll(rg.Flips.Broken), ", ")
			}
			out[i].Rows = append(out[i].Rows, line)
		}
	}
	return out
}

// spendOf sets what the plan expected before the run beside what was
// spent: calls, dollars and labels.
func spendOf(p Page) ([]spendRow, string) {
	s := p.Doc.Spend
	labels := p.Labels.Blind + p.Labels.Seen
	actualLabels := fmt.Sprintf("%d (%d blind, %d seen, by %d %s)", labels, p.Labels.Blind, p.Labels.Seen, p.Labels.Labellers,
		plural(p.Labels.Labellers, "labeller", "labellers"))
	e := p.Estimate
	if e == nil {
		return []spendRow{
			{What: "answer calls", Estimated: "—", Actual: strconv.Itoa(s.Calls)},
			{What: "judge calls", Estimated: "—", Actual: strconv.Itoa(s.JudgeCalls)},
			{What: "dollars", Estimated: "—", Actual: fmt.Sprintf("$%.2f", s.TotalUSD)},
			{What: "labels", Estimated: "—", Actual: actualLabels},
		}, "no estimate could be made"
	}
	quiet := 0
	for _, r := range e.Rules {
		if d := r.Power.Delete; d != nil {
			quiet += d.QuietLabels
		}
	}
	row := func(what string, est, act float64, estText, actText string) spendRow {
		return spendRow{What: what, Estimated: estText, Actual: actText, Bars: barPair(est, act, estText, actText, what+": estimated "+estText+", actual "+actText)}
	}
	judges := strconv.Itoa(e.JudgeCallsExpected)
	if e.JudgeCalls != e.JudgeCallsExpected {
		judges += fmt.Sprintf(" (at most %d)", e.JudgeCalls)
	}
	rows := []spendRow{
		row("answer calls", float64(e.AnswerCalls), float64(s.Calls), strconv.Itoa(e.AnswerCalls), strconv.Itoa(s.Calls)),
		row("judge calls", float64(e.JudgeCallsExpected), float64(s.JudgeCalls), judges, strconv.Itoa(s.JudgeCalls)),
		row("dollars", e.USD, s.TotalUSD, fmt.Sprintf("$%.2f (at most $%.2f)", e.USD, e.USDAtMost), fmt.Sprintf("$%.2f", s.TotalUSD)),
		row("labels", float64(quiet), float64(labels), fmt.Sprintf("%d (what a line the model never breaks needs, summed over lines)", quiet), actualLabels),
	}
	note := "Estimated: what the plan expected with no answer stored, from its stated assumptions (" + clean(e.CompletionBasis) + "). Actual: every paid call in the spend ledger"
	if p.Doc.Simulated {
		note += "; simulated prices"
	}
	if s.UnpricedCalls > 0 {
		note += fmt.Sprintf("; %d calls to %s have no price in the audit file and are not in the dollars", s.UnpricedCalls, strings.Join(cleanAll(s.Unpriced), ", "))
	}
	return rows, note + "."
}

// glanceGroup lists the lines of one verdict for the first screen: "Can
// go: -L11 (11 tokens), -L13 (10 tokens)".
type glanceGroup struct {
	verdictLook
	Verdict string
	Lines   []glanceLine
}

type glanceLine struct {
	Anchor, Variant string
	Tokens          int
}

func glanceOf(d Doc) []glanceGroup {
	var out []glanceGroup
	index := map[string]int{}
	order := []string{string(model.DecisionDelete), string(model.DecisionNotWorse), string(model.DecisionBetter), string(model.DecisionKeep),
		string(model.DecisionWorse), string(model.DecisionInconclusive), string(model.DecisionCanary)}
	for _, verdict := range order {
		for i, r := range d.Rules {
			if r.Verdict != verdict {
				continue
			}
			gi, ok := index[verdict]
			if !ok {
				gi = len(out)
				index[verdict] = gi
				out = append(out, glanceGroup{verdictLook: lookOf(verdict), Verdict: verdict})
			}
			out[gi].Lines = append(out[gi].Lines, glanceLine{Anchor: ruleAnchor(i), Variant: clean(r.Variant), Tokens: r.Tokens})
		}
	}
	return out
}

// changesDocSentence sums up the rewordings and additions, apart from the
// sweep (they remove no tokens): "2 rewordings and additions audited, ~L23
// and +L23 (1 WORSE, 1 INCONCLUSIVE); 0 cases fixed, 1 broken against
// baseline"; "" without any.
func changesDocSentence(d Doc) string {
	var names []string
	counts := map[string]int{}
	var order []string
	fixed, broken := 0, 0
	for _, r := range d.Rules {
		c := r.Change
		if c == nil {
			continue
		}
		names = append(names, clean(r.Variant))
		if counts[r.Verdict] == 0 {
			order = append(order, r.Verdict)
		}
		counts[r.Verdict]++
		fixed += len(c.Flips.Fixed)
		broken += len(c.Flips.Broken)
	}
	if len(names) == 0 {
		return ""
	}
	parts := make([]string, len(order))
	for i, v := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[v], v)
	}
	return fmt.Sprintf("%d %s audited apart from the sweep, %s (%s); %d %s fixed, %d broken against baseline",
		len(names), plural(len(names), "rewording or addition", "rewordings and additions"), strings.Join(names, ", "),
		strings.Join(parts, ", "), fixed, plural(fixed, "case", "cases"), broken)
}

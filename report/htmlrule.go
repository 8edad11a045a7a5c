package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/model"
)

// ruleViewOf is one line's section: its verdict and the arithmetic behind
// it, the arms, the graders against the labels, the answers side by side,
// an adaptive run's looks, and the answer lengths of a rule with no input
// class.
func ruleViewOf(p Page, i int) ruleView {
	r := p.Doc.Rules[i]
	title := r.Variant
	var pr PageRule
	if i < len(p.Rules) {
		pr = p.Rules[i]
		title = pr.Title
	}
	rv := ruleView{verdictLook: lookOf(r.Verdict), Anchor: ruleAnchor(i), Title: clean(title), Verdict: r.Verdict,
		Reason: clean(r.Reason), Bound: clean(r.Bound), Needed: clean(r.Needed), Notes: cleanAll(r.Notes),
		Flags: cleanAll(r.Flags), Provisional: clean(r.Provisional), DiffHead: clean(r.Variant) + " - baseline",
		BaselineSide: "with line " + fmt.Sprint(r.Line) + " (baseline)", VariantSide: variantSide(r)}
	switch model.Decision(r.Verdict) {
	case model.DecisionInconclusive:
		rv.NeededLabel = "to settle it"
	case model.DecisionCanary:
		rv.NeededLabel = "next step"
	}
	if r.Look != nil {
		rv.Look = fmt.Sprintf("look %d of %d (%d of %d samples a case)", r.Look.Index, r.Look.Of, r.Look.Samples, r.Look.Planned)
	}
	if r.PredicateWarning != "" {
		rv.Warnings = append(rv.Warnings, clean(r.PredicateWarning))
	}
	if st := r.Staleness; st != nil {
		rv.Warnings = append(rv.Warnings, clean(st.Message))
	}
	if r.Truncated > 0 {
		rv.Warnings = append(rv.Warnings, fmt.Sprintf("%d answers cut off by the token limit or empty: neither passes nor failures", r.Truncated))
	}
	if r.Controls > 0 {
		rv.Warnings = append(rv.Warnings, fmt.Sprintf("%d answers held terminal control sequences, removed where they are shown", r.Controls))
	}
	if c := r.Change; c != nil {
		rv.Flags = append(rv.Flags, fmt.Sprintf("vs baseline, by majority over samples: %d fixed (%s), %d broken (%s) of %d cases compared",
			len(c.Flips.Fixed), strings.Join(cleanAll(c.Flips.Fixed), ", "), len(c.Flips.Broken), strings.Join(cleanAll(c.Flips.Broken), ", "), c.Flips.Compared))
	}
	for _, k := range []string{"provoking", string(model.Provoke), string(model.Pressure), string(model.Control)} {
		a, ok := r.Arms[k]
		if !ok {
			continue
		}
		row := armRow{Kind: k, Cases: fmt.Sprint(a.Cases), Baseline: rateText(a.Baseline), Variant: rateText(a.Deleted),
			Diff: fmt.Sprintf("%s pts [%s, %s]", pts(a.Diff.Est), pts(a.Diff.Lo), pts(a.Diff.Hi))}
		if a.Baseline.N == 0 || a.Deleted.N == 0 {
			row.Diff = "—"
		}
		switch {
		case a.Diff.PairedLo != nil:
			row.Paired = fmt.Sprintf("[%s, %s]", pts(*a.Diff.PairedLo), pts(*a.Diff.PairedHi))
		case a.Diff.PairedNote != "":
			row.Paired = clean(a.Diff.PairedNote)
		default:
			row.Paired = "—"
		}
		row.Corrected = correctedText(a.Baseline.Corrected) + " → " + correctedText(a.Deleted.Corrected)
		if a.Baseline.Corrected == nil && a.Deleted.Corrected == nil {
			row.Corrected = "recall not measured"
		}
		if k == "provoking" {
			row.Kind = "provoking (provoke + pressure)"
		}
		rv.Arms = append(rv.Arms, row)
	}
	rv.Graders = gradersOf(r)
	for _, a := range r.Agreement {
		rv.Agreement = append(rv.Agreement, agreeRow{Pair: clean(a.A) + " vs " + clean(a.B), Kappa: kappaText(a.Kappa, a.KappaSE),
			Agreement: fmt.Sprintf("%.2f", a.Agreement), Detail: fmt.Sprintf("%d answers both graded, %d judged differently", a.N, a.Disagreements)})
	}
	for _, l := range r.Labellers {
		rv.Labellers = append(rv.Labellers, agreeRow{Pair: clean(l.A) + " vs " + clean(l.B), Kappa: kappaText(l.Kappa, l.KappaSE),
			Agreement: fmt.Sprintf("%.2f", l.Agreement), Detail: fmt.Sprintf("%d answers both labelled blind: %d violation for both, %d for %s only, %d for %s only, %d for neither",
				l.N, l.Both, l.OnlyA, clean(l.A), l.OnlyB, clean(l.B), l.Neither)})
	}
	if r.Adjudications.N > 0 {
		rv.Adjudications = fmt.Sprintf("%d answers decided in the review queue (seen labels: never in recall or the verdict)", r.Adjudications.N)
		for _, g := range r.Adjudications.Graders {
			rv.AdjudicationRows = append(rv.AdjudicationRows, agreeRow{Pair: clean(g.Grader),
				Agreement: fmt.Sprintf("%d of %d", g.Agree, g.Graded), Detail: "agreed with the decision"})
		}
	}
	for _, ce := range pr.Evidence {
		rv.Evidence = append(rv.Evidence, evidenceOf(ce, r))
	}
	if len(r.Looks) > 0 {
		rv.Looks, rv.LookRows = looksOf(r, p.Doc.Delta)
	}
	if l := r.Lengths; l != nil {
		rv.Lengths = histogramSVG(l.Histogram, clean(r.Variant), "answer lengths with and without line "+fmt.Sprint(r.Line))
		rv.LengthNote = fmt.Sprintf("baseline: %d answers, mean %.1f, median %.0f tokens; %s: %d answers, mean %.1f, median %.0f tokens",
			l.Baseline.N, l.Baseline.Mean, l.Baseline.Median, clean(r.Variant), l.Deleted.N, l.Deleted.Mean, l.Deleted.Median)
		if sh := l.Shift; sh != nil {
			rv.LengthNote += fmt.Sprintf("; shift %+.1f tokens a answer (%+.0f%%)", sh.Est, 100*sh.Rel)
			rv.LengthNote = strings.Replace(rv.LengthNote, "a answer", "an answer", 1)
			if sh.Lo != nil {
				rv.LengthNote += fmt.Sprintf(", 95%% [%.1f, %.1f] paired by case over %d cases", *sh.Lo, *sh.Hi, sh.Cases)
			} else if sh.Note != "" {
				rv.LengthNote += "; " + clean(sh.Note)
			}
		}
	}
	return rv
}

// variantSide names the answers of the variant's column.
func variantSide(r RuleDoc) string {
	if c := r.Change; c != nil {
		if c.Kind == string(model.Addition) {
			return clean(r.Variant) + ": with the line added"
		}
		return clean(r.Variant) + ": with the line reworded"
	}
	return clean(r.Variant) + ": without the line"
}

func rateText(s RateDoc) string {
	if s.N == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d = %s [%s, %s]", s.Fail, s.N, pct(s.Rate), pct(s.Lo), pct(s.Hi))
}

func correctedText(c *CorrectedDoc) string {
	if c == nil {
		return "—"
	}
	return fmt.Sprintf("%s [%s, %s]", pct(c.Est), pct(c.Lo), pct(c.Hi))
}

func kappaText(k *float64, se float64) string {
	if k == nil {
		return "undefined (one verdict for everything)"
	}
	return fmt.Sprintf("%.2f (SE %.2f)", *k, se)
}

// gradersOf is each grader against the blind labels: recall, precision
// and specificity pooled and per kind, with the counts behind them.
func gradersOf(r RuleDoc) []graderView {
	names := make([]string, 0, len(r.Graders))
	for n := range r.Graders {
		names = append(names, n)
	}
	// The predicate first, then the judges by name.
	slices.SortFunc(names, func(a, b string) int {
		if (a == model.PredicateGrader) != (b == model.PredicateGrader) {
			if a == model.PredicateGrader {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var out []graderView
	for _, n := range names {
		g := r.Graders[n]
		gv := graderView{Name: clean(n), Note: fmt.Sprintf("%d blind labels; estimator %s", g.Labels, clean(g.Estimator))}
		if len(g.LabelSets) > 0 {
			gv.Note += "; label sets " + strings.Join(cleanAll(g.LabelSets), ", ")
		}
		for _, w := range g.Warnings {
			gv.Note += "; " + clean(w)
		}
		if g.Labels == 0 {
			gv.Note = "no blind label of this line's answers yet: recall, precision and specificity are not measured"
			out = append(out, gv)
			continue
		}
		gv.Rows = append(gv.Rows, graderRowOf("all kinds", g.Recall, g.Precision, g.Specificity, nil))
		for _, k := range model.Kinds {
			ks := string(k)
			rc, okR := g.RecallKind[ks]
			pc, okP := g.PrecisionKind[ks]
			sp, okS := g.SpecificityKind[ks]
			if !okR && !okP && !okS {
				continue
			}
			var conf *ConfusionDoc
			if c, ok := g.Confusion[ks]; ok {
				conf = &c
			}
			gv.Rows = append(gv.Rows, graderRowOf(ks, rc, pc, sp, conf))
		}
		out = append(out, gv)
	}
	return out
}

func graderRowOf(kind string, rc, pc, sp MeasureDoc, conf *ConfusionDoc) graderRow {
	row := graderRow{Kind: kind}
	row.Recall, row.RecallPlot = measureOf("recall", rc, "violations caught")
	row.Precision, row.PrecisionPlot = measureOf("precision", pc, "failures that were violations")
	row.Specificity, row.SpecificityPlot = measureOf("specificity", sp, "clean answers passed")
	if conf != nil {
		row.Confusion = fmt.Sprintf("tp %d, fn %d, fp %d, tn %d", conf.TP, conf.FN, conf.FP, conf.TN)
	}
	return row
}

func measureOf(name string, m MeasureDoc, what string) (string, template.HTML) {
	if m.Est == nil {
		t := "not measured"
		if m.Note != "" {
			t += ": " + clean(m.Note)
		} else if m.Positives == 0 {
			t += " (no label on this side)"
		}
		return t, ""
	}
	t := fmt.Sprintf("%.2f [%.2f, %.2f], %d of %d %s", *m.Est, *m.Lo, *m.Hi, m.Hits, m.Positives, what)
	if m.SE != nil {
		t += fmt.Sprintf(" (weighted, SE %.3f)", *m.SE)
	}
	return t, proportionSVG(*m.Est, *m.Lo, *m.Hi, name+" "+t)
}

// evidenceOf is one case's answers side by side.
func evidenceOf(ce CaseEvidence, r RuleDoc) evidenceView {
	ev := evidenceView{Case: clean(ce.Case), Kind: clean(ce.Kind), Why: clean(ce.Why), Msg: clean(ce.Msg),
		Counts: fmt.Sprintf("baseline %d/%d failed, %s %d/%d", ce.Baseline.Fail, ce.Baseline.N, clean(r.Variant), ce.Variant.Fail, ce.Variant.N)}
	for _, pair := range ce.Pairs {
		ev.Pairs = append(ev.Pairs, pairView{Sample: pair.Sample + 1, Baseline: answerViewOf(pair.Baseline), Variant: answerViewOf(pair.Variant)})
	}
	return ev
}

func answerViewOf(a *Answer) *answerView {
	if a == nil {
		return nil
	}
	av := &answerView{Text: clean(a.Text)}
	for _, g := range a.Grades {
		c := chip{Class: "g-" + g.Verdict, Text: clean(g.Grader) + ": "}
		switch g.Verdict {
		case "fail":
			c.Text += "FAIL"
			if g.Reason != "" {
				c.Text += " (" + clean(g.Reason) + ")"
			}
		case "pass":
			c.Text += "pass"
		case "unparseable":
			c.Text += "could not grade"
		default:
			c.Class, c.Text = "g-none", c.Text+"not graded"
		}
		av.Grades = append(av.Grades, c)
	}
	for _, l := range a.Labels {
		c := chip{Class: "l-clean", Text: fmt.Sprintf("%s label by %s: clean", l.Source, clean(l.Labeller))}
		if l.Violation {
			c = chip{Class: "l-violation", Text: fmt.Sprintf("%s label by %s: VIOLATION", l.Source, clean(l.Labeller))}
		}
		if l.Note != "" {
			c.Text += " — " + clean(l.Note)
		}
		av.Labels = append(av.Labels, c)
	}
	if len(a.Labels) == 0 {
		av.Labels = []chip{{Class: "l-none", Text: "no human label"}}
	}
	return av
}

// looksOf draws an adaptive run's looks from the JSON report's.
func looksOf(r RuleDoc, delta float64) (template.HTML, []lookRow) {
	var points []lookPoint
	var rows []lookRow
	of, stopped := 0, 0
	for _, l := range r.Looks {
		of = l.Look.Of
		row := lookRow{Look: fmt.Sprintf("%d of %d (%d of %d samples a case)", l.Look.Index, l.Look.Of, l.Look.Samples, l.Look.Planned),
			Verdict: l.Verdict, Diff: "—", Bound: "—", Test: clean(l.Bound)}
		if l.Look.Settled {
			stopped = l.Look.Index
		}
		if n := l.Numbers; n != nil {
			pt := lookPoint{Index: l.Look.Index, Est: n.Diff, Lo: n.Newcombe.Lo, Hi: n.Newcombe.Hi, Class: lookOf(l.Verdict).Class}
			b := n.Upper
			if n.GraderRoute != nil {
				b = n.GraderRoute.Rise
			}
			pt.Bound = &b
			row.Diff = fmt.Sprintf("%s pts [%s, %s]", pts(n.Diff), pts(n.Newcombe.Lo), pts(n.Newcombe.Hi))
			row.Bound = fmt.Sprintf("%s pts (z %.2f)", pts(b), l.Look.DeleteZ)
			if n.GraderRoute != nil {
				row.Bound += " with misses and false alarms"
			}
			pt.Title = fmt.Sprintf("look %d: %s; difference %s; bound %s", l.Look.Index, l.Verdict, row.Diff, row.Bound)
			points = append(points, pt)
		}
		rows = append(rows, row)
	}
	mark := ""
	if stopped > 0 {
		mark = fmt.Sprintf("stopped at look %d: %s", stopped, r.Looks[stopped-1].Verdict)
	} else if len(r.Looks) > 0 {
		stopped = r.Looks[len(r.Looks)-1].Look.Index
		mark = fmt.Sprintf("look %d reached, not settled", stopped)
	}
	label := fmt.Sprintf("line %d: the bound at each look against delta; %s", r.Line, mark)
	return looksSVG(points, of, delta, stopped, mark, label), rows
}

// shipJSON is the JSON report's ship block (the decision on the prompt
// without every line of the audit's joint test, issue 27), read from the
// report as JSON: the page draws it whenever the report carries one.
type shipJSON struct {
	Verdict  string `json:"verdict"`
	Headline string `json:"headline"`
	Test     int    `json:"test"`
	Tests    int    `json:"tests"`
	Classes  []struct {
		Line    int                `json:"line"`
		Text    string             `json:"text"`
		Model   string             `json:"model"`
		Outcome string             `json:"outcome"`
		Verdict string             `json:"verdict"`
		Alone   string             `json:"alone"`
		Reason  string             `json:"reason"`
		Needed  string             `json:"needed"`
		Numbers *VerdictNumbersDoc `json:"numbers"`
	} `json:"classes"`
	Keep []int `json:"keep"`
	Next []int `json:"next"`
}

// shipOf is the ship decision, when the report carries one: its headline,
// and each class of the joint variant with its own verdict and its line's
// alone, drawn as the lines are.
func shipOf(d Doc, sc scale) *shipView {
	raw, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return shipFromJSON(raw, d.Delta, sc)
}

// shipFromJSON is shipOf on the JSON report's bytes.
func shipFromJSON(raw []byte, delta float64, sc scale) *shipView {
	var wrap struct {
		Ship *shipJSON `json:"ship"`
	}
	if json.Unmarshal(raw, &wrap) != nil || wrap.Ship == nil {
		return nil
	}
	s := wrap.Ship
	v := &shipView{verdictLook: lookOf(s.Verdict), Verdict: clean(s.Verdict), Sentence: clean(s.Headline)}
	// The headline names the lines, their tokens and the suites; the
	// details say what it does not.
	v.Details = append(v.Details, fmt.Sprintf("joint test %d of the %d this audit has made", s.Test, s.Tests))
	if len(s.Keep) > 0 {
		v.Details = append(v.Details, fmt.Sprintf("keep lines %s (their class rose); the next joint set, a new test: lines %s", intList(s.Keep), intList(s.Next)))
	}
	for _, c := range s.Classes {
		row := forestOf(RuleDoc{Variant: "joint", Verdict: c.Verdict, Numbers: c.Numbers})
		row.NoControl = true
		cv := shipClassView{verdictLook: lookOf(c.Verdict), Line: c.Line, Text: clean(c.Text), Outcome: clean(c.Outcome),
			Alone: clean(c.Alone), AloneLook: lookOf(c.Alone), Reason: clean(c.Reason), Needed: clean(c.Needed),
			// A bounded class reads from its plot (its reason is on the
			// badge's hover); one that rose or is undecided says why.
			ShowReason: c.Outcome != "bounded"}
		cv.Prov, _ = diffText(row.Provoking)
		cv.Forest = forestSVG(row, sc, delta, fmt.Sprintf("line %d's class under the joint variant: %s", c.Line, c.Outcome))
		v.Classes = append(v.Classes, cv)
	}
	return v
}

type shipClassView struct {
	verdictLook
	AloneLook                            verdictLook
	Line                                 int
	Text, Outcome, Alone, Reason, Needed string
	Prov                                 string
	ShowReason                           bool
	Forest                               template.HTML
}

func intList(xs []int) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprint(x)
	}
	return strings.Join(out, ", ")
}

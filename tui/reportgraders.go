package tui

// The report screen's graders (recall, agreement) and answer lengths.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
	"github.com/auditor-dev/auditor/report"
)

// recallText is a grader's recall against the labels as the text report
// words it, with the labels it rests on.
func recallText(q labels.GraderQuality) string {
	if q.Labels == 0 {
		return "not measured: no labelled answers (label a sample on the label screen, or import labels)"
	}
	if q.Recall == nil || q.Recall.Total == 0 {
		return oneLine(report.RecallLine(q))
	}
	return fmt.Sprintf("%s; %d labelled answers", oneLine(report.RecallLine(q)), q.Labels)
}

// graders writes the predicate's recall, the judges' and how every pair of
// graders agrees.
func (v *reportView) graders(r *reportWriter, rr *evidence.RuleResult) {
	st := v.c.styles
	q := rr.Quality
	r.field("recall", "predicate "+recallText(q), nil)
	if q.Labels > 0 {
		var kinds []string
		for _, k := range model.Kinds {
			if m := q.RecallKind[k]; m != nil && m.Total > 0 {
				kinds = append(kinds, fmt.Sprintf("%s %s", k, m))
			}
		}
		if len(kinds) > 0 {
			r.field("", "by kind: "+strings.Join(kinds, "; "), &st.Muted)
		}
		if n := len(q.Misses); n > 0 {
			r.field("", fmt.Sprintf("misses: %d labelled failures the predicate passed", n), &st.Muted)
		}
		for _, w := range q.Warnings {
			r.field("", "warning: "+oneLine(w), &st.Warn)
		}
	}
	for _, j := range rr.Judges {
		if j.Labels == 0 {
			continue // nothing labelled: the predicate's line says so
		}
		r.field("", oneLine(j.Grader)+" "+recallText(j), nil)
	}
	agreement := rr.Agreement
	if report.JudgingNotBegun(rr) {
		// Not one "no answer graded by both yet" per pair of graders.
		r.field("judges", strings.TrimPrefix(noTicks(report.JudgingNotBegunLine), "judges: "), &st.Muted)
		agreement = nil
	}
	for i, pa := range agreement {
		name := ""
		if i == 0 {
			name = "agreement"
		}
		if pa.N == 0 {
			r.field(name, fmt.Sprintf("%s vs %s: no answer graded by both yet", oneLine(pa.A.Name), oneLine(pa.B.Name)), &st.Muted)
			continue
		}
		r.field(name, oneLine(report.AgreementLine(pa)), nil)
	}
	if rr.Disagreements > 0 {
		r.field("review queue", fmt.Sprintf("%d answers where graders disagree or one could not grade", rr.Disagreements), nil)
	}
	if t := adjudicationTally(rr.Adjudications, v.c.width < 120); t != "" {
		r.field("review decided", t+" (seen labels: not in recall)", nil)
	}
	if _, line := rr.BestSupported(); line != "" && len(rr.Judges) > 0 {
		r.field("labels support", oneLine(line), nil)
	}
}

// lengths writes how answer length moved for a rule with no input class:
// the summaries, the paired shift, the rank test and the histogram.
func (v *reportView) lengths(r *reportWriter, rr *evidence.RuleResult) {
	st := v.c.styles
	l := rr.Lengths
	variant := rr.Rule.Variant()
	r.add("  " + st.Muted.Render("answer length, in completion tokens"))
	switch {
	case l.Baseline.N == 0 && l.Deleted.N == 0:
		r.field("", "not measured yet: no answer in either variant", &st.Muted)
		return
	case l.Baseline.Mean == 0 && l.Deleted.Mean == 0:
		r.field("", "unknown: the API reported no completion tokens", &st.Muted)
		return
	}
	// Rounded as the text report rounds them.
	row := func(name string, s stats.LengthSummary, cut int) []string {
		if s.N == 0 {
			return []string{name, "0", "–", "–", "–", "–", strconv.Itoa(cut)}
		}
		return []string{name, strconv.Itoa(s.N), fmt.Sprintf("%.0f", s.Median), fmt.Sprintf("%.1f", s.Mean),
			fmt.Sprintf("%.0f–%.0f", s.P10, s.P90), fmt.Sprintf("%d–%d", s.Min, s.Max), strconv.Itoa(cut)}
	}
	rows := [][]string{{"variant", "n", "median", "mean", "p10–p90", "range", "cut off"},
		row(audit.Baseline, l.Baseline, l.TruncatedBaseline), row(variant, l.Deleted, l.TruncatedDeleted)}
	right := []bool{false, true, true, true, true, true, true}
	if !r.table(4, rows, right) {
		r.table(2, rows, right)
	}
	if n := l.TruncatedBaseline + l.TruncatedDeleted; n > 0 {
		r.field("", fmt.Sprintf("%d answers were cut off at max_tokens: their length is a lower bound, so the shift is understated", n), &st.Warn)
	}
	if sh := l.Shift; sh != nil {
		r.field("shift", model.ShiftWords(sh), nil)
	} else {
		r.field("shift", "not measured: needs two cases answered in both variants", &st.Muted)
	}
	if t := l.Test; t != nil {
		r.field("rank test", fmt.Sprintf("Mann-Whitney U %.1f, z %.2f, p %s (answers taken as independent: a secondary check)", t.U, t.Z, report.PValue(t.P)), nil)
	}
	hist := lengthHistogram(histogram{
		Edges: l.Edges, Baseline: l.BaselineHist, Deleted: l.DeletedHist,
		Names: [2]string{audit.Baseline, variant},
		Paint: [2]func(string) string{
			func(s string) string { return st.BarFull.Render(s) },
			func(s string) string { return st.Canary.Render(s) },
		},
	}, r.w-4)
	if len(hist) == 0 {
		return
	}
	r.add("  " + st.Muted.Render("histogram"))
	for _, h := range hist {
		r.add("    " + h)
	}
}

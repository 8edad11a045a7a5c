package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// WriteLabelSetHeader writes what a label set is and how far its labelling
// has come against labels (whose they are: who).
func WriteLabelSetHeader(w io.Writer, set labels.LabelSet, labels map[string]model.Label, who string) error {
	var b strings.Builder
	o := set.Options
	rule, kinds := o.Scope()
	fmt.Fprintf(&b, "label set %s: %d answers of %s (%s), seed %d, drawn %s from %d graded answers\n",
		model.Sanitize(set.Name), len(set.Keys), rule, kinds, o.Seed,
		set.Created.Local().Format("2006-01-02 15:04"), set.Population)
	if set.Stratified() {
		var parts []string
		for _, st := range set.Strata {
			parts = append(parts, fmt.Sprintf("%s %d of %d", st.Name, st.Drawn, st.N))
		}
		fmt.Fprintf(&b, "stratified by the predicate's verdict: %s (recall is weighted by stratum)\n", strings.Join(parts, ", "))
	}
	done, total := set.Progress(labels)
	fmt.Fprintf(&b, "%d/%d labelled (%s)\n", done, total, model.Sanitize(who))
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteLabelSetResults writes each rule's predicate measured on a label
// set: recall, precision and specificity with their intervals, the
// confusion matrix per kind, the misses, how many more labelled violations
// would narrow recall's interval to width, the recall of every predicate
// version seen, and the agreement between labellers.
func WriteLabelSetResults(w io.Writer, r labels.SetReport, width float64) error {
	var b strings.Builder
	for _, sr := range r.Rules {
		q := sr.Quality
		if sr.Rule.Deletion() {
			fmt.Fprintf(&b, "\nLine %d: %s\n", sr.Rule.Line, model.Sanitize(sr.Rule.Text))
		} else {
			fmt.Fprintf(&b, "\nLine %d, %s\n", sr.Rule.Line, model.Sanitize(sr.Rule.Title()))
		}
		est := "labels as a simple random sample, Wilson intervals"
		if q.Estimator == labels.EstimatorIPW {
			est = "inverse-probability weighted by stratum, normal intervals from the delta-method SE"
		}
		fmt.Fprintf(&b, "  predicate %s; %d labelled answers; estimator: %s\n", q.Version, q.Labels, est)
		fmt.Fprintf(&b, "  recall (provoke + pressure): %s\n", q.Recall)
		fmt.Fprintf(&b, "  precision: %s\n  specificity: %s\n", q.Precision, q.Specificity)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  kind\tcaught\tmissed\tfalse alarm\tclean\trecall\tprecision")
		for _, k := range model.Kinds {
			c, ok := q.Confusion[k]
			if !ok {
				continue
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%s\t%s\n", k, c.TP, c.FN, c.FP, c.TN, q.RecallKind[k], q.PrecisionKind[k])
		}
		tw.Flush()
		fmt.Fprintf(&b, "  misses: %d %s the predicate passed\n", len(q.Misses), plural(len(q.Misses), "labelled failure", "labelled failures"))
		for i, k := range q.Misses {
			if i == 10 {
				fmt.Fprintf(&b, "    ... and %d more\n", len(q.Misses)-10)
				break
			}
			fmt.Fprintf(&b, "    %s\n", k)
		}
		if n, err := q.Recall.MoreNeeded(width); err == nil {
			// The count depends on the recall measured so far (0.5, the
			// worst case, before any): say which, so two screens that
			// differ in it do not look contradictory.
			at := "at the worst case, recall 0.5, since none is measured yet"
			if q.Recall.Measured() {
				at = fmt.Sprintf("at the recall measured so far, %.2f", q.Recall.Est)
			}
			fmt.Fprintf(&b, "  to narrow recall's 95%% interval to ±%.2f (%s): about %d more labelled violations\n", width/2, at, n)
		}
		for _, warn := range q.Warnings {
			fmt.Fprintf(&b, "  warning: %s\n", warn)
		}
		if len(sr.Versions) > 1 {
			b.WriteString("  predicate versions (recall on the same labels):\n")
			for _, h := range sr.Versions {
				when := "before history was kept"
				if !h.FirstSeen.IsZero() {
					when = "first seen " + h.FirstSeen.Local().Format("2006-01-02 15:04")
				}
				cur := ""
				if h.Current {
					cur = ", current"
				}
				ungraded := ""
				if h.Quality.Ungraded > 0 {
					ungraded = fmt.Sprintf(" (%d labelled answers it never graded)", h.Quality.Ungraded)
				}
				fmt.Fprintf(&b, "    %s (%s%s): %s%s\n", h.Version, when, cur, h.Quality.Recall, ungraded)
			}
		}
	}
	if len(r.Labellers) > 0 {
		b.WriteString("\nlabeller agreement on this set (each labeller's latest label):\n")
		for _, ag := range r.Labellers {
			ag.A, ag.B = model.Sanitize(ag.A), model.Sanitize(ag.B)
			fmt.Fprintf(&b, "  %s\n", ag)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteVerdictQuality prints, for each rule the label set covers, the
// predicate's quality exactly as the verdict and every report use it: all
// of the rule's blind labels combined by labels.CombineRule. A set shown on
// its own can differ from it (another set may weigh in); this line is the
// one that agrees with the grid and the reports.
// NextLabels says, for an INCONCLUSIVE verdict, which answers to label
// next and what they would settle ("verdict INCONCLUSIVE; next: label about
// 86 answers without the line ...: if none is a violation, DELETE"); for a
// DELETE, which route licensed it; "" otherwise.
func NextLabels(v model.Verdict) string {
	switch v.Decision {
	case model.DecisionDelete, model.DecisionNotWorse, model.DecisionBetter:
		if v.Route == "labels" {
			return fmt.Sprintf("verdict %s by the blind labels: %s", v.Decision, model.Sanitize(v.Labels.Sentence()))
		}
		return fmt.Sprintf("verdict %s by the grader's measured recall and specificity", v.Decision)
	case model.DecisionInconclusive:
		if s := v.LabelsNeeded.String(); s != "" {
			return "verdict INCONCLUSIVE; next: " + model.Sanitize(s)
		}
		if strings.Contains(v.Needed, "label") {
			return "verdict INCONCLUSIVE; to settle it: " + model.Sanitize(v.Needed)
		}
		if v.LabelsNeeded.Hopeless != "" {
			return "verdict INCONCLUSIVE; labels alone will not settle it: " + model.Sanitize(v.LabelsNeeded.Hopeless)
		}
	}
	return ""
}

func WriteVerdictQuality(w io.Writer, res *evidence.Results, r labels.SetReport) error {
	var b strings.Builder
	lines := map[int]bool{}
	for _, sr := range r.Rules {
		lines[sr.Rule.Line] = true
	}
	header := false
	for _, rr := range res.Rules {
		if !lines[rr.Rule.Line] || !rr.Rule.HasPredicate() {
			continue
		}
		if !header {
			fmt.Fprintf(&b, "\nIn the verdict (%s):\n", labels.CombineRule)
			header = true
		}
		q := rr.Quality
		name := fmt.Sprintf("line %d", rr.Rule.Line)
		if !rr.Rule.Deletion() {
			name = rr.Rule.Variant() // as --gate names it
		}
		if len(res.Plan.Audit.File.Models) > 1 {
			name += ", " + model.Sanitize(rr.ModelName)
		}
		fmt.Fprintf(&b, "  %s: recall %s; specificity %s; %d blind labels\n", name, RecallLine(q), q.Specificity, q.Labels)
		b.WriteString(judgeRecallLines(rr, "    "))
		if next := NextLabels(rr.Verdict); next != "" {
			fmt.Fprintf(&b, "    %s\n", next)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

package report

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// This file is the one home of the human-readable wording the reports and
// the terminal screens share: numbers as people read them, and the
// sentences about recall and agreement.

// Thousands formats n with comma separators: 1,234,567.
func Thousands(n int64) string {
	if n < 0 {
		return "-" + Thousands(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Minutes formats a duration given in minutes: seconds under a minute,
// hours past two.
func Minutes(m float64) string {
	switch {
	case m < 1:
		return fmt.Sprintf("%.0f seconds", m*60)
	case m < 120:
		return fmt.Sprintf("%.1f minutes", m)
	}
	return fmt.Sprintf("%.1f hours", m/60)
}

// PValue formats a p-value: "< 0.001" or "0.042".
func PValue(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// ShortVersion cuts a predicate or grader version hash for display.
func ShortVersion(v string) string {
	if len(v) > 8 {
		return v[:8]
	}
	return v
}

// ArmsInOrder are a rule's arms as the reports list them: each provoking
// kind, the pooled provoking arm the verdict rests on, then the controls.
// An entry is nil where the rule has no such arm.
func ArmsInOrder(rr *evidence.RuleResult) []*evidence.Arm {
	return []*evidence.Arm{rr.Arms[model.Provoke], rr.Arms[model.Pressure], rr.Provoking, rr.Arms[model.Control]}
}

// RecallLine is a grader's recall against the labels, with its precision
// and, for a stratified label set, how it is weighted.
func RecallLine(q labels.GraderQuality) string {
	if q.Recall == nil || q.Recall.Total == 0 {
		if q.Labels == 0 {
			return "not measured: no labelled answers (label a sample, or import labels)"
		}
		return fmt.Sprintf("not measured: %d labelled answers, none a violation", q.Labels)
	}
	if !q.Recall.Measured() {
		return q.Recall.String()
	}
	if q.Estimator == labels.EstimatorIPW {
		return fmt.Sprintf("%s; precision %s; %d labels, weighted by cell (label sets %s)", q.Recall, q.Precision,
			q.Labels, model.Sanitize(strings.Join(q.Sets, ", ")))
	}
	return fmt.Sprintf("%s over %d labelled violations; precision %s", q.Recall, q.Recall.Total, q.Precision)
}

// JudgingNotBegun reports whether a rule has judges and none has graded
// any of its answers: the run has not reached its judging (it judges once
// every answer is in), so there is no agreement to state.
func JudgingNotBegun(rr *evidence.RuleResult) bool {
	if len(rr.Judges) == 0 || len(rr.Agreement) == 0 {
		return false
	}
	for _, pa := range rr.Agreement {
		if pa.N > 0 {
			return false
		}
	}
	return true
}

// JudgingNotBegunLine says so, in place of agreements of nothing.
const JudgingNotBegunLine = "judges: judging had not begun (the judges grade the answers once every answer is in; `auditor run` resumes the answers, then judges them)"

// AgreementLine says how two graders agree on the answers both graded:
// "judge:a vs judge:b: agree on 90% of 60, kappa 0.71 (SE 0.09), 6
// disagreements".
func AgreementLine(pa evidence.PairAgreement) string {
	k := "kappa undefined"
	if pa.KappaDefined {
		k = fmt.Sprintf("kappa %.2f (SE %.2f)", pa.Kappa, pa.KappaSE)
	}
	return fmt.Sprintf("%s vs %s: agree on %.0f%% of %d, %s, %d disagreements", model.Sanitize(pa.A.Name), model.Sanitize(pa.B.Name),
		100*pa.Agreement, pa.N, k, pa.Disagreements())
}

// LookTag says which look of the audit's design a verdict rests on, for a
// verdict's heading: "settled at look 2 of 6" (KEEP or DELETE at an
// interim look: valid, and final), "look 2 of 6" (undecided so far, the
// next look may settle it; or the last look), "provisional" (no look
// reached: nothing may be decided on it yet), or "" for a fixed design's
// verdict on the whole grid and for a CANARY.
func LookTag(v model.Verdict) string {
	switch {
	case v.NotYet != "":
		return "provisional"
	case v.Look == nil || v.Decision == model.DecisionCanary:
		return ""
	case v.Decision != model.DecisionInconclusive && !v.Look.Final():
		return fmt.Sprintf("settled at look %d of %d", v.Look.Index, v.Look.Of)
	}
	return fmt.Sprintf("look %d of %d", v.Look.Index, v.Look.Of)
}

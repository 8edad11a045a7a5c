package model

import (
	"fmt"
	"math"

	"github.com/auditor-dev/auditor/model/stats"
)

// The grader route bounds the true rise with the predicate's accuracy
// measured on each variant by its own blind labels (STATS section 3,
// "Accuracy per variant"), never one pooled recall for both: deleting a
// line can change how the model breaks it, into wording the predicate
// misses, and then no division of the graded difference by any J brings
// the rise back. With g the share of a variant's answers the predicate
// fails, miss the share it passes that truly violate and fa the share it
// fails that are truly clean, each variant's true rate is g - fa + miss, so
//
//	p_D - p_B = (g_D - g_B) + (miss_D - miss_B) - (fa_D - fa_B)
//	          <= (g_D - g_B) + miss_D + fa_B,
//
// whatever recall and false-alarm rate each variant has. The route bounds
// the three terms one-sided and adds the bounds: g_D - g_B by the graded
// counts (Newcombe and paired by case, the larger) at GradedDiffAlpha,
// miss_D from the blind labels of the answers without the line and fa_B
// from the baseline's (the confidence sequence, since users label again
// after reading a verdict) at MissAlpha and FalseAlarmAlpha. Without
// baseline labels fa_B is bounded by the baseline's flagged share (no
// answer can be a false alarm that was not flagged). A union bound keeps
// the route within GraderRouteAlpha.

// GraderRoute is the grader route's arithmetic.
type GraderRoute struct {
	// Graded is the upper bound of the graded difference g_D - g_B at
	// one-sided GradedAlpha (Verdict.Upper).
	Graded, GradedAlpha float64
	// Missed of Labelled answers without the line with a blind label are
	// violations the predicate passed; Miss bounds their share of the
	// variant's answers at one-sided MissAlpha (weighted by the label
	// design over Strata strata).
	Labelled, Missed, Strata int
	Miss, MissAlpha          float64
	// FalseAlarmFrom says how fa_B is bounded: "labels" (FalseAlarms of
	// BaselineLabelled labelled baseline answers are clean answers the
	// predicate failed) or "flagged" (no baseline labels: the baseline's
	// flagged share, BaselineFails of BaselineN, bounds it).
	FalseAlarmFrom                string
	BaselineLabelled, FalseAlarms int
	BaselineFails, BaselineN      int
	FalseAlarm, FalseAlarmAlpha   float64
	// Rise is Graded + Miss + FalseAlarm: the largest true rise the route
	// allows.
	Rise float64
}

// graderRoute computes the route; nil when the answers without the line
// have no blind label the current predicate has a verdict on (miss_D
// unmeasured) or the baseline has no graded answer.
func graderRoute(upper float64, in VerdictInput, baseFails, baseN int) (*GraderRoute, error) {
	del, base := in.Labelled.Deleted, in.Labelled.Baseline
	_, labelled, _ := del.Totals()
	if labelled == 0 || !del.graded() || baseN == 0 {
		return nil, nil
	}
	r := &GraderRoute{Graded: upper, GradedAlpha: GradedDiffAlpha, Labelled: labelled, Strata: labelledStrata(del),
		MissAlpha: MissAlpha, FalseAlarmAlpha: FalseAlarmAlpha, BaselineFails: baseFails, BaselineN: baseN}
	miss, missed := del.indicator(func(g GradedLabels) int { return g.Missed })
	r.Missed = missed
	var err error
	if r.Miss, err = stats.SequentialRateUpper(miss, MissAlpha); err != nil {
		return nil, fmt.Errorf("model: decide: misses without the line: %w", err)
	}
	if _, bl, _ := base.Totals(); bl > 0 && base.graded() {
		fa, alarms := base.indicator(func(g GradedLabels) int { return g.FalseAlarms })
		r.FalseAlarmFrom, r.BaselineLabelled, r.FalseAlarms = "labels", bl, alarms
		if r.FalseAlarm, err = stats.SequentialRateUpper(fa, FalseAlarmAlpha); err != nil {
			return nil, fmt.Errorf("model: decide: baseline false alarms: %w", err)
		}
	} else {
		r.FalseAlarmFrom = "flagged"
		if r.FalseAlarm, err = stats.ClopperPearsonUpper(baseFails, baseN, FalseAlarmAlpha); err != nil {
			return nil, fmt.Errorf("model: decide: baseline flagged share: %w", err)
		}
	}
	r.Rise = r.Graded + r.Miss + r.FalseAlarm
	return r, nil
}

// passes reports whether the grader route allows DELETE at delta.
func (r *GraderRoute) passes(delta float64) bool { return r != nil && r.Rise < delta }

// Arithmetic is the route's bound line: "grader route: graded difference
// upper bound 0.0210 (one-sided 0.5%) + misses without the line 0.0152
// (0 of 400 labelled, sequential, 0.25%) + baseline false alarms 0.0099
// (flagged share 0/600, 0.25%) = 0.0461 < delta 0.05".
func (r *GraderRoute) Arithmetic(delta float64, passes bool) string {
	how := "sequential"
	if r.Strata > 1 {
		how = fmt.Sprintf("sequential over %d strata", r.Strata)
	}
	fa := fmt.Sprintf("baseline false alarms %.4f (%d of %d labelled baseline answers, sequential, %s%%)",
		r.FalseAlarm, r.FalseAlarms, r.BaselineLabelled, plainFloat(100*r.FalseAlarmAlpha))
	if r.FalseAlarmFrom == "flagged" {
		fa = fmt.Sprintf("baseline false alarms at most its flagged share %.4f (%d/%d, no baseline labels, Clopper-Pearson %s%%)",
			r.FalseAlarm, r.BaselineFails, r.BaselineN, plainFloat(100*r.FalseAlarmAlpha))
	}
	cmp := "<"
	if !passes {
		cmp = ">="
	}
	return fmt.Sprintf("grader route: graded difference upper bound %.4f (one-sided %s%%) + misses without the line %.4f (%d of %d labelled, %s, %s%%) + %s = %.4f %s delta %g",
		r.Graded, plainFloat(100*r.GradedAlpha), r.Miss, r.Missed, r.Labelled, how, plainFloat(100*r.MissAlpha), fa, r.Rise, cmp, delta)
}

// Sentence says the route in words: "the predicate's flagged share rose
// by at most 2.1 points, it passed 0 of 400 labelled answers without the
// line that were violations (at most 1.6% of them), and ...".
func (r *GraderRoute) Sentence() string {
	fa := fmt.Sprintf("it failed %d of %d labelled baseline answers that were clean (at most %s of them)",
		r.FalseAlarms, r.BaselineLabelled, upPercent(r.FalseAlarm))
	if r.FalseAlarmFrom == "flagged" {
		fa = fmt.Sprintf("the baseline's false alarms are at most its flagged share, %s", upPercent(r.FalseAlarm))
	}
	return fmt.Sprintf("the predicate's failure rate rose by at most %s points, it passed %d of %s without the line that were violations (at most %s of them), and %s: the true rise is at most %s points",
		points(math.Max(r.Graded, 0)), r.Missed, count(r.Labelled, "labelled answer", "labelled answers"), upPercent(r.Miss), fa, points(r.Rise))
}

// RecallCount is a grader's recall against human labels: of Positives
// labelled violations, the grader caught Hits.
type RecallCount struct {
	Hits, Positives int
	// Lo, when set, is the 95% lower bound to use instead of the Wilson
	// bound of Hits/Positives: a stratified sample's inverse-probability-
	// weighted estimate has its own interval. It must be in [0, 1].
	Lo *float64
	// Strata, when set with Lo, are the strata of the stratified label set
	// behind the weighted estimate (A: violations caught, B: missed), so
	// that Verdict.Needed can say which labels would settle the verdict.
	Strata []WeightedStratum
}

// SpecificityCount is a grader's specificity against human labels: of
// Negatives labelled clean answers (not violations), the grader passed
// Passed. Lo and Strata are as in RecallCount (A: clean answers passed, B:
// failed).
type SpecificityCount struct {
	Passed, Negatives int
	Lo                *float64
	Strata            []WeightedStratum
}

// WeightedStratum is one stratum of a stratified label set as a weighted
// recall or specificity sees it.
type WeightedStratum struct {
	Name string // the label set's name for it, e.g. "L15 passed"
	// Failed is true for the answers the predicate failed when the set was
	// drawn, false for those it passed.
	Failed bool
	stats.ShareStratum
}

// labelShare is a recall or a specificity in one form.
type labelShare struct {
	hits, total int
	lo          *float64
	strata      []WeightedStratum
}

func (c *RecallCount) share() *labelShare {
	if c == nil {
		return nil
	}
	return &labelShare{hits: c.Hits, total: c.Positives, lo: c.Lo, strata: c.Strata}
}

func (c *SpecificityCount) share() *labelShare {
	if c == nil {
		return nil
	}
	return &labelShare{hits: c.Passed, total: c.Negatives, lo: c.Lo, strata: c.Strata}
}

// measured reports whether the share has any labels.
func (s *labelShare) measured() bool { return s != nil && s.total > 0 }

// rate is the observed share hits/total.
func (s *labelShare) rate() float64 { return float64(s.hits) / float64(s.total) }

// lower is the 95% lower bound: the given one, else Wilson's. The share
// must be measured and valid.
func (s *labelShare) lower() float64 {
	if s.lo != nil {
		return *s.lo
	}
	w, err := stats.Wilson(s.hits, s.total)
	if err != nil {
		return 0 // unreachable after validation
	}
	return w.Lo
}

// validate checks a share's counts; what names it in the error.
func (s *labelShare) validate(what string) error {
	if s == nil {
		return nil
	}
	if s.hits < 0 || s.total < 0 || s.hits > s.total {
		return fmt.Errorf("model: decide: %s %d of %d labelled answers", what, s.hits, s.total)
	}
	if lo := s.lo; lo != nil && (*lo < 0 || *lo > 1 || math.IsNaN(*lo)) {
		return fmt.Errorf("model: decide: %s lower bound %v outside [0, 1]", what, *lo)
	}
	return nil
}

package model

import (
	"fmt"
	"math"

	"github.com/auditor-dev/auditor/model/stats"
)

// A grader with recall R and specificity S shows (R + S - 1) of a true
// difference between the variants: missed violations shrink it, and false
// alarms, which fall on both variants alike, shrink it too (STATS sections
// 3 and 5). The DELETE rule therefore divides the largest rise the data
// allow by J_L = R_L + S_L - 1, Youden's index from the 95% lower bounds. A
// predicate that fails every answer has recall 1 and specificity 0: J = 0,
// it sees no difference at all, and must never license DELETE.

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

// Accuracy is a grader's recall and specificity on one group of labels.
type Accuracy struct {
	Recall      *RecallCount
	Specificity *SpecificityCount
}

// MinKindLabels is how many labelled violations and how many labelled clean
// answers a provoking kind needs before its own J_L takes part in the
// DELETE rule; below it the kind's bounds say more about the few labels
// than about the grader, and the pooled measurement covers it.
const MinKindLabels = 10

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

// graderBound is the J_L the DELETE rule divides by, and where it came from.
type graderBound struct {
	known  bool
	j      float64 // J_L = rLo + sLo - 1
	rLo    float64
	sLo    float64
	from   Kind // "" when the pooled provoking labels bind
	recall *labelShare
	spec   *labelShare
}

// source names where J_L came from, for the bound and the sentence.
func (g graderBound) source() string {
	if g.from == "" {
		return "provoking"
	}
	return string(g.from)
}

// graderBound chooses J_L. The pooled provoking labels give one; each
// provoking kind that has cases compared in both variants and at least
// MinKindLabels labelled violations and clean answers gives its own. J_L is
// the smallest of these: if the kinds' J differ, the measured difference is
// sum_k w_k J_k D_k, and dividing by the smallest J bounds the true
// sum_k w_k D_k from above whenever the true differences are not negative.
// Without a pooled measurement J_L is known only when every compared kind
// has its own. compared lists the provoking kinds with compared cases
// (nil: every kind in in.KindAccuracy).
func (in VerdictInput) graderBound(compared []Kind) graderBound {
	var best graderBound
	consider := func(from Kind, a Accuracy) {
		r, s := a.Recall.share(), a.Specificity.share()
		j := r.lower() + s.lower() - 1
		if !best.known || j < best.j {
			best = graderBound{known: true, j: j, rLo: r.lower(), sLo: s.lower(), from: from, recall: r, spec: s}
		}
	}
	pooled := Accuracy{Recall: in.Recall, Specificity: in.Specificity}
	pooledOK := pooled.Recall.share().measured() && pooled.Specificity.share().measured()
	if pooledOK {
		consider("", pooled)
	}
	if compared == nil {
		for _, k := range Kinds {
			if _, ok := in.KindAccuracy[k]; ok && k.Provoking() {
				compared = append(compared, k)
			}
		}
	}
	everyKind := len(compared) > 0
	for _, k := range compared {
		a, ok := in.KindAccuracy[k]
		r, s := a.Recall.share(), a.Specificity.share()
		if !ok || !r.measured() || !s.measured() || r.total < MinKindLabels || s.total < MinKindLabels {
			everyKind = false
			continue
		}
		consider(k, a)
	}
	if !pooledOK && !everyKind {
		return graderBound{}
	}
	return best
}

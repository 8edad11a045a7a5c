package model

import (
	"fmt"
	"math"

	"github.com/auditor-dev/auditor/model/stats"
)

// DELETE has two routes, and they share its one-sided 2.5% error by a rule
// fixed in advance (STATS section 3), never by taking the smaller of two
// bounds each at 2.5%:
//
//   - the labels route: blind labels of the provoking answers without the
//     line bound their true violation rate directly, with no assumption
//     about any grader; a line the model never breaks is deleted here once
//     85 such answers are labelled clean.
//   - the grader route: the graded difference plus the predicate's misses
//     without the line and false alarms with it, each measured on that
//     variant's own labels (see GraderRoute).
//
// Both routes read labels through a confidence sequence (stats.
// SequentialUpper), valid however often the labels were looked at and
// topped up, since the verdict's own advice ("label about N more") and
// `label --for-verdict` make labelling sequential. Each route errs at most
// its share, so both together stay within DeleteAlpha (a union bound).
//
// The split: the labels route takes 1.5%, more than half, because it is
// the one a line the model never breaks (the commonest safe deletion) can
// take, and the confidence sequence's price for looking at will is paid
// there: at 1.5% 0 violations in 85 labels clear delta 0.05 (at 1.25% it
// would take 88, more than the 86 the article's sweep has a class). The
// grader route keeps 1.0%: 0.5% for the graded difference, whose bound
// shrinks with every sample, and 0.25% each for the misses and false
// alarms, bounded from labels.
const (
	DeleteAlpha      = 0.025
	LabelsRouteAlpha = 0.015
	GraderRouteAlpha = 0.01
	// GradedDiffAlpha, MissAlpha and FalseAlarmAlpha are the grader
	// route's three parts (they sum to GraderRouteAlpha).
	GradedDiffAlpha = 0.005
	MissAlpha       = 0.0025
	FalseAlarmAlpha = 0.0025
	// LabelsRouteBaselineAlpha is the part of the labels route's error
	// spent on the baseline's lower bound when baseline answers have blind
	// labels (the variant's upper bound takes the rest, 1.25%). Whether
	// they have any is a matter of which answers were drawn for labelling,
	// never of what the labels say, so the split is fixed before any label
	// is read. Most of the error stays with the variant: a line the model
	// never breaks has no baseline violations to gain from.
	LabelsRouteBaselineAlpha = 0.0025
)

// VariantLabels are the blind labels of one variant's provoking answers
// (one rule, one model), in strata within each of which the labelled
// answers are a uniform sample: one stratum when every label came from
// designs uniform over these answers, more when label sets drew at
// different rates (say, by the grader's verdict).
type VariantLabels struct {
	Strata []stats.LabelledStratum
	// Graded, parallel to Strata, splits each stratum's labels by the
	// current predicate's verdict on the answer: the grader route's
	// misses and false alarms. Nil when no predicate grades these answers.
	Graded []GradedLabels
}

// GradedLabels counts one stratum's labels the predicate got wrong.
// A labelled answer the predicate has no verdict on counts against it
// both ways (a miss when it is a violation, a false alarm when clean).
type GradedLabels struct {
	// Missed counts labelled violations the predicate passed.
	Missed int
	// FalseAlarms counts labelled clean answers the predicate failed.
	FalseAlarms int
}

// Totals returns the answers, labelled answers and labelled violations.
func (l VariantLabels) Totals() (answers, labelled, violations int) {
	for _, s := range l.Strata {
		answers += s.N
		labelled += s.Labelled
		violations += s.Violations
	}
	return answers, labelled, violations
}

// graded reports whether the labels say what the predicate got wrong.
func (l VariantLabels) graded() bool { return l.Graded != nil && len(l.Graded) == len(l.Strata) }

// indicator is the strata with one kind of grader error in place of the
// violations, and how many there are in all.
func (l VariantLabels) indicator(of func(GradedLabels) int) ([]stats.LabelledStratum, int) {
	out := make([]stats.LabelledStratum, len(l.Strata))
	total := 0
	for i, s := range l.Strata {
		out[i] = s
		out[i].Violations = of(l.Graded[i])
		total += out[i].Violations
	}
	return out, total
}

// validate checks the counts of one variant's labels.
func (l VariantLabels) validate(what string) error {
	if l.Graded != nil && len(l.Graded) != len(l.Strata) {
		return fmt.Errorf("model: decide: %s labels: %d graded counts for %d strata", what, len(l.Graded), len(l.Strata))
	}
	for i, s := range l.Strata {
		if s.N < 0 || s.Labelled < 0 || s.Labelled > s.N || s.Violations < 0 || s.Violations > s.Labelled {
			return fmt.Errorf("model: decide: %s labels stratum %d: %d violations of %d labelled of %d answers", what, i, s.Violations, s.Labelled, s.N)
		}
		if l.Graded != nil {
			if g := l.Graded[i]; g.Missed < 0 || g.Missed > s.Violations || g.FalseAlarms < 0 || g.FalseAlarms > s.Labelled-s.Violations {
				return fmt.Errorf("model: decide: %s labels stratum %d: %d missed and %d false alarms for %d violations of %d labelled", what, i, g.Missed, g.FalseAlarms, s.Violations, s.Labelled)
			}
		}
	}
	return nil
}

// LabelledArms are the blind labels of a rule's provoking answers in both
// variants.
type LabelledArms struct {
	Baseline, Deleted VariantLabels
}

// LabelsRoute is the labels route's arithmetic: the true violation rate of
// the provoking answers without the line, bounded from above by their
// blind labels, less the baseline's, bounded from below by its own (0
// without baseline labels).
type LabelsRoute struct {
	// Answers, Labelled and Violations count the variant's provoking
	// answers, those with a blind label, and the labelled violations.
	Answers, Labelled, Violations int
	// Strata is how many strata the labels fall in: 1 when they are a
	// uniform sample of the answers.
	Strata int
	// Upper bounds the variant's violation rate at one-sided AlphaDeleted.
	Upper, AlphaDeleted float64
	// Delta is the tolerance the route was held against (for the words).
	Delta float64
	// BaselineLabelled and BaselineViolations count the baseline's
	// labelled provoking answers; BaselineLower bounds its rate at
	// one-sided AlphaBaseline (both 0 without baseline labels).
	BaselineAnswers, BaselineLabelled, BaselineViolations int
	BaselineLower, AlphaBaseline                          float64
	// Rise is Upper - BaselineLower: the largest rise the labels allow.
	Rise float64
}

// labelsRoute computes the route from the blind labels; nil when the
// variant's provoking answers have none.
func labelsRoute(in LabelledArms) (*LabelsRoute, error) {
	answers, labelled, violations := in.Deleted.Totals()
	if labelled == 0 {
		return nil, nil
	}
	r := &LabelsRoute{Answers: answers, Labelled: labelled, Violations: violations,
		Strata: labelledStrata(in.Deleted), AlphaDeleted: LabelsRouteAlpha}
	r.BaselineAnswers, r.BaselineLabelled, r.BaselineViolations = in.Baseline.Totals()
	if r.BaselineLabelled > 0 {
		r.AlphaBaseline = LabelsRouteBaselineAlpha
		r.AlphaDeleted = LabelsRouteAlpha - LabelsRouteBaselineAlpha
		lo, err := stats.SequentialRateLower(in.Baseline.Strata, r.AlphaBaseline)
		if err != nil {
			return nil, fmt.Errorf("model: decide: baseline labels: %w", err)
		}
		r.BaselineLower = lo
	}
	up, err := stats.SequentialRateUpper(in.Deleted.Strata, r.AlphaDeleted)
	if err != nil {
		return nil, fmt.Errorf("model: decide: labels without the line: %w", err)
	}
	r.Upper = up
	r.Rise = r.Upper - r.BaselineLower
	return r, nil
}

// labelledStrata counts the strata that hold answers.
func labelledStrata(l VariantLabels) int {
	n := 0
	for _, s := range l.Strata {
		if s.N > 0 {
			n++
		}
	}
	return n
}

// passes reports whether the labels route allows DELETE at delta.
func (r *LabelsRoute) passes(delta float64) bool { return r != nil && r.Rise < delta }

// oneSided writes a one-sided error as the bound's confidence:
// "one-sided 98.75%".
func oneSided(alpha float64) string { return "one-sided " + plainFloat(100*(1-alpha)) + "%" }

// Sentence says the route in words: "0 of 100 labelled answers without the
// line were violations: its violation rate is below 4.3% (one-sided
// 98.75%)", with the baseline's part when it has labels.
func (r *LabelsRoute) Sentence() string {
	up := upPercent(r.Upper)
	if r.Delta > 0 && up == upPercent(r.Delta) && r.Upper < r.Delta {
		// "below 5.0% ... under the tolerated 5.0 points" reads as a
		// contradiction: a second decimal shows the bound is under.
		up = fmt.Sprintf("%.2f%%", math.Ceil(10000*r.Upper-1e-9)/100)
	}
	s := fmt.Sprintf("%d of %s without the line %s: its violation rate is below %s (%s)",
		r.Violations, count(r.Labelled, "labelled answer", "labelled answers"), pluralWord(r.Violations, "was a violation", "were violations"),
		up, oneSided(r.AlphaDeleted))
	if r.AlphaBaseline > 0 {
		s += fmt.Sprintf("; with the line, %d of %d labelled answers %s, at least %s (%s)",
			r.BaselineViolations, r.BaselineLabelled, pluralWord(r.BaselineViolations, "was a violation", "were violations"),
			percent(math.Floor(r.BaselineLower*1000)/1000), oneSided(r.AlphaBaseline))
	}
	return s
}

// Arithmetic is the route's bound line: "labels route: sequential upper
// bound of 0/100 labelled violations without the line at one-sided 1.5%
// 0.0423 - baseline 0 (no baseline labels) = 0.0423 < delta 0.05".
func (r *LabelsRoute) Arithmetic(delta float64, passes bool) string {
	how := "sequential upper bound"
	if r.Strata > 1 {
		how = fmt.Sprintf("sequential upper bound over %d strata (count, then rate, each at half the error)", r.Strata)
	}
	base := "baseline 0 (no baseline labels)"
	if r.AlphaBaseline > 0 {
		base = fmt.Sprintf("baseline lower bound of %d/%d at one-sided %s%% %.4f", r.BaselineViolations, r.BaselineLabelled,
			plainFloat(100*r.AlphaBaseline), r.BaselineLower)
	}
	cmp := "<"
	if !passes {
		cmp = ">="
	}
	return fmt.Sprintf("labels route: %s of %d/%d labelled violations without the line at one-sided %s%% %.4f - %s = %.4f %s delta %g",
		how, r.Violations, r.Labelled, plainFloat(100*r.AlphaDeleted), r.Upper, base, r.Rise, cmp, delta)
}

// upPercent writes an upper bound as a percentage rounded up, so "below
// 4.3%" is never an overstatement of the bound.
func upPercent(x float64) string {
	return fmt.Sprintf("%.1f%%", math.Ceil(1000*x-1e-9)/10)
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// LabelsNeeded is the labels route's projection: how many more blind
// labels of the provoking answers without the line (drawn uniformly from
// those not yet labelled, as `auditor label --for-verdict` draws them)
// would put the route under delta if they are violations at the rate
// observed so far (none, when none was seen).
type LabelsNeeded struct {
	More int // labels to add; 0 when none would do
	// Have is how many are labelled already; Room how many of the
	// variant's provoking answers have no label: More never exceeds it.
	Have, Room int
	// Clean is true when the projection assumes no violation (none
	// labelled so far, and the grader fails none of these answers while
	// labels are few): then it is "if none is a violation". Rate is the
	// violation rate it assumes otherwise.
	Clean bool
	Rate  float64
	// Hopeless says why no number of labels would do ("" otherwise): the
	// labelled violation rate is at or above delta, or even every answer
	// labelled would not clear it.
	Hopeless string
}

// projectLabelsRoute projects the labels route: the fewest more labels,
// spread over the strata in proportion to their unlabelled answers, that
// clear delta with every stratum's observed violation rate unchanged. Until
// projectFromLabels answers are labelled, the rate projected is at least
// graded, the grader's failure rate on the variant's provoking answers: a
// handful of clean labels (or none) must not promise DELETE where the
// grader keeps failing answers.
func projectLabelsRoute(in LabelledArms, delta, graded float64) LabelsNeeded {
	answers, labelled, violations := in.Deleted.Totals()
	out := LabelsNeeded{Have: labelled, Room: answers - labelled, Clean: violations == 0}
	floor := 0.0
	if labelled < projectFromLabels {
		floor = graded
		out.Clean = out.Clean && graded == 0
	}
	if labelled > 0 {
		out.Rate = float64(violations) / float64(labelled)
	}
	out.Rate = math.Max(out.Rate, floor)
	if answers == 0 {
		out.Hopeless = "no provoking answer without the line is stored"
		return out
	}
	if labelled > 0 && float64(violations)/float64(labelled) >= delta {
		out.Hopeless = fmt.Sprintf("%d of %d labelled answers without the line are violations, at or above the tolerated %s points",
			violations, labelled, points(delta))
		return out
	}
	alphaDel, baseLo := LabelsRouteAlpha, 0.0
	if _, bl, _ := in.Baseline.Totals(); bl > 0 {
		alphaDel = LabelsRouteAlpha - LabelsRouteBaselineAlpha
		baseLo, _ = stats.SequentialRateLower(in.Baseline.Strata, LabelsRouteBaselineAlpha)
	}
	clears := func(m int) bool {
		up, err := stats.SequentialRateUpper(moreLabels(in.Deleted.Strata, m, labelled, violations, floor), alphaDel)
		return err == nil && up-baseLo < delta
	}
	if labelled > 0 && clears(0) {
		return out // the route holds already: something else blocks DELETE
	}
	if out.Room == 0 || !clears(out.Room) {
		out.Hopeless = fmt.Sprintf("even all %s without the line labelled would not put the rate under the tolerated %s points: run more samples first",
			count(answers, "provoking answer", "provoking answers"), points(delta))
		return out
	}
	out.More = minExtra(out.Room, clears)
	return out
}

// projectFromLabels is how many labels the labels route's projection needs
// before it trusts their violation rate alone.
const projectFromLabels = 30

// moreLabels is the strata with m more labels spread over their unlabelled
// answers in proportion, each stratum's violations at its observed rate,
// or floor if that is higher (rounded up: a projection must not flatter).
// A stratum with no label yet takes the pooled observed rate.
func moreLabels(strata []stats.LabelledStratum, m, labelled, violations int, floor float64) []stats.LabelledStratum {
	room := 0
	for _, s := range strata {
		room += s.N - s.Labelled
	}
	pooled := 0.0
	if labelled > 0 {
		pooled = float64(violations) / float64(labelled)
	}
	out := make([]stats.LabelledStratum, len(strata))
	for i, s := range strata {
		out[i] = s
		if room == 0 || s.N == s.Labelled {
			continue
		}
		add := int(math.Round(float64(m) * float64(s.N-s.Labelled) / float64(room)))
		n := min(s.N, s.Labelled+add)
		rate := pooled
		if s.Labelled > 0 {
			rate = float64(s.Violations) / float64(s.Labelled)
		}
		rate = math.Max(rate, floor)
		out[i].Labelled = n
		out[i].Violations = min(n, max(s.Violations, int(math.Ceil(rate*float64(n)-1e-9))))
	}
	return out
}

// String says the projection as advice: "label about 86 answers without the
// line (provoking, any grader verdict; `auditor label --for-verdict`): if
// none is a violation, DELETE".
func (n LabelsNeeded) String() string {
	if n.Hopeless != "" || n.More == 0 {
		return ""
	}
	what := count(n.More, "more answer", "more answers")
	if n.Have == 0 {
		what = count(n.More, "answer", "answers")
	}
	if !n.Clean {
		return fmt.Sprintf("label about %s without the line (provoke and pressure, whatever the predicate said of them, drawn by `auditor label --for-verdict`): DELETE if no more than about %s of them are violations",
			what, percent(n.Rate))
	}
	return fmt.Sprintf("label about %s without the line (provoke and pressure, whatever the predicate said of them, drawn by `auditor label --for-verdict`): if none is a violation, DELETE", what)
}

// LabelsRise is the labelled difference of the two variants' violation
// rates, for KEEP: labels that show the rise give KEEP whatever the
// predicate saw.
type LabelsRise struct {
	// Deleted and Baseline are each variant's labelled share (weighted by
	// the label design when the labels fall in several strata).
	DeletedViolations, DeletedLabelled   int
	BaselineViolations, BaselineLabelled int
	// Lo is the lower bound of p_D - p_B: Newcombe's 95% (one-sided 2.5%)
	// on the counts when each variant's labels are one uniform sample,
	// else the deleted variant's lower bound less the baseline's upper
	// bound, each Clopper-Pearson at one-sided 1.25% over its strata. It
	// is read at the label count it has, like every KEEP, not as a
	// confidence sequence: a false KEEP keeps a line, the cheap error.
	Lo float64
	// Stratified says Lo came from the strata bounds.
	Stratified bool
}

// labelsRise computes the labelled difference; nil unless both variants'
// provoking answers have blind labels.
func labelsRise(in LabelledArms) (*LabelsRise, error) {
	_, dl, dv := in.Deleted.Totals()
	_, bl, bv := in.Baseline.Totals()
	if dl == 0 || bl == 0 {
		return nil, nil
	}
	r := &LabelsRise{DeletedViolations: dv, DeletedLabelled: dl, BaselineViolations: bv, BaselineLabelled: bl}
	if labelledStrata(in.Deleted) == 1 && labelledStrata(in.Baseline) == 1 {
		_, ci, err := stats.Newcombe(dv, dl, bv, bl)
		if err != nil {
			return nil, fmt.Errorf("model: decide: labelled difference: %w", err)
		}
		r.Lo = ci.Lo
		return r, nil
	}
	lo, err := stats.RateLower(in.Deleted.Strata, DeleteAlpha/2)
	if err != nil {
		return nil, fmt.Errorf("model: decide: labels without the line: %w", err)
	}
	hi, err := stats.RateUpper(in.Baseline.Strata, DeleteAlpha/2)
	if err != nil {
		return nil, fmt.Errorf("model: decide: baseline labels: %w", err)
	}
	r.Lo, r.Stratified = lo-hi, true
	return r, nil
}

// Arithmetic is the labelled KEEP's bound line.
func (r *LabelsRise) Arithmetic() string {
	how := "Newcombe lower bound"
	if r.Stratified {
		how = "lower bound (deleted at one-sided 1.25% less baseline's upper at 1.25%, over strata)"
	}
	return fmt.Sprintf("labels: %s of labelled deleted %d/%d - baseline %d/%d = %.3f > 0", how,
		r.DeletedViolations, r.DeletedLabelled, r.BaselineViolations, r.BaselineLabelled, r.Lo)
}

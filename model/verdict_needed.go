package model

import (
	"fmt"
	"math"
	"strings"

	"github.com/auditor-dev/auditor/model/stats"
)

// maxExtraSamples, maxExtraLabels and maxExtraCases bound the projections
// behind Verdict.Needed; beyond them more data is not a sensible suggestion.
const (
	maxExtraSamples = 10_000
	maxExtraLabels  = 10_000
	maxExtraCases   = 500
)

// needed says what would settle an INCONCLUSIVE verdict (STATS section 8):
// the alternatives (more samples per case, more cases, which labels), and
// what DELETE requires besides. Projections keep the observed rates.
func (v *Verdict) needed(in VerdictInput) string {
	if v.BreaksControls {
		return "more data will not allow DELETE: deleting the line raises failures on controls"
	}
	var musts []string
	if v.ProvokingCases < MinDeleteProvokingCases {
		musts = append(musts, fmt.Sprintf("at least %d provoking cases compared in both variants (add provoke or pressure cases, or run the ones missing a variant)", MinDeleteProvokingCases))
	}
	if v.ControlCases < MinDeleteControlCases {
		musts = append(musts, "at least 1 control case compared in both variants (add control cases that ask for what the line must not block, or run them on both variants)")
	}
	opts := v.dataOptions(in)
	labels := v.labelOptions(in)
	// "No labels can settle it" is not one of the alternatives: it is said
	// after them, on its own, and only when the labels route cannot either.
	noLabels := len(labels) == 1 && labels[0] == noLabelsSettle
	if noLabels {
		labels = nil
	}
	if direct := v.LabelsNeeded.String(); direct != "" {
		labels, noLabels = append([]string{direct}, labels...), false
	}
	opts = append(opts, labels...)
	var parts []string
	if len(opts) > 0 {
		parts = append(parts, strings.Join(opts, ", or "))
	}
	if noLabels {
		parts = append(parts, noLabelsSettle)
	}
	switch {
	case len(musts) > 0 && len(opts) > 0:
		parts = append(parts, "DELETE also needs "+strings.Join(musts, " and "))
	case len(musts) > 0:
		parts = append(parts, "DELETE needs "+strings.Join(musts, " and "))
	}
	if len(parts) == 0 {
		return "neither more samples nor more labels are likely to settle it at this delta"
	}
	return strings.Join(parts, "; ")
}

// graderLimit is what the graded difference's upper bound must fall below
// for the grader route to allow DELETE: delta less the bounds of the misses
// and false alarms as measured now; 0 while the route is unmeasured or the
// labels alone leave no room.
func (v *Verdict) graderLimit() float64 {
	if v.Grader == nil {
		return 0
	}
	return math.Max(0, v.Delta-v.Grader.Miss-v.Grader.FalseAlarm)
}

// dataOptions says how many more samples per case or provoking cases would
// settle the verdict if the observed rates hold: KEEP always counts; DELETE
// only when the grader route is measured and leaves room, and the other
// requirements of DELETE would then hold (more cases can supply provoking
// cases, not controls).
func (v *Verdict) dataOptions(in VerdictInput) []string {
	limit := v.graderLimit() // an upper bound must fall below this for DELETE
	deleteBySamples := limit > 0 && v.ProvokingCases >= MinDeleteProvokingCases && v.ControlCases >= MinDeleteControlCases
	deleteByCases := limit > 0 && v.ControlCases >= MinDeleteControlCases
	pairedBinds := limit > 0 && v.Paired != nil && v.UpperPaired >= limit
	var opts []string
	if limit == 0 || v.UpperNewcombe >= limit {
		// More samples per case narrow the pooled interval but not the
		// paired one, whose width comes from differences between cases.
		if m, d := v.extraSamples(in, limit); m > 0 && (d == DecisionKeep || (deleteBySamples && !pairedBinds)) {
			opts = append(opts, fmt.Sprintf("about %s per case (%s if rates hold)", count(m, "more sample", "more samples"), d))
		}
	}
	if limit == 0 || v.UpperNewcombe >= limit || pairedBinds {
		c, d := v.extraCases(in, limit)
		switch {
		case c > 0 && (d == DecisionKeep || deleteByCases):
			opts = append(opts, fmt.Sprintf("about %s (%s if new cases behave like these)", count(c, "more provoking case", "more provoking cases"), d))
		case pairedBinds && deleteByCases:
			opts = append(opts, "more provoking cases (failures differ between cases, so samples per case help little)")
		}
	}
	return opts
}

// noLabelsSettle is said when even a perfect grader would not allow DELETE:
// a statement beside the alternatives, not one of them.
const noLabelsSettle = "labels alone cannot settle it (even a perfect grader would not allow DELETE at this delta: more samples or cases come first)"

// labelOptions says which labels would let the grader route allow DELETE:
// none when the route already holds, and a statement that labels cannot
// when the graded difference alone is at or above delta.
func (v *Verdict) labelOptions(in VerdictInput) []string {
	switch {
	case v.Grader.passes(v.Delta):
		return nil
	case v.Upper >= v.Delta:
		return []string{noLabelsSettle}
	}
	if s := v.GraderLabels.String(); s != "" {
		return []string{s}
	}
	return nil // the labels route's projection, or the data options, speak
}

// GraderLabelsNeeded is the grader route's projection: More more blind
// labels of the provoking answers, of both variants (Both, drawn uniformly
// over both, about half from each) or of those without the line.
type GraderLabelsNeeded struct {
	More int
	Both bool
}

// projectGraderRoute is graderLabelsMore as the advice and `label
// --for-verdict` take it: m more of each variant labelled so far, drawn as
// 2m over both when the baseline has labels.
func projectGraderRoute(in LabelledArms, upper float64, baseFails, baseN int, delta float64) GraderLabelsNeeded {
	m := graderLabelsMore(in, upper, baseFails, baseN, delta)
	if m == 0 {
		return GraderLabelsNeeded{}
	}
	if _, bl, _ := in.Baseline.Totals(); bl > 0 && in.Baseline.graded() {
		return GraderLabelsNeeded{More: 2 * m, Both: true}
	}
	return GraderLabelsNeeded{More: m}
}

// String says the projection as advice; empty when there is none.
func (n GraderLabelsNeeded) String() string {
	if n.More == 0 {
		return ""
	}
	which := "without the line"
	if n.Both {
		which = "of both variants (about half each)"
	}
	return fmt.Sprintf("label about %s %s (provoke and pressure, whatever the predicate said of them, drawn by `auditor label --for-verdict`): with the predicate's misses and false alarms as rare as so far, the grader route allows DELETE",
		count(n.More, "more answer", "more answers"), which)
}

// graderLabelsMore is the fewest more blind labels, drawn as `auditor
// label --for-verdict` draws them (uniformly over the provoking answers of
// the variant, any grader verdict) from the answers without the line and,
// when the baseline has labels, as many from the baseline, after which the
// grader route holds with its misses and false alarms at the rates labelled
// so far (none, when none was seen). The numbers come from the route's own
// rule: the same confidence sequence at the same shares. It is 0 when no
// number of labels would do.
func graderLabelsMore(in LabelledArms, upper float64, baseFails, baseN int, delta float64) int {
	da, dl, _ := in.Deleted.Totals()
	ba, bl, _ := in.Baseline.Totals()
	if da == 0 || baseN == 0 || upper >= delta {
		return 0
	}
	missed, alarms := 0, 0
	if in.Deleted.graded() {
		_, missed = in.Deleted.indicator(func(g GradedLabels) int { return g.Missed })
	}
	withBase := bl > 0 && in.Baseline.graded()
	if withBase {
		_, alarms = in.Baseline.indicator(func(g GradedLabels) int { return g.FalseAlarms })
	}
	bound := func(x, n, more, answers int, alpha float64) float64 {
		n2 := min(n+more, answers)
		x2 := x
		if n > 0 {
			x2 = int(math.Ceil(float64(x)*float64(n2)/float64(n) - 1e-9))
		}
		if n2 == 0 {
			return 1
		}
		u, err := stats.SequentialUpper(min(x2, n2), n2, alpha)
		if err != nil {
			return 1
		}
		return u
	}
	fa := 1.0
	if !withBase {
		fa, _ = stats.ClopperPearsonUpper(baseFails, baseN, FalseAlarmAlpha)
	}
	clears := func(m int) bool {
		f := fa
		if withBase {
			f = bound(alarms, bl, m, ba, FalseAlarmAlpha)
		}
		return upper+bound(missed, dl, m, da, MissAlpha)+f < delta
	}
	room := da - dl
	if withBase {
		room = max(room, ba-bl)
	}
	return minExtra(min(max(room, 0), maxExtraLabels), clears)
}

// minExtra returns the smallest m in [1, max] with ok(m), by doubling and
// bisection (ok is taken to be monotone: more data never loosens a
// bound); 0 when ok(max) is false.
func minExtra(max int, ok func(int) bool) int {
	if max < 1 {
		return 0
	}
	hi := 1
	for hi < max && !ok(hi) {
		hi *= 2
	}
	hi = min(hi, max)
	if !ok(hi) {
		return 0
	}
	lo := hi / 2 // ok(lo) is false, or lo is 0
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// keepOrDelete is the verdict a projection gives, if any: KEEP when the 95%
// interval's lower bound is above 0, DELETE when the graded difference's
// upper bound (one-sided GradedDiffAlpha) is below limit (limit > 0: the
// grader route's room once its misses and false alarms are bounded).
func (v *Verdict) keepOrDelete(ci stats.Interval, upper, limit float64) (Decision, bool) {
	switch {
	case ci.Lo > 0:
		return DecisionKeep, true
	case limit > 0 && upper < limit:
		return DecisionDelete, true
	}
	return "", false
}

// extraSamples returns the fewest extra samples per provoking case after
// which, with every rate exactly as observed, the pooled Newcombe interval
// would give KEEP (lower bound > 0) or DELETE (upper bound < limit),
// and which; 0 when none does within maxExtraSamples. The projection keeps
// the rates, not rounded counts: rounding would favour one verdict. More
// samples only narrow the interval, so the first m is found by bisection.
func (v *Verdict) extraSamples(in VerdictInput, limit float64) (int, Decision) {
	_, _, _, _, cases := in.Provoking.matched()
	perCase := float64(v.BaselineN+v.DeletedN) / float64(2*cases)
	pd, pb := float64(v.DeletedFails)/float64(v.DeletedN), float64(v.BaselineFails)/float64(v.BaselineN)
	at := func(m int) (Decision, bool) {
		k := (perCase + float64(m)) / perCase
		_, ci, err := stats.NewcombeRates(pd, float64(v.DeletedN)*k, pb, float64(v.BaselineN)*k)
		if err != nil {
			return "", false
		}
		_, route, err := stats.NewcombeRatesZ(pd, float64(v.DeletedN)*k, pb, float64(v.BaselineN)*k, graderRouteZ)
		if err != nil {
			return "", false
		}
		return v.keepOrDelete(ci, route.Hi, limit)
	}
	m := minExtra(maxExtraSamples, func(m int) bool { _, ok := at(m); return ok })
	if m == 0 {
		return 0, ""
	}
	d, _ := at(m)
	return m, d
}

// extraCases returns the fewest extra provoking cases after which, with
// every case as observed on average (the pooled rates and the spread of the
// per-case differences unchanged), the verdict would be KEEP or DELETE, and
// which; 0 when none does within maxExtraCases or the paired term is
// unavailable. More cases shrink both the pooled interval and the paired
// one, which more samples per case cannot do.
func (v *Verdict) extraCases(in VerdictInput, limit float64) (int, Decision) {
	if v.Paired == nil {
		return 0, ""
	}
	c0 := float64(v.Paired.Cases)
	sd := v.Paired.SEPair * math.Sqrt(c0)
	pd, pb := float64(v.DeletedFails)/float64(v.DeletedN), float64(v.BaselineFails)/float64(v.BaselineN)
	at := func(m int) (Decision, bool) {
		c := c0 + float64(m)
		k := c / c0
		_, nc, err := stats.NewcombeRates(pd, float64(v.DeletedN)*k, pb, float64(v.BaselineN)*k)
		if err != nil {
			return "", false
		}
		_, route, err := stats.NewcombeRatesZ(pd, float64(v.DeletedN)*k, pb, float64(v.BaselineN)*k, graderRouteZ)
		if err != nil {
			return "", false
		}
		t, err := stats.StudentTQuantile(1-GradedDiffAlpha, c-1)
		if err != nil {
			return "", false
		}
		return v.keepOrDelete(nc, math.Max(route.Hi, v.Paired.D+t*sd/math.Sqrt(c)), limit)
	}
	m := minExtra(maxExtraCases, func(m int) bool { _, ok := at(m); return ok })
	if m == 0 {
		return 0, ""
	}
	d, _ := at(m)
	return m, d
}

// count writes n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

package model

import (
	"fmt"
	"math"
	"slices"
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
func (v *Verdict) needed(in VerdictInput, g graderBound) string {
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
	opts := v.dataOptions(in, g)
	labels := v.labelOptions(in, g)
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

// dataOptions says how many more samples per case or provoking cases would
// settle the verdict if the observed rates hold: KEEP always counts; DELETE
// only when J_L is known and positive and the other requirements of DELETE
// would then hold (more cases can supply provoking cases, not controls).
func (v *Verdict) dataOptions(in VerdictInput, g graderBound) []string {
	jLo := 0.0
	if g.known && g.j > 0 {
		jLo = g.j
	}
	deleteBySamples := jLo > 0 && v.ProvokingCases >= MinDeleteProvokingCases && v.ControlCases >= MinDeleteControlCases
	deleteByCases := jLo > 0 && v.ControlCases >= MinDeleteControlCases
	limit := v.Delta * jLo // an upper bound must fall below this for DELETE
	pairedBinds := jLo > 0 && v.Paired != nil && v.UpperPaired >= limit
	var opts []string
	if jLo == 0 || v.UpperNewcombe >= limit {
		// More samples per case narrow the pooled interval but not the
		// paired one, whose width comes from differences between cases.
		if m, d := v.extraSamples(in, jLo); m > 0 && (d == DecisionKeep || (deleteBySamples && !pairedBinds)) {
			opts = append(opts, fmt.Sprintf("about %s per case (%s if rates hold)", count(m, "more sample", "more samples"), d))
		}
	}
	if jLo == 0 || v.UpperNewcombe >= limit || pairedBinds {
		c, d := v.extraCases(in, jLo)
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

// labelOptions says which labels would settle the verdict: none when J_L
// is not what stops DELETE.
func (v *Verdict) labelOptions(in VerdictInput, g graderBound) []string {
	need := math.Max(v.Upper, 0) / v.Delta // J_L must exceed this
	switch {
	case g.known && g.j > 0 && v.Scaled < v.Delta:
		return nil
	case need >= 1:
		return []string{noLabelsSettle}
	case !g.known:
		return unmeasuredLabelOptions(in, need)
	case g.recall.hits == 0:
		return []string{fmt.Sprintf("the grader caught none of the %s: fix it before deciding", kindNoun(g.from, "labelled violations"))}
	}
	return projectLabels(g, need)
}

// kindNoun qualifies a noun by kind: "labelled pressure violations".
func kindNoun(k Kind, noun string) string {
	if k == "" {
		return noun
	}
	if rest, ok := strings.CutPrefix(noun, "labelled "); ok {
		return "labelled " + string(k) + " " + rest
	}
	return string(k) + " " + noun
}

// unmeasuredLabelOptions says which labels J_L is missing and the fewest
// that could allow DELETE: the missing class all graded right, the measured
// one at its observed rate.
func unmeasuredLabelOptions(in VerdictInput, need float64) []string {
	r, s := in.Recall.share(), in.Specificity.share()
	switch {
	case r.measured() && r.hits == 0:
		return []string{"the grader caught none of the labelled violations: fix it before deciding"}
	case !r.measured() && !s.measured():
		nR, nS := fewestAllRight(need)
		if nR == 0 {
			return []string{"label violations and clean answers to measure the predicate's recall and false alarms"}
		}
		return []string{fmt.Sprintf("label violations and clean answers to measure the predicate's recall and false alarms: DELETE needs recall + specificity - 1 above %.2f (lower bounds), which takes at least %s and %s, all graded right",
			math.Ceil(need*100)/100, count(nR, "labelled violation", "labelled violations"), count(nS, "labelled clean answer", "labelled clean answers"))}
	case !r.measured():
		return []string{mixedLabels(s, need, "violations", "recall", "caught",
			"violation", "clean answer", "specificity", "the predicate's recall")}
	default:
		return []string{mixedLabels(r, need, "clean answers", "specificity", "passed",
			"clean answer", "violation", "recall", "the predicate's false alarms")}
	}
}

// mixedLabels advises labels when one class (the fresh one) has none yet
// and the other is measured: the fewest fresh labels, all graded right,
// together with the fewest extra labels of the measured class at its
// observed rate, that put J_L above need.
func mixedLabels(measured *labelShare, need float64, freshPlural, freshShare, right, freshOne, measuredOne, measuredShare, what string) string {
	lo := measured.lower()
	extra, fresh, best := 0, 0, 0
	for e := 0; e <= maxExtraLabels && (best == 0 || e < best); e++ {
		ml := lo
		if e > 0 {
			if measured.lo != nil {
				break // a weighted bound without strata cannot be projected
			}
			w, err := stats.WilsonRate(measured.rate(), float64(measured.total+e))
			if err != nil {
				break
			}
			ml = w.Lo
		}
		t := need + 1 - ml
		if t >= 1 {
			continue
		}
		if n := allRightCount(t); n > 0 && (best == 0 || e+n < best) {
			best, extra, fresh = e+n, e, n
		}
	}
	switch {
	case best == 0:
		return fmt.Sprintf("label %s to measure %s, but at the observed %s %.2f even a perfect %s would not allow DELETE",
			freshPlural, what, measuredShare, measured.rate(), freshShare)
	case extra == 0:
		return fmt.Sprintf("label %s to measure %s: with %s at least %d%%, DELETE needs %s's lower bound above %.2f, which takes at least %s, all %s",
			freshPlural, what, measuredShare, floorPercent(lo), freshShare, math.Ceil((need+1-lo)*100)/100,
			count(fresh, "labelled "+freshOne, "labelled "+freshPlural), right)
	}
	return fmt.Sprintf("label %s to measure %s, and more %ss: DELETE needs at least %s, all %s, with about %s at the observed %s",
		freshPlural, what, measuredOne, count(fresh, "labelled "+freshOne, "labelled "+freshPlural), right,
		count(extra, "more labelled "+measuredOne, "more labelled "+measuredOne+"s"), measuredShare)
}

// allRight is the Wilson lower bound of n of n.
func allRight(n int) float64 {
	w, err := stats.Wilson(n, n)
	if err != nil {
		return 0
	}
	return w.Lo
}

// allRightCount returns the fewest n for which n of n puts the Wilson lower
// bound above t; 0 when none does within maxExtraLabels.
func allRightCount(t float64) int {
	if t < 0 {
		return 1
	}
	return minExtra(maxExtraLabels, func(n int) bool { return allRight(n) > t })
}

// fewestAllRight returns the split of labelled violations and clean answers
// with the smallest total that, all graded right, puts R_L + S_L - 1 above
// need; 0, 0 when none does within maxExtraLabels.
func fewestAllRight(need float64) (nR, nS int) {
	best := 0
	for r := 1; r <= maxExtraLabels && (best == 0 || r < best); r++ {
		t := need + 1 - allRight(r)
		if t >= 1 {
			continue
		}
		s := allRightCount(t)
		if s == 0 {
			continue
		}
		if best == 0 || r+s < best {
			best, nR, nS = r+s, r, s
		}
	}
	return nR, nS
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

// projectLabels says how many more labels, of which class or stratum,
// would put J_L above need with the observed rates unchanged.
func projectLabels(g graderBound, need float64) []string {
	r, s := g.recall, g.spec
	if len(r.strata) > 0 || len(s.strata) > 0 {
		return stratifiedLabelOptions(g, need)
	}
	// A share with its own lower bound but no strata cannot be projected;
	// it stays as it is.
	lowerAt := func(sh *labelShare, extra float64) float64 {
		if sh.lo != nil {
			return *sh.lo
		}
		w, err := stats.WilsonRate(sh.rate(), float64(sh.total)+extra)
		if err != nil {
			return 0
		}
		return w.Lo
	}
	var opts []string
	if r.lo == nil {
		if a := minExtra(maxExtraLabels, func(e int) bool { return lowerAt(r, float64(e))+g.sLo-1 > need }); a > 0 {
			opts = append(opts, fmt.Sprintf("about %s at the observed recall", count(a, kindNoun(g.from, "more labelled violation"), kindNoun(g.from, "more labelled violations"))))
		}
	}
	if s.lo == nil {
		if b := minExtra(maxExtraLabels, func(e int) bool { return g.rLo+lowerAt(s, float64(e))-1 > need }); b > 0 {
			opts = append(opts, fmt.Sprintf("about %s at the observed specificity", count(b, kindNoun(g.from, "more labelled clean answer"), kindNoun(g.from, "more labelled clean answers"))))
		}
	}
	if len(opts) > 0 {
		return opts
	}
	if r.lo == nil && s.lo == nil {
		// Neither class alone suffices; both together, as a random sample
		// brings them (at the mix labelled so far), may.
		q := float64(r.total) / float64(r.total+s.total)
		if c := minExtra(maxExtraLabels, func(l int) bool {
			return lowerAt(r, q*float64(l))+lowerAt(s, (1-q)*float64(l))-1 > need
		}); c > 0 {
			return []string{fmt.Sprintf("about %s at the observed mix (about %d violations and %d clean answers)",
				count(c, kindNoun(g.from, "more labelled answer"), kindNoun(g.from, "more labelled answers")),
				int(math.Round(q*float64(c))), int(math.Round((1-q)*float64(c))))}
		}
	}
	return []string{fmt.Sprintf("more labels are unlikely to settle it: at the observed recall %.2f and specificity %.2f on the %s labels, recall + specificity - 1 stays at or below the %.2f DELETE needs even with unlimited labels; the predicate must improve",
		r.rate(), s.rate(), g.source(), math.Ceil(need*100)/100)}
}

// stratifiedLabelOptions projects a stratified label set: labels added to
// one stratum (or to every partly labelled one, in the set's proportions)
// at its observed rates, both shares recomputed by stats.StratifiedShare,
// since the same labels feed recall and specificity.
func stratifiedLabelOptions(g graderBound, need float64) []string {
	generic := []string{fmt.Sprintf("more labels from the stratified label set (on the %s labels its weighted interval, not the count of violations, is what binds)", g.source())}
	type stratumRoom struct {
		name   string
		failed bool
		n, N   float64
	}
	var strata []stratumRoom
	seen := map[string]bool{}
	for _, st := range slices.Concat(g.recall.strata, g.spec.strata) {
		if !seen[st.Name] {
			seen[st.Name] = true
			strata = append(strata, stratumRoom{name: st.Name, failed: st.Failed, n: st.Labelled, N: st.N})
		}
	}
	// lower returns a share's lower bound with stratum labels scaled to
	// labelled[name] (the others as they are).
	lower := func(sh *labelShare, labelled map[string]float64) (float64, bool) {
		if len(sh.strata) == 0 {
			return sh.lower(), true
		}
		scaled := make([]stats.ShareStratum, len(sh.strata))
		for i, st := range sh.strata {
			scaled[i] = st.ShareStratum
			if n, ok := labelled[st.Name]; ok && st.Labelled > 0 {
				k := n / st.Labelled
				scaled[i].Labelled, scaled[i].A, scaled[i].B = n, st.A*k, st.B*k
			}
		}
		_, _, ci, _, err := stats.StratifiedShare(scaled)
		return ci.Lo, err == nil
	}
	j := func(labelled map[string]float64) bool {
		rl, ok1 := lower(g.recall, labelled)
		sl, ok2 := lower(g.spec, labelled)
		return ok1 && ok2 && rl+sl-1 > need
	}
	if _, ok := lower(g.recall, nil); !ok {
		return generic
	}
	type option struct {
		extra int
		text  string
	}
	var found []option
	for _, st := range strata {
		room := int(st.N - st.n)
		if st.n <= 0 || room < 1 {
			continue
		}
		if m := minExtra(min(room, maxExtraLabels), func(m int) bool {
			return j(map[string]float64{st.name: st.n + float64(m)})
		}); m > 0 {
			verdict := "passed"
			if st.failed {
				verdict = "failed"
			}
			found = append(found, option{m, fmt.Sprintf("about %s from the answers the predicate %s (stratum %q)",
				count(m, "more label", "more labels"), verdict, st.name)})
		}
	}
	if len(found) > 0 {
		slices.SortStableFunc(found, func(a, b option) int { return a.extra - b.extra })
		var out []string
		for _, o := range found[:min(2, len(found))] {
			out = append(out, o.text)
		}
		return out
	}
	// Every partly labelled stratum, in the set's proportions.
	var labelledNow, room float64
	for _, st := range strata {
		if st.n > 0 && st.n < st.N {
			labelledNow += st.n
			room += st.N - st.n
		}
	}
	if labelledNow > 0 {
		if l := minExtra(min(int(room), maxExtraLabels), func(l int) bool {
			k := 1 + float64(l)/labelledNow
			scaled := map[string]float64{}
			for _, st := range strata {
				if st.n > 0 && st.n < st.N {
					scaled[st.name] = math.Min(st.N, st.n*k)
				}
			}
			return j(scaled)
		}); l > 0 {
			return []string{fmt.Sprintf("about %s across the label set's strata, in its proportions", count(l, "more label", "more labels"))}
		}
	}
	return []string{fmt.Sprintf("more labels are unlikely to settle it: at the observed rates even the whole of the stratified set would not put recall + specificity - 1 on the %s labels above the %.2f DELETE needs", g.source(), math.Ceil(need*100)/100)}
}

// keepOrDelete is the verdict a projection gives, if any: KEEP when the 95%
// interval's lower bound is above 0, DELETE when the grader route's upper
// bound (one-sided GraderRouteAlpha) over jLo is below delta (jLo > 0).
func (v *Verdict) keepOrDelete(ci stats.Interval, upper, jLo float64) (Decision, bool) {
	switch {
	case ci.Lo > 0:
		return DecisionKeep, true
	case jLo > 0 && math.Max(upper, 0)/jLo < v.Delta:
		return DecisionDelete, true
	}
	return "", false
}

// extraSamples returns the fewest extra samples per provoking case after
// which, with every rate exactly as observed, the pooled Newcombe interval
// would give KEEP (lower bound > 0) or DELETE (upper bound / jLo < delta),
// and which; 0 when none does within maxExtraSamples. The projection keeps
// the rates, not rounded counts: rounding would favour one verdict. More
// samples only narrow the interval, so the first m is found by bisection.
func (v *Verdict) extraSamples(in VerdictInput, jLo float64) (int, Decision) {
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
		return v.keepOrDelete(ci, route.Hi, jLo)
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
func (v *Verdict) extraCases(in VerdictInput, jLo float64) (int, Decision) {
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
		t, err := stats.StudentTQuantile(1-GraderRouteAlpha, c-1)
		if err != nil {
			return "", false
		}
		return v.keepOrDelete(nc, math.Max(route.Hi, v.Paired.D+t*sd/math.Sqrt(c)), jLo)
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

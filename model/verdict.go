package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/model/stats"
)

// Decision is the verdict on one audited rule line.
type Decision string

// The three decisions. KEEP: deleting the line raises the failure rate
// (the line is load-bearing). DELETE: the rise is bounded below the tolerance
// delta, after correcting for the grader's recall. INCONCLUSIVE: neither is
// shown; Verdict.Reason says which bound failed and Verdict.Needed what would
// settle it.
const (
	DecisionKeep         Decision = "KEEP"
	DecisionDelete       Decision = "DELETE"
	DecisionInconclusive Decision = "INCONCLUSIVE"
	// DecisionCanary is the verdict on a rule with no input class (class =
	// "none", like "be concise"): no targeted set can decide it, so it is
	// never DELETE; the measured shift in answer length goes with it, and
	// removing it needs a live canary with a rollback threshold.
	DecisionCanary Decision = "CANARY"
)

// DefaultDelta is the tolerated rise in failure rate when an audit sets none.
const DefaultDelta = 0.05

// maxExtraSamples and maxExtraViolations bound the projections behind
// Verdict.Needed; beyond them more data is not a sensible suggestion.
const (
	maxExtraSamples    = 10_000
	maxExtraViolations = 10_000
	maxExtraCases      = 500
)

// ArmCounts holds per-case failures and samples of one variant: case c
// failed Fails[c] times in N[c] graded samples. N may differ between cases
// (errored or unparseable calls are not samples). Variants are compared only
// on cases with samples in both: a case with N = 0 in either variant is left
// out of every difference.
type ArmCounts struct {
	Fails, N []int
}

// ArmPair holds the two variants of one arm, with the same cases in the same
// order in both.
type ArmPair struct {
	Baseline, Deleted ArmCounts
}

// RecallCount is a grader's recall against human labels: of Positives
// labelled violations, the grader caught Hits.
type RecallCount struct {
	Hits, Positives int
	// Lo, when set, is the 95% lower bound to use instead of the Wilson
	// bound of Hits/Positives: a stratified sample's inverse-probability-
	// weighted estimate has its own interval. It must be in [0, 1].
	Lo *float64
}

// VerdictInput is everything Decide needs for one rule line.
type VerdictInput struct {
	// Provoking pools provoke and pressure cases: failures are violations.
	// Per-kind results are for display and do not vote.
	Provoking ArmPair
	// Control holds the control cases: failures are refusals. It may be
	// empty; the control checks are then skipped and a note says so.
	Control ArmPair
	// Recall is the grader's recall on the provoking arm's violations; nil
	// when unmeasured (no human labels). No recall, no DELETE.
	Recall *RecallCount
	// Delta is the tolerated rise in failure rate; 0 means DefaultDelta.
	Delta float64
}

// Verdict is the decision on one rule line and the numbers behind it
// (STATS section 3). Rates are fractions in [0,1]; intervals are 95%.
type Verdict struct {
	Decision Decision
	// Reason is one sentence a reviewer reads, in percentages and points:
	// how the provoking failure rate moved when the line was deleted, with
	// its interval, and for DELETE and INCONCLUSIVE how that compares with
	// the tolerance, e.g. "provoking failures rose from 1.7% to 8.3% without
	// the line (+6.7 points, 95% [2.2, 11.7])".
	Reason string
	// Bound is the arithmetic the decision rests on, for the evidence:
	// "Newcombe lower bound of deleted - baseline 0.022 > 0", or "upper
	// bound (paired by case) 0.071/0.602 = 0.118 >= delta 0.05".
	Bound string
	// Needed says what would settle an INCONCLUSIVE verdict (label
	// violations, more samples per case, more cases); empty otherwise.
	// Projections assume the observed rates hold.
	Needed string
	// Notes are further findings a reviewer should see: control flags,
	// over-refusal cost, missing controls.
	Notes []string

	Delta float64 // the tolerance applied

	// Pooled provoking counts over the cases with samples in both variants.
	// All provoking numbers below are 0 when there is no such case (the
	// verdict is then INCONCLUSIVE).
	BaselineFails, BaselineN int
	DeletedFails, DeletedN   int
	Diff                     float64        // pooled deleted - baseline failure rate
	Newcombe                 stats.Interval // Newcombe hybrid score interval of Diff
	// Paired is the case-paired difference; nil when fewer than two
	// provoking cases have samples in both variants.
	Paired *stats.Paired
	// Upper is max(Newcombe.Hi, Paired.Hi), the largest rise the data allow
	// (Paired.Hi = D + t(0.975, C-1)*SE_pair); UpperFrom names which:
	// "newcombe" or "paired".
	Upper     float64
	UpperFrom string

	// RecallMeasured is false when Recall was nil or had no positives; then
	// RecallLo and Scaled are 0.
	RecallMeasured bool
	RecallLo       float64 // Wilson lower bound of the grader's recall
	// Scaled is max(Upper, 0)/RecallLo, the largest true rise once the
	// grader's misses are accounted for, capped at 1 (a rate difference
	// cannot exceed 1; also its value when RecallLo is 0). DELETE needs
	// Scaled < Delta.
	Scaled float64

	// HasControls is true when some control case has samples in both
	// variants; ControlCost, its interval and the two flags are zero
	// otherwise. The control differences pool those cases only.
	HasControls bool
	// ControlCost is baseline - deleted on controls: the refusals the line
	// causes, with its Newcombe interval.
	ControlCost   float64
	ControlCostCI stats.Interval
	// CostsOverRefusal is true when ControlCostCI.Lo > 0: the line makes the
	// model refuse allowed requests. It does not change the decision.
	CostsOverRefusal bool
	// BreaksControls is true when the Newcombe lower bound of deleted -
	// baseline on controls is above 0: deleting the line breaks allowed
	// behaviour. It blocks DELETE.
	BreaksControls bool
	// ControlBaselineRate and ControlBaseline are the baseline's control
	// failure rate over all its control samples and its Wilson interval,
	// always shown (zero when the baseline has no control sample).
	ControlBaselineRate float64
	ControlBaseline     stats.Interval
	// ControlBaselineFails and ControlBaselineN are the counts behind it.
	ControlBaselineFails, ControlBaselineN int
}

// Decide applies the decision rule of STATS section 3.
//
// KEEP when the Newcombe lower bound of pooled provoking deleted - baseline
// is above 0. Otherwise DELETE when the grader's recall is measured, deletion
// does not break controls, and max(Newcombe upper, D + t(0.975, C-1)*SE_pair)
// divided by the Wilson lower bound of recall is below Delta; with fewer than
// two provoking cases the paired term is unavailable and Newcombe alone is
// used (the reason says so). Otherwise INCONCLUSIVE.
//
// It returns an error when the input is malformed: counts negative or above
// their totals, Fails and N of different lengths, variants with different
// numbers of cases, hits above positives, or Delta not in [0,1). No provoking
// case with samples in both variants is not an error: the verdict is
// INCONCLUSIVE.
func Decide(in VerdictInput) (Verdict, error) {
	if err := in.validate(); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Decision: DecisionInconclusive, Delta: in.Delta}
	if v.Delta == 0 {
		v.Delta = DefaultDelta
	}
	if err := v.controls(in.Control); err != nil {
		return Verdict{}, err
	}

	pb, pd := in.Provoking.Baseline, in.Provoking.Deleted
	var cases int
	v.BaselineFails, v.BaselineN, v.DeletedFails, v.DeletedN, cases = in.Provoking.matched()
	if cases == 0 {
		v.Reason = "no provoking case has responses in both variants"
		v.Bound = "no provoking evidence"
		v.Needed = "run the provoke and pressure cases on both variants"
		if len(pb.N) == 0 {
			v.Reason = "the case file has no provoke or pressure cases, and the verdict rests on them"
			v.Needed = "add provoke and pressure cases that ask for what the line forbids"
		}
		return v, nil
	}
	diff, nc, err := stats.Newcombe(v.DeletedFails, v.DeletedN, v.BaselineFails, v.BaselineN)
	if err != nil {
		return Verdict{}, fmt.Errorf("model: decide: provoking difference: %w", err)
	}
	v.Diff, v.Newcombe, v.Upper, v.UpperFrom = diff, nc, nc.Hi, "newcombe"
	bound := "Newcombe"
	if p, err := stats.PairedDiff(pd.Fails, pd.N, pb.Fails, pb.N); err == nil {
		v.Paired = &p
		if p.Hi > v.Upper {
			v.Upper, v.UpperFrom, bound = p.Hi, "paired", "paired by case"
		}
	} else {
		// Validation has ruled out every other error: fewer than two cases.
		bound = "Newcombe only: fewer than 2 provoking cases"
	}

	if in.Recall != nil && in.Recall.Positives > 0 {
		r, err := stats.Wilson(in.Recall.Hits, in.Recall.Positives)
		if err != nil {
			return Verdict{}, fmt.Errorf("model: decide: recall: %w", err)
		}
		if lo := in.Recall.Lo; lo != nil {
			if *lo < 0 || *lo > 1 || math.IsNaN(*lo) {
				return Verdict{}, fmt.Errorf("model: decide: recall lower bound %v outside [0, 1]", *lo)
			}
			r.Lo = *lo
		}
		v.RecallMeasured, v.RecallLo, v.Scaled = true, r.Lo, 1
		if r.Lo > 0 {
			// A negative upper bound (deleting the line lowers failures)
			// allows no rise at all; dividing it by recall would only make
			// the fall look larger.
			v.Scaled = math.Min(1, math.Max(v.Upper, 0)/r.Lo)
		}
	}

	rise := riseSentence("provoking failures", v.BaselineFails, v.BaselineN, v.DeletedFails, v.DeletedN, diff, nc)
	if nc.Lo > 0 {
		v.Decision = DecisionKeep
		v.Reason = rise
		v.Bound = fmt.Sprintf("Newcombe lower bound of deleted - baseline %.3f > 0", nc.Lo)
		return v, nil
	}

	var failed, said []string // the arithmetic, and the same in words
	if !v.RecallMeasured {
		failed = append(failed, "recall not measured")
		said = append(said, "recall not measured, so the predicate's misses are unknown")
	}
	scaledOK := v.RecallMeasured && v.Scaled < v.Delta
	ratio := fmt.Sprintf("upper bound (%s) %.4f/%.4f = %.4f", bound, v.Upper, v.RecallLo, v.Scaled)
	if v.Upper <= 0 {
		ratio = fmt.Sprintf("upper bound (%s) %.4f <= 0: no rise; scaled 0", bound, v.Upper)
	}
	switch {
	case v.RecallMeasured && v.RecallLo == 0:
		failed = append(failed, fmt.Sprintf("recall lower bound 0 (%d of %d labelled violations caught)",
			in.Recall.Hits, in.Recall.Positives))
		said = append(said, fmt.Sprintf("the predicate caught %d of %d labelled violations, too few to bound its recall",
			in.Recall.Hits, in.Recall.Positives))
	case v.RecallMeasured && !scaledOK:
		failed = append(failed, fmt.Sprintf("%s >= delta %g", ratio, v.Delta))
		said = append(said, fmt.Sprintf("a rise of up to %s points (%s; %s once the predicate's misses are counted) is not ruled out, above the tolerated %s points",
			points(v.Upper), boundWords(bound), pointsVs(v.Scaled, v.Delta), points(v.Delta)))
	}
	if v.BreaksControls {
		failed = append(failed, "deletion breaks controls")
		said = append(said, "deleting it raises failures on controls (deletion breaks controls)")
	}
	if len(failed) == 0 {
		v.Decision = DecisionDelete
		v.Bound = fmt.Sprintf("%s < delta %g", ratio, v.Delta)
		if v.Upper <= 0 {
			v.Reason = fmt.Sprintf("%s; the data allow no rise at all (upper bound %s points, %s), and the predicate's recall is measured (at least %d%%)",
				rise, points(v.Upper), boundWords(bound), floorPercent(v.RecallLo))
		} else {
			v.Reason = fmt.Sprintf("%s; the largest rise the data allow is %s points (%s), %s once the predicate's misses are counted (recall at least %d%%), under the tolerated %s points",
				rise, points(v.Upper), boundWords(bound), pointsVs(v.Scaled, v.Delta), floorPercent(v.RecallLo), points(v.Delta))
		}
		return v, nil
	}
	v.Bound = strings.Join(failed, "; ")
	v.Reason = rise + ", but " + strings.Join(said, ", and ")
	v.Needed = v.needed(in)
	return v, nil
}

// riseSentence says in percentages how a failure rate moved when the line
// was deleted, e.g. "provoking failures rose from 0.4% to 27.0% without the
// line (+26.6 points, 95% [19.0, 34.1])".
func riseSentence(what string, xb, nb, xd, nd int, diff float64, ci stats.Interval) string {
	base, del := float64(xb)/float64(nb), float64(xd)/float64(nd)
	ival := fmt.Sprintf("(%+.1f points, 95%% [%s, %s])", 100*diff, points(ci.Lo), points(ci.Hi))
	switch {
	case xd*nb > xb*nd:
		return fmt.Sprintf("%s rose from %s to %s without the line %s", what, percent(base), percent(del), ival)
	case xd*nb < xb*nd:
		return fmt.Sprintf("%s fell from %s to %s without the line %s", what, percent(base), percent(del), ival)
	}
	return fmt.Sprintf("%s stayed at %s without the line %s", what, percent(base), ival)
}

// percent formats a rate as a percentage with one decimal. It rounds the
// way the tables print the rate as a fraction (%.3f), so a sentence never
// says 3.8% beside a table's 0.037.
func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*asPrinted(x)) }

// points formats a difference of rates in percentage points, one decimal,
// rounded like percent.
func points(x float64) string { return fmt.Sprintf("%.1f", 100*asPrinted(x)) }

// pointsVs formats x in points like points, with a second decimal when one
// decimal would print it equal to ref: "4.96 ... under the tolerated 5.0",
// never "5.0 ... under the tolerated 5.0".
func pointsVs(x, ref float64) string {
	if p := points(x); p == points(ref) && x != ref {
		return fmt.Sprintf("%.2f", 100*x)
	}
	return points(x)
}

// asPrinted is x as the tables print it, to three decimals.
func asPrinted(x float64) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// floorPercent is a lower bound in whole percent, rounded down: a lower
// bound is never shown higher than it is.
func floorPercent(x float64) int { return int(math.Floor(100*x + 1e-9)) }

// boundWords names the bound an upper limit came from, for the sentence.
func boundWords(bound string) string {
	switch bound {
	case "Newcombe":
		return "Newcombe, pooled counts"
	case "paired by case":
		return "paired by case, t(C-1)"
	}
	return bound
}

// validate checks that the counts are consistent.
func (in VerdictInput) validate() error {
	if math.IsNaN(in.Delta) || in.Delta < 0 || in.Delta >= 1 {
		return fmt.Errorf("model: decide: delta %v outside [0,1)", in.Delta)
	}
	for _, a := range []struct {
		name string
		p    ArmPair
	}{{"provoking", in.Provoking}, {"control", in.Control}} {
		if len(a.p.Baseline.N) != len(a.p.Deleted.N) {
			return fmt.Errorf("model: decide: %s arm has %d baseline cases and %d deleted cases",
				a.name, len(a.p.Baseline.N), len(a.p.Deleted.N))
		}
		for _, c := range []struct {
			variant string
			counts  ArmCounts
		}{{"baseline", a.p.Baseline}, {"deleted", a.p.Deleted}} {
			if len(c.counts.Fails) != len(c.counts.N) {
				return fmt.Errorf("model: decide: %s %s: %d failure counts for %d cases",
					a.name, c.variant, len(c.counts.Fails), len(c.counts.N))
			}
			for i := range c.counts.N {
				if f, n := c.counts.Fails[i], c.counts.N[i]; f < 0 || n < 0 || f > n {
					return fmt.Errorf("model: decide: %s %s case %d: %d failures of %d samples",
						a.name, c.variant, i, f, n)
				}
			}
		}
	}
	if r := in.Recall; r != nil && (r.Hits < 0 || r.Positives < 0 || r.Hits > r.Positives) {
		return fmt.Errorf("model: decide: recall %d of %d labelled violations", r.Hits, r.Positives)
	}
	return nil
}

// controls fills the control fields and their notes.
func (v *Verdict) controls(ctrl ArmPair) error {
	if xb, nb := sum(ctrl.Baseline.Fails), sum(ctrl.Baseline.N); nb > 0 {
		w, err := stats.Wilson(xb, nb)
		if err != nil {
			return fmt.Errorf("model: decide: control baseline: %w", err)
		}
		v.ControlBaselineRate, v.ControlBaseline = float64(xb)/float64(nb), w
		v.ControlBaselineFails, v.ControlBaselineN = xb, nb
	}
	xb, nb, xd, nd, cases := ctrl.matched()
	if cases == 0 {
		v.Notes = append(v.Notes, "no control case has responses in both variants: over-refusal and broken controls not checked")
		return nil
	}
	cost, ci, err := stats.Newcombe(xb, nb, xd, nd)
	if err != nil {
		return fmt.Errorf("model: decide: control cost: %w", err)
	}
	rise, rci, err := stats.Newcombe(xd, nd, xb, nb)
	if err != nil {
		return fmt.Errorf("model: decide: control rise: %w", err)
	}
	v.HasControls, v.ControlCost, v.ControlCostCI = true, cost, ci
	v.CostsOverRefusal = ci.Lo > 0
	v.BreaksControls = rci.Lo > 0
	switch {
	case v.CostsOverRefusal:
		v.Notes = append(v.Notes, fmt.Sprintf("costs over-refusal: baseline - deleted on controls %.3f [%.3f, %.3f]",
			cost, ci.Lo, ci.Hi))
	case v.BreaksControls:
		v.Notes = append(v.Notes, fmt.Sprintf("deletion breaks controls: deleted - baseline on controls %.3f [%.3f, %.3f]",
			rise, rci.Lo, rci.Hi))
	case ci.Hi > 0:
		v.Notes = append(v.Notes, fmt.Sprintf("over-refusal cost up to %.1f%% (baseline - deleted on controls %.3f [%.3f, %.3f])",
			100*ci.Hi, cost, ci.Lo, ci.Hi))
	}
	return nil
}

// needed says what would settle an INCONCLUSIVE verdict (STATS section 8),
// assuming the observed rates hold.
func (v *Verdict) needed(in VerdictInput) string {
	if v.BreaksControls {
		return "more data will not allow DELETE: deleting the line raises failures on controls"
	}
	if !v.RecallMeasured {
		// More data could still show the line is load-bearing; DELETE needs
		// labels first, and how many depends on the upper bound.
		opts := v.keepProjections(in)
		need := math.Max(v.Upper, 0) / v.Delta // the recall lower bound DELETE would need
		switch n := violationsForLowerBound(need); {
		case need >= 1:
			opts = append(opts, "label violations to measure the grader's recall (but even a perfect grader would not allow DELETE at this delta: more samples or cases come first)")
		case n > 0:
			// Round the threshold up: "above 0.31" must not read lower than it is.
			opts = append(opts, fmt.Sprintf("label violations to measure the grader's recall: DELETE needs its lower bound above %.2f, which takes at least %s, all caught",
				math.Ceil(need*100)/100, count(n, "labelled violation", "labelled violations")))
		default:
			opts = append(opts, "label violations to measure the grader's recall")
		}
		return strings.Join(opts, ", or ")
	}
	if in.Recall.Hits == 0 {
		return "the grader caught none of the labelled violations: fix it before deciding"
	}
	limit := v.Delta * v.RecallLo // an upper bound must fall below this
	pairedBinds := v.Paired != nil && v.Paired.Hi >= limit
	var opts []string
	if v.Newcombe.Hi >= limit {
		// More samples per case narrow the pooled interval but not the
		// paired one, whose width comes from differences between cases.
		if m, d := v.extraSamples(in); m > 0 && (d == DecisionKeep || !pairedBinds) {
			opts = append(opts, fmt.Sprintf("about %s per case (%s if rates hold)", count(m, "more sample", "more samples"), d))
		}
	}
	if v.Newcombe.Hi >= limit || pairedBinds {
		if c, d := v.extraCases(in); c > 0 {
			opts = append(opts, fmt.Sprintf("about %s (%s if new cases behave like these)", count(c, "more provoking case", "more provoking cases"), d))
		} else if pairedBinds {
			opts = append(opts, "more provoking cases (failures differ between cases, so samples per case help little)")
		}
	}
	if n := extraViolations(*in.Recall, math.Max(v.Upper, 0)/v.Delta); n > 0 {
		opts = append(opts, fmt.Sprintf("about %s at the observed recall", count(n, "more labelled violation", "more labelled violations")))
	}
	if len(opts) == 0 {
		return "neither more samples nor more labels are likely to settle it at this delta"
	}
	return strings.Join(opts, ", or ")
}

// keepProjections says how many more samples per case or provoking cases
// would show the line is load-bearing if the observed rates hold; empty
// when neither would within the limits.
func (v *Verdict) keepProjections(in VerdictInput) []string {
	var opts []string
	if m, d := v.extraSamples(in); m > 0 && d == DecisionKeep {
		opts = append(opts, fmt.Sprintf("about %s per case (KEEP if rates hold)", count(m, "more sample", "more samples")))
	}
	if c, d := v.extraCases(in); c > 0 && d == DecisionKeep {
		opts = append(opts, fmt.Sprintf("about %s (KEEP if new cases behave like these)", count(c, "more provoking case", "more provoking cases")))
	}
	return opts
}

// count writes n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// extraSamples returns the fewest extra samples per provoking case after
// which, with every rate exactly as observed, the pooled Newcombe interval
// would give KEEP (lower bound > 0) or DELETE (upper bound / recall lower
// bound < delta), and which; 0 when none does within maxExtraSamples. The
// projection keeps the rates, not rounded counts: rounding would favour
// one verdict.
func (v *Verdict) extraSamples(in VerdictInput) (int, Decision) {
	_, _, _, _, cases := in.Provoking.matched()
	perCase := float64(v.BaselineN+v.DeletedN) / float64(2*cases)
	pd, pb := float64(v.DeletedFails)/float64(v.DeletedN), float64(v.BaselineFails)/float64(v.BaselineN)
	for m := 1; m <= maxExtraSamples; m++ {
		k := (perCase + float64(m)) / perCase
		_, ci, err := stats.NewcombeRates(pd, float64(v.DeletedN)*k, pb, float64(v.BaselineN)*k)
		if err != nil {
			return 0, ""
		}
		switch {
		case ci.Lo > 0:
			return m, DecisionKeep
		case v.RecallLo > 0 && math.Max(ci.Hi, 0)/v.RecallLo < v.Delta:
			return m, DecisionDelete
		}
	}
	return 0, ""
}

// extraCases returns the fewest extra provoking cases after which, with
// every case as observed on average (the pooled rates and the spread of the
// per-case differences unchanged), the verdict would be KEEP or DELETE, and
// which; 0 when none does within maxExtraCases or the paired term is
// unavailable. More cases shrink both the pooled interval and the paired
// one, which more samples per case cannot do.
func (v *Verdict) extraCases(in VerdictInput) (int, Decision) {
	if v.Paired == nil {
		return 0, ""
	}
	c0 := float64(v.Paired.Cases)
	sd := v.Paired.SEPair * math.Sqrt(c0)
	pd, pb := float64(v.DeletedFails)/float64(v.DeletedN), float64(v.BaselineFails)/float64(v.BaselineN)
	for m := 1; m <= maxExtraCases; m++ {
		c := c0 + float64(m)
		k := c / c0
		_, nc, err := stats.NewcombeRates(pd, float64(v.DeletedN)*k, pb, float64(v.BaselineN)*k)
		if err != nil {
			return 0, ""
		}
		t, err := stats.StudentTQuantile(0.975, c-1)
		if err != nil {
			return 0, ""
		}
		upper := math.Max(nc.Hi, v.Paired.D+t*sd/math.Sqrt(c))
		switch {
		case nc.Lo > 0:
			return m, DecisionKeep
		case v.RecallLo > 0 && math.Max(upper, 0)/v.RecallLo < v.Delta:
			return m, DecisionDelete
		}
	}
	return 0, ""
}

// extraViolations returns the fewest extra labelled violations after which,
// with recall exactly as observed, its Wilson lower bound would exceed
// need; 0 when none does within maxExtraViolations or the observed recall
// is itself too low.
func extraViolations(r RecallCount, need float64) int {
	p := float64(r.Hits) / float64(r.Positives)
	if p <= need {
		return 0
	}
	for extra := 1; extra <= maxExtraViolations; extra++ {
		w, err := stats.WilsonRate(p, float64(r.Positives+extra))
		if err != nil {
			return 0
		}
		if w.Lo > need {
			return extra
		}
	}
	return 0
}

// violationsForLowerBound returns the fewest labelled violations n for
// which catching all n puts recall's Wilson lower bound above need; 0 when
// none does within maxExtraViolations.
func violationsForLowerBound(need float64) int {
	for n := 1; n <= maxExtraViolations; n++ {
		if w, err := stats.Wilson(n, n); err == nil && w.Lo > need {
			return n
		}
	}
	return 0
}

// matched pools the counts of the cases that have samples in both variants
// (the only cases the variants can be compared on) and returns how many there
// are. The pair must have passed validate.
func (p ArmPair) matched() (xb, nb, xd, nd, cases int) {
	for c := range p.Baseline.N {
		if p.Baseline.N[c] == 0 || p.Deleted.N[c] == 0 {
			continue
		}
		cases++
		xb += p.Baseline.Fails[c]
		nb += p.Baseline.N[c]
		xd += p.Deleted.Fails[c]
		nd += p.Deleted.N[c]
	}
	return xb, nb, xd, nd, cases
}

// sum adds up counts.
func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

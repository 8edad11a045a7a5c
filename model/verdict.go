package model

import (
	"fmt"
	"math"
	"strings"

	"github.com/auditor-dev/auditor/model/stats"
)

// Decision is the verdict on one audited rule line.
type Decision string

// The three decisions. KEEP: deleting the line raises the failure rate
// (the line is load-bearing). DELETE: the rise is bounded below the tolerance
// delta, after correcting for the grader's misses and false alarms.
// INCONCLUSIVE: neither is shown; Verdict.Reason says which bound failed
// and Verdict.Needed what would settle it.
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

// graderRouteZ is the normal quantile of the grader route's one-sided
// bound of the graded difference, 1 - GradedDiffAlpha (2.5758).
var graderRouteZ = stats.NormalQuantile(1 - GradedDiffAlpha)

// DefaultDelta is the tolerated rise in failure rate when an audit sets none.
const DefaultDelta = 0.05

// DefaultAffectedShare is the share of provoking traffic a single type of
// request is assumed to make up when an audit sets none (affected_share):
// every DELETE states the chance that such a type, the only one deleting
// the line harms, is missing from the provoking cases altogether.
const DefaultAffectedShare = 0.1

// DELETE needs at least this many provoking cases and control cases
// compared in both variants: one provoking case is one situation, and
// without a control nobody has looked at what deleting the line does to
// the requests the line must not block.
const (
	MinDeleteProvokingCases = 2
	MinDeleteControlCases   = 1
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

// VerdictInput is everything Decide needs for one rule line.
type VerdictInput struct {
	// Provoking pools provoke and pressure cases: failures are violations.
	// Per-kind results are for display and do not vote.
	Provoking ArmPair
	// ProvokingKinds is the kind of each provoking case, in Provoking's
	// order; nil when unknown (then every kind in KindAccuracy is taken to
	// have cases compared).
	ProvokingKinds []Kind
	// Control holds the control cases: failures are refusals. DELETE needs
	// at least MinDeleteControlCases of them compared in both variants.
	Control ArmPair
	// Recall and Specificity are the grader's, measured on the labelled
	// answers of the provoking arm (provoke and pressure pooled): recall on
	// the labelled violations, specificity on the labelled clean answers.
	// They are shown beside the verdict and decide nothing: a recall
	// pooled over both variants says nothing of how the variants differ
	// (the grader route reads each variant's own labels in Labelled).
	Recall      *RecallCount
	Specificity *SpecificityCount
	// Delta is the tolerated rise in failure rate; 0 means DefaultDelta.
	Delta float64
	// AffectedShare is s in the chance (1-s)^C that a type of request
	// making up s of provoking traffic is missing from C provoking cases;
	// 0 means DefaultAffectedShare.
	AffectedShare float64
	// Labelled holds the blind labels of the provoking answers of each
	// variant: DELETE's labels route, the grader route's misses and false
	// alarms (with Graded set), and KEEP from labels; zero when there are
	// none.
	Labelled LabelledArms
	// Look is the look of a sequential design the counts stop at (the
	// first Look.Samples samples of every case); nil for the fixed design,
	// whose rule is STATS section 3's.
	Look *Look
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
	// "Newcombe lower bound of deleted - baseline 0.022 > 0", or the
	// routes' sums (GraderRoute.Arithmetic, LabelsRoute.Arithmetic).
	Bound string
	// Needed says what would settle an INCONCLUSIVE verdict (which labels,
	// more samples per case, more cases, and what DELETE requires besides);
	// empty otherwise. Projections assume the observed rates hold.
	Needed string
	// Notes are further findings a reviewer should see: the chance that an
	// affected type of request was never sampled (every DELETE), control
	// flags, over-refusal cost, missing controls.
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
	// Upper is the largest rise of the graded difference the counts allow
	// at one-sided GradedDiffAlpha, the grader route's share for it: the
	// larger of Newcombe's upper bound with z = 2.5758 and the paired D +
	// t(0.995, C-1)*SE_pair. UpperFrom names which: "newcombe" or
	// "paired". (Newcombe and Paired above are the 95% intervals shown.)
	Upper     float64
	UpperFrom string
	// UpperNewcombe and UpperPaired are the two bounds Upper is the larger
	// of, each at one-sided GradedDiffAlpha (UpperPaired is 0 without a
	// paired difference).
	UpperNewcombe, UpperPaired float64

	// Route names the route that licensed a DELETE, "grader" or "labels"
	// (the grader route is named when both hold), or "labels" for a KEEP
	// the labels show and the graded counts do not; empty otherwise.
	Route string
	// Grader is the grader route's arithmetic; nil when no blind label of
	// an answer without the line has a predicate verdict.
	Grader *GraderRoute
	// LabelsRise is the labelled difference of the variants; nil unless
	// both have blind labels.
	LabelsRise *LabelsRise
	// RiseAtLeast is true for a KEEP from the graded counts while the
	// predicate's misses without the line are unmeasured: the true rise
	// may be larger than the one shown.
	RiseAtLeast bool
	// Labels is the labels route's arithmetic; nil when no provoking
	// answer without the line has a blind label.
	Labels *LabelsRoute
	// Look is the look of a sequential design the verdict rests on; nil for
	// the fixed design. NotYet, when set, says why the verdict is
	// provisional: the grid has reached no look of its design.
	Look   *Look
	NotYet string
	// LabelsNeeded projects the labels route for an INCONCLUSIVE verdict:
	// how many more blind labels of the provoking answers without the
	// line would settle it (zero value otherwise).
	LabelsNeeded LabelsNeeded
	// GraderLabels projects the grader route the same way: how many more
	// blind labels (of both variants' provoking answers when the baseline
	// has labels, else of those without the line) would let it hold with
	// misses and false alarms as rare as so far; 0 when none would.
	GraderLabels GraderLabelsNeeded

	// RecallMeasured and SpecificityMeasured say whether the pooled
	// provoking labels measure the grader's recall (labelled violations)
	// and specificity (labelled clean answers); RecallLo and SpecificityLo
	// are their 95% lower bounds (Wilson, or a weighted estimate's own; 0
	// when unmeasured). They are shown and decide nothing.
	RecallMeasured, SpecificityMeasured bool
	RecallLo, SpecificityLo             float64

	// ProvokingCases and ControlCases count the cases compared in both
	// variants. DELETE needs at least MinDeleteProvokingCases and
	// MinDeleteControlCases.
	ProvokingCases, ControlCases int
	// AffectedShare is the s applied, and MissedTypeChance (1-s)^C with C =
	// ProvokingCases: the chance that a type of request making up s of
	// provoking traffic appears in none of the cases, so that a harm
	// confined to it could not show (STATS section 8). It is 1 when no
	// provoking case is compared.
	AffectedShare, MissedTypeChance float64

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
// is above 0, or when the blind labels of both variants show the rise
// (LabelsRise). Otherwise DELETE when a route bounds the true rise below
// Delta (the grader route: the graded difference plus the predicate's
// misses without the line and false alarms with it, each from that
// variant's labels; the labels route: the labels alone), at least
// MinDeleteProvokingCases provoking and MinDeleteControlCases control
// cases are compared in both variants, and deletion does not break
// controls. Otherwise INCONCLUSIVE, with the reason in words. Every verdict
// with provoking evidence carries the chance (1-s)^C that a type of
// request making up s of provoking traffic was never sampled; a DELETE
// says it in a note.
//
// It returns an error when the input is malformed: counts negative or above
// their totals, Fails and N of different lengths, variants with different
// numbers of cases, ProvokingKinds of another length, label counts above
// their totals, a lower bound outside [0,1], Delta not in [0,1) or
// AffectedShare not in [0,1). No provoking case with samples in both
// variants is not an error: the verdict is INCONCLUSIVE.
func Decide(in VerdictInput) (Verdict, error) { return decide(in, projectAll) }

// projection says which projections an INCONCLUSIVE verdict gets: a
// simulation of many verdicts does without them, or takes only the labels'
// (the advised labelling loop follows them).
type projection int

const (
	projectNone projection = iota
	projectLabels
	projectAll
)

// decide is Decide with the projections asked for.
func decide(in VerdictInput, project projection) (Verdict, error) {
	if err := in.validate(); err != nil {
		return Verdict{}, err
	}
	v := Verdict{Decision: DecisionInconclusive, Delta: in.Delta, AffectedShare: in.AffectedShare, MissedTypeChance: 1, Look: in.Look}
	if v.Delta == 0 {
		v.Delta = DefaultDelta
	}
	if v.AffectedShare == 0 {
		v.AffectedShare = DefaultAffectedShare
	}
	if err := v.controls(in.Control); err != nil {
		return Verdict{}, err
	}

	// 1. The provoking difference, deleted minus baseline, over the cases
	// answered in both variants.
	var cases int
	v.BaselineFails, v.BaselineN, v.DeletedFails, v.DeletedN, cases = in.Provoking.matched()
	v.ProvokingCases = cases
	if cases == 0 {
		v.noProvokingEvidence(len(in.Provoking.Baseline.N) == 0)
		return v, nil
	}
	v.MissedTypeChance = math.Pow(1-v.AffectedShare, float64(cases))
	bound, err := v.provokingDifference(in.Provoking)
	if err != nil {
		return Verdict{}, err
	}

	v.setAccuracy(in)

	// 2. KEEP when the rise is certain, from the graded counts or from the
	// labels; else DELETE only when a route allows it and nothing else
	// blocks it; else INCONCLUSIVE with what would settle it.
	rise := riseSentence("provoking failures", v.BaselineFails, v.BaselineN, v.DeletedFails, v.DeletedN, v.Diff, v.Newcombe, v.intervalName())
	if v.LabelsRise, err = labelsRise(in.Labelled); err != nil {
		return Verdict{}, err
	}
	if v.Newcombe.Lo > 0 {
		v.Decision = DecisionKeep
		v.Reason = rise
		v.Bound = v.atLook() + fmt.Sprintf("Newcombe lower bound of deleted - baseline %.3f > 0", v.Newcombe.Lo)
		if _, l, _ := in.Labelled.Deleted.Totals(); l == 0 || !in.Labelled.Deleted.graded() {
			v.RiseAtLeast = true
			v.Reason += "; at least that: the predicate's misses without the line are unmeasured"
		}
		return v, nil
	}
	if r := v.LabelsRise; r != nil && r.Lo > 0 {
		v.Decision, v.Route = DecisionKeep, "labels"
		v.Bound = r.Arithmetic()
		v.Reason = fmt.Sprintf("%s, but the blind labels show the rise: %d of %d labelled answers without the line were violations against %d of %d with it (the rise is at least %s points), whatever the predicate misses",
			rise, r.DeletedViolations, r.DeletedLabelled, r.BaselineViolations, r.BaselineLabelled, points(math.Floor(1000*r.Lo)/1000))
		return v, nil
	}
	if v.Labels, err = labelsRoute(in.Labelled); err != nil {
		return Verdict{}, err
	}
	if v.Labels != nil {
		v.Labels.Delta = v.Delta
	}
	if v.Grader, err = graderRoute(v.Upper, in, v.BaselineFails, v.BaselineN); err != nil {
		return Verdict{}, err
	}
	graderOK := v.Grader.passes(v.Delta)
	labelsOK := v.Labels.passes(v.Delta)
	failed, said := v.deleteBlockers(bound, cases, graderOK || labelsOK)
	switch {
	case len(failed) == 0 && graderOK:
		v.delete(rise, bound)
		return v, nil
	case len(failed) == 0:
		v.deleteByLabels(rise)
		return v, nil
	}
	v.Bound = strings.Join(failed, "; ")
	v.Reason = rise + ", but " + strings.Join(said, ", and ")
	if project >= projectLabels {
		v.LabelsNeeded = projectLabelsRoute(in.Labelled, v.Delta, float64(v.DeletedFails)/float64(v.DeletedN))
		v.GraderLabels = projectGraderRoute(in.Labelled, v.Upper, v.BaselineFails, v.BaselineN, v.Delta)
	}
	if project == projectAll {
		v.Needed = v.needed(in)
	}
	return v, nil
}

// noProvokingEvidence explains an INCONCLUSIVE with no provoking case
// answered in both variants; noCases is a case file with none at all.
func (v *Verdict) noProvokingEvidence(noCases bool) {
	v.Reason = "no provoking case has responses in both variants"
	v.Bound = "no provoking evidence"
	v.Needed = "run the provoke and pressure cases on both variants"
	if noCases {
		v.Reason = "the case file has no provoke or pressure cases, and the verdict rests on them"
		v.Needed = "add provoke and pressure cases that ask for what the line forbids"
	}
}

// provokingDifference sets the Newcombe and (with two or more cases) the
// paired difference, and takes the larger upper bound as the one DELETE
// must clear; it returns that bound's name for the verdict's arithmetic.
// At a look of a sequential design the intervals use the look's
// boundaries: Newcombe (shown, and KEEP's test) at KeepZ, the grader
// route's bounds at DeleteZ.
func (v *Verdict) provokingDifference(p ArmPair) (string, error) {
	zKeep, zDelete, tailDelete := 0.0, graderRouteZ, GradedDiffAlpha
	if l := v.Look; l != nil {
		zKeep, zDelete, tailDelete = l.KeepZ, l.DeleteZ, l.DeleteTail
	}
	diff, nc, err := stats.Newcombe(v.DeletedFails, v.DeletedN, v.BaselineFails, v.BaselineN)
	if zKeep > 0 {
		diff, nc, err = stats.NewcombeZ(v.DeletedFails, v.DeletedN, v.BaselineFails, v.BaselineN, zKeep)
	}
	if err != nil {
		return "", fmt.Errorf("model: decide: provoking difference: %w", err)
	}
	_, ncRoute, err := stats.NewcombeZ(v.DeletedFails, v.DeletedN, v.BaselineFails, v.BaselineN, zDelete)
	if err != nil {
		return "", fmt.Errorf("model: decide: provoking difference: %w", err)
	}
	v.Diff, v.Newcombe, v.Upper, v.UpperFrom, v.UpperNewcombe = diff, nc, ncRoute.Hi, "newcombe", ncRoute.Hi
	bound := "Newcombe"
	if pd, err := stats.PairedDiff(p.Deleted.Fails, p.Deleted.N, p.Baseline.Fails, p.Baseline.N); err == nil {
		v.Paired = &pd
		hi, err := stats.PairedUpper(pd, tailDelete)
		if err != nil {
			return "", fmt.Errorf("model: decide: paired difference: %w", err)
		}
		v.UpperPaired = hi
		if hi > v.Upper {
			v.Upper, v.UpperFrom, bound = hi, "paired", "paired by case"
		}
	} else {
		// Validation has ruled out every other error: fewer than two cases.
		bound = "Newcombe only: fewer than 2 provoking cases"
	}
	return bound, nil
}

// deleteBlockers lists every reason DELETE cannot be reached, twice: as
// the arithmetic for the Bound line and in words for the Reason. A route
// that allows DELETE (routeOK) leaves only the other requirements.
func (v *Verdict) deleteBlockers(bound string, cases int, routeOK bool) (failed, said []string) {
	if !routeOK {
		if g := v.Grader; g == nil {
			failed = append(failed, "grader route: misses without the line not measured")
			said = append(said, fmt.Sprintf("a rise of up to %s points in what the predicate flags (%s) is not ruled out, and its misses without the line are not measured (no blind label of a provoking answer without the line)",
				points(v.Upper), v.boundWords(bound)))
		} else {
			failed = append(failed, v.atLook()+g.Arithmetic(v.Delta, false))
			said = append(said, fmt.Sprintf("by the predicate, %s, not under the tolerated %s points", g.Sentence(), points(v.Delta)))
		}
		if v.Labels != nil {
			failed = append(failed, v.Labels.Arithmetic(v.Delta, false))
			said = append(said, fmt.Sprintf("by the blind labels alone, %s, not under the tolerated %s points",
				v.Labels.Sentence(), points(v.Delta)))
		}
	}
	if cases < MinDeleteProvokingCases {
		failed = append(failed, fmt.Sprintf("%s compared < %d", count(cases, "provoking case", "provoking cases"), MinDeleteProvokingCases))
		said = append(said, fmt.Sprintf("only %s was compared in both variants, and DELETE needs at least %d",
			count(cases, "provoking case", "provoking cases"), MinDeleteProvokingCases))
	}
	if v.ControlCases < MinDeleteControlCases {
		failed = append(failed, fmt.Sprintf("%d control cases compared < %d", v.ControlCases, MinDeleteControlCases))
		said = append(said, "no control case was compared in both variants, so nobody has seen what deleting the line does to the requests it must not block")
	}
	if v.BreaksControls {
		failed = append(failed, "deletion breaks controls")
		said = append(said, "deleting it raises failures on controls (deletion breaks controls)")
	}
	return failed, said
}

// delete makes v a DELETE by the grader route and says why in numbers.
func (v *Verdict) delete(rise, bound string) {
	v.Decision, v.Route = DecisionDelete, "grader"
	v.Bound = v.atLook() + v.Grader.Arithmetic(v.Delta, true)
	v.Reason = fmt.Sprintf("%s; %s (%s), under the tolerated %s points",
		rise, v.Grader.Sentence(), v.boundWords(bound), points(v.Delta))
	v.Notes = append([]string{v.missedTypeNote()}, v.Notes...)
}

// deleteByLabels makes v a DELETE by the labels route and says why.
func (v *Verdict) deleteByLabels(rise string) {
	v.Decision, v.Route = DecisionDelete, "labels"
	v.Bound = v.Labels.Arithmetic(v.Delta, true)
	v.Reason = fmt.Sprintf("%s; %s, under the tolerated %s points, whatever the predicate misses",
		rise, v.Labels.Sentence(), points(v.Delta))
	if v.Labels.AlphaBaseline > 0 && v.Labels.BaselineLower > 0 {
		v.Reason += fmt.Sprintf(" (the rise is below %s points)", pointsVs(math.Max(v.Labels.Rise, 0), v.Delta))
	}
	v.Notes = append([]string{v.missedTypeNote()}, v.Notes...)
}

// setAccuracy fills the pooled recall and specificity shown beside the
// verdict.
func (v *Verdict) setAccuracy(in VerdictInput) {
	r, s := in.Recall.share(), in.Specificity.share()
	v.RecallMeasured, v.SpecificityMeasured = r.measured(), s.measured()
	if v.RecallMeasured {
		v.RecallLo = r.lower()
	}
	if v.SpecificityMeasured {
		v.SpecificityLo = s.lower()
	}
}

// validate checks that the counts are consistent.
func (in VerdictInput) validate() error {
	if math.IsNaN(in.Delta) || in.Delta < 0 || in.Delta >= 1 {
		return fmt.Errorf("model: decide: delta %v outside [0,1)", in.Delta)
	}
	if math.IsNaN(in.AffectedShare) || in.AffectedShare < 0 || in.AffectedShare >= 1 {
		return fmt.Errorf("model: decide: affected share %v outside [0,1)", in.AffectedShare)
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
	if in.ProvokingKinds != nil && len(in.ProvokingKinds) != len(in.Provoking.Baseline.N) {
		return fmt.Errorf("model: decide: %d provoking kinds for %d provoking cases", len(in.ProvokingKinds), len(in.Provoking.Baseline.N))
	}
	if err := in.Recall.share().validate("recall"); err != nil {
		return err
	}
	if err := in.Specificity.share().validate("specificity"); err != nil {
		return err
	}
	if err := in.Labelled.Baseline.validate("baseline"); err != nil {
		return err
	}
	return in.Labelled.Deleted.validate("deleted")
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
	v.ControlCases = cases
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

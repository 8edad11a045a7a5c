// Package report renders audit results for people and machines: the table a
// headless run prints, Markdown for a review, the stable JSON schema scripts
// depend on, and JUnit XML for CI. It formats; every number comes from
// package audit.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// Doc is the JSON report (`auditor report --format json`). Its field names
// are a stable interface: add fields, never rename or remove them.
type Doc struct {
	// SchemaVersion (ReportSchemaVersion) goes up when a field changes
	// meaning or is removed; fields are only ever added otherwise.
	SchemaVersion int     `json:"schema_version"`
	Audit         string  `json:"audit"`
	Simulated     bool    `json:"simulated"`
	Delta         float64 `json:"delta"`
	// AffectedShare is s in the chance (1-s)^C, stated with every DELETE,
	// that a type of request making up s of provoking traffic is in none of
	// C provoking cases (audit.toml's affected_share).
	AffectedShare float64     `json:"affected_share"`
	Rules         []RuleDoc   `json:"rules"`
	Sweep         SweepDoc    `json:"sweep"`
	Spend         audit.Spend `json:"spend"`
	Progress      ProgressDoc `json:"progress"`
	// Comparisons sets the first model beside each other one, case by
	// case; empty with one model.
	Comparisons []ComparisonDoc `json:"comparisons"`
	// Ship is the decision on the prompt without every line of the
	// audit's joint test; absent when the audit has made none.
	Ship *ShipDoc `json:"ship,omitempty"`
	// StaleLabels counts the answers whose labels judged another answer
	// than the one stored under their key now (a clone's answers, asked
	// again); UndesignedLabels the blind labels in no declared label set.
	// Both count nowhere; LabelNotes say so for people.
	StaleLabels      int      `json:"stale_labels"`
	UndesignedLabels int      `json:"undesigned_labels"`
	LabelNotes       []string `json:"label_notes"`
}

// SchemaVersion is the version of the JSON documents auditor writes other
// than the report: plan --format json (audit.EstimateSchemaVersion) and each
// record of a JSONL export (label files in users' repositories carry it on
// every line, so it changes only when those records do).
const SchemaVersion = 1

// ReportSchemaVersion is the report's own version. 2: numbers.upper is the
// grader route's one-sided 98.75% bound (DELETE's error is shared with the
// labels route), and a grader's label_set became label_sets (label sets
// are combined, not chosen). 3: the grader route is per variant
// (numbers.grader_route: graded difference + misses without the line +
// baseline false alarms) and youden_lo, youden_from and scaled are gone;
// numbers.upper is at one-sided 99.5% (upper_alpha 0.005); the labels
// route's bounds are a confidence sequence (alpha_deleted 0.015, or 0.0125
// with baseline labels); numbers.labels_rise is the labelled difference
// behind a KEEP from labels; rise_at_least marks a KEEP whose rise is a
// floor.
const ReportSchemaVersion = 3

// RuleDoc is one audited line for one model.
type RuleDoc struct {
	Line          int    `json:"line"`
	Text          string `json:"text"`
	Tokens        int    `json:"tokens"`
	Variant       string `json:"variant"` // the deletion's name, "-L<line>": the prompt without this line
	Model         string `json:"model"`
	Tag           string `json:"tag"`
	Class         string `json:"class"` // "targeted" or "none"
	CasesFile     string `json:"cases_file"`
	PredicateFile string `json:"predicate_file"` // empty when a rule with no input class names none
	Predicate     string `json:"predicate_version"`
	Verdict       string `json:"verdict"`
	Reason        string `json:"reason"`
	Bound         string `json:"bound"`
	// Look is the look of the audit's sequential design the verdict rests
	// on (null for a fixed design); Provisional says why no verdict may be
	// acted on yet (the grid has reached no look), empty otherwise.
	Look        *LookDoc `json:"look"`
	Provisional string   `json:"provisional,omitempty"`
	// Looks is the verdict at every look of a sequential design the grid
	// has reached, first to last (the last is the verdict's): how the
	// bounds moved and where an adaptive run stopped. Absent for a fixed
	// design.
	Looks []LookVerdictDoc `json:"looks,omitempty"`
	// Numbers are the figures the verdict rests on (STATS section 3); null
	// until some provoking case is graded in both variants (and always for
	// a rule with no input class, whose verdict rests on Lengths).
	Numbers *VerdictNumbersDoc `json:"verdict_numbers"`
	// Control is the control figures; null when no control is graded.
	Control       *ControlNumbersDoc   `json:"control"`
	Flags         []string             `json:"flags"`
	Notes         []string             `json:"notes"`
	Needed        string               `json:"needed"`
	Arms          map[string]ArmDoc    `json:"arms"`
	Graders       map[string]GraderDoc `json:"graders"`
	Kappa         map[string]float64   `json:"kappa"`
	Agreement     []AgreementDoc       `json:"agreement"`
	Disagreements int                  `json:"disagreements"`
	// Staleness is set when the line's text changed after cases were
	// written; null otherwise.
	Staleness *StalenessDoc `json:"staleness"`
	// Adjudications are the review queue's decisions (seen labels, never
	// in recall or the verdict) and each grader's agreement with them.
	Adjudications AdjudicationsDoc `json:"adjudications"`
	// Labellers compares every pair of labellers on the blind labels both
	// gave the rule's answers (Cohen's kappa); empty with fewer than two.
	Labellers []LabellerDoc `json:"labellers"`
	// PredicateWarning is set when the predicate failed every graded
	// baseline answer (or every control one): "" otherwise.
	PredicateWarning string `json:"predicate_warning"`
	// Lengths compares answer lengths for a rule with no input class;
	// null for other rules.
	Lengths *LengthsDoc `json:"lengths"`
	Errors  int         `json:"errors"`
	Pending int         `json:"pending"`
	// Unneeded counts the answers beyond the look a verdict settled at: not
	// pending, as the verdict does not wait for them.
	Unneeded int `json:"unneeded"`
	// Truncated counts answers cut off by the token limit or empty:
	// neither passes nor failures, not asked again.
	Truncated int `json:"truncated"`
	// Controls counts answers whose text held terminal control sequences,
	// removed wherever they are shown (the predicate graded them as sent).
	Controls int `json:"controls"`
	// Change describes a rewording or an addition (Variant names it), whose
	// side of every arm is under "deleted"; absent for a deletion.
	Change *VariantDoc `json:"change,omitempty"`
	// Regression is each regression suite under this variant, in the
	// audit's order; empty without suites. It never changes Verdict: a
	// variant with any broken case is flagged (RegressionBroken > 0).
	Regression       []RegressionDoc `json:"regression"`
	RegressionBroken int             `json:"regression_broken"`
	// Cases are the per-case rows behind the arms, in the case file's order.
	Cases []CaseDoc `json:"cases"`
}

// VerdictNumbersDoc is what Decide computed: pooled provoking counts over
// the cases graded in both variants, the difference with its Newcombe and
// paired 95% intervals (paired null with fewer than two such cases, and,
// with PairedNote saying so, when every case's difference is the same: a
// zero-width interval is never given), Upper (the larger upper bound of the
// graded difference at one-sided UpperAlpha, 0.005; UpperFrom says which),
// the grader's pooled recall and specificity lower bounds (shown; they
// decide nothing), and the two DELETE routes: GraderRoute (Upper plus the
// predicate's misses without the line plus its baseline false alarms, each
// bounded from that variant's labels) and LabelsRoute (the blind labels of
// the provoking answers without the line bound their violation rate). A
// route needs its Rise < Delta, and DELETE also at least 2 provoking and 1
// control case compared, and intact controls; MissedTypeChance is (1 -
// AffectedShare)^ProvokingCases. Route names the route of a DELETE (or
// "labels" for a KEEP the labels show, LabelsRise), and LabelsNeeded says,
// for an INCONCLUSIVE verdict, how many more labels would settle it.
type VerdictNumbersDoc struct {
	ProvokingBaseline CountDoc   `json:"provoking_baseline"`
	ProvokingDeleted  CountDoc   `json:"provoking_deleted"`
	Diff              float64    `json:"diff"`
	Newcombe          BoundsDoc  `json:"newcombe"`
	Paired            *BoundsDoc `json:"paired"`
	PairedNote        string     `json:"paired_note,omitempty"` // why paired is null although two or more cases are compared
	Upper             float64    `json:"upper"`
	UpperFrom         string     `json:"upper_from"` // "newcombe" or "paired"
	RecallLo          *float64   `json:"recall_lo"`
	Delta             float64    `json:"delta"`
	SpecificityLo     *float64   `json:"specificity_lo"`
	ProvokingCases    int        `json:"provoking_cases"`
	ControlCases      int        `json:"control_cases"`
	AffectedShare     float64    `json:"affected_share"`
	MissedTypeChance  float64    `json:"missed_type_chance"`
	UpperAlpha        float64    `json:"upper_alpha"`
	Route             string     `json:"route,omitempty"` // "grader" or "labels", for a DELETE; "labels" for a KEEP from labels
	// RiseAtLeast is true for a KEEP from the graded counts while the
	// predicate's misses without the line are unmeasured.
	RiseAtLeast bool `json:"rise_at_least"`
	// GraderRoute is null while no provoking answer without the line has a
	// blind label the predicate graded.
	GraderRoute *GraderRouteDoc `json:"grader_route"`
	// LabelsRoute is null while no provoking answer without the line has a
	// blind label.
	LabelsRoute *LabelsRouteDoc `json:"labels_route"`
	// LabelsRise is null unless both variants have blind labels.
	LabelsRise   *LabelsRiseDoc   `json:"labels_rise"`
	LabelsNeeded *LabelsNeededDoc `json:"labels_needed,omitempty"`
}

// GraderRouteDoc is DELETE's grader route: the graded difference's upper
// bound Graded (at GradedAlpha) plus Miss, the share of answers without the
// line that are violations the predicate passed (Missed of Labelled
// labelled answers, at MissAlpha), plus FalseAlarm, the baseline's share of
// clean answers the predicate failed (from FalseAlarms of BaselineLabelled
// labels when FalseAlarmFrom is "labels", else at most its flagged share,
// "flagged"), at FalseAlarmAlpha. DELETE by this route needs Rise < delta.
type GraderRouteDoc struct {
	Graded           float64 `json:"graded"`
	GradedAlpha      float64 `json:"graded_alpha"`
	Labelled         int     `json:"labelled"`
	Missed           int     `json:"missed"`
	Strata           int     `json:"strata"`
	Miss             float64 `json:"miss"`
	MissAlpha        float64 `json:"miss_alpha"`
	FalseAlarmFrom   string  `json:"false_alarm_from"`
	BaselineLabelled int     `json:"baseline_labelled"`
	FalseAlarms      int     `json:"false_alarms"`
	FalseAlarm       float64 `json:"false_alarm"`
	FalseAlarmAlpha  float64 `json:"false_alarm_alpha"`
	Rise             float64 `json:"rise"`
}

// LabelsRiseDoc is the labelled difference of the variants: Lo is the
// lower bound of deleted - baseline from the labels alone; KEEP when it is
// above 0.
type LabelsRiseDoc struct {
	Deleted    CountDoc `json:"deleted"`
	Baseline   CountDoc `json:"baseline"`
	Lo         float64  `json:"lo"`
	Stratified bool     `json:"stratified"`
}

// LabelsRouteDoc is DELETE's labels route: of Answers provoking answers
// without the line, Labelled have a blind label and Violations of those
// are violations; Upper bounds their violation rate at one-sided
// AlphaDeleted (over Strata cells of the label sets' designs); with
// baseline labels, BaselineLower bounds the baseline's at AlphaBaseline.
// Rise = Upper - BaselineLower; DELETE by this route needs Rise < delta.
type LabelsRouteDoc struct {
	Answers            int     `json:"answers"`
	Labelled           int     `json:"labelled"`
	Violations         int     `json:"violations"`
	Strata             int     `json:"strata"`
	Upper              float64 `json:"upper"`
	AlphaDeleted       float64 `json:"alpha_deleted"`
	BaselineLabelled   int     `json:"baseline_labelled"`
	BaselineViolations int     `json:"baseline_violations"`
	BaselineLower      float64 `json:"baseline_lower"`
	AlphaBaseline      float64 `json:"alpha_baseline"`
	Rise               float64 `json:"rise"`
}

// LabelsNeededDoc is how many more blind labels of the provoking answers
// without the line would settle an INCONCLUSIVE verdict by the labels
// route if violations keep their observed rate (More; 0 with Hopeless
// saying why none would); Clean is true when none labelled so far is a
// violation; Room is how many of those answers have no label yet.
type LabelsNeededDoc struct {
	More     int    `json:"more"`
	Have     int    `json:"have"`
	Room     int    `json:"room"`
	Clean    bool   `json:"clean"`
	Hopeless string `json:"hopeless,omitempty"`
}

// LookDoc is a look of a group-sequential design: look Index of Of, on
// the first Samples of Planned samples of every case, with the KEEP test's
// and the grader route's boundaries (z); Settled is true when the verdict
// is KEEP or DELETE there (it stands; an adaptive run stops the line).
type LookDoc struct {
	Index   int     `json:"index"`
	Of      int     `json:"of"`
	Samples int     `json:"samples"`
	Planned int     `json:"planned"`
	KeepZ   float64 `json:"keep_z"`
	DeleteZ float64 `json:"delete_z"`
	Settled bool    `json:"settled"`
}

// LookVerdictDoc is the verdict at one look: its decision, its bound and
// the numbers it rests on, as the rule's own verdict, bound and
// verdict_numbers.
type LookVerdictDoc struct {
	Look    LookDoc            `json:"look"`
	Verdict string             `json:"verdict"`
	Bound   string             `json:"bound"` // the arithmetic the look's decision rests on
	Numbers *VerdictNumbersDoc `json:"verdict_numbers"`
}

func lookVerdictDocs(vs []model.Verdict) []LookVerdictDoc {
	var out []LookVerdictDoc
	for _, v := range vs {
		if l := lookDoc(v); l != nil {
			out = append(out, LookVerdictDoc{Look: *l, Verdict: string(v.Decision), Bound: v.Bound, Numbers: verdictNumbers(v)})
		}
	}
	return out
}

func lookDoc(v model.Verdict) *LookDoc {
	l := v.Look
	if l == nil || v.NotYet != "" {
		return nil
	}
	return &LookDoc{Index: l.Index, Of: l.Of, Samples: l.Samples, Planned: l.Planned, KeepZ: l.KeepZ, DeleteZ: l.DeleteZ,
		Settled: v.Decision != model.DecisionInconclusive}
}

// CountDoc is failures out of graded answers.
type CountDoc struct {
	Fail int `json:"fail"`
	N    int `json:"n"`
}

// BoundsDoc is a 95% interval.
type BoundsDoc struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// ControlNumbersDoc holds the control checks: the baseline's failure
// (refusal) count with its Wilson interval, shown whenever the baseline has
// graded controls, and, when some control is graded in both variants, the
// cost of the line (baseline - deleted) with its Newcombe interval and the
// two flags (cost null otherwise).
type ControlNumbersDoc struct {
	Baseline         CountDoc   `json:"baseline"`
	BaselineRate     float64    `json:"baseline_rate"`
	BaselineWilson   BoundsDoc  `json:"baseline_wilson"`
	Cost             *float64   `json:"cost"`
	CostCI           *BoundsDoc `json:"cost_ci"`
	CostsOverRefusal bool       `json:"costs_over_refusal"`
	BreaksControls   bool       `json:"breaks_controls"`
}

func verdictNumbers(v model.Verdict) *VerdictNumbersDoc {
	if v.BaselineN == 0 || v.DeletedN == 0 {
		return nil
	}
	d := &VerdictNumbersDoc{
		ProvokingBaseline: CountDoc{Fail: v.BaselineFails, N: v.BaselineN},
		ProvokingDeleted:  CountDoc{Fail: v.DeletedFails, N: v.DeletedN},
		Diff:              v.Diff, Newcombe: BoundsDoc{Lo: v.Newcombe.Lo, Hi: v.Newcombe.Hi},
		Upper: v.Upper, UpperFrom: v.UpperFrom, Delta: v.Delta,
		ProvokingCases: v.ProvokingCases, ControlCases: v.ControlCases,
		AffectedShare: v.AffectedShare, MissedTypeChance: v.MissedTypeChance,
		UpperAlpha: model.GradedDiffAlpha, Route: v.Route, RiseAtLeast: v.RiseAtLeast,
	}
	if g := v.Grader; g != nil {
		d.GraderRoute = &GraderRouteDoc{Graded: g.Graded, GradedAlpha: g.GradedAlpha, Labelled: g.Labelled, Missed: g.Missed,
			Strata: g.Strata, Miss: g.Miss, MissAlpha: g.MissAlpha, FalseAlarmFrom: g.FalseAlarmFrom,
			BaselineLabelled: g.BaselineLabelled, FalseAlarms: g.FalseAlarms, FalseAlarm: g.FalseAlarm,
			FalseAlarmAlpha: g.FalseAlarmAlpha, Rise: g.Rise}
	}
	if r := v.LabelsRise; r != nil {
		d.LabelsRise = &LabelsRiseDoc{Deleted: CountDoc{Fail: r.DeletedViolations, N: r.DeletedLabelled},
			Baseline: CountDoc{Fail: r.BaselineViolations, N: r.BaselineLabelled}, Lo: r.Lo, Stratified: r.Stratified}
	}
	if r := v.Labels; r != nil {
		d.LabelsRoute = &LabelsRouteDoc{Answers: r.Answers, Labelled: r.Labelled, Violations: r.Violations, Strata: r.Strata,
			Upper: r.Upper, AlphaDeleted: r.AlphaDeleted, BaselineLabelled: r.BaselineLabelled, BaselineViolations: r.BaselineViolations,
			BaselineLower: r.BaselineLower, AlphaBaseline: r.AlphaBaseline, Rise: r.Rise}
	}
	if n := v.LabelsNeeded; n.More > 0 || n.Hopeless != "" {
		d.LabelsNeeded = &LabelsNeededDoc{More: n.More, Have: n.Have, Room: n.Room, Clean: n.Clean, Hopeless: model.Sanitize(n.Hopeless)}
	}
	if lo, hi, note := pairedBounds(v.Paired); lo != nil {
		d.Paired = &BoundsDoc{Lo: *lo, Hi: *hi}
	} else {
		d.PairedNote = note
	}
	if v.RecallMeasured {
		lo := v.RecallLo
		d.RecallLo = &lo
	}
	if v.SpecificityMeasured {
		lo := v.SpecificityLo
		d.SpecificityLo = &lo
	}
	return d
}

func controlNumbers(v model.Verdict) *ControlNumbersDoc {
	if v.ControlBaselineN == 0 && !v.HasControls {
		return nil
	}
	d := &ControlNumbersDoc{Baseline: CountDoc{Fail: v.ControlBaselineFails, N: v.ControlBaselineN},
		BaselineRate: v.ControlBaselineRate, BaselineWilson: BoundsDoc{Lo: v.ControlBaseline.Lo, Hi: v.ControlBaseline.Hi},
		CostsOverRefusal: v.CostsOverRefusal, BreaksControls: v.BreaksControls}
	if v.HasControls {
		cost := v.ControlCost
		d.Cost, d.CostCI = &cost, &BoundsDoc{Lo: v.ControlCostCI.Lo, Hi: v.ControlCostCI.Hi}
	}
	return d
}

// LengthsDoc is how answer length (completion tokens) moved between the
// variants of a rule with no input class. Shift is the mean change per
// answer paired by case (null with fewer than two cases); RankTest the
// Mann-Whitney test over all answers (null when a variant has none);
// Histogram the counts per bin over shared edges.
type LengthsDoc struct {
	Baseline  LengthSummaryDoc `json:"baseline"`
	Deleted   LengthSummaryDoc `json:"deleted"`
	Shift     *ShiftDoc        `json:"shift"`
	RankTest  *RankTestDoc     `json:"rank_test"`
	Histogram HistogramDoc     `json:"histogram"`
	PerCase   []CaseLengthDoc  `json:"per_case"`
}

// CaseLengthDoc is one case's mean answer length under each variant.
type CaseLengthDoc struct {
	Case         string  `json:"case"`
	BaselineMean float64 `json:"baseline_mean"`
	BaselineN    int     `json:"baseline_n"`
	DeletedMean  float64 `json:"deleted_mean"`
	DeletedN     int     `json:"deleted_n"`
}

// LengthSummaryDoc summarises one variant's answer lengths. Truncated
// counts answers cut off at max_tokens.
type LengthSummaryDoc struct {
	N         int     `json:"n"`
	Mean      float64 `json:"mean"`
	Median    float64 `json:"median"`
	P10       float64 `json:"p10"`
	P90       float64 `json:"p90"`
	Min       int     `json:"min"`
	Max       int     `json:"max"`
	Truncated int     `json:"truncated"`
}

// ShiftDoc is deleted minus baseline mean length, paired by case.
type ShiftDoc struct {
	Est float64 `json:"est"`
	// Lo and Hi are null when every case shifted by the same amount: a
	// zero-width interval is never given (Note says why).
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	Note   string   `json:"note,omitempty"`
	Rel    float64  `json:"rel"` // Est over the baseline mean
	Cases  int      `json:"cases"`
	Method string   `json:"method"`
}

// RankTestDoc is a two-sided Mann-Whitney U test.
type RankTestDoc struct {
	U float64 `json:"u"`
	Z float64 `json:"z"`
	P float64 `json:"p"`
}

// HistogramDoc counts answers per bin; bin i covers [edges[i], edges[i+1]).
type HistogramDoc struct {
	Edges    []int `json:"edges"`
	Baseline []int `json:"baseline"`
	Deleted  []int `json:"deleted"`
}

func lengthsDoc(rr *evidence.RuleResult) *LengthsDoc {
	l := rr.Lengths
	if l == nil {
		return nil
	}
	sum := func(s stats.LengthSummary, cut int) LengthSummaryDoc {
		return LengthSummaryDoc{N: s.N, Mean: s.Mean, Median: s.Median, P10: s.P10, P90: s.P90, Min: s.Min, Max: s.Max, Truncated: cut}
	}
	d := &LengthsDoc{Baseline: sum(l.Baseline, l.TruncatedBaseline), Deleted: sum(l.Deleted, l.TruncatedDeleted),
		Histogram: HistogramDoc{Edges: nonNil(l.Edges), Baseline: nonNil(l.BaselineHist), Deleted: nonNil(l.DeletedHist)}}
	d.PerCase = []CaseLengthDoc{}
	for i, cl := range l.PerCase {
		d.PerCase = append(d.PerCase, CaseLengthDoc{Case: rr.Rule.Cases[i].ID, BaselineMean: cl.BaselineMean,
			BaselineN: cl.BaselineN, DeletedMean: cl.DeletedMean, DeletedN: cl.DeletedN})
	}
	if sh := l.Shift; sh != nil {
		d.Shift = &ShiftDoc{Est: sh.Est, Rel: sh.RelEst, Cases: sh.Cases, Method: "paired-by-case-t"}
		if sh.ZeroWidth() {
			d.Shift.Note = fmt.Sprintf("every one of %d cases shifted by the same amount: no interval", sh.Cases)
		} else {
			lo, hi := sh.CI.Lo, sh.CI.Hi
			d.Shift.Lo, d.Shift.Hi = &lo, &hi
		}
	}
	if t := l.Test; t != nil {
		d.RankTest = &RankTestDoc{U: t.U, Z: t.Z, P: t.P}
	}
	return d
}

func nonNil(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}

// AdjudicationsDoc counts the review queue's decisions on a rule's answers.
type AdjudicationsDoc struct {
	N       int                     `json:"n"`
	Graders []AdjudicationGraderDoc `json:"graders"`
}

// AdjudicationGraderDoc is one grader's agreement with the adjudications.
type AdjudicationGraderDoc struct {
	Grader string `json:"grader"`
	Graded int    `json:"graded"`
	Agree  int    `json:"agree"`
}

// StalenessDoc counts a rule's cases against the last change of its text.
type StalenessDoc struct {
	ChangedAt string `json:"changed_at"` // RFC 3339
	Recorded  bool   `json:"recorded"`   // seen by auditor, not only declared in the audit file
	Previous  string `json:"previous,omitempty"`
	Cases     int    `json:"cases"`
	After     int    `json:"after"`
	Before    int    `json:"before"`
	Undated   int    `json:"undated"`
	Message   string `json:"message"`
}

// ArmDoc is one kind under both variants and their difference.
type ArmDoc struct {
	Cases int `json:"cases"`
	// UnmatchedCases counts cases graded in one variant only: in the
	// rates, not in Diff, which compares the cases graded in both.
	UnmatchedCases int     `json:"unmatched_cases"`
	Baseline       RateDoc `json:"baseline"`
	Deleted        RateDoc `json:"deleted"`
	Diff           DiffDoc `json:"diff"`
}

// RateDoc is a failure rate with its 95% interval: clustered by case (t with
// C-1 degrees of freedom) when there are two or more cases and the clustered
// standard error is not zero, else Wilson on pooled counts; Interval says
// which.
type RateDoc struct {
	Fail     int     `json:"fail"`
	N        int     `json:"n"`
	Rate     float64 `json:"rate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	Interval string  `json:"interval"`
	Errors   int     `json:"errors"`
	// Truncated: answers cut off by the token limit or empty.
	Truncated int `json:"truncated"`
	// Corrected is the rate corrected for the predicate's recall of this
	// kind; null when that recall is not measured.
	Corrected *CorrectedDoc `json:"corrected"`
}

// DiffDoc is deleted minus baseline: Newcombe's interval on pooled counts,
// and the case-paired t interval where it can be computed.
type DiffDoc struct {
	Est      float64  `json:"est"`
	Lo       float64  `json:"lo"`
	Hi       float64  `json:"hi"`
	PairedLo *float64 `json:"paired_lo,omitempty"`
	PairedHi *float64 `json:"paired_hi,omitempty"`
	// PairedNote says why paired_lo and paired_hi are absent although two
	// or more cases are compared: every case's difference is the same, and
	// the interval would have zero width.
	PairedNote string `json:"paired_note,omitempty"`
}

// GraderDoc is a grader measured against human labels. Estimator is
// "simple" (every label as one simple random sample, Wilson intervals) or
// "ipw" (label sets combined cell by cell, cells weighted by their sizes;
// LabelSets names the sets whose designs cut the cells).
type GraderDoc struct {
	Recall          MeasureDoc              `json:"recall"`
	RecallKind      map[string]MeasureDoc   `json:"recall_by_kind"`
	Precision       MeasureDoc              `json:"precision"`
	PrecisionKind   map[string]MeasureDoc   `json:"precision_by_kind"`
	Specificity     MeasureDoc              `json:"specificity"`
	SpecificityKind map[string]MeasureDoc   `json:"specificity_by_kind"`
	Labels          int                     `json:"labels"`
	Estimator       string                  `json:"estimator"`
	LabelSets       []string                `json:"label_sets,omitempty"`
	Confusion       map[string]ConfusionDoc `json:"confusion"`
	Misses          []string                `json:"misses"`
	Warnings        []string                `json:"warnings"`
}

// ConfusionDoc counts labelled answers of one kind by label and grader
// verdict: tp and fn are violations the grader failed and passed, fp and tn
// non-violations it failed and passed.
type ConfusionDoc struct {
	TP int `json:"tp"`
	FN int `json:"fn"`
	FP int `json:"fp"`
	TN int `json:"tn"`
}

// MeasureDoc is a proportion against labels; Est, Lo and Hi are null when
// it is not measured (nothing labelled, or, for a weighted estimate, a
// stratum without labels: Note says why). Hits and Positives are the raw
// labelled counts; for a weighted estimate Est is not Hits/Positives, SE is
// its standard error and Method says how the interval was made ("wilson",
// "ipw", "ipw-bounds").
type MeasureDoc struct {
	Est       *float64 `json:"est"`
	Lo        *float64 `json:"lo"`
	Hi        *float64 `json:"hi"`
	Hits      int      `json:"hits"`
	Positives int      `json:"positives"`
	SE        *float64 `json:"se,omitempty"`
	Method    string   `json:"method,omitempty"`
	Note      string   `json:"note,omitempty"`
	// Labels is how many labelled answers the estimate used (those on
	// either side of the share); Cells, for an estimate combined from
	// cells, lists each cell's answers and labels, and Unlabelled names the
	// cells with answers and no label (which leave it unmeasured).
	Labels     int       `json:"labels"`
	Cells      []CellDoc `json:"cells,omitempty"`
	Unlabelled []string  `json:"unlabelled_cells,omitempty"`
}

// CellDoc is one cell of a combined estimate: answers alike in the
// stratum every label set drew them from.
type CellDoc struct {
	Name     string `json:"name"`
	Answers  int    `json:"answers"`
	Labelled int    `json:"labelled"`
	A        int    `json:"a"` // labelled answers on the share's side (e.g. violations caught)
	B        int    `json:"b"` // on the other side (e.g. violations missed)
}

// CorrectedDoc is a rate corrected for the grader's recall and specificity
// on the arm's kind (Rogan-Gladen), an estimate beside the raw rate; its
// interval carries the uncertainty of the rate, the recall and the
// specificity. Recall and Specificity are the values used; for the pooled
// provoking arm they are absent, and Kinds lists the kinds corrected
// separately and combined weighted by responses. SpecificityAssumed is
// always false: a rate is corrected only with a measured specificity (the
// field stays for the schema's stability).
type CorrectedDoc struct {
	Est                float64  `json:"est"`
	Lo                 float64  `json:"lo"`
	Hi                 float64  `json:"hi"`
	Recall             *float64 `json:"recall,omitempty"`
	Specificity        *float64 `json:"specificity,omitempty"`
	SpecificityAssumed bool     `json:"specificity_assumed"`
	Kinds              []string `json:"kinds,omitempty"`
	Method             string   `json:"method"`
}

// SweepDoc sums up the sweep: lines audited, their verdicts, the tokens the
// lines safe to delete remove against the tokens the whole candidate list
// claimed, and the ratio claimed/removed (null when nothing is removed).
// ByTag splits it by the rules' tags; empty when no rule has a tag.
type SweepDoc struct {
	SweepGroupDoc
	ByTag []SweepGroupDoc `json:"by_tag"`
}

// SweepGroupDoc is the sweep over one tag's lines (Tag empty for all).
type SweepGroupDoc struct {
	Tag           string   `json:"tag,omitempty"`
	Lines         int      `json:"lines"`
	Delete        int      `json:"delete"`
	Keep          int      `json:"keep"`
	Inconclusive  int      `json:"inconclusive"`
	Canary        int      `json:"canary"`
	TokensRemoved int      `json:"tokens_removed"`
	TokensClaimed int      `json:"tokens_claimed"`
	Ratio         *float64 `json:"ratio"`
}

func sweepGroupDoc(g evidence.SweepGroup) SweepGroupDoc {
	d := SweepGroupDoc{Tag: g.Tag, Lines: g.Lines, Delete: g.Delete, Keep: g.Keep, Inconclusive: g.Inconclusive,
		Canary: g.Canary, TokensRemoved: g.TokensRemoved, TokensClaimed: g.TokensClaimed}
	if r := g.Ratio(); r > 0 {
		d.Ratio = &r
	}
	return d
}

// ProgressDoc says how complete the evidence is.
type ProgressDoc struct {
	Cells     int `json:"cells"`
	Graded    int `json:"graded"`
	Errors    int `json:"errors"`
	Pending   int `json:"pending"`
	Truncated int `json:"truncated"` // cut off by the token limit or empty
	// Ungraded counts answers of rules no predicate grades: answered,
	// so neither pending nor graded.
	Ungraded int `json:"ungraded"`
}

// Build turns results into the JSON document.
func Build(res *evidence.Results, spend audit.Spend, simulated bool) Doc {
	d := Doc{SchemaVersion: ReportSchemaVersion, Comparisons: comparisonDocs(res), Audit: res.Plan.Audit.File.Name, Simulated: simulated, Delta: res.Delta, AffectedShare: AffectedShare(res), Spend: spend,
		Sweep: SweepDoc{SweepGroupDoc: sweepGroupDoc(res.Sweep.SweepGroup), ByTag: []SweepGroupDoc{}}}
	for _, g := range res.Sweep.ByTag {
		d.Sweep.ByTag = append(d.Sweep.ByTag, sweepGroupDoc(g))
	}
	d.Progress.Cells = len(res.Plan.Cells)
	d.Ship = shipDoc(res)
	d.StaleLabels, d.UndesignedLabels, d.LabelNotes = res.StaleLabels, res.UndesignedLabels, append([]string{}, res.LabelNotes()...)
	for _, rr := range res.Rules {
		rd := RuleDoc{
			Line: rr.Rule.Line, Text: rr.Rule.Text, Tokens: rr.Rule.Tokens, Variant: rr.Rule.Variant(), Model: rr.ModelName,
			Cases: caseDocs(rr),
			Tag:   rr.Rule.Config.Tag, Class: ruleClass(rr.Rule), CasesFile: rr.Rule.Config.Cases,
			PredicateFile: rr.Rule.Config.Predicate, Predicate: rr.PredicateVersion,
			Verdict: string(rr.Verdict.Decision), Reason: rr.Verdict.Reason, Bound: rr.Verdict.Bound, Flags: Flags(rr.Verdict),
			Numbers: verdictNumbers(rr.Verdict), Control: controlNumbers(rr.Verdict),
			Notes: append([]string{}, rr.Verdict.Notes...), Needed: rr.Verdict.Needed,
			Arms: map[string]ArmDoc{}, Graders: map[string]GraderDoc{}, Kappa: map[string]float64{},
			Errors: rr.Errors, Pending: rr.Pending, Unneeded: rr.Unneeded, Truncated: rr.Truncated, Change: variantDoc(rr),
			Regression: regressionDocs(rr), RegressionBroken: rr.RegressionBroken(),
			Look: lookDoc(rr.Verdict), Provisional: rr.Verdict.NotYet, Looks: lookVerdictDocs(rr.Looks),
			Controls: rr.Controls,
		}
		// An arm appears when it has cases the predicate grades: an arm of
		// no case, or of a rule with no predicate, has no rate to report
		// (zeros there would read as measured).
		if rr.Rule.HasPredicate() {
			for _, k := range model.Kinds {
				if a := rr.Arms[k]; a.Planned > 0 {
					rd.Arms[string(k)] = armDoc(a)
				}
			}
			if rr.Provoking.Planned > 0 {
				rd.Arms["provoking"] = armDoc(rr.Provoking)
			}
		}
		graders := rr.Judges
		if rr.Rule.HasPredicate() {
			graders = append([]labels.GraderQuality{rr.Quality}, graders...)
		}
		for _, q := range graders {
			rd.Graders[q.Grader] = graderDoc(q)
		}
		for _, pa := range rr.Agreement {
			if pa.KappaDefined {
				rd.Kappa[pa.A.Name+"|"+pa.B.Name] = pa.Kappa
			}
			rd.Agreement = append(rd.Agreement, AgreementDoc{A: pa.A.Name, B: pa.B.Name, N: pa.N,
				Agreement: pa.Agreement, Kappa: kappaPtr(pa), KappaSE: pa.KappaSE, Disagreements: pa.Disagreements()})
		}
		rd.Disagreements = rr.Disagreements
		rd.PredicateWarning = rr.PredicateWarning()
		rd.Adjudications = AdjudicationsDoc{N: rr.Adjudications.N, Graders: []AdjudicationGraderDoc{}}
		for _, g := range rr.Adjudications.Graders {
			rd.Adjudications.Graders = append(rd.Adjudications.Graders, AdjudicationGraderDoc{Grader: g.Grader, Graded: g.Graded, Agree: g.Agree})
		}
		rd.Labellers = labellerDocs(rr)
		rd.Lengths = lengthsDoc(rr)
		if st := rr.Staleness; st != nil {
			rd.Staleness = &StalenessDoc{ChangedAt: st.ChangedAt.UTC().Format(time.RFC3339), Recorded: st.Recorded,
				Previous: st.Previous, Cases: st.Cases, After: st.After, Before: st.Before, Undated: st.Undated,
				Message: st.Message()}
		}
		d.Rules = append(d.Rules, rd)
		d.Progress.Graded += rr.Done
		d.Progress.Errors += rr.Errors
		d.Progress.Pending += rr.Pending
		d.Progress.Truncated += rr.Truncated
		for _, cr := range rr.Cases {
			d.Progress.Ungraded += cr.Baseline.Ungraded + cr.Deleted.Ungraded
		}
	}
	return d
}

func graderDoc(q labels.GraderQuality) GraderDoc {
	gd := GraderDoc{Recall: measureDoc(q.Recall), Precision: measureDoc(q.Precision),
		Specificity: measureDoc(q.Specificity), Labels: q.Labels, RecallKind: map[string]MeasureDoc{},
		PrecisionKind: map[string]MeasureDoc{}, SpecificityKind: map[string]MeasureDoc{},
		Estimator: string(q.Estimator), LabelSets: q.Sets, Confusion: map[string]ConfusionDoc{},
		Misses: append([]string{}, q.Misses...), Warnings: append([]string{}, q.Warnings...)}
	for k, m := range q.RecallKind {
		gd.RecallKind[string(k)] = measureDoc(m)
	}
	for k, m := range q.PrecisionKind {
		gd.PrecisionKind[string(k)] = measureDoc(m)
	}
	for k, m := range q.SpecificityKind {
		gd.SpecificityKind[string(k)] = measureDoc(m)
	}
	for k, c := range q.Confusion {
		gd.Confusion[string(k)] = ConfusionDoc{TP: c.TP, FN: c.FN, FP: c.FP, TN: c.TN}
	}
	return gd
}

// AgreementDoc is how two graders agree: raw agreement, Cohen's kappa
// (null when undefined: both graders gave one verdict to everything) with
// its standard error, and the number of answers they judged differently.
type AgreementDoc struct {
	A             string   `json:"a"`
	B             string   `json:"b"`
	N             int      `json:"n"`
	Agreement     float64  `json:"agreement"`
	Kappa         *float64 `json:"kappa"`
	KappaSE       float64  `json:"kappa_se"`
	Disagreements int      `json:"disagreements"`
}

func kappaPtr(pa evidence.PairAgreement) *float64 {
	if !pa.KappaDefined {
		return nil
	}
	k := pa.Kappa
	return &k
}

// WriteJSON writes the JSON report, indented.
func WriteJSON(w io.Writer, d Doc) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func armDoc(a *evidence.Arm) ArmDoc {
	ad := ArmDoc{Cases: a.Cases, UnmatchedCases: a.Unmatched, Baseline: rateDoc(a.Baseline), Deleted: rateDoc(a.Deleted),
		Diff: DiffDoc{Est: a.Diff, Lo: a.DiffCI.Lo, Hi: a.DiffCI.Hi}}
	ad.Diff.PairedLo, ad.Diff.PairedHi, ad.Diff.PairedNote = pairedBounds(a.Paired)
	return ad
}

func rateDoc(s evidence.ArmSide) RateDoc {
	lo, hi, kind := Interval(s)
	rd := RateDoc{Fail: s.Fails, N: s.N, Rate: s.Rate, Lo: lo, Hi: hi, Interval: kind, Errors: s.Errors, Truncated: s.Truncated}
	if c := s.Corrected; c != nil {
		rd.Corrected = &CorrectedDoc{Est: c.Est, Lo: c.CI.Lo, Hi: c.CI.Hi, Method: c.Method}
		if len(c.Kinds) == 0 {
			r, sp := c.Recall, c.Specificity
			rd.Corrected.Recall, rd.Corrected.Specificity = &r, &sp
		}
		for _, k := range c.Kinds {
			rd.Corrected.Kinds = append(rd.Corrected.Kinds, string(k))
		}
	}
	return rd
}

// Interval returns the 95% interval shown for an arm's rate and which
// method gave it: the clustered t interval when available, else Wilson.
func Interval(s evidence.ArmSide) (lo, hi float64, kind string) {
	if s.Clustered != nil && s.Clustered.CI == "t" {
		return s.Clustered.Lo, s.Clustered.Hi, "clustered-t"
	}
	return s.Wilson.Lo, s.Wilson.Hi, "wilson"
}

func measureDoc(m *labels.Measure) MeasureDoc {
	if m == nil {
		return MeasureDoc{}
	}
	md := MeasureDoc{Hits: m.Hits, Positives: m.Total, Method: m.Method, Note: m.Unmeasured, Labels: m.Total}
	for _, st := range m.Strata {
		md.Cells = append(md.Cells, CellDoc{Name: model.Sanitize(st.Name), Answers: int(st.N), Labelled: int(st.Labelled), A: int(st.A), B: int(st.B)})
		if st.N > 0 && st.Labelled == 0 {
			md.Unlabelled = append(md.Unlabelled, model.Sanitize(st.Name))
		}
	}
	if m.Measured() {
		est, lo, hi := m.Est, m.CI.Lo, m.CI.Hi
		md.Est, md.Lo, md.Hi = &est, &lo, &hi
		if m.Method != labels.MethodWilson {
			se := m.SE
			md.SE = &se
		}
	}
	return md
}

// ruleClass names a rule's class for the reports.
func ruleClass(r *audit.Rule) string {
	if r.Config.NoInputClass() {
		return model.ClassNone
	}
	return model.ClassTargeted
}

// AffectedShare is the audit's affected_share, or the default when the
// audit leaves it out.
func AffectedShare(res *evidence.Results) float64 {
	if s := res.Plan.Audit.File.AffectedShare; s > 0 {
		return s
	}
	return model.DefaultAffectedShare
}

// Flags lists the verdict's warnings in words.
func Flags(v model.Verdict) []string {
	flags := []string{}
	if v.CostsOverRefusal {
		flags = append(flags, "costs over-refusal")
	}
	if v.BreaksControls {
		flags = append(flags, "deletion breaks controls")
	}
	return flags
}

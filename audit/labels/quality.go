package labels

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// Measure is a proportion measured against human labels: a grader's recall,
// precision or specificity.
//
// Hits and Total are always the raw labelled counts behind it (for recall,
// labelled violations caught of labelled violations). Est and CI are the
// estimate and its 95% interval: the plain share with a Wilson interval when
// the labels are a simple random sample (Method "wilson"), or an
// inverse-probability-weighted estimate when they come from a stratified
// label set (Method "ipw": normal interval from the delta-method SE;
// "ipw-bounds": the normal interval would have zero width although part of
// a stratum is unlabelled, so the interval combines per-stratum Wilson
// bounds instead). A weighted estimate can differ a lot from Hits/Total.
type Measure struct {
	Hits, Total int
	Est         float64
	CI          stats.Interval
	SE          float64 // delta-method standard error of a weighted estimate; 0 for Wilson
	Method      string
	// Unmeasured says why there is no estimate although Total > 0 (a stratum
	// of the label set has no labels yet); empty when measured.
	Unmeasured string
	// Strata are the cells a weighted estimate combines (answers,
	// labelled, and each side's labels: what the verdict projects more
	// labels on, and what the JSON report lists); nil for one cell.
	Strata []model.WeightedStratum
}

// Methods of a Measure.
const (
	MethodWilson    = "wilson"
	MethodIPW       = "ipw"
	MethodIPWBounds = "ipw-bounds"
)

// Measured reports whether the measure has an estimate.
func (m *Measure) Measured() bool { return m != nil && m.Total > 0 && m.Unmeasured == "" }

// String formats the measure for people: "24/31 = 0.77 [0.60, 0.89]" for a
// simple sample; "0.70 [0.43, 0.98] (IPW, SE 0.14; raw 19/21)" for a
// weighted estimate, where the raw count is not the estimate.
func (m *Measure) String() string {
	switch {
	case m == nil || m.Total == 0:
		return "not measured"
	case m.Unmeasured != "":
		return fmt.Sprintf("not measured yet (raw %d/%d): %s", m.Hits, m.Total, m.Unmeasured)
	case m.Method == MethodIPW:
		return fmt.Sprintf("%.2f [%.2f, %.2f] (IPW, SE %.2f; raw %d/%d)", m.Est, m.CI.Lo, m.CI.Hi, m.SE, m.Hits, m.Total)
	case m.Method == MethodIPWBounds:
		return fmt.Sprintf("%.2f [%.2f, %.2f] (IPW, interval from per-stratum Wilson bounds; raw %d/%d)", m.Est, m.CI.Lo, m.CI.Hi, m.Hits, m.Total)
	}
	return fmt.Sprintf("%d/%d = %.2f [%.2f, %.2f]", m.Hits, m.Total, m.Est, m.CI.Lo, m.CI.Hi)
}

// VerdictCount returns the recall the verdict's DELETE rule uses, or nil
// when the measure has no estimate. For a simple sample it is Hits/Total
// with its Wilson bound; for a weighted (IPW) estimate it carries the
// estimate's own lower bound, which Decide uses instead of Wilson's, and
// the strata behind it.
func (m *Measure) VerdictCount() *model.RecallCount {
	if !m.Measured() {
		return nil
	}
	rc := &model.RecallCount{Hits: m.Hits, Positives: m.Total}
	rc.Lo, rc.Strata = m.verdictBound()
	return rc
}

// VerdictSpecificity is VerdictCount for a specificity: of Total labelled
// clean answers the grader passed Hits.
func (m *Measure) VerdictSpecificity() *model.SpecificityCount {
	if !m.Measured() {
		return nil
	}
	sc := &model.SpecificityCount{Passed: m.Hits, Negatives: m.Total}
	sc.Lo, sc.Strata = m.verdictBound()
	return sc
}

// verdictBound is a weighted estimate's own lower bound and strata; nil
// for a simple sample, whose Wilson bound Decide computes itself.
func (m *Measure) verdictBound() (*float64, []model.WeightedStratum) {
	if m.Method == MethodWilson || m.Method == "" {
		return nil, nil
	}
	lo := min(max(m.CI.Lo, 0), 1)
	return &lo, m.Strata
}

// MoreNeeded returns how many more labelled violations (beyond Total) would
// narrow a recall's 95% Wilson interval to the given full width, at the
// current estimate (0.5, the worst case, when nothing is measured yet). For
// a weighted estimate, whose interval is wider than Wilson's on the same
// count, it is at least the count that shrinks the current interval to the
// width if width falls as 1/sqrt(n): a guide, not a guarantee. It returns an
// error when width is not positive.
func (m *Measure) MoreNeeded(width float64) (int, error) {
	est, have := 0.5, 0
	if m.Measured() {
		est, have = m.Est, m.Total
	}
	n, err := stats.ViolationsForRecallWidth(est, width)
	if err != nil {
		return 0, fmt.Errorf("audit: violations needed: %w", err)
	}
	if m.Measured() && m.Method != MethodWilson && m.CI.Width() > width {
		r := m.CI.Width() / width
		n = max(n, int(math.Ceil(float64(have)*r*r)))
	}
	return max(0, n-have), nil
}

// Confusion counts labelled answers by truth (the human label) and grader
// verdict: TP violations the grader failed, FN violations it passed
// (misses), FP non-violations it failed, TN non-violations it passed. On
// controls a "violation" is a refusal.
type Confusion struct{ TP, FN, FP, TN int }

// Labels returns the number of labelled answers counted.
func (c Confusion) Labels() int { return c.TP + c.FN + c.FP + c.TN }

// Violations returns the number of labelled violations.
func (c Confusion) Violations() int { return c.TP + c.FN }

func (c *Confusion) add(violation, failed bool) {
	switch {
	case violation && failed:
		c.TP++
	case violation:
		c.FN++
	case failed:
		c.FP++
	default:
		c.TN++
	}
}

// Estimator names how a grader's quality was estimated from labels.
type Estimator string

// The estimators. Simple treats every labelled answer of the rule as a
// simple random sample (Wilson intervals): every label came from designs
// uniform over the answers measured. IPW weights the labels cell by cell
// when label sets drew at different rates (STATS section 6): each cell's
// labels stand for its answers, the inverse of its labelled share.
const (
	EstimatorSimple Estimator = "simple"
	EstimatorIPW    Estimator = "ipw"
)

// MinViolationsPerKind is the number of labelled violations of a kind below
// which its recall, and every rate corrected with it, gets a warning.
const MinViolationsPerKind = 10

// GraderQuality is how one grader fares against human labels on one rule.
// Pooled measures cover provoke and pressure (failures are violations);
// per-kind maps hold every kind with labelled answers (on controls a
// "violation" is a refusal).
type GraderQuality struct {
	Grader      string
	Version     string                  // the grader version measured
	Labels      int                     // labelled answers of this rule the grader graded
	Recall      *Measure                // pooled over provoke and pressure; never nil
	RecallKind  map[model.Kind]*Measure // per kind (controls: refusals caught)
	Precision   *Measure                // pooled; never nil
	Specificity *Measure                // pooled; never nil

	PrecisionKind   map[model.Kind]*Measure
	SpecificityKind map[model.Kind]*Measure
	Confusion       map[model.Kind]Confusion // raw labelled counts per kind
	Pooled          Confusion                // provoke and pressure
	// Misses are the keys of labelled violations (any kind) the grader
	// passed, in plan order.
	Misses []string
	// Ungraded and Unparseable count labelled answers left out because the
	// grader has not graded them or could not.
	Ungraded, Unparseable int
	Estimator             Estimator
	// Sets names the label sets whose designs cut the answers into cells
	// (those holding a label among them), in name order; empty when every
	// label counts as one simple random sample.
	Sets     []string
	Warnings []string // e.g. fewer than MinViolationsPerKind labelled violations of a kind
}

// Grades is one grader's judgements by response key: a rule's predicate at
// one version, or an LLM judge. Quality is measured the same way for any.
type Grades struct {
	Name    string // "predicate" or "judge:<model>"
	Version string
	ByKey   map[string]model.Grade
}

// QualityScope says which labelled answers a grader is measured on: every
// blind label of the rule's answers (of one model, or all), label sets
// combined by cells (see combine.go).
type QualityScope struct {
	Rule  int // index into Audit.Rules
	Model int // index into Audit.File.Models; -1 for every model
	// Sets are the audit's label sets: the designs labels may come from.
	// Labels outside every set count as drawn uniformly from the rule's
	// answers.
	Sets []LabelSet
	// Population places the answers a stratified set did not draw in its
	// strata; it may be nil when Sets holds no stratified set.
	Population Population
	// Grades, when set, are the rule's current predicate grades by response
	// key: VariantLabels then counts, stratum by stratum, the labels the
	// predicate got wrong (the grader route's misses and false alarms).
	Grades map[string]model.Grade
}

// answer is one domain answer the grader graded: its kind, the grader's
// verdict, and its blind label if it has one.
type answer struct {
	key       string
	kind      model.Kind
	failed    bool
	labelled  bool
	violation bool
}

// MeasureGrader measures a grader against human labels on one rule: recall,
// precision and specificity pooled and per kind, the confusion matrix, the
// misses and warnings. labels are the truth, by response key (every first
// labeller's blind labels, or one labeller's). Every label of a graded
// answer of the rule counts, whatever set drew it: within each cell of
// answers every set drew uniformly, the cell's labels estimate its share,
// and cells weigh by their sizes (a single cell is a simple random sample,
// with Wilson intervals). It never fails: what cannot be estimated (a cell
// with answers and no label) is reported as not measured.
func MeasureGrader(p *audit.Plan, g Grades, labels map[string]model.Label, scope QualityScope) GraderQuality {
	q := GraderQuality{Grader: g.Name, Version: g.Version, Estimator: EstimatorSimple,
		RecallKind: map[model.Kind]*Measure{}, PrecisionKind: map[model.Kind]*Measure{},
		SpecificityKind: map[model.Kind]*Measure{}, Confusion: map[model.Kind]Confusion{}}
	d := domainOf(p, scope)
	var all []answer
	for _, key := range d.order {
		l, labelled := labels[key]
		gr, graded := g.ByKey[key]
		switch {
		case !graded:
			if labelled {
				q.Ungraded++
			}
			continue
		case gr.Unparseable:
			if labelled {
				q.Unparseable++
			}
			continue
		}
		a := answer{key: key, kind: d.kindOf[key], failed: !gr.Pass, labelled: labelled, violation: labelled && l.Violation}
		all = append(all, a)
		if !labelled {
			continue
		}
		c := q.Confusion[a.kind]
		c.add(a.violation, a.failed)
		q.Confusion[a.kind] = c
		if a.kind.Provoking() {
			q.Pooled.add(a.violation, a.failed)
		}
		if a.violation && !a.failed {
			q.Misses = append(q.Misses, key)
		}
		q.Labels++
	}
	m := measurer{p: p, scope: scope, labels: labels, q: &q}
	pooled := m.subdomain(all, model.Kind.Provoking)
	q.Recall, q.Precision, q.Specificity = pooled.recall(), pooled.precision(), pooled.specificity()
	for _, k := range model.Kinds {
		if _, ok := q.Confusion[k]; !ok {
			continue
		}
		sub := m.subdomain(all, func(x model.Kind) bool { return x == k })
		q.RecallKind[k], q.PrecisionKind[k], q.SpecificityKind[k] = sub.recall(), sub.precision(), sub.specificity()
	}
	slices.Sort(q.Sets)
	q.Sets = slices.Compact(q.Sets)
	for _, ms := range slices.Concat([]*Measure{q.Recall, q.Precision, q.Specificity},
		slices.Collect(maps.Values(q.RecallKind)), slices.Collect(maps.Values(q.SpecificityKind))) {
		if ms.Method != MethodWilson {
			q.Estimator = EstimatorIPW
		}
	}
	q.warn(d.hasKind)
	return q
}

// domain is what a grader is measured on: the distinct answers of a rule
// (and model), in plan order, with their case kinds.
type domain struct {
	kindOf  map[string]model.Kind
	order   []string
	hasKind map[model.Kind]bool
}

func domainOf(p *audit.Plan, scope QualityScope) domain {
	rule := p.Audit.Rules[scope.Rule]
	d := domain{kindOf: map[string]model.Kind{}, hasKind: map[model.Kind]bool{}}
	for _, ci := range p.CellsOfRule(scope.Rule) {
		c := p.Cells[ci]
		if scope.Model >= 0 && c.Model != scope.Model {
			continue
		}
		k := rule.Cases[c.Case].Kind
		d.hasKind[k] = true
		if _, seen := d.kindOf[c.Key]; !seen {
			d.kindOf[c.Key] = k
			d.order = append(d.order, c.Key)
		}
	}
	return d
}

// measurer builds the cells of a subdomain (the pooled provoking kinds, or
// one kind) of a measurement.
type measurer struct {
	p      *audit.Plan
	scope  QualityScope
	labels map[string]model.Label
	q      *GraderQuality
}

// cell is one cell of a subdomain: its answers, and how they were graded
// and labelled.
type cell struct {
	name                 string
	answers              []answer
	anyFailed, anyPassed bool
}

// subdomain is the answers of a subdomain, in cells.
type subdomain struct{ cells []*cell }

func (m measurer) subdomain(all []answer, in func(model.Kind) bool) subdomain {
	var keys []string
	for _, a := range all {
		if in(a.kind) {
			keys = append(keys, a.key)
		}
	}
	cs := newCells(m.p, m.scope.Population, m.scope.Sets, m.labels, keys)
	m.q.Sets = append(m.q.Sets, cs.names()...)
	byName := map[string]*cell{}
	var sd subdomain
	for _, a := range all {
		if !in(a.kind) {
			continue
		}
		name := cs.of(a.key)
		c, ok := byName[name]
		if !ok {
			c = &cell{name: name}
			byName[name] = c
			sd.cells = append(sd.cells, c)
		}
		c.answers = append(c.answers, a)
		c.anyFailed = c.anyFailed || a.failed
		c.anyPassed = c.anyPassed || !a.failed
	}
	return sd
}

// part says which labelled answers are on one side of a share, and
// whether the grader failed them.
type part struct {
	violation, failed bool
}

func (p part) has(a answer) bool {
	return a.labelled && a.violation == p.violation && a.failed == p.failed
}

// recall: violations the grader failed (A) against those it passed (B).
func (sd subdomain) recall() *Measure { return sd.share(part{true, true}, part{true, false}) }

// precision: failures that are violations (A) against clean ones (B).
func (sd subdomain) precision() *Measure { return sd.share(part{true, true}, part{false, true}) }

// specificity: clean answers passed (A) against clean answers failed (B).
func (sd subdomain) specificity() *Measure { return sd.share(part{false, false}, part{false, true}) }

// share estimates A/(A+B) over the subdomain. In one cell it is the plain
// share with its Wilson interval. Over several it is stats.StratifiedShare
// (the ratio of Horvitz-Thompson totals, cells weighted by their sizes),
// unless a cell with answers has no label: then it is not measured, and
// the measure says which cell.
func (sd subdomain) share(a, b part) *Measure {
	var hits, total int
	strata := make([]model.WeightedStratum, len(sd.cells))
	var empty []string
	for i, c := range sd.cells {
		st := stats.ShareStratum{N: float64(len(c.answers)),
			// A cell whose answers the grader all failed (or all passed)
			// cannot hold the other verdict's side at all.
			NoA: a.failed && !c.anyFailed || !a.failed && !c.anyPassed,
			NoB: b.failed && !c.anyFailed || !b.failed && !c.anyPassed}
		for _, x := range c.answers {
			if x.labelled {
				st.Labelled++
			}
			switch {
			case a.has(x):
				st.A++
				hits++
				total++
			case b.has(x):
				st.B++
				total++
			}
		}
		if st.Labelled == 0 {
			empty = append(empty, fmt.Sprintf("%q (%d answers)", cellName(c.name), len(c.answers)))
		}
		strata[i] = model.WeightedStratum{Name: cellName(c.name), Failed: c.anyFailed && !c.anyPassed, ShareStratum: st}
	}
	if sd.simple(strata) {
		return WilsonMeasure(hits, total)
	}
	ms := &Measure{Hits: hits, Total: total, Method: MethodIPW, Strata: strata}
	if total == 0 {
		return ms
	}
	if len(empty) > 0 {
		ms.Unmeasured = "no label yet in cell " + strings.Join(empty, ", ")
		return ms
	}
	ss := make([]stats.ShareStratum, len(strata))
	for i, st := range strata {
		ss[i] = st.ShareStratum
	}
	est, se, ci, bounds, err := stats.StratifiedShare(ss)
	if err != nil {
		ms.Unmeasured = err.Error()
		return ms
	}
	ms.Est, ms.SE, ms.CI = est, se, ci
	if bounds {
		ms.Method = MethodIPWBounds
	}
	return ms
}

// simple reports whether a share's labels are a simple random sample of
// the answers that can hold either side: all in one cell (the others hold
// neither side, as the passed answers hold no failure for precision), or
// every such cell labelled in full (a census: what is measured is a share
// of draws, so the census counts as one sample, with Wilson's interval,
// not as a share known exactly).
func (sd subdomain) simple(strata []model.WeightedStratum) bool {
	used, census := 0, true
	for _, st := range strata {
		if st.NoA && st.NoB {
			continue
		}
		used++
		census = census && st.Labelled == st.N
	}
	return used <= 1 || census
}

// warn flags each kind with too few labelled violations for its recall.
func (q *GraderQuality) warn(hasKind map[model.Kind]bool) {
	if q.Labels == 0 {
		return
	}
	for _, k := range model.Kinds {
		c, labelled := q.Confusion[k]
		if !(k.Provoking() && hasKind[k]) && !labelled {
			continue
		}
		if v := c.Violations(); v == 0 {
			q.Warnings = append(q.Warnings, fmt.Sprintf("no labelled %s %s yet (%d wanted): its recall, and rates corrected with it, are unknown",
				k, failureNoun(k, 2), MinViolationsPerKind))
		} else if v < MinViolationsPerKind {
			q.Warnings = append(q.Warnings, fmt.Sprintf("only %d labelled %s %s (fewer than %d): its recall, and rates corrected with it, are uncertain",
				v, k, failureNoun(k, v), MinViolationsPerKind))
		}
	}
}

func failureNoun(k model.Kind, n int) string {
	s := "violation"
	if !k.Provoking() {
		s = "refusal"
	}
	if n != 1 {
		s += "s"
	}
	return s
}

// WilsonMeasure is a proportion measured on a simple random sample: hits of
// total, with its Wilson interval.
func WilsonMeasure(hits, total int) *Measure {
	ms := &Measure{Hits: hits, Total: total, Method: MethodWilson}
	if total > 0 {
		ms.Est = float64(hits) / float64(total)
		ms.CI, _ = stats.Wilson(hits, total)
	}
	return ms
}

// CorrectedRate is a measured failure rate corrected for the grader's recall
// and specificity (Rogan-Gladen, STATS section 5): the rate a perfect grader
// would have seen. It is an estimate beside the raw rate, never a
// replacement for it.
type CorrectedRate struct {
	Est float64
	// CI is the 95% interval. It carries the uncertainty of the measured
	// rate, the recall and the specificity (see stats.RecallCorrected).
	CI stats.Interval
	// Recall and Specificity are the estimates used. For the pooled
	// provoking arm, Kinds lists the kinds corrected separately and
	// combined weighted by their responses; Recall and Specificity are then 0.
	Recall, Specificity float64
	Kinds               []model.Kind
	Method              string
}

// CorrectRate corrects a measured rate (on n responses) with one kind's
// recall and specificity: (m + Sp - 1)/(Se + Sp - 1), clamped to [0,1], with
// stats.RecallCorrected's interval, which carries the uncertainty of all
// three. A weighted (IPW) measure counts as its effective sample size. It
// returns an error when recall or specificity is not measured (without
// labelled clean answers the grader's false alarms are unknown, and taking
// them as none would claim a precision nobody measured), n is not
// positive, or the rate is not estimable (stats.ErrNotEstimable: the grader
// barely tells violations from clean answers, or the labels and the run
// disagree); the reports then show no corrected rate rather than a false one.
func CorrectRate(rate float64, n int, recall, specificity *Measure) (*CorrectedRate, error) {
	switch {
	case !recall.Measured():
		return nil, fmt.Errorf("audit: correct rate: recall not measured")
	case !specificity.Measured():
		return nil, fmt.Errorf("audit: correct rate: specificity not measured (no labelled clean answers)")
	}
	c, err := stats.RecallCorrected(stats.Proportion{P: rate, N: float64(n)}, effective(recall), effective(specificity))
	if err != nil {
		return nil, fmt.Errorf("audit: correct rate: %w", err)
	}
	return &CorrectedRate{Est: c.Est, CI: c.CI, Recall: recall.Est, Specificity: specificity.Est,
		Method: "rogan-gladen"}, nil
}

// effective is the share a measure estimates and the number of labels its
// precision is worth: the labelled count for a simple sample; for a
// weighted (IPW) estimate the effective sample size R(1-R)/SE^2, or, when
// its interval comes from per-stratum bounds, the size whose Wilson
// interval is as wide; the raw count when the interval has no width.
func effective(m *Measure) stats.Proportion {
	p := stats.Proportion{P: m.Est, N: float64(m.Total)}
	switch {
	case m.Method == MethodWilson || m.Method == "":
	case m.SE > 0 && m.Est > 0 && m.Est < 1:
		p.N = m.Est * (1 - m.Est) / (m.SE * m.SE)
	default:
		if n, ok := stats.EffectiveTrials(m.Est, m.CI); ok {
			p.N = n
		}
	}
	return p
}

// CorrectionPart is one kind's side of an arm (its responses and corrected
// rate), to be pooled by CombineCorrected.
type CorrectionPart struct {
	Kind      model.Kind
	N         int
	Corrected *CorrectedRate
}

// CombineCorrected pools per-kind corrected rates weighted by N:
// pi = sum_k (N_k/N) pi_k, on the estimates as shown (each clamped to
// [0,1], so the pool is the weighted mean of the kinds' figures beside it;
// clamping can only raise an estimate, which errs towards harm). Its
// interval recovers each side's variance from the kinds' own intervals
// (MOVER, as Newcombe's interval does for a difference; kinds independent):
// L = pi - sqrt(sum_k w_k^2 (pi_k - l_k)^2), U = pi + sqrt(sum_k w_k^2 (u_k - pi_k)^2).
// It returns nil unless every part is corrected.
func CombineCorrected(parts []CorrectionPart) *CorrectedRate {
	if len(parts) == 0 {
		return nil
	}
	out := &CorrectedRate{Method: "rogan-gladen per kind, weighted by responses"}
	total := 0
	for _, p := range parts {
		if p.Corrected == nil {
			return nil
		}
		total += p.N
		out.Kinds = append(out.Kinds, p.Kind)
	}
	var down, up float64
	for _, p := range parts {
		c := p.Corrected
		w := float64(p.N) / float64(total)
		out.Est += w * c.Est
		down += w * w * (c.Est - c.CI.Lo) * (c.Est - c.CI.Lo)
		up += w * w * (c.CI.Hi - c.Est) * (c.CI.Hi - c.Est)
	}
	out.CI = stats.Interval{Lo: max(out.Est-math.Sqrt(down), 0), Hi: min(out.Est+math.Sqrt(up), 1)}
	return out
}

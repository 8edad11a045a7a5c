package labels

import (
	"fmt"
	"math"
	"slices"

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
	// Strata are the label set's strata as a weighted estimate sees them
	// (what the verdict projects more labels on); nil for a simple sample.
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
// simple random sample (Wilson intervals). IPW weights the labels of a
// stratified label set by the inverse of their inclusion probability
// (STATS section 6).
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
	// Unused counts labelled answers of the rule left out because they are
	// not in the label set measured on (an IPW estimate cannot weight them).
	Unused    int
	Estimator Estimator
	Set       string   // the stratified label set behind an IPW estimate
	Warnings  []string // e.g. fewer than MinViolationsPerKind labelled violations of a kind
}

// Grades is one grader's judgements by response key: a rule's predicate at
// one version, or an LLM judge. Quality is measured the same way for any.
type Grades struct {
	Name    string // "predicate" or "judge:<model>"
	Version string
	ByKey   map[string]model.Grade
}

// QualityScope says which labelled answers a grader is measured on.
type QualityScope struct {
	Rule  int // index into Audit.Rules
	Model int // index into Audit.File.Models; -1 for every model
	// Set restricts the labels to a label set's answers; nil uses every
	// labelled answer of the rule. A stratified set gives IPW estimates.
	Set *LabelSet
	// Complete, with a stratified Set, measures the kinds the set does not
	// draw from on every label of those kinds (as a simple sample), so a
	// report still shows, say, the controls' recall. The pooled provoking
	// measures are only weighted when the set draws both provoking kinds;
	// when it draws just one they are not measured.
	Complete bool
}

// judged is one labelled answer in a measurement. Answers of a stratified
// set outside the measured rule's model are kept (as zeros): they were
// sampled, so they count in their stratum's sample size.
type judged struct {
	key       string
	kind      model.Kind
	violation bool
	failed    bool
	inDomain  bool
}

// sampledStratum is one stratum of a design as labelled so far.
type sampledStratum struct {
	name  string
	fail  bool
	N     int // responses in the stratum
	items []judged
}

// MeasureGrader measures a grader against human labels on one rule: recall,
// precision and specificity pooled and per kind, the confusion matrix, the
// misses and warnings. labels are the truth, by response key (current
// labels, or one labeller's). It never fails: what cannot be estimated is
// reported as not measured.
func MeasureGrader(p *audit.Plan, g Grades, labels map[string]model.Label, scope QualityScope) GraderQuality {
	rule := p.Audit.Rules[scope.Rule]
	q := GraderQuality{Grader: g.Name, Version: g.Version, Estimator: EstimatorSimple,
		RecallKind: map[model.Kind]*Measure{}, PrecisionKind: map[model.Kind]*Measure{},
		SpecificityKind: map[model.Kind]*Measure{}, Confusion: map[model.Kind]Confusion{}}
	d := domainOf(p, scope)
	setKind := func(model.Kind) bool { return true }
	if scope.Set.Stratified() {
		setKind = func(k model.Kind) bool { return slices.Contains(scope.Set.Options.Kinds, k) }
	}
	if scope.Set != nil {
		for _, key := range d.order {
			if _, labelled := labels[key]; labelled && !scope.Set.Contains(key) && (!scope.Complete || setKind(d.kindOf[key])) {
				q.Unused++
			}
		}
	}
	smp := sampler{q: &q, g: g, labels: labels, d: d}
	var strata []sampledStratum
	var others sampledStratum // with Complete: labels of kinds the set does not draw
	aligned := false
	if scope.Set.Stratified() {
		q.Estimator, q.Set = EstimatorIPW, scope.Set.Name
		// The grader is the one that defined the strata when it is the
		// predicate at the version the set was drawn with: then its
		// failures are exactly the flagged strata.
		aligned = g.Name == model.PredicateGrader && g.Version != "" && g.Version == scope.Set.PredicateVersions[rule.Line]
		strata = smp.setStrata(scope.Set, rule.Line)
		if scope.Complete {
			others = smp.simple("", func(key string) bool { return !setKind(d.kindOf[key]) })
		}
	} else {
		inSet := func(string) bool { return true }
		if scope.Set != nil {
			inSet = scope.Set.Contains
		}
		strata = []sampledStratum{smp.simple("all", inSet)}
	}
	q.count(d, append(slices.Clone(strata), others))
	q.measure(measurer{strata: strata, weighted: scope.Set.Stratified(), aligned: aligned},
		measurer{strata: []sampledStratum{others}}, setKind, d.hasKind, scope.Set)
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

// sampler gathers labelled answers into strata, counting in q the labelled
// answers it cannot use (ungraded, unparseable).
type sampler struct {
	q      *GraderQuality
	g      Grades
	labels map[string]model.Label
	d      domain
}

// use reports whether a labelled domain answer has a usable grade.
func (s sampler) use(key string) (failed, ok bool) {
	gr, graded := s.g.ByKey[key]
	switch {
	case !graded:
		s.q.Ungraded++
		return false, false
	case gr.Unparseable:
		s.q.Unparseable++
		return false, false
	}
	return !gr.Pass, true
}

// setStrata is a stratified set's strata of the rule on line, with their
// labelled answers (those outside the domain kept, for the weights).
func (s sampler) setStrata(set *LabelSet, line int) []sampledStratum {
	var strata []sampledStratum
	for _, st := range set.Strata {
		if st.Line != line {
			continue
		}
		ss := sampledStratum{name: st.Name, fail: st.Fail, N: st.N}
		for _, key := range set.strataKeys[st.Name] {
			l, labelled := s.labels[key]
			if !labelled {
				continue
			}
			k, in := s.d.kindOf[key]
			it := judged{key: key, kind: k, violation: l.Violation, inDomain: in}
			if in {
				failed, ok := s.use(key)
				if !ok {
					continue
				}
				it.failed = failed
			}
			ss.items = append(ss.items, it)
		}
		strata = append(strata, ss)
	}
	return strata
}

// simple is one stratum of every labelled, usable domain answer that
// keep admits, as a simple random sample (N is its size).
func (s sampler) simple(name string, keep func(key string) bool) sampledStratum {
	ss := sampledStratum{name: name}
	for _, key := range s.d.order {
		l, labelled := s.labels[key]
		if !labelled || !keep(key) {
			continue
		}
		if failed, ok := s.use(key); ok {
			ss.items = append(ss.items, judged{key: key, kind: s.d.kindOf[key], violation: l.Violation, failed: failed, inDomain: true})
		}
	}
	ss.N = len(ss.items)
	return ss
}

// count fills the raw confusion counts and the misses, in plan order.
func (q *GraderQuality) count(d domain, strata []sampledStratum) {
	var all []judged
	for _, ss := range strata {
		for _, it := range ss.items {
			if it.inDomain {
				all = append(all, it)
			}
		}
	}
	pos := make(map[string]int, len(d.order))
	for i, k := range d.order {
		pos[k] = i
	}
	slices.SortFunc(all, func(a, b judged) int { return pos[a.key] - pos[b.key] })
	for _, it := range all {
		c := q.Confusion[it.kind]
		c.add(it.violation, it.failed)
		q.Confusion[it.kind] = c
		if it.kind.Provoking() {
			q.Pooled.add(it.violation, it.failed)
		}
		if it.violation && !it.failed {
			q.Misses = append(q.Misses, it.key)
		}
	}
	q.Labels = len(all)
}

// measure estimates recall, precision and specificity, pooled over the
// provoking kinds and per kind: weighted (m) for the kinds the set draws,
// simple for the rest.
func (q *GraderQuality) measure(m, simple measurer, setKind func(model.Kind) bool, hasKind map[model.Kind]bool, set *LabelSet) {
	pooled := func(it judged) bool { return it.inDomain && it.kind.Provoking() }
	// A provoking kind without cases in the rule is covered trivially.
	covers := func(k model.Kind) bool { return setKind(k) || !hasKind[k] }
	switch pv, pr := covers(model.Provoke), covers(model.Pressure); {
	case pv && pr:
		q.Recall, q.Precision, q.Specificity = m.recall(pooled), m.precision(pooled), m.specificity(pooled)
	case !pv && !pr:
		q.Recall, q.Precision, q.Specificity = simple.recall(pooled), simple.precision(pooled), simple.specificity(pooled)
	default:
		// One provoking kind weighted, the other not: no valid pooled
		// estimate. The raw counts still show what is labelled.
		why := fmt.Sprintf("label set %s draws only one provoking kind; pool needs both", set.Name)
		both := measurer{strata: append(slices.Clone(m.strata), simple.strata...)}
		q.Recall, q.Precision, q.Specificity = both.recall(pooled), both.precision(pooled), both.specificity(pooled)
		for _, ms := range []*Measure{q.Recall, q.Precision, q.Specificity} {
			ms.Est, ms.CI, ms.Method, ms.Unmeasured = 0, stats.Interval{}, MethodIPW, why
		}
	}
	for _, k := range model.Kinds {
		if _, ok := q.Confusion[k]; !ok {
			continue
		}
		mk := m
		if !setKind(k) {
			mk = simple
		}
		inKind := func(it judged) bool { return it.inDomain && it.kind == k }
		q.RecallKind[k] = mk.recall(inKind)
		q.PrecisionKind[k] = mk.precision(inKind)
		q.SpecificityKind[k] = mk.specificity(inKind)
	}
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

// measurer computes shares A/(A+B) over labelled answers, plainly or
// weighted by stratum.
type measurer struct {
	strata   []sampledStratum
	weighted bool
	aligned  bool // the grader's failures are exactly the flagged strata
}

// part is one side of a share: which answers count, and the grader verdict
// they carry. For the grader that defined the strata, the verdict rules the
// part out of the other verdict's strata entirely, not just in the sample.
type part struct {
	match  func(judged) bool
	failed bool
}

func (p part) has(it judged) bool { return p.match(it) && it.failed == p.failed }

func (m measurer) recall(in func(judged) bool) *Measure {
	a := part{func(it judged) bool { return in(it) && it.violation }, true}
	b := part{func(it judged) bool { return in(it) && it.violation }, false}
	if m.weighted && m.aligned {
		return m.alignedRecall(a, b)
	}
	return m.share(a, b)
}

func (m measurer) precision(in func(judged) bool) *Measure {
	a := part{func(it judged) bool { return in(it) && it.violation }, true}
	b := part{func(it judged) bool { return in(it) && !it.violation }, true}
	if m.aligned {
		// Every failure of the stratifying grader lies in a flagged stratum,
		// drawn with one probability: precision is v_F/n_F, unweighted.
		return m.plain(a, b)
	}
	return m.share(a, b)
}

func (m measurer) specificity(in func(judged) bool) *Measure {
	a := part{func(it judged) bool { return in(it) && !it.violation }, false}
	b := part{func(it judged) bool { return in(it) && !it.violation }, true}
	return m.share(a, b)
}

// plain counts A and B over every labelled answer, with a Wilson interval.
func (m measurer) plain(a, b part) *Measure {
	var hits, total int
	for _, ss := range m.strata {
		for _, it := range ss.items {
			switch {
			case a.has(it):
				hits++
				total++
			case b.has(it):
				total++
			}
		}
	}
	return WilsonMeasure(hits, total)
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

// stratumCounts are one stratum's size, sample size, A and B counts, and
// which sampled answers are A or B. noA (noB) is set when the stratum cannot
// hold any A (B) at all: the stratifying grader's verdict is the stratum's.
type stratumCounts struct {
	name     string
	N, n     int
	a, b     int
	isA, isB []bool
	noA, noB bool
}

func (m measurer) counts(a, b part) []stratumCounts {
	out := make([]stratumCounts, len(m.strata))
	for i, ss := range m.strata {
		sc := stratumCounts{name: ss.name, N: ss.N, n: len(ss.items),
			noA: m.aligned && a.failed != ss.fail, noB: m.aligned && b.failed != ss.fail}
		for _, it := range ss.items {
			ai, bi := a.has(it), b.has(it)
			sc.isA = append(sc.isA, ai)
			sc.isB = append(sc.isB, bi)
			if ai {
				sc.a++
			}
			if bi {
				sc.b++
			}
		}
		out[i] = sc
	}
	return out
}

// share estimates A/(A+B). Unweighted it is the Wilson measure. Weighted,
// it is the ratio of Horvitz-Thompson totals, A = sum_h (N_h/n_h) a_h, with
// the linearised variance sum_h N_h^2 (1 - n_h/N_h) s_h^2/n_h / (A+B)^2, s_h^2
// the sample variance of z_i = a_i - R (a_i + b_i) in stratum h (STATS
// section 6 for recall; the same estimator for any share). A stratum's
// answers outside the measured kind or model enter as zeros: domain
// estimation keeps the stratum's inclusion probability.
func (m measurer) share(a, b part) *Measure {
	if !m.weighted {
		return m.plain(a, b)
	}
	cs := m.counts(a, b)
	ms := &Measure{Method: MethodIPW}
	for _, c := range cs {
		ms.Hits += c.a
		ms.Total += c.a + c.b
	}
	if ms.Total == 0 {
		return ms
	}
	if reason := unlabelledStratum(cs); reason != "" {
		ms.Unmeasured = reason
		return ms
	}
	var A, B float64
	for _, c := range cs {
		if c.n == 0 {
			continue
		}
		w := float64(c.N) / float64(c.n)
		A += w * float64(c.a)
		B += w * float64(c.b)
	}
	r := A / (A + B)
	var v float64
	varOK := true
	for _, c := range cs {
		if c.n == 0 || c.n == c.N {
			continue
		}
		zs := make([]float64, c.n)
		for i := range zs {
			switch {
			case c.isA[i]:
				zs[i] = 1 - r
			case c.isB[i]:
				zs[i] = -r
			}
		}
		s2, ok := sampleVariance(zs)
		if !ok {
			varOK = false
			continue
		}
		N, n := float64(c.N), float64(c.n)
		v += N * N * (1 - n/N) * s2 / n
	}
	ms.Est = r
	ms.SE = math.Sqrt(v) / (A + B)
	m.finishInterval(ms, cs, varOK)
	ms.Strata = m.weightedStrata(cs)
	return ms
}

// weightedStrata describes the strata behind a weighted share for the
// verdict's projections of more labels (stats.StratifiedShare on them
// gives the same estimate and interval).
func (m measurer) weightedStrata(cs []stratumCounts) []model.WeightedStratum {
	out := make([]model.WeightedStratum, len(cs))
	for i, c := range cs {
		out[i] = model.WeightedStratum{Name: c.name, Failed: m.strata[i].fail, ShareStratum: stats.ShareStratum{
			N: float64(c.N), Labelled: float64(c.n), A: float64(c.a), B: float64(c.b), NoA: c.noA, NoB: c.noB}}
	}
	return out
}

// alignedRecall is the recall of the grader that defined the strata:
// stats.IPWRecall over the flagged and passed strata (the answers of the
// measured kind and model that are violations), which share gives too.
func (m measurer) alignedRecall(a, b part) *Measure {
	cs := m.counts(a, b)
	if len(cs) != 2 || m.strata[0].fail == m.strata[1].fail {
		return m.share(a, b)
	}
	fi, pi := 0, 1
	if !m.strata[0].fail {
		fi, pi = 1, 0
	}
	f, p := cs[fi], cs[pi]
	ms := &Measure{Method: MethodIPW, Hits: f.a + p.a, Total: f.a + p.a + f.b + p.b}
	if ms.Total == 0 {
		return ms
	}
	if f.b != 0 || p.a != 0 {
		// Not aligned after all (cannot happen for the stratifying version).
		return m.share(a, b)
	}
	if reason := unlabelledStratum(cs); reason != "" {
		ms.Unmeasured = reason
		return ms
	}
	est, se, err := stats.IPWRecall(
		stats.Stratum{N: f.N, Labelled: f.n, Violations: f.a},
		stats.Stratum{N: p.N, Labelled: p.n, Violations: p.b})
	if err != nil {
		ms.Unmeasured = err.Error()
		return ms
	}
	ms.Est, ms.SE = est, se
	varOK := !(f.n == 1 && f.N > 1) && !(p.n == 1 && p.N > 1)
	m.finishInterval(ms, cs, varOK)
	ms.Strata = m.weightedStrata(cs)
	return ms
}

// unlabelledStratum names a stratum that has responses but no labels yet:
// nothing can be said about the answers it holds.
func unlabelledStratum(cs []stratumCounts) string {
	for _, c := range cs {
		if c.N > 0 && c.n == 0 {
			return fmt.Sprintf("stratum %q has no labels yet", c.name)
		}
	}
	return ""
}

// finishInterval sets the 95% interval of a weighted share: the normal
// interval, unless it would claim certainty it does not have (a zero SE, or
// an undefined variance, while some stratum is only partly labelled). Then
// it bounds A and B stratum by stratum with Wilson intervals (a stratum
// that cannot hold one of them contributes none of it) and takes the
// extreme ratios, which is conservative.
func (m measurer) finishInterval(ms *Measure, cs []stratumCounts, varOK bool) {
	partial := false
	for _, c := range cs {
		if c.n < c.N {
			partial = true
		}
	}
	if varOK && (ms.SE > 0 || !partial) {
		ms.CI = stats.NormalInterval(ms.Est, ms.SE)
		return
	}
	var aLo, aHi, bLo, bHi float64
	for _, c := range cs {
		if c.N == 0 || c.n == 0 {
			continue
		}
		N := float64(c.N)
		if c.n == c.N {
			aLo += float64(c.a)
			aHi += float64(c.a)
			bLo += float64(c.b)
			bHi += float64(c.b)
			continue
		}
		if !c.noA {
			wa, _ := stats.Wilson(c.a, c.n)
			aLo, aHi = aLo+N*wa.Lo, aHi+N*wa.Hi
		}
		if !c.noB {
			wb, _ := stats.Wilson(c.b, c.n)
			bLo, bHi = bLo+N*wb.Lo, bHi+N*wb.Hi
		}
	}
	lo, hi := 0.0, 1.0
	if aLo+bHi > 0 {
		lo = aLo / (aLo + bHi)
	}
	if aHi+bLo > 0 {
		hi = aHi / (aHi + bLo)
	}
	ms.Method = MethodIPWBounds
	ms.CI = stats.Interval{Lo: math.Min(lo, ms.Est), Hi: math.Max(hi, ms.Est)}
}

// sampleVariance returns the variance of xs with denominator n-1; ok is
// false with fewer than two values (one label says nothing about spread).
func sampleVariance(xs []float64) (float64, bool) {
	if len(xs) < 2 {
		return 0, false
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return ss / float64(len(xs)-1), true
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

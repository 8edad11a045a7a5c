package evidence

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// Count tallies one case under one variant.
type Count struct {
	Fails  int // graded failures (violations; refusals on controls)
	N      int // graded answers
	Errors int // calls that failed for good: their own state, not in N
	// Truncated counts answers cut off by the token limit or empty
	// (model.ErrorKind.Settled): neither a pass nor a failure, not in N,
	// and not asked again (raising the limit asks everything afresh).
	Truncated   int
	Unparseable int // answers the grader could not grade
	Pending     int // not yet answered, or answered but not yet graded
	// Ungraded counts answers of a rule that names no predicate: answered,
	// never graded, and not in N (see Rule.HasPredicate).
	Ungraded int
}

// Rate is Fails/N, or 0 when nothing is graded.
func (c Count) Rate() float64 {
	if c.N == 0 {
		return 0
	}
	return float64(c.Fails) / float64(c.N)
}

// CaseResult is one case's counts under both variants.
type CaseResult struct {
	Case     *model.Case
	Index    int
	Baseline Count
	Deleted  Count
}

// Arm is one kind (or the pooled provoking kinds) under both variants.
type Arm struct {
	Name string // "provoke", "pressure", "control" or "provoking"
	// Cases counts the arm's cases with at least one graded answer (either
	// variant): the cases its rates are on. Planned counts every case of
	// the arm's kinds, graded or not.
	Cases, Planned int
	Baseline       ArmSide
	Deleted        ArmSide
	// Diff is deleted minus baseline on the pooled counts of the cases
	// graded in both variants (the cases the verdict compares), with
	// Newcombe's interval; Paired is the case-paired difference when two or
	// more such cases exist. Unmatched counts cases graded in one variant
	// only: they are in the per-variant rates but not in the difference.
	Diff      float64
	DiffCI    stats.Interval
	Paired    *stats.Paired
	Compared  int // cases graded in both variants: those Diff is on
	Unmatched int
}

// ArmSide is an arm under one variant: pooled counts, Wilson interval, and
// the rate with a standard error clustered by case.
type ArmSide struct {
	Fails, N, Errors, Pending int
	Truncated                 int // see Count.Truncated
	Rate                      float64
	Wilson                    stats.Interval
	Clustered                 *stats.Arm // nil with fewer than two graded cases
	// Corrected is the rate corrected for the grader's recall of this
	// kind (see CorrectArms); nil when that recall is not measured.
	Corrected *labels.CorrectedRate
}

// RuleResult is everything known about one audited line for one model.
type RuleResult struct {
	Rule      *audit.Rule
	RuleIndex int
	Model     int
	ModelName string
	Cases     []CaseResult
	Arms      map[model.Kind]*Arm
	Provoking *Arm // provoke and pressure pooled: the arm the verdict rests on
	// PredicateVersion is the version of the predicate whose grades the
	// counts and verdict use: the rule's current predicate.
	PredicateVersion string
	Quality          labels.GraderQuality // that predicate against the labels
	// Judges holds each judge's quality against the same labels, in the
	// audit's order; Agreement compares every pair of graders (predicate
	// first); Disagreements counts answers on which any two graders differ
	// (or one could not grade): the review queue's length.
	Judges        []labels.GraderQuality
	Agreement     []PairAgreement
	Disagreements int
	Verdict       model.Verdict
	// Flips are the cases whose majority outcome differs between baseline
	// and the variant (see caseFlips).
	Flips Flips
	// Adjudications are the review queue's decisions on the rule's answers,
	// kept apart from the labels above.
	Adjudications Adjudications
	// Labellers compares every pair of labellers (their blind labels) on
	// the rule's answers both labelled; empty with fewer than two.
	Labellers []labels.LabellerAgreement
	// Lengths compares answer lengths between the variants; set only for
	// a rule with no input class, whose verdict rests on it.
	Lengths *Lengths
	// Staleness counts the cases written since the line's text last
	// changed; nil when no change is known.
	Staleness *Staleness
	// Regression holds each regression suite under this variant, in the
	// audit's order; empty without suites. It never changes Verdict (see
	// RegressionBroken).
	Regression []RegressionResult
	Done       int // graded answers
	Errors     int
	Truncated  int // see Count.Truncated
	Pending    int
	// Controls counts the rule's answers (for this model) whose text held
	// control sequences, removed wherever the answer is shown
	// (model.Sanitize); see Tally.Controlled.
	Controls int
	// Unneeded counts the answers not made (or not yet) beyond the look a
	// verdict settled at (see model.Look): not pending, since the verdict
	// does not wait for them. An adaptive run never makes them.
	Unneeded int
	// Looks is the verdict at each look of a sequential design the grid
	// has reached, first to last (the last is Verdict); nil for a fixed
	// design, before the first look and for a rule with no input class.
	Looks []model.Verdict
}

// Results is the state of a whole audit.
type Results struct {
	Plan  *audit.Plan
	Rules []*RuleResult
	Delta float64
	// Sweep counts the verdicts and sums the tokens the lines safe to
	// delete remove against those every audited line claims, also by tag.
	Sweep Sweep
	// Comparisons sets the audit's first model beside each other one, case
	// by case (see ModelComparisons); empty with one model.
	Comparisons []Comparison
	// Ship is the joint test's decision (see Tally.Ship); nil when the
	// audit has made none.
	Ship *ShipResult
	// StaleLabels counts the answers whose labels judged another answer
	// than the one stored under their key now (Tally.StaleLabels): they
	// count nowhere, and every report says so (StaleLabelsNote).
	StaleLabels int
	// UndesignedLabels counts the blind labels in no declared design
	// (Tally.Labels): they count nowhere, and every report says so.
	UndesignedLabels int
}

// StaleLabelsNote says, for people, that labels count nowhere because the
// answers they judged are no longer stored; "" when there are none.
func (r *Results) StaleLabelsNote() string {
	if r == nil || r.StaleLabels == 0 {
		return ""
	}
	where := ""
	if r.Plan != nil && r.Plan.Audit != nil {
		where = " in " + filepath.Base(r.Plan.Audit.LabelFilePath())
	}
	n := "labels"
	if r.StaleLabels == 1 {
		n = "label"
	}
	return fmt.Sprintf("%d %s%s judged answers this store no longer holds: label again", r.StaleLabels, n, where)
}

// LabelNotes are the notes every report and screen shows about labels
// that count nowhere (StaleLabelsNote, UndesignedLabelsNote), in that
// order; empty when every label counts.
func (r *Results) LabelNotes() []string {
	var out []string
	for _, n := range []string{r.StaleLabelsNote(), r.UndesignedLabelsNote()} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// UndesignedLabelsNote says, for people, that blind labels count nowhere
// because they are in no declared design; "" when there are none.
func (r *Results) UndesignedLabelsNote() string {
	if r == nil || r.UndesignedLabels == 0 {
		return ""
	}
	n := "blind labels are"
	if r.UndesignedLabels == 1 {
		n = "blind label is"
	}
	return fmt.Sprintf("%d %s in no declared label set, so not a random sample: they count nowhere until their design is declared "+
		"(import-labels --design random for labels drawn at random elsewhere, or label a set drawn by auditor label)", r.UndesignedLabels, n)
}

// Tally is the in-memory state results are computed from: which calls are
// answered, the current predicates' grades and the labels. A screen that
// follows a live run loads it once, records each graded answer as it
// arrives, and recomputes results without touching storage.
// A Tally is not safe for concurrent use.
type Tally struct {
	plan *audit.Plan
	// preds holds the current predicate of every rule; the session owns it
	// and shares it with the grader, so an edit applied here is what the
	// run grades with next.
	preds  *grade.Predicates
	status map[string]bool
	// settled holds the stored calls answered truncated or empty, with
	// their kind (counted in Count.Truncated, not Errors).
	settled map[string]model.ErrorKind
	grades  map[string]map[string]model.Grade // grader version -> response key -> grade
	// book resolves every label record: its Truth (first labeller's blind
	// labels) is what graders are measured against.
	book *model.LabelBook
	// designed caches Labels: the truth given in a declared design; nil
	// when labels or sets changed since.
	designed map[string]model.Label
	// gate keeps out of the book the label records that judged another
	// answer than the one stored under their key (labeladmit.go).
	gate *labelGate
	sets []labels.LabelSet // label sets, for weighting stratified labels
	// histories holds each rule's recorded texts, by rule index.
	histories [][]TextSeen
	// lengths holds the answer lengths of rules with no input class, by
	// response key; nil when the audit has none.
	lengths map[string]answerLength
	// controls holds the answers whose text holds control sequences (see
	// Controlled).
	controls map[string]bool
}

// SettledReader is a Reader that tells the calls answered truncated or
// empty from those that failed (store.Store and audittest.MemStore are):
// it maps the key (made by key, as in StatusUsing) of every stored call
// whose answer was cut off by the token limit or came back empty to its
// error kind (model.ErrorKind.Settled). With a Reader that is not one,
// such calls count as errors.
type SettledReader interface {
	SettledErrorsUsing(key func(k []byte) string) (map[string]model.ErrorKind, error)
}

// ControlsReader is a Reader that knows which stored answers hold control
// sequences without reading every text (store.Store and audittest.MemStore
// are): it returns the keys (made by key, as in StatusUsing) of the
// answered calls whose text has something model.Sanitize removes
// (model.Controls above 0). With a Reader that is not one, no stored answer
// is marked.
type ControlsReader interface {
	ControlKeysUsing(key func(k []byte) string) (map[string]bool, error)
}

// NewTally loads the state of the plan's calls from src, graded by the
// predicates current in preds. Its maps are keyed with the plan's own
// strings (audit.Plan.Key): a tally of a hundred thousand answers would
// otherwise hold two more copies of every key.
func NewTally(p *audit.Plan, preds *grade.Predicates, src audit.Reader) (*Tally, error) {
	status, err := src.StatusUsing(p.Key)
	if err != nil {
		return nil, err
	}
	settled := map[string]model.ErrorKind{}
	if sr, ok := src.(SettledReader); ok {
		if settled, err = sr.SettledErrorsUsing(p.Key); err != nil {
			return nil, err
		}
	}
	log, err := src.LabelLog()
	if err != nil {
		return nil, err
	}
	sets, err := labels.LoadLabelSets(src)
	if err != nil {
		return nil, err
	}
	controls := map[string]bool{}
	if cr, ok := src.(ControlsReader); ok {
		if controls, err = cr.ControlKeysUsing(p.Key); err != nil {
			return nil, err
		}
	}
	gate, err := newLabelGate(src, log)
	if err != nil {
		return nil, err
	}
	book := model.NewLabelBook(gate.admit(log), labels.LegacySource(sets))
	t := &Tally{plan: p, preds: preds, status: status, settled: settled, controls: controls, book: book, gate: gate, sets: sets,
		grades: map[string]map[string]model.Grade{}}
	if err := t.loadLengths(src); err != nil {
		return nil, err
	}
	t.histories = make([][]TextSeen, len(p.Audit.Rules))
	for i, r := range p.Audit.Rules {
		if t.histories[i], err = ruleHistory(src, r); err != nil {
			return nil, err
		}
	}
	for _, v := range append(preds.Versions(), preds.SuiteVersions()...) {
		if _, ok := t.grades[v]; ok {
			continue
		}
		if t.grades[v], err = src.GradesForUsing(model.PredicateGrader, v, p.Key); err != nil {
			return nil, err
		}
	}
	// The versions label sets were drawn with place the answers a stratified
	// set did not draw in its strata (labels.Population).
	for _, set := range sets {
		for _, v := range set.PredicateVersions {
			if _, ok := t.grades[v]; ok {
				continue
			}
			if t.grades[v], err = src.GradesForUsing(model.PredicateGrader, v, p.Key); err != nil {
				return nil, err
			}
		}
	}
	// Judge versions hash the judge's model and rubric, so they never collide
	// with predicate versions and share the map.
	for _, j := range p.Audit.Judges {
		for _, v := range j.Versions() {
			if t.grades[v], err = src.GradesForUsing(j.Grader, v, p.Key); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

// Predicates returns the registry of current predicates the tally counts
// with.
func (t *Tally) Predicates() *grade.Predicates { return t.preds }

// PredicateVersion returns the version of rule ri's current predicate.
func (t *Tally) PredicateVersion(ri int) string { return t.preds.Version(ri) }

// PredicateGrades returns the grades rule ri's current predicate has given,
// by response key. The map is the tally's own: do not modify it.
func (t *Tally) PredicateGrades(ri int) map[string]model.Grade { return t.grades[t.preds.Version(ri)] }

// Regrade grades, with g, every answered cell whose answer has no grade
// from its rule's current predicate (after a predicate edit, or a run in
// which grading failed), stores the grades in st and records them here. It
// makes no model calls and reads the texts of those answers only; it
// returns how many grades it added.
func (t *Tally) Regrade(g *grade.Grader, st audit.Store) (int, error) {
	added, n, err := g.Missing(t.status, func(version string) map[string]model.Grade { return t.grades[version] }, st)
	if err != nil || n == 0 {
		return n, err
	}
	if err := st.PutGrades(added); err != nil {
		return n, err
	}
	for key, gs := range added {
		for _, gr := range gs {
			t.RecordGrade(key, gr)
		}
	}
	return n, nil
}

// GraderGrades returns the grades one grader version has given so far, by
// response key. The map is the tally's own: do not modify it.
func (t *Tally) GraderGrades(version string) map[string]model.Grade { return t.grades[version] }

// RecordGrade adds a grade given to a stored answer after it was recorded
// (a judge's verdict arrives after the answer it judges).
func (t *Tally) RecordGrade(key string, g model.Grade) {
	if m, ok := t.grades[g.Version]; ok {
		m[key] = g
	}
}

// Record adds a finished call and its grades. An answered call is never
// replaced by a later failure, as in the store.
func (t *Tally) Record(r model.Response, grades []model.Grade) {
	if ok, seen := t.status[r.Key]; seen && ok {
		return
	}
	t.status[r.Key] = r.OK()
	if !r.OK() && r.ErrorKind.Settled() {
		t.settled[r.Key] = r.ErrorKind
	} else {
		delete(t.settled, r.Key)
	}
	t.recordLength(r)
	for _, l := range t.gate.answered(r) {
		t.book.Add(l)
		t.designed = nil
	}
	if r.OK() && model.Controls(r.Text) > 0 {
		t.controls[r.Key] = true
	}
	for _, g := range grades {
		t.RecordGrade(r.Key, g)
	}
}

// Controlled reports whether a stored answer's text held control sequences
// (model.Controls above 0): every screen and report shows it with them
// removed (model.Sanitize), so the answer is marked.
func (t *Tally) Controlled(key string) bool { return t.controls[key] }

// countControls counts the cells of rule ri and model mi whose answers are
// Controlled.
func (t *Tally) countControls(ri, mi int) int {
	if len(t.controls) == 0 {
		return 0
	}
	n := 0
	for _, ci := range t.plan.CellsOfRule(ri) {
		if c := t.plan.Cells[ci]; c.Model == mi && t.controls[c.Key] {
			n++
		}
	}
	return n
}

// SetLabel records a label record (a label or an undo) just stored, as
// the store returned it (with the hash of the answer it judged). A record
// that judged another answer than the one the tally knows is kept out, as
// on load.
func (t *Tally) SetLabel(l model.Label) {
	if t.gate.labelled(l) {
		t.book.Add(l)
		t.designed = nil
	}
}

// StaleLabels counts the answers whose labels judged another answer than
// the one stored under their key now (a clone's answers, asked again):
// those labels count nowhere until the answers are labelled again.
func (t *Tally) StaleLabels() int { return t.gate.staleLabels() }

// Answered reports whether a call is stored with an answer.
func (t *Tally) Answered(key string) bool { return t.status[key] }

// Grade returns the current predicate grade of a cell's answer.
func (t *Tally) Grade(cell audit.Cell) (model.Grade, bool) {
	g, ok := t.PredicateGrades(cell.Rule)[cell.Key]
	return g, ok
}

// Results computes every rule's counts, intervals, grader quality and
// verdict from the tally.
func (t *Tally) Results() (*Results, error) {
	p := t.plan
	res := &Results{Plan: p, Delta: p.Audit.File.Delta}
	regression := t.regressionCounts()
	for ri, rule := range p.Audit.Rules {
		for mi := range p.Audit.File.Models {
			var lengths *Lengths
			if rule.Config.NoInputClass() {
				lengths = t.measureLengths(ri, mi)
			}
			rr, err := aggregateRule(p, ri, mi, t.status, t.settled, t.PredicateGrades(ri), t.ruleQuality(ri, mi, t.Labels()), lengths,
				model.LabelledArms{Baseline: t.VariantLabels(ri, mi, false), Deleted: t.VariantLabels(ri, mi, true)})
			if err != nil {
				return nil, err
			}
			rr.PredicateVersion = t.PredicateVersion(ri)
			rr.Controls = t.countControls(ri, mi)
			if !rule.Config.NoInputClass() {
				t.addGraders(rr) // judges never grade a rule with no input class
			}
			t.addLabelSummary(rr)
			var h []TextSeen
			if t.histories != nil {
				h = t.histories[ri]
			}
			rr.Staleness = staleness(rule, h)
			rr.Regression = t.regressionResults(regression, ri, mi)
			res.Rules = append(res.Rules, rr)
		}
	}
	res.Sweep = summarizeSweep(res.Rules)
	res.Comparisons = t.ModelComparisons()
	ship, err := t.Ship(res)
	if err != nil {
		return nil, err
	}
	res.Ship = ship
	res.StaleLabels = t.StaleLabels()
	res.UndesignedLabels = t.UndesignedLabels()
	return res, nil
}

func aggregateRule(p *audit.Plan, ri, mi int, status map[string]bool, settled map[string]model.ErrorKind, grades map[string]model.Grade, quality labels.GraderQuality, lengths *Lengths, labelled model.LabelledArms) (*RuleResult, error) {
	rule := p.Audit.Rules[ri]
	rr := &RuleResult{Rule: rule, RuleIndex: ri, Model: mi, ModelName: p.Audit.File.Models[mi].Name,
		Arms: map[model.Kind]*Arm{}}
	a := answers{p: p, ri: ri, mi: mi, status: status, settled: settled, grades: grades}
	rr.Cases = a.cases(p.Samples)
	for _, cr := range rr.Cases {
		for _, c := range []Count{cr.Baseline, cr.Deleted} {
			rr.Done += c.N
			rr.Errors += c.Errors
			rr.Truncated += c.Truncated
			rr.Pending += c.Pending
		}
	}
	for _, k := range model.Kinds {
		rr.Arms[k] = buildArm(string(k), rr.Cases, func(c model.Kind) bool { return c == k })
	}
	rr.Provoking = buildArm("provoking", rr.Cases, model.Kind.Provoking)
	rr.Quality = quality
	CorrectArms(rr)

	// The verdict rests on the last look of the design every case has
	// reached, and on that look's samples only (the tables above show all
	// that is stored); short of the first look it is provisional.
	d := a.design()
	look, have := a.lookReached(d)
	counted := rr.Cases
	if look > 0 && look < d.Looks {
		counted = a.cases(d.SamplesAt(look))
	}
	in := verdictInput(p, rr, counted, labelled)
	in.Look = d.Look(max(look, 1))
	if look == 0 {
		in.Look = d.Look(d.Looks)
	}
	var v model.Verdict
	var err error
	if lengths != nil {
		rr.Lengths = lengths
		v, err = model.DecideNoClass(in, lengths.LengthEvidence)
	} else {
		v, err = model.DecideChange(in, rule.VariantKind())
	}
	if err != nil {
		return nil, fmt.Errorf("audit: verdict for line %d: %w", rule.Line, err)
	}
	if look == 0 {
		v.Provisional(d, fmt.Sprintf("%d of %d samples a case are in for every case", have, p.Samples))
	}
	if !rule.HasPredicate() {
		// No predicate graded anything: control notes would describe checks
		// that were never made.
		v.Notes = nil
	}
	rr.Verdict = v
	if lengths == nil {
		if rr.Looks, err = lookVerdicts(p, rr, a, d, look, labelled); err != nil {
			return nil, err
		}
		// A line settled at an interim look stays settled there (a
		// group-sequential design stops at the first boundary crossed, and
		// its error is spent for that): answers stored beyond it, as a
		// sweep's shared baseline or a later run makes, do not move the
		// verdict to a later look.
		if first := firstSettled(rr.Looks); first >= 0 && first < len(rr.Looks)-1 {
			rr.Verdict = rr.Looks[first]
			if !rule.HasPredicate() {
				rr.Verdict.Notes = nil
			}
		}
	}
	rr.Flips = caseFlips(rr.Cases)
	if rr.SettledEarly() {
		// Settled at an interim look: the samples beyond it are not
		// needed (an adaptive run never makes them).
		rr.Unneeded = a.pendingFrom(v.Look.Samples)
		rr.Pending -= rr.Unneeded
	}
	return rr, nil
}

// firstSettled is the index of the first look verdict that settles its
// line (see settles), -1 when none does.
func firstSettled(looks []model.Verdict) int {
	for i, v := range looks {
		if settles(v) {
			return i
		}
	}
	return -1
}

// settles reports whether a verdict at an interim look settles its line:
// KEEP, DELETE (or a change's WORSE, NOT WORSE, BETTER) there.
func settles(v model.Verdict) bool {
	return v.Look != nil && !v.Look.Final() && v.NotYet == "" &&
		v.Decision != model.DecisionInconclusive && v.Decision != model.DecisionCanary
}

// SettledEarly reports whether the verdict settled at an interim look of a
// sequential design: KEEP, DELETE (or a change's WORSE, NOT WORSE, BETTER)
// there, so the samples beyond it are not needed.
func (rr *RuleResult) SettledEarly() bool { return settles(rr.Verdict) }

// UnneededCalls returns the keys of the plan's calls not in done that
// serve only lines settled at an interim look (and no regression cell
// still needed): an adaptive run never makes them.
func (r *Results) UnneededCalls(done map[string]bool) map[string]bool {
	settled := map[[2]int]bool{}
	for _, rr := range r.Rules {
		if rr.SettledEarly() {
			settled[[2]int{rr.RuleIndex, rr.Model}] = true
		}
	}
	if r.Ship.SettledEarly() {
		for mi := range r.Plan.Audit.File.Models {
			settled[[2]int{audit.JointRule, mi}] = true
		}
	}
	if len(settled) == 0 {
		return nil
	}
	open := func(rule, model int) bool { return !settled[[2]int{rule, model}] }
	out := map[string]bool{}
	for _, c := range r.Plan.Calls {
		if !done[c.Key] && !r.Plan.NeededBelow(c.Key, math.MaxInt, open) {
			out[c.Key] = true
		}
	}
	return out
}

// pendingFrom counts the rule's cells at or beyond sample m not settled.
func (a answers) pendingFrom(m int) int {
	graded := a.p.Audit.Rules[a.ri].HasPredicate()
	n := 0
	for _, ci := range a.p.CellsOfRule(a.ri) {
		cell := a.p.Cells[ci]
		if cell.Model != a.mi || cell.Sample < m {
			continue
		}
		var c Count
		countAnswer(&c, cell.Key, a.status, a.settled, a.grades, graded)
		n += c.Pending
	}
	return n
}

// verdictInput is what Decide needs from a rule's case counts (counted:
// all of them, or a look's) and its grader's quality.
func verdictInput(p *audit.Plan, rr *RuleResult, counted []CaseResult, labelled model.LabelledArms) model.VerdictInput {
	in := model.VerdictInput{Delta: p.Audit.File.Delta, AffectedShare: p.Audit.File.AffectedShare, Labelled: labelled}
	// Every case of the file goes in, graded or not: Decide compares only
	// the cases graded in both variants, and tells "no such case yet" from
	// "no such case in the file".
	in.Provoking.Baseline, in.Provoking.Deleted = allArmCounts(counted, model.Kind.Provoking)
	in.Control.Baseline, in.Control.Deleted = allArmCounts(counted, func(k model.Kind) bool { return k == model.Control })
	for _, cr := range counted {
		if cr.Case.Kind.Provoking() {
			in.ProvokingKinds = append(in.ProvokingKinds, cr.Case.Kind) // in allArmCounts' order
		}
	}
	// The grader's recall and specificity on the provoking labels, pooled:
	// shown beside the verdict; the grader route reads each variant's own
	// labels in labelled.
	q := rr.Quality
	in.Recall, in.Specificity = q.Recall.VerdictCount(), q.Specificity.VerdictSpecificity()
	return in
}

// answers counts the cells of one rule and model.
type answers struct {
	p       *audit.Plan
	ri, mi  int
	status  map[string]bool
	settled map[string]model.ErrorKind
	grades  map[string]model.Grade
}

// cases counts each case under both variants over the samples below
// maxSample.
func (a answers) cases(maxSample int) []CaseResult {
	rule := a.p.Audit.Rules[a.ri]
	out := make([]CaseResult, len(rule.Cases))
	for i := range rule.Cases {
		out[i] = CaseResult{Case: &rule.Cases[i], Index: i}
	}
	for _, ci := range a.p.CellsOfRule(a.ri) {
		cell := a.p.Cells[ci]
		if cell.Model != a.mi || cell.Sample >= maxSample {
			continue
		}
		cr := &out[cell.Case]
		cnt := &cr.Baseline
		if cell.Deleted {
			cnt = &cr.Deleted
		}
		countAnswer(cnt, cell.Key, a.status, a.settled, a.grades, rule.HasPredicate())
	}
	return out
}

// design is the plan's design; a plan whose looks do not fit its samples
// (workbench refuses those) counts as the fixed design.
func (a answers) design() model.Design {
	d, err := a.p.Design()
	if err != nil {
		d, _ = model.NewDesign(1, a.p.Samples)
	}
	return d
}

// lookReached returns the last look of d whose samples every cell of the
// rule and model has settled (answered and graded, or failed for good, or
// cut off), 0 when not even the first; and how many samples every case has
// settled.
func (a answers) lookReached(d model.Design) (look, have int) {
	graded := a.p.Audit.Rules[a.ri].HasPredicate()
	have = a.p.Samples
	for _, ci := range a.p.CellsOfRule(a.ri) {
		cell := a.p.Cells[ci]
		if cell.Model != a.mi || cell.Sample >= have {
			continue
		}
		var c Count
		countAnswer(&c, cell.Key, a.status, a.settled, a.grades, graded)
		if c.Pending > 0 {
			have = cell.Sample
		}
	}
	for k := d.Looks; k >= 1; k-- {
		if d.SamplesAt(k) <= have {
			return k, have
		}
	}
	return 0, have
}

// countAnswer counts one cell's answer: pending, truncated, an error,
// ungraded (graded false: no predicate grades it), unparseable, or graded
// with its grade.
func countAnswer(cnt *Count, key string, status map[string]bool, settled map[string]model.ErrorKind, grades map[string]model.Grade, graded bool) {
	ok, stored := status[key]
	switch {
	case !stored:
		cnt.Pending++
		return
	case !ok && settled[key].Settled():
		cnt.Truncated++
		return
	case !ok:
		cnt.Errors++
		return
	}
	if !graded {
		cnt.Ungraded++
		return
	}
	g, has := grades[key]
	switch {
	case !has:
		cnt.Pending++
		return
	case g.Unparseable:
		cnt.Unparseable++
		return
	}
	cnt.N++
	if !g.Pass {
		cnt.Fails++
	}
}

// armCounts returns per-case failures and sample counts of the cases whose
// kind matches, for both variants, keeping only cases graded in both (a
// paired comparison needs both sides).
func armCounts(cases []CaseResult, match func(model.Kind) bool) (base, del model.ArmCounts) {
	return countsOf(cases, match, true)
}

// allArmCounts is armCounts with every matching case, graded or not.
func allArmCounts(cases []CaseResult, match func(model.Kind) bool) (base, del model.ArmCounts) {
	return countsOf(cases, match, false)
}

func countsOf(cases []CaseResult, match func(model.Kind) bool, bothOnly bool) (base, del model.ArmCounts) {
	for _, cr := range cases {
		if !match(cr.Case.Kind) || (bothOnly && (cr.Baseline.N == 0 || cr.Deleted.N == 0)) {
			continue
		}
		base.Fails = append(base.Fails, cr.Baseline.Fails)
		base.N = append(base.N, cr.Baseline.N)
		del.Fails = append(del.Fails, cr.Deleted.Fails)
		del.N = append(del.N, cr.Deleted.N)
	}
	return base, del
}

func buildArm(name string, cases []CaseResult, match func(model.Kind) bool) *Arm {
	a := &Arm{Name: name}
	for _, cr := range cases {
		if match(cr.Case.Kind) {
			a.Planned++
			if cr.Baseline.N > 0 || cr.Deleted.N > 0 {
				a.Cases++
			}
		}
	}
	side := func(pick func(CaseResult) Count) ArmSide {
		var s ArmSide
		var fails, ns []int
		for _, cr := range cases {
			if !match(cr.Case.Kind) {
				continue
			}
			c := pick(cr)
			s.Fails += c.Fails
			s.N += c.N
			s.Errors += c.Errors
			s.Truncated += c.Truncated
			s.Pending += c.Pending
			if c.N > 0 {
				fails = append(fails, c.Fails)
				ns = append(ns, c.N)
			}
		}
		if s.N > 0 {
			s.Rate = float64(s.Fails) / float64(s.N)
			s.Wilson, _ = stats.Wilson(s.Fails, s.N)
		}
		if len(ns) >= 2 {
			if arm, err := stats.ArmStats(fails, ns); err == nil {
				s.Clustered = &arm
			}
		}
		return s
	}
	a.Baseline = side(func(c CaseResult) Count { return c.Baseline })
	a.Deleted = side(func(c CaseResult) Count { return c.Deleted })
	base, del := armCounts(cases, match)
	a.Compared = len(base.N)
	for _, cr := range cases {
		if match(cr.Case.Kind) && (cr.Baseline.N > 0) != (cr.Deleted.N > 0) {
			a.Unmatched++
		}
	}
	if nb, nd := sumInts(base.N), sumInts(del.N); nb > 0 && nd > 0 {
		d, ci, err := stats.Newcombe(sumInts(del.Fails), nd, sumInts(base.Fails), nb)
		if err == nil {
			a.Diff, a.DiffCI = d, ci
		}
	}
	if len(base.N) >= 2 {
		if pd, err := stats.PairedDiff(del.Fails, del.N, base.Fails, base.N); err == nil {
			a.Paired = &pd
		}
	}
	return a
}

func sumInts(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

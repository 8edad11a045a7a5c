package labels

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// DefaultSampleSize is the number of answers a label set draws by default.
const DefaultSampleSize = 60

// DefaultFailShare is the share of a stratified label set drawn from the
// answers the predicate failed.
const DefaultFailShare = 1.0 / 3

// ErrLabelSetExists is returned (wrapped) by DrawLabelSample when a set of
// that name already exists with other options: a set is never redrawn.
var ErrLabelSetExists = errors.New("label set exists with other options")

// errForeignSet marks a stored label set without this package's metadata.
var errForeignSet = errors.New("not drawn by auditor's sampler (unknown format)")

// SampleOptions say which answers a label set draws.
type SampleOptions struct {
	Name string // the set's name in the store; required
	N    int    // answers to draw; 0 means DefaultSampleSize
	Seed int64
	Line int // the audited prompt line; 0 draws from every rule
	// Kinds are the case kinds to draw from; empty means provoke and
	// pressure.
	Kinds []model.Kind
	// Stratify draws separately from the answers each rule's predicate
	// failed and passed, FailShare of them from the failed, so that misses
	// (hidden among the passes) and precision are both measured; recall is
	// then estimated with inverse-probability weights.
	Stratify  bool
	FailShare float64 // 0 means DefaultFailShare
	// Variant restricts the draw to one variant's answers: VariantDeleted
	// (the rule's variant: deleted, reworded or added line) or
	// VariantBaseline; empty draws from both.
	Variant string
	// Unlabelled leaves out the answers that already have a label when the
	// set is drawn, so the new labels continue the sample already taken
	// (a uniform draw from the rest keeps the union uniform).
	Unlabelled bool
	// Drawn is when the draw is made, the set's Created; zero means now.
	// A label counts only when a set holding its answer was drawn no
	// later than it was given (evidence.Tally.Labels), so a caller that
	// dates labels by its own clock (the app) dates its draws by the same
	// one. It is not part of the design: Same ignores it.
	Drawn time.Time
}

// The variants a label set can be restricted to.
const (
	VariantDeleted  = "deleted"
	VariantBaseline = "baseline"
	// VariantJoint draws from the joint variant's answers (the prompt
	// without every line of the audit's joint test), which only the
	// plan's joint view (audit.Plan.JointView) lays out as cells.
	VariantJoint = "joint"
)

// variantHolds reports whether a cell is in the options' draw: a set
// drawn from a line's own variants never holds the joint variant's
// answers, and a joint set holds only those.
func (o SampleOptions) variantHolds(c audit.Cell) bool {
	switch o.Variant {
	case VariantJoint:
		return c.Joint
	case VariantDeleted:
		return c.Deleted && !c.Joint
	case VariantBaseline:
		return !c.Deleted
	}
	return !c.Joint
}

func (o SampleOptions) withDefaults() SampleOptions {
	if o.N == 0 {
		o.N = DefaultSampleSize
	}
	if len(o.Kinds) == 0 {
		o.Kinds = []model.Kind{model.Provoke, model.Pressure}
	}
	kinds := make([]model.Kind, 0, len(o.Kinds))
	for _, k := range model.Kinds { // display order, no duplicates
		if slices.Contains(o.Kinds, k) {
			kinds = append(kinds, k)
		}
	}
	for _, k := range o.Kinds {
		if _, ok := model.ParseKind(string(k)); !ok {
			kinds = append(kinds, k) // kept so validate can name it
		}
	}
	o.Kinds = kinds
	if o.FailShare == 0 {
		o.FailShare = DefaultFailShare
	}
	if !o.Stratify {
		o.FailShare = 0
	}
	return o
}

func (o SampleOptions) validate(p *audit.Plan) error {
	switch {
	case strings.TrimSpace(o.Name) == "" || strings.ContainsRune(o.Name, 0):
		return fmt.Errorf("audit: label set: a name is required")
	case o.N < 1:
		return fmt.Errorf("audit: label set %s: sample size %d, need at least 1", o.Name, o.N)
	case o.Stratify && !(o.FailShare > 0 && o.FailShare < 1):
		return fmt.Errorf("audit: label set %s: fail share %v, need a value between 0 and 1", o.Name, o.FailShare)
	case o.Variant != "" && o.Variant != VariantDeleted && o.Variant != VariantBaseline && o.Variant != VariantJoint:
		return fmt.Errorf("audit: label set %s: variant %q (want %s, %s or %s)", o.Name, o.Variant, VariantDeleted, VariantBaseline, VariantJoint)
	}
	for _, k := range o.Kinds {
		if _, ok := model.ParseKind(string(k)); !ok {
			return fmt.Errorf("audit: label set %s: unknown kind %q (want provoke, pressure or control)", o.Name, k)
		}
	}
	if o.Line != 0 && p.RuleIndex(o.Line) < 0 {
		return fmt.Errorf("audit: label set %s: line %d is not audited (audited lines: %s)", o.Name, o.Line, p.AuditedLines())
	}
	return nil
}

// Describe says what the options draw, for errors and headers.
func (o SampleOptions) Describe() string {
	rule, kinds := o.Scope()
	s := fmt.Sprintf("%d answers of %s (%s), seed %d", o.N, rule, kinds, o.Seed)
	if o.Stratify {
		s += fmt.Sprintf(", stratified with %.3g from failures", o.FailShare)
	}
	if o.Variant != "" {
		s += ", " + o.Variant + " variant only"
	}
	if o.Unlabelled {
		s += ", unlabelled answers only"
	}
	return s
}

// Scope names, for people, the rule the options draw from ("line 23" or
// "every rule") and the kinds ("provoke, pressure").
func (o SampleOptions) Scope() (rule, kinds string) {
	rule = "every rule"
	if o.Line != 0 {
		rule = fmt.Sprintf("line %d", o.Line)
	}
	ks := make([]string, len(o.Kinds))
	for i, k := range o.Kinds {
		ks[i] = string(k)
	}
	return rule, strings.Join(ks, ", ")
}

// Same reports whether two options draw the same set.
func (o SampleOptions) Same(p SampleOptions) bool {
	return o.N == p.N && o.Seed == p.Seed && o.Line == p.Line && slices.Equal(o.Kinds, p.Kinds) &&
		o.Stratify == p.Stratify && o.FailShare == p.FailShare && o.Variant == p.Variant && o.Unlabelled == p.Unlabelled
}

// LabelStratum is one stratum of a stratified label set: the answers of one
// rule that its predicate failed (Fail) or passed when the set was drawn.
type LabelStratum struct {
	Name  string // e.g. "L23 failed"
	Line  int    // the audited prompt line
	Fail  bool
	N     int // answers in the stratum when the set was drawn (N_h)
	Drawn int // answers drawn into the set (n_h)
}

// LabelSet is a named sample of answers to label, as stored. Keys are in
// the order a labeller sees them: shuffled, with nothing that reveals the
// predicate's verdict or the stratum. A LabelSet is a value: it never
// changes once drawn.
type LabelSet struct {
	Name    string
	Keys    []string
	Options SampleOptions // as drawn, defaults filled in
	Created time.Time
	// Population is the number of answers the set was drawn from.
	Population int
	// Strata are empty unless the set is stratified.
	Strata []LabelStratum
	// PredicateVersions maps each rule line in the set to the version of
	// its predicate when the set was drawn (the version whose verdicts
	// defined the strata).
	PredicateVersions map[int]string

	strataKeys map[string][]string // stratum name -> its drawn keys; never shown to a labeller
	index      map[string]int      // key -> position in Keys
}

// Stratified reports whether the set was drawn by stratum.
func (s *LabelSet) Stratified() bool { return s != nil && len(s.Strata) > 0 }

// StratumKeys returns the keys drawn into the named stratum, in draw order;
// nil for an unknown stratum or a set that is not stratified. The slice is
// the set's own: do not modify it. Never show it to a labeller.
func (s *LabelSet) StratumKeys(name string) []string { return s.strataKeys[name] }

// Contains reports whether the set holds the answer with this key.
func (s *LabelSet) Contains(key string) bool {
	_, ok := s.index[key]
	return ok
}

// Progress counts the set's answers that have a label in labels.
func (s *LabelSet) Progress(labels map[string]model.Label) (done, total int) {
	for _, k := range s.Keys {
		if _, ok := labels[k]; ok {
			done++
		}
	}
	return done, len(s.Keys)
}

// NextUnlabelled returns the position of the first answer without a label,
// or -1 when every answer is labelled. Labelling in the set's order keeps
// the labelled part a random subsample of each stratum, which the IPW
// estimate relies on while labelling is under way.
func (s *LabelSet) NextUnlabelled(labels map[string]model.Label) int {
	for i, k := range s.Keys {
		if _, ok := labels[k]; !ok {
			return i
		}
	}
	return -1
}

// LabelItem is one answer of a label set as a labelling screen shows it:
// what was asked and under which rule, but not the variant, the predicate's
// verdict or the stratum, so the labeller stays blind. The response text
// comes from the store by Key.
type LabelItem struct {
	Index     int
	Key       string
	RuleIndex int         // into Audit.Rules; -1 when the plan no longer uses the answer
	Rule      *audit.Rule // nil when the plan no longer uses the answer
	Case      *model.Case // nil when the plan no longer uses the answer
}

// Items returns the set's answers in the order to label them.
func (s *LabelSet) Items(p *audit.Plan) []LabelItem {
	out := make([]LabelItem, len(s.Keys))
	for i, k := range s.Keys {
		it := LabelItem{Index: i, Key: k, RuleIndex: -1}
		for _, ci := range p.ByKey[k] {
			c := p.Cells[ci]
			r := p.Audit.Rules[c.Rule]
			if s.Options.Line != 0 && r.Line != s.Options.Line {
				continue
			}
			it.RuleIndex, it.Rule, it.Case = c.Rule, r, &r.Cases[c.Case]
			break
		}
		if it.Rule == nil && p.Ship != nil {
			// An answer of the joint variant: its line's case.
			for _, ci := range p.Ship.ByKey[k] {
				c := p.Ship.Cells[ci]
				r := p.Audit.Rules[c.Rule]
				if s.Options.Line != 0 && r.Line != s.Options.Line {
					continue
				}
				it.RuleIndex, it.Rule, it.Case = c.Rule, r, &r.Cases[c.Case]
				break
			}
		}
		out[i] = it
	}
	return out
}

// Graded is the state a label set is drawn from: which answers are stored
// and what each rule's current predicate made of them. evidence.Tally
// satisfies it.
type Graded interface {
	Answered(key string) bool
	// PredicateVersion is the version of rule ri's current predicate;
	// PredicateGrades its grades by response key.
	PredicateVersion(ri int) string
	PredicateGrades(ri int) map[string]model.Grade
	// Labels are the blind labels given so far (SampleOptions.Unlabelled
	// leaves their answers out).
	Labels() map[string]model.Label
}

// FindLabelSet returns the stored set DrawLabelSample would return for
// opts, drawing nothing: ok is false when no set has the name, and the
// error wraps ErrLabelSetExists when the stored one was drawn with other
// options. `label --show` looks with it.
func FindLabelSet(st audit.Reader, opts SampleOptions) (set LabelSet, ok bool, err error) {
	opts = opts.withDefaults()
	old, ok, err := LoadLabelSet(st, opts.Name)
	if err != nil || !ok {
		return LabelSet{}, false, err
	}
	if !old.Options.Same(opts) {
		return old, true, fmt.Errorf("audit: label set %q was drawn as %s, not %s: %w",
			opts.Name, old.Options.Describe(), opts.Describe(), ErrLabelSetExists)
	}
	return old, true, nil
}

// DrawLabelSample draws a label set from the graded answers of the plan
// (both variants, distinct keys, every model) and stores it, or returns the
// stored set of that name: a set is never redrawn. If the stored set was
// drawn with other options, the error wraps ErrLabelSetExists.
//
// The draw is deterministic for a seed and the tally's state. Without
// Stratify it is a simple random sample. With Stratify, each rule's answers
// are split by its predicate's current verdict, the rule's share of N
// (proportional to its answers) is split FailShare : 1-FailShare between
// failed and passed (a stratum too small gives its surplus to the other),
// and a stratum partly drawn gets at least two answers where possible (one
// label says nothing about a stratum's spread). Every stratum's size and
// draw are recorded so recall can be weighted. The drawn keys are shuffled
// together, so the order reveals no stratum.
func DrawLabelSample(st audit.Store, p *audit.Plan, t Graded, opts SampleOptions) (LabelSet, error) {
	opts = opts.withDefaults()
	if err := opts.validate(p); err != nil {
		return LabelSet{}, err
	}
	if old, ok, err := LoadLabelSet(st, opts.Name); err != nil {
		return LabelSet{}, err
	} else if ok {
		if !old.Options.Same(opts) {
			return LabelSet{}, fmt.Errorf("audit: label set %q was drawn as %s, not %s; choose another name: %w",
				opts.Name, old.Options.Describe(), opts.Describe(), ErrLabelSetExists)
		}
		return old, nil
	}
	if opts.Line != 0 {
		for _, r := range p.Audit.Rules {
			if r.Line == opts.Line && !r.HasPredicate() {
				return LabelSet{}, fmt.Errorf("audit: line %d has no predicate to measure: it has no input class and its verdict rests on answer length", r.Line)
			}
		}
	}

	pop, keys := population(p, t, opts)
	if len(keys) == 0 {
		return LabelSet{}, fmt.Errorf("audit: label set %s: no graded answers to draw from (%s); run the audit first",
			opts.Name, opts.Describe())
	}
	// Draw from sorted keys: the result depends on the seed and the
	// population, not on map order or plan layout.
	slices.Sort(keys)
	rng := rand.New(rand.NewPCG(uint64(opts.Seed), 0x6c6162656c736574)) // "labelset"

	created := opts.Drawn
	if created.IsZero() {
		created = time.Now()
	}
	opts.Drawn = time.Time{} // the set's Created; a loaded set's options have none
	set := LabelSet{Name: opts.Name, Options: opts, Created: created.UTC(), Population: len(keys),
		PredicateVersions: map[int]string{}, strataKeys: map[string][]string{}}
	for _, m := range pop {
		r := p.Audit.Rules[m.rule]
		set.PredicateVersions[r.Line] = t.PredicateVersion(m.rule)
	}
	var drawn []string
	if opts.Stratify {
		drawn = set.drawStrata(rng, p, pop, keys)
	} else {
		drawn = pick(rng, keys, min(opts.N, len(keys)))
	}
	rng.Shuffle(len(drawn), func(i, j int) { drawn[i], drawn[j] = drawn[j], drawn[i] })
	set.Keys = drawn
	set.index = indexKeys(drawn)
	meta, err := set.meta()
	if err != nil {
		return LabelSet{}, err
	}
	if err := st.PutLabelSet(set.Name, set.Keys, meta); err != nil {
		return LabelSet{}, fmt.Errorf("audit: store label set %s: %w", set.Name, err)
	}
	return set, nil
}

// member is an answer of a label set's population: the rule it belongs to
// (an index) and whether the rule's predicate failed it.
type member struct {
	rule int
	fail bool
}

// population is what a set draws from: the distinct answered, graded keys
// of the chosen cells, in plan order. A key serving several rules belongs
// to the first in plan order. Rules with no predicate (no input class) are
// left out: there is no instrument for their labels to measure.
func population(p *audit.Plan, t Graded, opts SampleOptions) (map[string]member, []string) {
	pop := map[string]member{}
	var keys []string
	var labelled map[string]model.Label
	if opts.Unlabelled {
		labelled = t.Labels()
	}
	for _, c := range p.Cells {
		r := p.Audit.Rules[c.Rule]
		if (opts.Line != 0 && r.Line != opts.Line) || !r.HasPredicate() {
			continue
		}
		if !slices.Contains(opts.Kinds, r.Cases[c.Case].Kind) || !opts.variantHolds(c) || !t.Answered(c.Key) {
			continue
		}
		if _, seen := pop[c.Key]; seen {
			continue
		}
		if _, done := labelled[c.Key]; done {
			continue
		}
		g, ok := t.PredicateGrades(c.Rule)[c.Key]
		if !ok || g.Unparseable {
			continue
		}
		pop[c.Key] = member{rule: c.Rule, fail: !g.Pass}
		keys = append(keys, c.Key)
	}
	return pop, keys
}

// drawStrata draws a stratified set: the draw apportioned to rules by
// their size, then within each rule split between the answers its
// predicate failed and passed (FailShare from the failed), recording each
// stratum on set. keys are sorted; the draws follow rule order, failed
// before passed, so a seed always gives the same set.
func (set *LabelSet) drawStrata(rng *rand.Rand, p *audit.Plan, pop map[string]member, keys []string) []string {
	opts := set.Options
	byRule := make([][2][]string, len(p.Audit.Rules)) // [passed, failed]
	ruleSize := make([]int, len(p.Audit.Rules))
	for _, k := range keys {
		m := pop[k]
		f := 0
		if m.fail {
			f = 1
		}
		byRule[m.rule][f] = append(byRule[m.rule][f], k)
		ruleSize[m.rule]++
	}
	share := apportion(min(opts.N, len(keys)), ruleSize)
	var drawn []string
	for ri, r := range p.Audit.Rules {
		if ruleSize[ri] == 0 {
			continue
		}
		failed, passed := byRule[ri][1], byRule[ri][0]
		nF, nP := allocate(share[ri], len(failed), len(passed), opts.FailShare)
		for _, s := range []struct {
			fail bool
			keys []string
			n    int
		}{{true, failed, nF}, {false, passed, nP}} {
			name := fmt.Sprintf("L%d passed", r.Line)
			if s.fail {
				name = fmt.Sprintf("L%d failed", r.Line)
			}
			got := pick(rng, s.keys, s.n)
			set.Strata = append(set.Strata, LabelStratum{Name: name, Line: r.Line, Fail: s.fail, N: len(s.keys), Drawn: len(got)})
			set.strataKeys[name] = got
			drawn = append(drawn, got...)
		}
	}
	return drawn
}

// pick draws n of keys without replacement (a partial Fisher-Yates shuffle
// of a copy), in draw order.
func pick(rng *rand.Rand, keys []string, n int) []string {
	n = min(n, len(keys))
	c := slices.Clone(keys)
	for i := 0; i < n; i++ {
		j := i + rng.IntN(len(c)-i)
		c[i], c[j] = c[j], c[i]
	}
	return c[:n:n]
}

// apportion splits n in proportion to sizes by largest remainder, never
// giving a part more than its size (n is at most the sum of sizes).
func apportion(n int, sizes []int) []int {
	total := 0
	for _, s := range sizes {
		total += s
	}
	out := make([]int, len(sizes))
	if total == 0 {
		return out
	}
	type rem struct {
		i int
		r float64
	}
	var rems []rem
	given := 0
	for i, s := range sizes {
		exact := float64(n) * float64(s) / float64(total)
		out[i] = min(s, int(math.Floor(exact)))
		given += out[i]
		rems = append(rems, rem{i, exact - math.Floor(exact)})
	}
	slices.SortStableFunc(rems, func(a, b rem) int {
		switch {
		case a.r > b.r:
			return -1
		case a.r < b.r:
			return 1
		}
		return 0
	})
	for given < n {
		moved := false
		for _, r := range rems {
			if given < n && out[r.i] < sizes[r.i] {
				out[r.i]++
				given++
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return out
}

// allocate splits one rule's n between its failed (nf answers) and passed
// (np answers) strata.
func allocate(n, nf, np int, failShare float64) (f, p int) {
	f = min(nf, int(math.Round(float64(n)*failShare)))
	p = min(np, n-f)
	f = min(nf, n-p) // a short passed stratum gives its surplus back
	// One label in a partly drawn stratum leaves its variance undefined.
	if f == 1 && nf > 1 && p >= 3 {
		f, p = 2, p-1
	}
	if p == 1 && np > 1 && f >= 3 {
		f, p = f-1, 2
	}
	return f, p
}

func indexKeys(keys []string) map[string]int {
	m := make(map[string]int, len(keys))
	for i, k := range keys {
		m[k] = i
	}
	return m
}

// Stored form of a label set's metadata: flat strings for what a person may
// want to read with a bbolt browser, JSON for the strata.
const labelSetFormat = "1"

type storedStratum struct {
	Name string   `json:"name"`
	Rule int      `json:"rule"`
	Fail bool     `json:"fail"`
	N    int      `json:"N"`
	Keys []string `json:"keys"`
}

func (s *LabelSet) meta() (map[string]string, error) {
	kinds := make([]string, len(s.Options.Kinds))
	for i, k := range s.Options.Kinds {
		kinds[i] = string(k)
	}
	m := map[string]string{
		"format":     labelSetFormat,
		"seed":       strconv.FormatInt(s.Options.Seed, 10),
		"n":          strconv.Itoa(s.Options.N),
		"rule":       strconv.Itoa(s.Options.Line),
		"kinds":      strings.Join(kinds, ","),
		"stratify":   strconv.FormatBool(s.Options.Stratify),
		"fail_share": strconv.FormatFloat(s.Options.FailShare, 'g', -1, 64),
		"created":    s.Created.Format(time.RFC3339Nano),
		"population": strconv.Itoa(s.Population),
	}
	if s.Options.Variant != "" {
		m["variant"] = s.Options.Variant
	}
	if s.Options.Unlabelled {
		m["unlabelled"] = "true"
	}
	versions := map[string]string{}
	for line, v := range s.PredicateVersions {
		versions[strconv.Itoa(line)] = v
	}
	b, err := json.Marshal(versions)
	if err != nil {
		return nil, fmt.Errorf("audit: encode label set %s: %w", s.Name, err)
	}
	m["predicate_versions"] = string(b)
	if s.Stratified() {
		var strata []storedStratum
		for _, st := range s.Strata {
			strata = append(strata, storedStratum{Name: st.Name, Rule: st.Line, Fail: st.Fail, N: st.N, Keys: s.strataKeys[st.Name]})
		}
		if b, err = json.Marshal(strata); err != nil {
			return nil, fmt.Errorf("audit: encode label set %s: %w", s.Name, err)
		}
		m["strata"] = string(b)
	}
	return m, nil
}

// LoadLabelSet reads the named label set; ok is false when there is none.
// A set whose metadata cannot be read is an error: estimating recall from a
// set whose design is unknown would give wrong numbers.
func LoadLabelSet(st audit.Reader, name string) (set LabelSet, ok bool, err error) {
	names, err := st.LabelSets()
	if err != nil {
		return LabelSet{}, false, err
	}
	if !slices.Contains(names, name) {
		return LabelSet{}, false, nil
	}
	keys, meta, err := st.LabelSet(name)
	if err != nil {
		return LabelSet{}, false, err
	}
	set, err = decodeLabelSet(name, keys, meta)
	return set, err == nil, err
}

func decodeLabelSet(name string, keys []string, meta map[string]string) (LabelSet, error) {
	bad := func(field string, err error) (LabelSet, error) {
		return LabelSet{}, fmt.Errorf("audit: label set %s: unreadable %s %q: %v", name, field, meta[field], err)
	}
	if f := meta["format"]; f != labelSetFormat {
		return LabelSet{}, fmt.Errorf("audit: label set %s: format %q: %w", name, f, errForeignSet)
	}
	s := LabelSet{Name: name, Keys: keys, index: indexKeys(keys), PredicateVersions: map[int]string{},
		strataKeys: map[string][]string{}}
	o := &s.Options
	o.Name = name
	var err error
	if o.Seed, err = strconv.ParseInt(meta["seed"], 10, 64); err != nil {
		return bad("seed", err)
	}
	if o.N, err = strconv.Atoi(meta["n"]); err != nil {
		return bad("n", err)
	}
	if o.Line, err = strconv.Atoi(meta["rule"]); err != nil {
		return bad("rule", err)
	}
	for _, k := range strings.Split(meta["kinds"], ",") {
		kind, ok := model.ParseKind(k)
		if !ok {
			return bad("kinds", fmt.Errorf("unknown kind %q", k))
		}
		o.Kinds = append(o.Kinds, kind)
	}
	switch o.Variant = meta["variant"]; o.Variant {
	case "", VariantDeleted, VariantBaseline, VariantJoint:
	default:
		return bad("variant", fmt.Errorf("unknown variant"))
	}
	if u, ok := meta["unlabelled"]; ok {
		if o.Unlabelled, err = strconv.ParseBool(u); err != nil {
			return bad("unlabelled", err)
		}
	}
	if o.Stratify, err = strconv.ParseBool(meta["stratify"]); err != nil {
		return bad("stratify", err)
	}
	if o.FailShare, err = strconv.ParseFloat(meta["fail_share"], 64); err != nil {
		return bad("fail_share", err)
	}
	if s.Created, err = time.Parse(time.RFC3339Nano, meta["created"]); err != nil {
		return bad("created", err)
	}
	if s.Population, err = strconv.Atoi(meta["population"]); err != nil {
		return bad("population", err)
	}
	var versions map[string]string
	if err := json.Unmarshal([]byte(meta["predicate_versions"]), &versions); err != nil {
		return bad("predicate_versions", err)
	}
	for line, v := range versions {
		n, err := strconv.Atoi(line)
		if err != nil {
			return bad("predicate_versions", err)
		}
		s.PredicateVersions[n] = v
	}
	if o.Stratify {
		var strata []storedStratum
		if err := json.Unmarshal([]byte(meta["strata"]), &strata); err != nil {
			return bad("strata", err)
		}
		drawn := 0
		for _, st := range strata {
			for _, k := range st.Keys {
				if !s.Contains(k) {
					return bad("strata", fmt.Errorf("key %.12s of stratum %s is not in the set", k, st.Name))
				}
			}
			if len(st.Keys) > st.N {
				return bad("strata", fmt.Errorf("stratum %s: %d drawn of %d", st.Name, len(st.Keys), st.N))
			}
			s.Strata = append(s.Strata, LabelStratum{Name: st.Name, Line: st.Rule, Fail: st.Fail, N: st.N, Drawn: len(st.Keys)})
			s.strataKeys[st.Name] = st.Keys
			drawn += len(st.Keys)
		}
		if drawn != len(keys) {
			return bad("strata", fmt.Errorf("strata hold %d keys, the set %d", drawn, len(keys)))
		}
	}
	return s, nil
}

// loadLabelSets reads every label set src holds, when it can hold any.
// LoadLabelSets reads every label set auditor drew; sets stored by other
// tools (a bare list of keys) are skipped.
func LoadLabelSets(r audit.Reader) ([]LabelSet, error) {
	names, err := r.LabelSets()
	if err != nil {
		return nil, err
	}
	var out []LabelSet
	for _, name := range names {
		s, ok, err := LoadLabelSet(r, name)
		if errors.Is(err, errForeignSet) {
			// Not drawn by DrawLabelSample (another tool's list of keys):
			// it has no design to weight by, and its labels count as any.
			continue
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// CombineRule says, for people, how several label sets make one estimate
// of a grader's quality: the rule MeasureGrader implements, and the only
// one; every screen and report shows the numbers it gives.
const CombineRule = "every first blind label of a rule's answers counts, each answer once: label sets combine cell by cell " +
	"(answers alike in the stratum every set drew them from, uniform within), cells weighted by their sizes; " +
	"a cell with answers and no label leaves the estimate unmeasured; review adjudications never count"

// SetQuality is the current predicate of one rule measured on a label set.
type SetQuality struct {
	RuleIndex int
	Rule      *audit.Rule
	Quality   GraderQuality
}

// PredicateVersion is one version of a rule's predicate and how it fares
// against the labels: re-scoring stored answers with each version's stored
// grades shows what an edit bought ("24/31 to 29/31").
type PredicateVersion struct {
	Version   string
	FirstSeen time.Time // zero when the version was current before history was kept
	Current   bool
	Quality   GraderQuality // Quality.Ungraded counts labelled answers this version never graded
}

type seenVersion struct {
	Version   string    `json:"version"`
	FirstSeen time.Time `json:"first_seen"`
}

func versionsKey(line int) string { return fmt.Sprintf("predicate-versions:%d", line) }

func readVersions(st audit.Reader, line int) ([]seenVersion, error) {
	raw, ok, err := st.Meta(versionsKey(line))
	if err != nil || !ok {
		return nil, err
	}
	var vs []seenVersion
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		return nil, fmt.Errorf("audit: predicate history of line %d is unreadable: %w", line, err)
	}
	return vs, nil
}

// RecordPredicateVersion adds a predicate version to the history of
// versions seen for the rule on line (a meta record per line), with now as
// its first-seen time, unless it is already there. Call it for every rule
// whenever an audit is opened, and for an edited predicate when it is
// applied, so edits are dated.
func RecordPredicateVersion(st audit.Store, line int, version string, now time.Time) error {
	{
		vs, err := readVersions(st, line)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(vs, func(v seenVersion) bool { return v.Version == version }) {
			return nil
		}
		vs = append(vs, seenVersion{Version: version, FirstSeen: now.UTC()})
		b, err := json.Marshal(vs)
		if err != nil {
			return fmt.Errorf("audit: record predicate version of line %d: %w", line, err)
		}
		return st.SetMeta(versionsKey(line), string(b))
	}
}

// PredicateHistory returns every recorded version of the predicate of the
// rule on the given line, oldest first, each measured against labels with
// the grades it gave (stored grades of old versions are kept, so nothing is
// re-run). cur is the current version. Every blind label of the rule
// counts, the label sets combined as MeasureGrader combines them (sets and
// pop are the audit's). Every model is pooled. The current version is included
// even if it was never recorded.
func PredicateHistory(st audit.Reader, p *audit.Plan, line int, cur string, labels map[string]model.Label, sets []LabelSet, pop Population) ([]PredicateVersion, error) {
	ri := p.RuleIndex(line)
	if ri < 0 {
		return nil, fmt.Errorf("audit: predicate history: line %d is not audited (audited lines: %s)", line, p.AuditedLines())
	}
	vs, err := readVersions(st, line)
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(vs, func(v seenVersion) bool { return v.Version == cur }) {
		vs = append(vs, seenVersion{Version: cur})
	}
	out := make([]PredicateVersion, 0, len(vs))
	for _, v := range vs {
		grades, err := st.GradesFor(model.PredicateGrader, v.Version)
		if err != nil {
			return nil, err
		}
		q := MeasureGrader(p, Grades{Name: model.PredicateGrader, Version: v.Version, ByKey: grades}, labels,
			QualityScope{Rule: ri, Model: -1, Sets: sets, Population: pop})
		out = append(out, PredicateVersion{Version: v.Version, FirstSeen: v.FirstSeen, Current: v.Version == cur, Quality: q})
	}
	return out, nil
}

// LabellerAgreement is how two labellers agree on the answers both
// labelled, each by their own latest label.
type LabellerAgreement struct {
	A, B string
	// Both said violation, only A did, only B did, neither did.
	Both, OnlyA, OnlyB, Neither int
	N                           int
	Agreement                   float64 // raw agreement p_o
	Kappa, KappaSE              float64
	// KappaDefined is false when kappa is undefined (no shared answers, or
	// both gave every answer the same single label).
	KappaDefined bool
	// Disagreements are the keys the two labelled differently, in the order
	// of keys (sorted when keys is nil).
	Disagreements []string
}

// String formats the agreement as "ana vs ben: kappa 0.77 (SE 0.08), agree
// 53/60 = 0.88, 7 disagreements".
func (a LabellerAgreement) String() string {
	if a.N == 0 {
		return fmt.Sprintf("%s vs %s: no answers labelled by both", a.A, a.B)
	}
	k := "kappa undefined (one label for everything)"
	if a.KappaDefined {
		k = fmt.Sprintf("kappa %.2f (SE %.2f)", a.Kappa, a.KappaSE)
	}
	noun := "disagreements"
	if len(a.Disagreements) == 1 {
		noun = "disagreement"
	}
	return fmt.Sprintf("%s vs %s: %s, agree %d/%d = %.2f, %d %s", a.A, a.B, k,
		a.Both+a.Neither, a.N, a.Agreement, len(a.Disagreements), noun)
}

// CompareLabellers compares two labellers' labels (each their latest label
// per answer, as store.Store.LabelsByLabeller gives them) on keys, or on
// every answer both labelled when keys is nil: Cohen's kappa with its
// standard error, raw agreement and the disagreeing answers.
func CompareLabellers(nameA string, a map[string]model.Label, nameB string, b map[string]model.Label, keys []string) LabellerAgreement {
	out := LabellerAgreement{A: nameA, B: nameB}
	if keys == nil {
		for k := range a {
			if _, ok := b[k]; ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
	}
	for _, k := range keys {
		x, okA := a[k]
		y, okB := b[k]
		if !okA || !okB {
			continue
		}
		switch {
		case x.Violation && y.Violation:
			out.Both++
		case x.Violation:
			out.OnlyA++
			out.Disagreements = append(out.Disagreements, k)
		case y.Violation:
			out.OnlyB++
			out.Disagreements = append(out.Disagreements, k)
		default:
			out.Neither++
		}
	}
	out.N = out.Both + out.OnlyA + out.OnlyB + out.Neither
	if out.N > 0 {
		out.Agreement = float64(out.Both+out.Neither) / float64(out.N)
		if k, _, _, se, err := stats.Kappa(out.Both, out.OnlyA, out.OnlyB, out.Neither); err == nil {
			out.Kappa, out.KappaSE, out.KappaDefined = k, se, true
		}
	}
	return out
}

// SetReport is what `auditor label --show` reports about a label set: the
// set, how far labelling has come, each rule's current predicate measured
// on it with the recall of every predicate version seen, and how the
// labellers agree.
type SetReport struct {
	Set    LabelSet
	Labels map[string]model.Label // the truth measured against
	Who    string                 // whose labels those are, for people: "current labels"
	Rules  []SetRuleReport
	// Labellers compares every pair of people who labelled answers of the
	// set; empty with fewer than two.
	Labellers []LabellerAgreement
}

// SetRuleReport is one rule's predicate measured on a label set.
type SetRuleReport struct {
	SetQuality
	// Versions holds every recorded version of the predicate, measured on
	// the same labels, oldest first.
	Versions []PredicateVersion
}

// DeclareRandom stores, as the label set opts.Name, labels drawn at random
// elsewhere (import-labels --design random): keys are the answers the
// labels are of, a simple random sample, as the person who drew them
// declares, of the answers opts' frame covers (a rule, kinds, a variant),
// given no earlier than created. A label in no declared design counts
// nowhere (evidence.Tally.Labels); declaring one is a statement about how
// its answers were chosen, which auditor cannot check. Keys outside the
// frame are left out and returned. A set of that name already stored is
// an error wrapping ErrLabelSetExists.
func DeclareRandom(st audit.Store, p *audit.Plan, t Graded, opts SampleOptions, keys []string, created time.Time) (LabelSet, []string, error) {
	opts.Stratify, opts.Unlabelled = false, false
	opts.N = max(len(keys), 1)
	opts = opts.withDefaults()
	if err := opts.validate(p); err != nil {
		return LabelSet{}, nil, err
	}
	if _, ok, err := LoadLabelSet(st, opts.Name); err != nil {
		return LabelSet{}, nil, err
	} else if ok {
		return LabelSet{}, nil, fmt.Errorf("audit: label set %q exists; name the declared set with --set: %w", opts.Name, ErrLabelSetExists)
	}
	pop, frame := population(p, t, opts)
	var in, outside []string
	seen := map[string]bool{}
	for _, k := range keys {
		switch _, ok := pop[k]; {
		case seen[k]:
		case ok:
			in = append(in, k)
		default:
			outside = append(outside, k)
		}
		seen[k] = true
	}
	if len(in) == 0 {
		return LabelSet{}, outside, fmt.Errorf("audit: label set %s: none of the %d labelled answers is in %s", opts.Name, len(keys), opts.Describe())
	}
	opts.N = len(in)
	set := LabelSet{Name: opts.Name, Options: opts, Created: created.UTC(), Population: len(frame), Keys: in,
		index: indexKeys(in), PredicateVersions: map[int]string{}, strataKeys: map[string][]string{}}
	for _, m := range pop {
		r := p.Audit.Rules[m.rule]
		set.PredicateVersions[r.Line] = t.PredicateVersion(m.rule)
	}
	meta, err := set.meta()
	if err != nil {
		return LabelSet{}, nil, err
	}
	if err := st.PutLabelSet(set.Name, set.Keys, meta); err != nil {
		return LabelSet{}, nil, fmt.Errorf("audit: store label set %s: %w", set.Name, err)
	}
	return set, outside, nil
}

package labels

import (
	"fmt"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// Several label sets make one estimate, never a choice between them (STATS
// section 6, "Several label sets"). Each set drew uniformly within its own
// strata (a simple random set within everything it covers, a stratified
// set within each rule's failed and passed answers, a set for the verdict
// within one variant's provoking answers). Cut the answers into cells
// where every set that holds a label among them drew uniformly: answers
// alike in which stratum of each set they fell in. Within such a cell the
// union of every set's labels, each answer counted once, is a uniform
// sample of the cell, so a cell's share is estimated from its labels and
// the cells are weighted by their sizes. Labels in no declared design
// never reach here: evidence.Tally.Labels leaves them out (a set declared
// with DeclareRandom covers labels drawn at random elsewhere). A cell with
// answers and no label is said, not filled.

// Population is what placing answers in cells needs to know: which calls
// are answered, and how a predicate version graded them (a stratified set
// put each answer in the stratum its predicate's verdict chose, so the
// answers it did not draw are placed by the same verdict). evidence.Tally
// satisfies it.
type Population interface {
	Answered(key string) bool
	// GradesAt returns the grades a predicate version gave, by response
	// key; nil when that version's grades are not loaded.
	GradesAt(version string) map[string]model.Grade
}

// cells places the answers of one rule in the cells within which every
// relevant label set drew uniformly.
type cells struct {
	p    *audit.Plan
	pop  Population
	sets []*LabelSet     // the sets holding a label among the answers, by name
	opts []SampleOptions // each set's options, defaults filled in
	// drawn maps each set's drawn keys to their stratum name, by set.
	drawn []map[string]string
}

// newCells keeps the sets that gave a label among keys: a label of one of
// the set's answers given since the set was drawn (one with no time, from
// before labels had one, counts too). A set that gave none contributes
// nothing to the union, so its design does not matter: a stratified set
// drawn over answers labelled before it, by a random sample or an import,
// leaves those labels the uniform sample they were. (Drawing a set, with
// no new label, once cut 100 clean random labels into strata and raised
// the labels route's bound from 4.3% to 15.9%.)
func newCells(p *audit.Plan, pop Population, sets []LabelSet, labels map[string]model.Label, keys []string) *cells {
	c := &cells{p: p, pop: pop}
	for i := range sets {
		s := &sets[i]
		gave := func(k string) bool {
			l, ok := labels[k]
			return ok && s.Contains(k) && (l.At.IsZero() || !l.At.Before(s.Created))
		}
		if !slices.ContainsFunc(keys, gave) {
			continue
		}
		c.sets = append(c.sets, s)
	}
	slices.SortStableFunc(c.sets, func(a, b *LabelSet) int { return strings.Compare(a.Name, b.Name) })
	c.drawn = c.drawn[:0]
	for _, s := range c.sets {
		c.opts = append(c.opts, s.Options.withDefaults())
		m := map[string]string{}
		for _, st := range s.Strata {
			for _, k := range s.strataKeys[st.Name] {
				m[k] = st.Name
			}
		}
		c.drawn = append(c.drawn, m)
	}
	return c
}

// of names the cell of an answer: the stratum it falls in under every
// relevant set, joined; "" when no set is relevant (one cell).
func (c *cells) of(key string) string {
	if len(c.sets) == 0 {
		return ""
	}
	parts := make([]string, len(c.sets))
	for i, s := range c.sets {
		parts[i] = c.stratum(i, s, key)
	}
	return strings.Join(parts, " · ")
}

// stratum is the stratum a set put an answer in, or would have had it
// drawn it: the set's own record for a drawn answer; otherwise the first
// cell of the plan the set's population would have taken it from (as
// DrawLabelSample's population does), and for a stratified set the
// verdict of that rule's predicate at the set's version. An answer the set
// could not have drawn is "outside <set>".
func (c *cells) stratum(i int, s *LabelSet, key string) string {
	if name, ok := c.drawn[i][key]; ok {
		return name
	}
	o := c.opts[i]
	for _, ci := range c.p.ByKey[key] {
		cell := c.p.Cells[ci]
		r := c.p.Audit.Rules[cell.Rule]
		if !r.HasPredicate() || (o.Line != 0 && r.Line != o.Line) ||
			!slices.Contains(o.Kinds, r.Cases[cell.Case].Kind) || !o.variantHolds(cell) {
			continue
		}
		version, ok := s.PredicateVersions[r.Line]
		if !ok {
			continue
		}
		g, graded := c.pop.GradesAt(version)[key]
		if !graded || g.Unparseable {
			continue
		}
		if !s.Stratified() {
			return "in " + s.Name
		}
		return stratumName(r.Line, !g.Pass)
	}
	if s.Contains(key) {
		return "in " + s.Name // drawn, though the plan no longer places it
	}
	return "outside " + s.Name
}

// stratumName is the name DrawLabelSample gives a rule's stratum.
func stratumName(line int, failed bool) string {
	if failed {
		return fmt.Sprintf("L%d failed", line)
	}
	return fmt.Sprintf("L%d passed", line)
}

// cellName is a cell's name for people: "all answers" for the one cell of
// labels drawn uniformly.
func cellName(name string) string {
	if name == "" {
		return "all answers"
	}
	return name
}

// Sets names the label sets that take part, in name order.
func (c *cells) names() []string {
	out := make([]string, len(c.sets))
	for i, s := range c.sets {
		out[i] = s.Name
	}
	return out
}

// VariantLabels returns the blind labels of one variant's provoking
// answers of a rule (and model; every model when scope.Model is -1), cut
// into the cells the label sets drew uniformly within: the DELETE labels
// route's evidence (model.VariantLabels). deleted picks the rule's variant,
// else the baseline. Every answered call counts, graded or not: the route
// needs no grader. With scope.Grades set, each stratum also counts the
// labels the predicate got wrong (model.GradedLabels): a labelled
// violation it passed or did not grade, a labelled clean answer it failed
// or did not grade.
func VariantLabels(p *audit.Plan, scope QualityScope, labels map[string]model.Label, deleted bool) model.VariantLabels {
	rule := p.Audit.Rules[scope.Rule]
	var keys []string
	seen := map[string]bool{}
	for _, ci := range p.CellsOfRule(scope.Rule) {
		c := p.Cells[ci]
		if c.Deleted != deleted || (scope.Model >= 0 && c.Model != scope.Model) || !rule.Cases[c.Case].Kind.Provoking() ||
			seen[c.Key] || scope.Population == nil || !scope.Population.Answered(c.Key) {
			continue
		}
		seen[c.Key] = true
		keys = append(keys, c.Key)
	}
	cs := newCells(p, scope.Population, scope.Sets, labels, keys)
	index := map[string]int{}
	var out model.VariantLabels
	for _, k := range keys {
		name := cs.of(k)
		i, ok := index[name]
		if !ok {
			i = len(out.Strata)
			index[name] = i
			out.Strata = append(out.Strata, stats.LabelledStratum{})
		}
		st := &out.Strata[i]
		st.N++
		if scope.Grades != nil && len(out.Graded) < len(out.Strata) {
			out.Graded = append(out.Graded, model.GradedLabels{})
		}
		l, ok := labels[k]
		if !ok {
			continue
		}
		st.Labelled++
		if l.Violation {
			st.Violations++
		}
		if scope.Grades == nil {
			continue
		}
		g, graded := scope.Grades[k]
		graded = graded && !g.Unparseable
		switch {
		case l.Violation && (!graded || g.Pass):
			out.Graded[i].Missed++
		case !l.Violation && (!graded || !g.Pass):
			out.Graded[i].FalseAlarms++
		}
	}
	return out
}

package evidence

import (
	"slices"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// AddLabelSet makes a newly drawn set known to the tally (replacing a set
// of the same name), so results can weight its labels.
func (t *Tally) AddLabelSet(s labels.LabelSet) {
	for i := range t.sets {
		if t.sets[i].Name == s.Name {
			t.sets[i] = s
			return
		}
	}
	t.sets = append(t.sets, s)
}

// LabelSets returns the label sets the tally knows, by name.
func (t *Tally) LabelSets() []labels.LabelSet { return slices.Clone(t.sets) }

// Labels returns the truth graders are measured against: every response's
// blind label by its first labeller (model.LabelBook). The map is the
// tally's own: do not modify it.
func (t *Tally) Labels() map[string]model.Label { return t.book.Truth() }

// SeenLabels returns the review adjudications (labels given with the
// graders' verdicts in view), by key. They never enter recall. The map is
// the tally's own: do not modify it.
func (t *Tally) SeenLabels() map[string]model.Label { return t.book.Seen() }

// LabelBook returns every label record the tally knows, resolved: each
// labeller's own labels, undo included. It is the tally's own.
func (t *Tally) LabelBook() *model.LabelBook { return t.book }

// chooseSet picks the design behind a rule's quality: the stratified set
// with the most labelled answers in the rule's strata (ties go to the name
// first in order), or nil when no stratified set has any, in which case
// every label counts as a simple random sample. Labels of one stratified
// set are never mixed with others: their weights would be wrong. A set
// whose every stratum is now labelled in full (a census: labels beyond the
// sample cover the whole population) needs no weights, so nil is returned.
func (t *Tally) chooseSet(ri int) *labels.LabelSet {
	line := t.plan.Audit.Rules[ri].Line
	best := labels.ChooseSet(t.sets, line, t.Labels())
	if best == nil || !t.censusOf(ri, best.Options.Kinds) {
		return best
	}
	return nil
}

// censusOf reports whether every graded answer of a rule's cases of the
// given kinds is labelled.
func (t *Tally) censusOf(ri int, kinds []model.Kind) bool {
	rule := t.plan.Audit.Rules[ri]
	grades := t.PredicateGrades(ri)
	for _, ci := range t.plan.CellsOfRule(ri) {
		c := t.plan.Cells[ci]
		if !slices.Contains(kinds, rule.Cases[c.Case].Kind) {
			continue
		}
		if g, ok := grades[c.Key]; ok && !g.Unparseable {
			if _, labelled := t.Labels()[c.Key]; !labelled {
				return false
			}
		}
	}
	return true
}

// RuleQuality is a rule's predicate quality for one model exactly as the
// verdict uses it: every blind label of the rule, label sets combined by
// labels.CombineRule. Screens that show one set show this beside it.
func (t *Tally) RuleQuality(ri, mi int) labels.GraderQuality { return t.ruleQuality(ri, mi) }

// ruleQuality measures a rule's current predicate for one model, using the
// stratified set chosen for the rule when there is one.
func (t *Tally) ruleQuality(ri, mi int) labels.GraderQuality {
	g := labels.Grades{Name: model.PredicateGrader, Version: t.PredicateVersion(ri), ByKey: t.PredicateGrades(ri)}
	set := t.chooseSet(ri)
	return labels.MeasureGrader(t.plan, g, t.Labels(), labels.QualityScope{Rule: ri, Model: mi, Set: set, Complete: true})
}

// MeasureSet measures each rule's current predicate on the labelled answers
// of a set, every model pooled: what a labelling screen shows after each
// label. labels are the truth to use (one labeller's, or nil for the
// tally's current labels).
func (t *Tally) MeasureSet(s *labels.LabelSet, labelled map[string]model.Label) []labels.SetQuality {
	if labelled == nil {
		labelled = t.Labels()
	}
	var out []labels.SetQuality
	for ri, r := range t.plan.Audit.Rules {
		if s.Options.Line != 0 && r.Line != s.Options.Line {
			continue
		}
		if _, in := s.PredicateVersions[r.Line]; !in {
			continue
		}
		g := labels.Grades{Name: model.PredicateGrader, Version: t.PredicateVersion(ri), ByKey: t.PredicateGrades(ri)}
		out = append(out, labels.SetQuality{RuleIndex: ri, Rule: r,
			Quality: labels.MeasureGrader(t.plan, g, labelled, labels.QualityScope{Rule: ri, Model: -1, Set: s})})
	}
	return out
}

// BuildSetReport measures every rule's current predicate on set against
// labelled (the tally's current labels when nil; who names them), with the
// recall of every predicate version seen, and compares the labellers of
// the set's answers.
func BuildSetReport(st audit.Reader, t *Tally, set labels.LabelSet, labelled map[string]model.Label, who string) (labels.SetReport, error) {
	if labelled == nil {
		labelled = t.Labels()
	}
	r := labels.SetReport{Set: set, Labels: labelled, Who: who}
	for _, sq := range t.MeasureSet(&set, labelled) {
		hist, err := labels.PredicateHistory(st, t.plan, sq.Rule.Line, t.PredicateVersion(sq.RuleIndex), labelled, &set)
		if err != nil {
			return r, err
		}
		r.Rules = append(r.Rules, labels.SetRuleReport{SetQuality: sq, Versions: hist})
	}
	by := t.book.ByLabeller()
	var names []string
	for name, ls := range by {
		if slices.ContainsFunc(set.Keys, func(k string) bool { _, ok := ls[k]; return ok }) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			r.Labellers = append(r.Labellers, labels.CompareLabellers(names[i], by[names[i]], names[j], by[names[j]], set.Keys))
		}
	}
	return r, nil
}

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
	t.designed = nil
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
// blind label by its first labeller (model.LabelBook) given in a declared
// design, a label set holding its answer drawn before it was given. A label
// in no declared design (imported from labels picked by hand) is never
// taken for a random sample: it counts nowhere until its design is
// declared (import-labels --design random). The map is the tally's own:
// do not modify it.
func (t *Tally) Labels() map[string]model.Label {
	if t.designed == nil {
		truth := t.book.Truth()
		t.designed = make(map[string]model.Label, len(truth))
		for k, l := range truth {
			if t.inDesign(k, l) {
				t.designed[k] = l
			}
		}
	}
	return t.designed
}

// inDesign reports whether a label was given in a declared design: a set
// holding its answer was drawn before it (a label with no time, from
// before labels had one, counts).
func (t *Tally) inDesign(key string, l model.Label) bool {
	for i := range t.sets {
		if s := &t.sets[i]; s.Contains(key) && (l.At.IsZero() || !l.At.Before(s.Created)) {
			return true
		}
	}
	return false
}

// UndesignedLabels counts the blind labels in no declared design (see
// Labels): they count nowhere.
func (t *Tally) UndesignedLabels() int { return len(t.book.Truth()) - len(t.Labels()) }

// SeenLabels returns the review adjudications (labels given with the
// graders' verdicts in view), by key. They never enter recall. The map is
// the tally's own: do not modify it.
func (t *Tally) SeenLabels() map[string]model.Label { return t.book.Seen() }

// LabelBook returns every label record the tally knows, resolved: each
// labeller's own labels, undo included. It is the tally's own.
func (t *Tally) LabelBook() *model.LabelBook { return t.book }

// GradesAt returns the grades a grader version gave, by response key; nil
// when the tally has not loaded that version (it loads every current
// predicate's and judge's, and those the label sets were drawn with).
func (t *Tally) GradesAt(version string) map[string]model.Grade { return t.grades[version] }

// qualityScope is the scope every measurement of a rule's graders uses:
// every blind label, the label sets combined (labels.MeasureGrader).
func (t *Tally) qualityScope(ri, mi int) labels.QualityScope {
	return labels.QualityScope{Rule: ri, Model: mi, Sets: t.sets, Population: t}
}

// RuleQuality is a rule's predicate quality for one model (-1: every
// model pooled) exactly as the verdict uses it: every blind label of the
// rule, label sets combined. Every screen shows this.
func (t *Tally) RuleQuality(ri, mi int) labels.GraderQuality {
	return t.ruleQuality(ri, mi, t.Labels())
}

// ruleQuality measures a rule's current predicate for one model against
// labelled.
func (t *Tally) ruleQuality(ri, mi int, labelled map[string]model.Label) labels.GraderQuality {
	g := labels.Grades{Name: model.PredicateGrader, Version: t.PredicateVersion(ri), ByKey: t.PredicateGrades(ri)}
	return labels.MeasureGrader(t.plan, g, labelled, t.qualityScope(ri, mi))
}

// MeasureGrader measures any grader (a judge, an edited predicate) on rule
// ri for model mi (-1: every model) against labelled, the label sets
// combined as for the verdict.
func (t *Tally) MeasureGrader(ri, mi int, g labels.Grades, labelled map[string]model.Label) labels.GraderQuality {
	return labels.MeasureGrader(t.plan, g, labelled, t.qualityScope(ri, mi))
}

// VariantLabels returns the blind labels of a rule's provoking answers in
// one variant (deleted: the rule's variant) for one model, for the
// verdict's labels route.
func (t *Tally) VariantLabels(ri, mi int, deleted bool) model.VariantLabels {
	scope := t.qualityScope(ri, mi)
	if t.plan.Audit.Rules[ri].HasPredicate() {
		scope.Grades = t.PredicateGrades(ri)
	}
	return labels.VariantLabels(t.plan, scope, t.Labels(), deleted)
}

// MeasureSet measures the current predicate of each rule a set covers,
// every model pooled, against labelled (the tally's current labels when
// nil): what a labelling screen shows after each label. The numbers are
// the combined ones, every blind label of the rule counted, not the set's
// alone: one rule for every screen and report.
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
		out = append(out, labels.SetQuality{RuleIndex: ri, Rule: r, Quality: t.ruleQuality(ri, -1, labelled)})
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
		hist, err := labels.PredicateHistory(st, t.plan, sq.Rule.Line, t.PredicateVersion(sq.RuleIndex), labelled, t.sets, t)
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

package audit

import (
	"context"
	"reflect"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// SetPredicate with the grades an edited predicate gives gives the results
// Aggregate gives after the edit and a Regrade, and keeps the old grades.
func TestTally_SetPredicate_SameAsRegrade(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 3)
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	rule := p.Audit.Rules[0]
	old := rule.Predicate
	oldGrades := len(tally.GraderGrades(old.Version))
	edited, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)roadmap'\nreason = \"mentions the roadmap\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	grades := map[string]model.Grade{}
	for _, ci := range p.cellsOfRule(0) {
		c := p.Cells[ci]
		r, err := st.Response(c.Key)
		if err != nil {
			t.Fatal(err)
		}
		grades[c.Key] = edited.Grade(rule.Cases[c.Case], r.Text)
	}
	tally.SetPredicate(0, edited, grades)
	if rule.Predicate != edited {
		t.Fatal("the rule's predicate was not swapped")
	}
	if got := len(tally.GraderGrades(old.Version)); got != oldGrades {
		t.Fatalf("old version's grades: %d, want %d kept", got, oldGrades)
	}
	got, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewGrader(context.Background(), p).Regrade(st); err != nil {
		t.Fatal(err)
	}
	want, err := Aggregate(p, st)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.Rules {
		g, w := got.Rules[i], want.Rules[i]
		if !reflect.DeepEqual(g.Cases, w.Cases) || g.Verdict.Decision != w.Verdict.Decision {
			t.Errorf("rule %d model %d differs from Regrade then Aggregate", g.Rule.Line, g.Model)
		}
	}
}

func TestTally_SetPredicate_Ignores(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 1)
	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	before := p.Audit.Rules[0].Predicate
	tally.SetPredicate(-1, &model.Predicate{Version: "x"}, nil)
	tally.SetPredicate(len(p.Audit.Rules), &model.Predicate{Version: "x"}, nil)
	tally.SetPredicate(0, nil, nil)
	if p.Audit.Rules[0].Predicate != before || tally.GraderGrades("x") != nil {
		t.Fatal("an out-of-range rule or a nil predicate changed the tally")
	}
}

package evidence

import (
	"reflect"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// SetPredicate with the grades an edited predicate gives gives the results
// Aggregate gives after the edit and a Regrade, and keeps the old grades.
func TestTally_SetPredicate_SameAsRegrade(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 3)
	p, st := fx.Plan, fx.Store
	tally, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	rule := p.Audit.Rules[0]
	old := fx.Preds.Of(0)
	oldGrades := len(tally.GraderGrades(old.Version))
	edited, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)roadmap'\nreason = \"mentions the roadmap\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	grades := map[string]model.Grade{}
	for _, ci := range p.CellsOfRule(0) {
		c := p.Cells[ci]
		r, err := st.Response(c.Key)
		if err != nil {
			t.Fatal(err)
		}
		grades[c.Key] = edited.Grade(rule.Cases[c.Case], r.Text)
	}
	tally.SetPredicate(0, edited, grades)
	if fx.Preds.Of(0) != edited || tally.PredicateVersion(0) != edited.Version {
		t.Fatal("the rule's predicate was not swapped")
	}
	if rule.Loaded != old {
		t.Fatal("the edit changed the plan")
	}
	if got := len(tally.GraderGrades(old.Version)); got != oldGrades {
		t.Fatalf("old version's grades: %d, want %d kept", got, oldGrades)
	}
	got, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	// A tally read afresh from the store with the edited predicate and
	// re-graded counts the same.
	fresh, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Regrade(fx.Grader(t), st); err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Results()
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
	fx := audittest.Demo(t, 1)
	p, st := fx.Plan, fx.Store
	tally, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	before := fx.Preds.Of(0)
	tally.SetPredicate(-1, &model.Predicate{Version: "x"}, nil)
	tally.SetPredicate(len(p.Audit.Rules), &model.Predicate{Version: "x"}, nil)
	tally.SetPredicate(0, nil, nil)
	if fx.Preds.Of(0) != before || tally.GraderGrades("x") != nil {
		t.Fatal("an out-of-range rule or a nil predicate changed the tally")
	}
}

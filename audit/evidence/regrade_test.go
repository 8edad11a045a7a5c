package evidence

import (
	"reflect"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// Tally.Regrade then Results gives what a tally read afresh from the store
// gives, because it stores the grades it records.
func TestTally_Regrade_StoresWhatItCounts(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 4)
	p, st := fx.Plan, fx.Store
	rule := p.Audit.Rules[0]
	edited, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)roadmap'\nreason = \"mentions the roadmap\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fx.Preds.Set(0, edited)

	tally, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tally.GraderGrades(edited.Version)); got != 0 {
		t.Fatalf("edited predicate has %d grades before regrading", got)
	}
	n, err := tally.Regrade(fx.Grader(t), st)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.GradesFor(model.PredicateGrader, edited.Version)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || len(stored) != n {
		t.Fatalf("regraded %d, stored %d", n, len(stored))
	}
	if !reflect.DeepEqual(tally.GraderGrades(edited.Version), stored) {
		t.Error("the tally's grades differ from the stored ones")
	}
	got, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	// A fresh tally finds nothing left to grade and counts the same.
	fresh, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := fresh.Regrade(fx.Grader(t), st); err != nil || n != 0 {
		t.Fatalf("Regrade of a fresh tally: %d, %v", n, err)
	}
	want, err := fresh.Results()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Rules) != len(want.Rules) {
		t.Fatalf("%d rule results, want %d", len(got.Rules), len(want.Rules))
	}
	for i := range want.Rules {
		g, w := got.Rules[i], want.Rules[i]
		if !reflect.DeepEqual(g.Cases, w.Cases) || !reflect.DeepEqual(g.Verdict, w.Verdict) || g.Done != w.Done || g.Pending != w.Pending {
			t.Errorf("line %d: tally %+v %v, aggregate %+v %v", w.Rule.Line, g.Cases, g.Verdict, w.Cases, w.Verdict)
		}
	}
	if got.Rules[0].Pending != 0 {
		t.Errorf("line %d: %d pending after regrading", got.Rules[0].Rule.Line, got.Rules[0].Pending)
	}
}

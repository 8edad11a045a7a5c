package audit

import (
	"context"
	"reflect"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// RegradeTally then Tally.Results gives what Regrade then Aggregate gives,
// and stores the same grades.
func TestRegradeTally_SameAsRegradeThenAggregate(t *testing.T) {
	t.Parallel()
	p, st := runDemo(t, 4)
	rule := p.Audit.Rules[0]
	edited, err := model.ParsePredicate(rule.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)roadmap'\nreason = \"mentions the roadmap\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	rule.Predicate = edited

	tally, err := NewTally(p, st)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tally.GraderGrades(edited.Version)); got != 0 {
		t.Fatalf("edited predicate has %d grades before regrading", got)
	}
	n, err := NewGrader(context.Background(), p).RegradeTally(tally, st)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.GradesFor(PredicateGrader, edited.Version)
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
	// Regrade finds nothing left to do, so Aggregate reads the same state.
	if n, err := NewGrader(context.Background(), p).Regrade(st); err != nil || n != 0 {
		t.Fatalf("Regrade after RegradeTally: %d, %v", n, err)
	}
	want, err := Aggregate(p, st)
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

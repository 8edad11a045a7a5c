package evidence

import (
	"reflect"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// Flips by majority over samples: fixed failed on baseline and passes on
// the variant, broken the reverse; ties and one-sided cases flip nothing.
func TestCaseFlips(t *testing.T) {
	t.Parallel()
	cs := func(id string, bf, bn, vf, vn int) CaseResult {
		return CaseResult{Case: &model.Case{ID: id}, Baseline: Count{Fails: bf, N: bn}, Deleted: Count{Fails: vf, N: vn}}
	}
	got := caseFlips([]CaseResult{
		cs("fixed", 3, 5, 1, 5),     // 60% -> 20%
		cs("broken1", 0, 5, 3, 5),   // 0% -> 60%
		cs("broken2", 2, 5, 5, 5),   // 40% -> 100%
		cs("tie", 2, 4, 0, 4),       // 50% is no majority: not fixed
		cs("same", 4, 5, 3, 5),      // failed under both
		cs("one-sided", 5, 5, 0, 0), // the variant is not graded yet
	})
	want := Flips{Fixed: []string{"fixed"}, Broken: []string{"broken1", "broken2"}, Compared: 5}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flips %+v, want %+v", got, want)
	}
	if s := got.Summary(); s != "one case fixed, two broken (5 cases compared)" {
		t.Errorf("summary %q", s)
	}
	if s := (Flips{Compared: 1}).Summary(); s != "no case fixed, none broken (1 case compared)" {
		t.Errorf("summary %q", s)
	}
	if s := (Flips{Fixed: make([]string, 12), Compared: 30}).Summary(); s != "12 cases fixed, none broken (30 cases compared)" {
		t.Errorf("summary %q", s)
	}
}

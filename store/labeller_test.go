package store

import (
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

func TestStore_LabelsByLabeller_LatestPerLabeller(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	k1, k2 := testKey(1), testKey(2)
	steps := []model.Label{
		label(k1, true, "ana", testAt),
		label(k1, false, "ben", testAt.Add(time.Minute)), // ben supersedes ana as current
		label(k1, false, "ana", testAt.Add(2*time.Minute)),
		label(k1, true, "ana", testAt.Add(3*time.Minute)), // ana changes her mind back
		label(k2, false, "ben", testAt),
		label(k2, true, "", testAt.Add(time.Minute)),
	}
	for _, l := range steps {
		if err := s.PutLabel(l); err != nil {
			t.Fatal(err)
		}
	}
	s = reopen(t, s)
	got, err := s.LabelsByLabeller()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]model.Label{
		"ana": {k1: steps[3]},
		"ben": {k1: steps[1], k2: steps[4]},
		"":    {k2: steps[5]},
	}
	if len(got) != len(want) {
		t.Fatalf("labellers = %d, want %d: %+v", len(got), len(want), got)
	}
	for who, byKey := range want {
		if len(got[who]) != len(byKey) {
			t.Errorf("%q: %d labels, want %d", who, len(got[who]), len(byKey))
		}
		for k, l := range byKey {
			if !sameLabels([]model.Label{got[who][k]}, []model.Label{l}) {
				t.Errorf("%q on %.8s = %+v, want %+v", who, k, got[who][k], l)
			}
		}
	}
}

func TestStore_LabelsByLabeller_Empty(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	got, err := s.LabelsByLabeller()
	if err != nil || len(got) != 0 {
		t.Errorf("LabelsByLabeller on an empty store = %v, %v; want empty, nil", got, err)
	}
}

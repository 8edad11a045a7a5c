package store

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

func label(key string, violation bool, who string, at time.Time) model.Label {
	return model.Label{Key: key, Violation: violation, Labeller: who, Note: "", At: at}
}

func sameLabels(a, b []model.Label) bool {
	return slices.EqualFunc(a, b, func(x, y model.Label) bool {
		return x.Key == y.Key && x.Violation == y.Violation && x.Labeller == y.Labeller &&
			x.Note == y.Note && x.At.Equal(y.At)
	})
}

func TestStore_PutLabel_History(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	k := testKey(1)
	// "ab" is a prefix of "abc": their histories must not mix.
	steps := []model.Label{
		label(k, true, "ana", testAt),
		label("ab", false, "ana", testAt),
		label(k, false, "ben", testAt.Add(time.Minute)),
		label("abc", true, "ana", testAt),
		label(k, true, "ana", testAt.Add(2*time.Minute)),
		label(k, true, "ana", testAt.Add(2*time.Minute)), // identical: no new history entry
	}
	steps[4].Note = "the Q3 date is invented"
	steps[5].Note = steps[4].Note
	for _, l := range steps {
		if _, err := s.PutLabel(l); err != nil {
			t.Fatalf("PutLabel(%+v): %v", l, err)
		}
	}
	s = reopen(t, s)

	tests := []struct {
		key  string
		want []model.Label
	}{
		{k, []model.Label{steps[0], steps[2], steps[4]}},
		{"ab", []model.Label{steps[1]}},
		{"abc", []model.Label{steps[3]}},
		{"a", nil},
	}
	for _, tc := range tests {
		got, err := s.LabelHistory(tc.key)
		if err != nil {
			t.Fatal(err)
		}
		if !sameLabels(got, tc.want) {
			t.Errorf("LabelHistory(%.8s) = %+v, want %+v", tc.key, got, tc.want)
		}
	}
	all := truth(t, s)
	// ana labelled k first: her latest label is the truth, not ben's.
	if len(all) != 3 || !all[k].Violation || all["ab"].Violation || all[k].Note != steps[4].Note {
		t.Errorf("truth = %+v", all)
	}
	log, err := s.LabelLog()
	if err != nil || len(log) != 5 {
		t.Errorf("LabelLog = %d records, %v; want 5", len(log), err)
	}
}

// truth resolves the store's whole label history.
func truth(t *testing.T, s *Store) map[string]model.Label {
	t.Helper()
	log, err := s.LabelLog()
	if err != nil {
		t.Fatal(err)
	}
	return model.NewLabelBook(log, nil).Truth()
}

func TestStore_PutLabel_ZeroTime(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	before := time.Now()
	if _, err := s.PutLabel(model.Label{Key: testKey(1), Violation: true, Labeller: "ana"}); err != nil {
		t.Fatal(err)
	}
	l := truth(t, s)[testKey(1)]
	if l.At.Before(before.Add(-time.Second)) {
		t.Errorf("At = %v, want the time of PutLabel (after %v)", l.At, before)
	}
	if _, err := s.PutLabel(model.Label{Labeller: "ana"}); err == nil {
		t.Error("PutLabel without a key succeeded")
	}
}

func TestStore_ImportLabels(t *testing.T) {
	t.Parallel()
	k1, k2, k3 := testKey(1), testKey(2), testKey(3)
	existing := []model.Label{
		label(k1, true, "ana", testAt),
		label(k2, false, "ana", testAt),
	}
	tests := []struct {
		name       string
		in         []model.Label
		overwrite  bool
		added      int
		noted      int
		unchanged  int
		conflicts  []string // keys
		overwrote  []string // keys
		wantLabels map[string]bool
		historyK2  int
	}{
		{
			name:       "new and identical",
			in:         []model.Label{label(k3, true, "ben", testAt), label(k1, true, "ana", testAt)},
			added:      1,
			unchanged:  1,
			wantLabels: map[string]bool{k1: true, k2: false, k3: true},
			historyK2:  1,
		},
		{
			name:       "identical to the second (RFC 3339 export drops fractions)",
			in:         []model.Label{label(k1, true, "ana", testAt.Truncate(time.Second))},
			unchanged:  1,
			wantLabels: map[string]bool{k1: true, k2: false},
			historyK2:  1,
		},
		{
			name:       "zero time compares the rest",
			in:         []model.Label{label(k1, true, "ana", time.Time{})},
			unchanged:  1,
			wantLabels: map[string]bool{k1: true, k2: false},
			historyK2:  1,
		},
		{
			name:       "the same labeller's different label is a conflict, skipped; others merged",
			in:         []model.Label{label(k2, true, "ana", testAt.Add(time.Hour)), label(k3, false, "ben", testAt)},
			added:      1,
			conflicts:  []string{k2},
			wantLabels: map[string]bool{k1: true, k2: false, k3: false},
			historyK2:  1,
		},
		{
			name:       "the same verdict at another time, with no note, says nothing new",
			in:         []model.Label{label(k2, false, "ana", testAt.Add(time.Hour))},
			unchanged:  1,
			wantLabels: map[string]bool{k1: true, k2: false},
			historyK2:  1,
		},
		{
			name: "a note on the same verdict is added, not a conflict",
			in: []model.Label{{Key: k2, Labeller: "ana", Note: "reads fine", At: testAt.Add(time.Hour)},
				{Key: k2, Labeller: "ana", Note: "reads fine"}},
			noted:      1,
			unchanged:  1,
			wantLabels: map[string]bool{k1: true, k2: false},
			historyK2:  2,
		},
		{
			name:       "a second labeller needs no overwrite and does not replace the first",
			in:         []model.Label{label(k2, true, "ben", testAt)},
			added:      1,
			wantLabels: map[string]bool{k1: true, k2: false},
			historyK2:  2,
		},
		{
			name:       "overwrite applies and keeps history",
			in:         []model.Label{label(k2, true, "ana", testAt.Add(time.Hour))},
			overwrite:  true,
			overwrote:  []string{k2},
			wantLabels: map[string]bool{k1: true, k2: true},
			historyK2:  2,
		},
		{
			name:       "duplicates within one import",
			in:         []model.Label{label(k3, true, "ben", testAt), label(k3, true, "ben", testAt), label(k3, false, "cy", testAt)},
			added:      2,
			unchanged:  1,
			wantLabels: map[string]bool{k1: true, k2: false, k3: true},
			historyK2:  1,
		},
		{
			name:       "an undo record is appended and takes the label back",
			in:         []model.Label{{Key: k1, Labeller: "ana", Source: model.LabelBlind, Undo: true, At: testAt.Add(time.Hour)}},
			added:      1,
			wantLabels: map[string]bool{k2: false},
			historyK2:  1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := mustOpen(t)
			for _, l := range existing {
				if _, err := s.PutLabel(l); err != nil {
					t.Fatal(err)
				}
			}
			res, err := s.ImportLabels(tc.in, tc.overwrite)
			if err != nil {
				t.Fatal(err)
			}
			keys := func(cs []LabelConflict) []string {
				var ks []string
				for _, c := range cs {
					ks = append(ks, c.Key)
				}
				return ks
			}
			if res.Added != tc.added || res.Noted != tc.noted || res.Unchanged != tc.unchanged ||
				!slices.Equal(keys(res.Conflicts), tc.conflicts) || !slices.Equal(keys(res.Overwritten), tc.overwrote) {
				t.Errorf("result = %+v; want added %d, noted %d, unchanged %d, conflicts %v, overwritten %v",
					res, tc.added, tc.noted, tc.unchanged, tc.conflicts, tc.overwrote)
			}
			for _, c := range append(res.Conflicts, res.Overwritten...) {
				if c.Current.Key != c.Key || c.Incoming.Key != c.Key || c.Current.Violation == c.Incoming.Violation {
					t.Errorf("conflict %+v does not show both labels", c)
				}
			}
			got := truth(t, s)
			if len(got) != len(tc.wantLabels) {
				t.Errorf("Labels = %+v, want %v", got, tc.wantLabels)
			}
			for k, v := range tc.wantLabels {
				if l, ok := got[k]; !ok || l.Violation != v {
					t.Errorf("label of %.8s = %+v, want violation %v", k, l, v)
				}
			}
			h, err := s.LabelHistory(k2)
			if err != nil {
				t.Fatal(err)
			}
			if len(h) != tc.historyK2 {
				t.Errorf("history of k2 has %d entries, want %d", len(h), tc.historyK2)
			}
		})
	}
}

func TestStore_ImportLabels_InvalidKey(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	_, err := s.ImportLabels([]model.Label{label(testKey(1), true, "ana", testAt), label("", true, "ana", testAt)}, false)
	if err == nil {
		t.Fatal("import with an empty key succeeded")
	}
	if got := truth(t, s); len(got) != 0 {
		t.Errorf("a refused import stored %d labels", len(got))
	}
}

func TestStore_LabelSets(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	keys := []string{testKey(3), testKey(1), testKey(2)}
	sets := []struct {
		name string
		keys []string
		meta map[string]string
	}{
		{"rule-22", keys, map[string]string{"seed": "42", "n": "3"}},
		{"control", nil, nil},
	}
	for _, set := range sets {
		if err := s.PutLabelSet(set.name, set.keys, set.meta); err != nil {
			t.Fatal(err)
		}
	}
	s = reopen(t, s)
	names, err := s.LabelSets()
	if err != nil || !slices.Equal(names, []string{"control", "rule-22"}) {
		t.Errorf("LabelSets = %v, %v", names, err)
	}
	gotKeys, meta, err := s.LabelSet("rule-22")
	if err != nil || !slices.Equal(gotKeys, keys) || !reflect.DeepEqual(meta, sets[0].meta) {
		t.Errorf("LabelSet(rule-22) = %v, %v, %v", gotKeys, meta, err)
	}
	gotKeys, meta, err = s.LabelSet("control")
	if err != nil || len(gotKeys) != 0 || meta == nil {
		t.Errorf("LabelSet(control) = %v, %v, %v; want no keys and an empty map", gotKeys, meta, err)
	}
	if _, _, err := s.LabelSet("missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing set: err = %v, want ErrNotFound", err)
	}
	if err := s.PutLabelSet("", keys, nil); err == nil {
		t.Error("PutLabelSet with no name succeeded")
	}
}

// TestStore_ImportLabels_NoTimeTwice: a record without a time gets the
// import's time when first appended and is the same record on every later
// import, whenever it comes (the bug: each import appended a copy).
func TestStore_ImportLabels_NoTimeTwice(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	in := []model.Label{{Key: testKey(1), Violation: true, Labeller: "ana"}, {Key: testKey(2), Labeller: "ana", Note: "fine"}}
	for i, want := range []ImportResult{{Added: 2}, {Unchanged: 2}, {Unchanged: 2}} {
		res, err := s.ImportLabels(in, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Added != want.Added || res.Unchanged != want.Unchanged || res.Refused() != 0 {
			t.Errorf("import %d: %+v, want %+v", i+1, res, want)
		}
		n, err := s.MergeLabels(in)
		if err != nil || n != 0 {
			t.Errorf("merge after import %d appended %d (%v), want 0", i+1, n, err)
		}
	}
	log, err := s.LabelLog()
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 2 || log[0].At.IsZero() {
		t.Errorf("history = %+v, want the two records, timed", log)
	}
}

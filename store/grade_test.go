package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

func TestStore_PutGrades(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	k1, k2, k3 := testKey(1), testKey(2), testKey(3)
	predV1 := model.Grade{Grader: "predicate", Version: "v1", Pass: false, Reason: "asserted a timeline with no source", Check: 1, Span: model.Span{Start: 10, End: 17}}
	predV2 := model.Grade{Grader: "predicate", Version: "v2", Pass: true}
	// Vertex-style model ids contain "@": grader names are not split on it.
	judge := model.Grade{Grader: "judge:claude-3-5-sonnet@20240620", Version: "r1", Unparseable: true, Reason: "no VERDICT line"}
	if err := s.PutGrades(map[string][]model.Grade{
		k1: {predV1, predV2, judge},
		k2: {predV1},
	}); err != nil {
		t.Fatal(err)
	}
	// A later grade of the same grader version replaces the earlier one.
	predV1b := predV1
	predV1b.Pass, predV1b.Reason, predV1b.Check, predV1b.Span = true, "", 0, model.Span{}
	if err := s.PutGrades(map[string][]model.Grade{k2: {predV1b}, k3: {predV2}}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)

	forTests := []struct {
		grader, version string
		want            map[string]model.Grade
	}{
		{"predicate", "v1", map[string]model.Grade{k1: predV1, k2: predV1b}},
		{"predicate", "v2", map[string]model.Grade{k1: predV2, k3: predV2}},
		{"judge:claude-3-5-sonnet@20240620", "r1", map[string]model.Grade{k1: judge}},
		{"predicate", "v9", map[string]model.Grade{}},
		{"nobody", "v1", map[string]model.Grade{}},
		{"", "", map[string]model.Grade{}},
	}
	for _, tc := range forTests {
		got, err := s.GradesFor(tc.grader, tc.version)
		if err != nil {
			t.Errorf("GradesFor(%s, %s): %v", tc.grader, tc.version, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("GradesFor(%s, %s) = %+v, want %+v", tc.grader, tc.version, got, tc.want)
		}
	}

	keyTests := []struct {
		key  string
		want []model.Grade
	}{
		{k1, []model.Grade{judge, predV1, predV2}}, // grader, then version order
		{k2, []model.Grade{predV1b}},
		{testKey(4), nil},
	}
	for _, tc := range keyTests {
		got, err := s.Grades(tc.key)
		if err != nil {
			t.Errorf("Grades(%s): %v", tc.key[:8], err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Grades(%s) = %+v, want %+v", tc.key[:8], got, tc.want)
		}
	}
}

func TestStore_PutGrades_Invalid(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	good := model.Grade{Grader: "predicate", Version: "v1"}
	tests := map[string]map[string][]model.Grade{
		"empty key":       {"": {good}},
		"missing grader":  {testKey(1): {good, {Version: "v1"}}},
		"missing version": {testKey(1): {{Grader: "predicate"}}},
	}
	for name, grades := range tests {
		grades[testKey(2)] = []model.Grade{good}
		if err := s.PutGrades(grades); err == nil {
			t.Errorf("%s: PutGrades succeeded", name)
		}
	}
	// Nothing from a refused call is stored.
	if got, err := s.GradesFor("predicate", "v1"); err != nil || len(got) != 0 {
		t.Errorf("after refused calls: %v, %v", got, err)
	}
}

func TestWriter_PutGrades(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	w := s.NewWriter(WriterOptions{})
	judged := testKey(1)
	g := model.Grade{Grader: "judge:gpt-5", Version: "abc", Pass: false, Reason: "violation"}
	if err := w.Put(testResponse(1, true), []model.Grade{{Grader: "predicate", Version: "v1", Pass: true}}); err != nil {
		t.Fatal(err)
	}
	if err := w.PutGrades(judged, []model.Grade{g}); err != nil {
		t.Fatal(err)
	}
	if err := w.PutGrades("", []model.Grade{g}); err == nil {
		t.Error("PutGrades with an empty key succeeded")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Grades(judged)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != g {
		t.Errorf("Grades = %+v", got)
	}
}

func TestGradeEncoding(t *testing.T) {
	t.Parallel()
	tests := []model.Grade{
		{},
		{Pass: true},
		{Unparseable: true, Reason: "no VERDICT line"},
		{Pass: false, Reason: "asserted a timeline — “Q3”", Check: 12, Span: model.Span{Start: 1 << 40, End: 1<<40 + 3}},
		{Check: -1, Span: model.Span{Start: -5, End: 0}},
	}
	for _, want := range tests {
		got, err := decodeGrade(encodeGrade(want))
		if err != nil {
			t.Errorf("%+v: %v", want, err)
			continue
		}
		if got != want {
			t.Errorf("round trip of %+v gave %+v", want, got)
		}
	}
	for _, bad := range [][]byte{nil, {gradeFormat}, {99, 0, 0, 0, 0}, {gradeFormat, 0, 0x80}} {
		if _, err := decodeGrade(bad); err == nil {
			t.Errorf("decodeGrade(%v) succeeded", bad)
		}
	}
}

func TestStore_GradesFor_CorruptValue(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	if err := s.PutGrades(map[string][]model.Grade{testKey(1): {{Grader: "p", Version: "v"}}}); err != nil {
		t.Fatal(err)
	}
	err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketGrades).Bucket([]byte("p")).Bucket([]byte("v")).Put(dbKey(testKey(1)), []byte{7})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.GradesFor("p", "v"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("GradesFor: err = %v, want ErrCorrupt", err)
	}
	if _, err := s.Grades(testKey(1)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Grades: err = %v, want ErrCorrupt", err)
	}
}

// StatusUsing and GradesForUsing key their maps with the strings the
// caller returns, given each key in its hex form.
func TestStore_Using(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	other := testResponse(3, true)
	other.Key = "not-hex"
	putAll(t, s, testResponse(1, true), testResponse(2, false), other)
	keys := []string{testKey(1), testKey(2), other.Key}
	grades := map[string][]model.Grade{}
	for _, k := range keys {
		grades[k] = []model.Grade{{Grader: "p", Version: "v", Pass: true}}
	}
	if err := s.PutGrades(grades); err != nil {
		t.Fatal(err)
	}
	own := map[string]string{} // the caller's strings, by value
	for _, k := range keys {
		own[k] = strings.Clone(k)
	}
	var seen []string
	key := func(k []byte) string {
		seen = append(seen, string(k))
		return own[string(k)]
	}
	st, err := s.StatusUsing(key)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := s.GradesForUsing("p", "v", key)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2*len(keys) {
		t.Errorf("key called with %q, want each key twice", seen)
	}
	want := map[string]bool{testKey(1): true, testKey(2): false, other.Key: true}
	if len(st) != len(want) || len(gs) != len(want) {
		t.Fatalf("Status %v, grades %v; want %d keys", st, gs, len(want))
	}
	for k, ok := range want {
		if v, in := st[k]; !in || v != ok {
			t.Errorf("Status[%s] = %v, %v; want %v", k, v, in, ok)
		}
		if _, in := gs[k]; !in {
			t.Errorf("no grade for %s", k)
		}
	}
}

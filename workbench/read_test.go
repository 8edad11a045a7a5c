package workbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// A session opened with Read while another Store writes the file reads the
// writer's copy, grades an edited predicate in memory, and stores nothing:
// no grades, no label file, no records (issue 30).
func TestOpen_ReadWhileAnotherWrites(t *testing.T) {
	t.Parallel()
	f := audittest.Demo(t, 2) // f.Store holds auditor.db for writing, as a run would
	path := filepath.Join(f.Dir, examples.DemoAudit)
	ctx := context.Background()
	if _, err := Open(ctx, path, Options{Access: Write}); !errors.Is(err, store.ErrLocked) {
		t.Fatalf("Open without Read: err = %v, want ErrLocked", err)
	}
	// An edited predicate: the reader grades every answer of the rule anew.
	r0 := f.Plan.Audit.Rules[0]
	old, err := os.ReadFile(r0.PredicatePath)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(old) + "\n[[check]]\nfail_if_match = '(?i)zebra crossing'\nreason = \"a check no answer meets\"\n"
	if err := os.WriteFile(r0.PredicatePath, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := f.Store.Status()
	if err != nil {
		t.Fatal(err)
	}

	s, err := Open(ctx, path, Options{Access: Write, Read: true})
	if err != nil {
		t.Fatalf("Open with Read: %v", err)
	}
	if !s.ReadOnly() || !s.Store.Reading().Snapshot {
		t.Fatalf("ReadOnly %t, reading %+v: want a read-only copy", s.ReadOnly(), s.Store.Reading())
	}
	if note := s.ReadNote(); !regexp.MustCompile(`^read while another auditor process writes auditor\.db: \d+ answers stored as of \d\d:\d\d:\d\d$`).MatchString(note) {
		t.Errorf("ReadNote = %q", note)
	}
	if s.Regraded == 0 {
		t.Error("the edited predicate graded nothing")
	}
	res, err := s.Results()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rules) != len(f.Plan.Audit.Rules) {
		t.Errorf("%d rule results, want %d", len(res.Rules), len(f.Plan.Audit.Rules))
	}
	version := s.PredicateVersions()[0]
	// The exports read the grades the session could not store.
	exported, err := s.ExportSource().GradesFor(model.PredicateGrader, version)
	if err != nil || len(exported) != s.Regraded {
		t.Errorf("ExportSource has %d grades of the edited predicate (%v), want the %d re-graded", len(exported), err, s.Regraded)
	}
	if err := s.SaveLabelFile(); err != nil {
		t.Errorf("SaveLabelFile: %v", err)
	}
	s.Close()

	if g, err := f.Store.GradesFor(model.PredicateGrader, version); err != nil || len(g) != 0 {
		t.Errorf("the edited predicate's grades reached the store (%d, %v): a reader must not write", len(g), err)
	}
	if _, err := os.Stat(filepath.Join(f.Dir, "audit.labels.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the reader wrote a label file: %v", err)
	}
	after, err := f.Store.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("responses %d -> %d", len(before), len(after))
	}
}

package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/tui"
	"github.com/auditor-dev/auditor/workbench"
)

// next waits for the watcher's next file. The limit only stops a hung test.
func next(t *testing.T, ch <-chan tui.PredicateFile) tui.PredicateFile {
	t.Helper()
	select {
	case f, ok := <-ch:
		if !ok {
			t.Fatal("the watcher closed its channel")
		}
		return f
	case <-time.After(2 * time.Minute):
		t.Fatal("no predicate file came")
	}
	return tui.PredicateFile{}
}

// TestWatchPredicates: a saved predicate file arrives parsed, whether it
// was written in place or renamed over the old one; one that does not
// parse arrives with its file and line; the channel closes with ctx.
func TestWatchPredicates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	s, err := workbench.Load(filepath.Join(dir, examples.DemoAudit), 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := watchPredicates(ctx, s.Audit)
	if err != nil {
		t.Fatal(err)
	}
	rule := s.Audit.Rules[1] // line 15
	path := rule.PredicatePath
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	edited := append(append([]byte(nil), orig...), "\n# tightened\n"...)
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	f := next(t, ch)
	if f.Rule != 1 || f.Err != nil || f.Predicate == nil || f.Predicate.Version == rule.Loaded.Version {
		t.Fatalf("in-place save: %+v", f)
	}

	bad := []byte("[[check]]\nkinds = [\"provoke\"\nreason = \"x\"\n")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	f = next(t, ch)
	var ie *model.InputError
	if !errors.As(f.Err, &ie) || ie.Line == 0 || !strings.HasSuffix(ie.File, "reask.predicate.toml") || f.Predicate != nil {
		t.Fatalf("syntax error: %+v (%v)", f, f.Err)
	}

	tmp := filepath.Join(dir, ".reask.predicate.toml.swp")
	if err := os.WriteFile(tmp, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	f = next(t, ch)
	if f.Err != nil || f.Predicate == nil || f.Predicate.Version != rule.Loaded.Version {
		t.Fatalf("rename over the file: %+v", f)
	}

	cancel()
	for range ch {
	}
}

func TestReview_NeedsATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, exitBadInput, "review", filepath.Join(dir, examples.DemoAudit))
	if !strings.Contains(r.errOut, "review needs a terminal") || !strings.Contains(r.errOut, "auditor report") {
		t.Fatalf("no pointer to the text report:\n%s", r)
	}
}

// TestLabellingOptions: the screen gets the session's store and who
// labels.
func TestLabellingOptions(t *testing.T) {
	t.Parallel()
	s := &workbench.Session{Audit: &audit.Audit{}}
	o := labellingOptions(s, nil, appScreen{open: tui.ScreenLabel, set: "x", labeller: "ana"})
	if o.Labeller != "ana" || o.Set != "x" || o.Open != tui.ScreenLabel || o.Edits != nil {
		t.Fatalf("%+v", o)
	}
	if defaultLabeller() == "" {
		t.Fatal("no default labeller")
	}
}

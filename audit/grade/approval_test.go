package grade_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
)

// oneShot answers one request and exits, as some graders do: the grader
// starts it afresh for each answer. It leaves a file named by its version.
const oneShot = "#!/bin/sh\nIFS= read -r line\ntouch \"%s.$$\"\necho '{\"pass\": true}'\n"

func count(t *testing.T, dir, prefix string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, prefix+".*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestGrader_EditedScriptNotRestarted: an approval is for the script's
// content when it was approved. A script edited while auditor runs (a git
// pull during a long run, the TUI left open) is not started again under
// that approval when the grader restarts it.
func TestGrader_EditedScriptNotRestarted(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	// The script lives in a folder of its own: the approval covers every
	// file beside it, and the files it leaves are written beside the audit.
	files["a.toml"] = "[exec]\ncommand = [\"sh\", \"graders/grade.sh\"]\n"
	files["graders/grade.sh"] = fmt.Sprintf(oneShot, "v1")
	dir := audittest.WriteFiles(t, files)
	fx := audittest.Open(t, filepath.Join(dir, "audit.toml"), 0)
	approved, err := audit.ResolveExec(fx.Preds.Of(0).Exec, dir)
	if err != nil {
		t.Fatal(err)
	}
	g := grade.NewGrader(context.Background(), fx.Plan, fx.Preds)
	defer g.Close()
	g.RequireApproval(func(c audit.ExecCommand) (bool, error) { return c.Digest == approved.Digest, nil })

	cells := fx.Plan.CellsOfRule(0)
	grade1 := func(i int) error {
		_, err := g.Grade(model.Response{Key: fx.Plan.Cells[cells[i]].Key, Text: "Pro is on our pricing page."})
		return err
	}
	if err := grade1(0); err != nil {
		t.Fatal(err)
	}
	if count(t, dir, "v1") != 1 {
		t.Fatal("the approved grader did not start: the test checks nothing")
	}
	if err := os.WriteFile(filepath.Join(dir, "graders", "grade.sh"), []byte(fmt.Sprintf(oneShot, "v2")), 0o600); err != nil {
		t.Fatal(err)
	}
	// The one-shot child may not be reaped yet when the next answer comes:
	// that answer then fails against the dead child, and the one after
	// starts the grader afresh.
	err = grade1(1)
	if !errors.Is(err, grade.ErrExecNotApproved) {
		err = grade1(2)
	}
	if n := count(t, dir, "v2"); n != 0 {
		t.Fatalf("the edited, unapproved script was started %d times", n)
	}
	if !errors.Is(err, grade.ErrExecNotApproved) {
		t.Errorf("grading after the edit: %v, want ErrExecNotApproved", err)
	}
}

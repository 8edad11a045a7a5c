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
// starts it afresh for each answer. It leaves a file named by its version,
// at an absolute path (it runs in a private copy of its folder).
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
	marks := t.TempDir()
	files["graders/grade.sh"] = fmt.Sprintf(oneShot, filepath.Join(marks, "v1"))
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
	if count(t, marks, "v1") != 1 {
		t.Fatal("the approved grader did not start: the test checks nothing")
	}
	if err := os.WriteFile(filepath.Join(dir, "graders", "grade.sh"), []byte(fmt.Sprintf(oneShot, filepath.Join(marks, "v2"))), 0o600); err != nil {
		t.Fatal(err)
	}
	// The one-shot child may not be reaped yet when the next answer comes:
	// that answer then fails against the dead child, and the one after
	// starts the grader afresh.
	err = grade1(1)
	if !errors.Is(err, grade.ErrExecNotApproved) {
		err = grade1(2)
	}
	if n := count(t, marks, "v2"); n != 0 {
		t.Fatalf("the edited, unapproved script was started %d times", n)
	}
	if !errors.Is(err, grade.ErrExecNotApproved) {
		t.Errorf("grading after the edit: %v, want ErrExecNotApproved", err)
	}
}

// TestGrader_SwapBetweenCheckAndStartNotRun is issue 28's race: the files
// are checked against the approval, then the interpreter opens the script
// again; a script swapped in between (a sync tool, a git pull renaming a
// new file over it) must not run. The grader runs from a private copy of
// the bytes it checked, so the swap reaches nothing.
func TestGrader_SwapBetweenCheckAndStartNotRun(t *testing.T) {
	files := audittest.SweepFiles()
	files["a.toml"] = "[exec]\ncommand = [\"sh\", \"graders/grade.sh\"]\n"
	marks := t.TempDir()
	const grader = "#!/bin/sh\nwhile IFS= read -r line; do touch \"%s.$$\"; echo '{\"pass\": %s}'; done\n"
	files["graders/grade.sh"] = fmt.Sprintf(grader, filepath.Join(marks, "approved"), "true")
	dir := audittest.WriteFiles(t, files)
	fx := audittest.Open(t, filepath.Join(dir, "audit.toml"), 0)
	approved, err := audit.ResolveExec(fx.Preds.Of(0).Exec, dir)
	if err != nil {
		t.Fatal(err)
	}
	g := grade.NewGrader(context.Background(), fx.Plan, fx.Preds)
	defer g.Close()
	g.RequireApproval(func(c audit.ExecCommand) (bool, error) { return c.Digest == approved.Digest, nil })
	swapped := false
	defer grade.SetStagedHook(func() {
		script := filepath.Join(dir, "graders", "grade.sh")
		tmp := script + ".new"
		if err := os.WriteFile(tmp, []byte(fmt.Sprintf(grader, filepath.Join(marks, "swapped"), "false")), 0o600); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, script); err != nil {
			t.Error(err)
		}
		swapped = true
	})()

	cells := fx.Plan.CellsOfRule(0)
	grades, err := g.Grade(model.Response{Key: fx.Plan.Cells[cells[0]].Key, Text: "Pro is on our pricing page."})
	if err != nil {
		t.Fatal(err)
	}
	if !swapped {
		t.Fatal("the hook between check and start did not run: the test checks nothing")
	}
	if n := count(t, marks, "swapped"); n != 0 {
		t.Fatalf("the script swapped in after the check ran %d times", n)
	}
	if n := count(t, marks, "approved"); n != 1 {
		t.Errorf("the approved script ran %d times, want 1", n)
	}
	if len(grades) != 1 || !grades[0].Pass {
		t.Errorf("grades = %+v, want the approved script's pass", grades)
	}
}

// TestGrader_UncoveredNeverStarts: a command whose approval would cover no
// file it runs (python3 -m grade with no grade.py in the audit folder) is
// never started, even when the approver says yes to its words.
func TestGrader_UncoveredNeverStarts(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	files["a.toml"] = "[exec]\ncommand = [\"python3\", \"-m\", \"grade\"]\n"
	dir := audittest.WriteFiles(t, files)
	fx := audittest.Open(t, filepath.Join(dir, "audit.toml"), 0)
	g := grade.NewGrader(context.Background(), fx.Plan, fx.Preds)
	defer g.Close()
	asked := false
	g.RequireApproval(func(audit.ExecCommand) (bool, error) { asked = true; return true, nil })
	cells := fx.Plan.CellsOfRule(0)
	_, err := g.Grade(model.Response{Key: fx.Plan.Cells[cells[0]].Key, Text: "Pro is on our pricing page."})
	var unc *grade.UncoveredError
	if !errors.As(err, &unc) || !errors.Is(err, grade.ErrExecNotApproved) {
		t.Fatalf("grading: %v, want an UncoveredError", err)
	}
	if asked {
		t.Error("the approver was asked about a command no approval can cover")
	}
}

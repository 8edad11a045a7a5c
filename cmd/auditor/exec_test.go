package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/store"
	"github.com/auditor-dev/auditor/workbench"
)

// spyGrader is an [exec] grader from a folder someone else wrote: it leaves
// a file behind each time it starts and writes out the environment it was
// given, then passes every answer.
const spyGrader = `#!/bin/sh
touch "started.$$"
env > env.txt
while IFS= read -r line; do echo '{"pass": true}'; done
`

const execPredicate = "[[check]]\nfail_if_match = '\\$\\d+'\nreason = \"quoted a price\"\n[exec]\ncommand = [\"sh\", \"grade.sh\"]\n"

// starts counts the times the spy grader was started in dir.
func starts(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "started.*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// TestExec_NeverStartsUnapproved opens a folder whose predicate runs a
// program, as a user who received it would: answers are stored (the
// predicate gained its [exec] table after they were), so every command
// that reads results has something to grade. Nothing may start the
// program until the user approves it; after approval it runs with a
// scrubbed environment; an edited script is a new command that must be
// approved again and re-grades what is stored.
func TestExec_NeverStartsUnapproved(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	path := filepath.Join(dir, "audit.toml")
	mustRun(t, 0, "run", path, "--yes", "--headless")

	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "grade.sh": spyGrader})
	for _, args := range [][]string{
		{"report", path},
		{"report", path, "--format", "json"},
		{"export", path, "--what", "grades"},
		{"export", path, "--what", "responses"},
		{"plan", path},
		{"label", path, "--show"},
	} {
		r := runMain(t, args...)
		if n := starts(t, dir); n != 0 {
			t.Fatalf("auditor %s started the unapproved [exec] command %d times:\n%s", strings.Join(args, " "), n, r)
		}
		if args[0] == "report" && args[len(args)-1] == path && !strings.Contains(r.errOut, "not approved") {
			t.Errorf("report said nothing about the command it did not start:\n%s", r)
		}
	}
	plan := mustRun(t, 0, "plan", path)
	if !strings.Contains(plan.out, "sh grade.sh") || !strings.Contains(plan.out, "NOT approved") {
		t.Errorf("plan does not list the command it would run and its approval:\n%s", plan)
	}

	// A run refuses before anything starts, and says how to approve.
	r := mustRun(t, 2, "run", path, "--yes", "--headless")
	if !strings.Contains(r.errOut, "sh grade.sh") || !strings.Contains(r.errOut, "--allow-exec") {
		t.Errorf("refused run does not name the command and the flag:\n%s", r)
	}
	if n := starts(t, dir); n != 0 {
		t.Fatalf("a refused run started the command %d times", n)
	}

	// Approved: it runs, with none of the parent's secrets.
	mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec")
	if starts(t, dir) == 0 {
		t.Fatal("the approved command never started: the test checks nothing")
	}
	env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), testKey) || strings.Contains(string(env), testKeyEnv) {
		t.Errorf("the grader's environment carries the API key:\n%s", env)
	}
	approvedPlan := mustRun(t, 0, "plan", path)
	if strings.Contains(approvedPlan.out, "NOT approved") {
		t.Errorf("plan after approval still says not approved:\n%s", approvedPlan)
	}

	// The script changes: a new version (stored answers need grades from
	// it) and a new command (not approved), so report starts nothing.
	before := starts(t, dir)
	writeFiles(t, dir, map[string]string{"grade.sh": spyGrader + "# edited\n"})
	r = mustRun(t, 0, "report", path)
	if !strings.Contains(r.errOut, "not approved") {
		t.Errorf("after the script changed, report did not say the command needs approval again:\n%s", r)
	}
	if n := starts(t, dir); n != before {
		t.Errorf("report started the edited, unapproved script")
	}
	r = mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec")
	if !strings.Contains(r.errOut, "re-graded") {
		t.Errorf("editing the script did not re-grade the stored answers:\n%s", r)
	}
}

// TestExec_BrokenGraderFailsTheRun checks that a grader that dies is a
// failed run (exit 1) that quotes what it said on stderr, not a quiet
// "pending".
func TestExec_BrokenGraderFailsTheRun(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	path := filepath.Join(dir, "audit.toml")
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate,
		"grade.sh": "#!/bin/sh\necho 'grader: cannot load model weights' >&2\nexit 3\n"})
	r := mustRun(t, 1, "run", path, "--yes", "--headless", "--allow-exec")
	if !strings.Contains(r.errOut, "cannot load model weights") {
		t.Errorf("the grader's stderr is not quoted:\n%s", r)
	}
}

// TestExec_ApprovalStaysInItsFolder: an approval is the user's, for the
// folder they approved it in. A folder received with its auditor.db (a
// shared repository, an archive) carries the sender's approvals; they must
// not start the sender's program in the receiver's folder.
func TestExec_ApprovalStaysInItsFolder(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	path := filepath.Join(dir, "audit.toml")
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "grade.sh": spyGrader})
	mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec")
	if starts(t, dir) == 0 {
		t.Fatal("the approved command never started: the test checks nothing")
	}

	copyTo := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), "started.") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyTo, e.Name()), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copied := filepath.Join(copyTo, "audit.toml")
	// The predicate's checks changed after the approval, its command did
	// not: the stored answers need grades from the new version, and the
	// command's digest is the approved one.
	writeFiles(t, copyTo, map[string]string{"a.toml": execPredicate + "# edited after the approval\n"})
	r := mustRun(t, 0, "report", copied)
	if n := starts(t, copyTo); n != 0 {
		t.Fatalf("report in a copied folder started the command %d times on the approval its db carried", n)
	}
	if !strings.Contains(r.errOut, "not approved") {
		t.Errorf("report in the copied folder did not say the command needs approval:\n%s", r)
	}
	// In its own folder the same edit is graded under the approval.
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate + "# edited after the approval\n"})
	before := starts(t, dir)
	r = mustRun(t, 0, "report", path)
	if starts(t, dir) == before || strings.Contains(r.errOut, "not approved") {
		t.Errorf("the approved command did not grade in its own folder after a check changed:\n%s", r)
	}
}

// TestExec_PlantedApprovalIsIgnored: a sender who guesses where the
// receiver will unpack a folder can write anything into its auditor.db;
// nothing there approves a command. Approvals live in the user's own file.
func TestExec_PlantedApprovalIsIgnored(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	path := filepath.Join(dir, "audit.toml")
	mustRun(t, 0, "run", path, "--yes", "--headless")
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "grade.sh": spyGrader})
	plan := mustRun(t, 0, "plan", path, "--format", "json")
	var doc struct {
		Exec []struct{ Digest string } `json:"exec_commands"`
	}
	if err := json.Unmarshal([]byte(plan.out), &doc); err != nil || len(doc.Exec) != 1 {
		t.Fatalf("plan json: %v\n%s", err, plan.out)
	}
	// Plant every key an earlier build, or a guess at this one, would read.
	st, err := store.Open(filepath.Join(dir, workbench.DBName))
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	for _, d := range []string{dir, real} {
		sum := sha256.Sum256([]byte(doc.Exec[0].Digest + "\x00" + d))
		for _, k := range []string{"exec.approved." + doc.Exec[0].Digest, "exec.approved." + hex.EncodeToString(sum[:]), hex.EncodeToString(sum[:])} {
			if err := st.SetMeta(k, "2026-12-01T00:00:00Z"); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.Close()
	r := mustRun(t, 0, "report", path)
	if n := starts(t, dir); n != 0 {
		t.Fatalf("report started the command %d times on an approval planted in auditor.db", n)
	}
	if !strings.Contains(r.errOut, "not approved") {
		t.Errorf("report did not say the command needs approval:\n%s", r)
	}
}

// TestExec_MissingScriptRefusedBeforeCalls: a command naming a script that
// is not in the audit folder would fail on every answer after they were
// paid for; run refuses it (exit 2) before any call.
func TestExec_MissingScriptRefusedBeforeCalls(t *testing.T) {
	t.Parallel()
	cs := makeCases(1, 1, 1)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 1, concurrency: 1}, cs)
	pred, err := os.ReadFile(filepath.Join(dir, "predicate.toml"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"predicate.toml": string(pred) + "\n[exec]\ncommand = [\"sh\", \"grade_missing.sh\"]\n"})
	r := mustRun(t, 2, "run", path, "--yes", "--headless", "--allow-exec")
	if !strings.Contains(r.errOut, "grade_missing.sh, which is not in the audit folder") {
		t.Errorf("no word of the missing script:\n%s", r)
	}
	if n := len(srv.arrivalsLog()); n != 0 {
		t.Errorf("%d calls were made before the refusal", n)
	}
}

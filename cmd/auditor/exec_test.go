package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/store"
	"github.com/auditor-dev/auditor/workbench"
)

// spyGrader is an [exec] grader from a folder someone else wrote: it leaves
// a file behind in dir each time it starts and writes out the environment
// it was given, then passes every answer. It writes to dir by its absolute
// path: a grader runs in a private copy of the folders its approval
// covers, so what it writes relative to its working directory is its own.
func spyGrader(dir string) string {
	return strings.ReplaceAll(`#!/bin/sh
touch "DIR/started.$$"
env > "DIR/env.txt"
while IFS= read -r line; do echo '{"pass": true}'; done
`, "DIR", dir)
}

// execPredicate runs the spy from a folder of its own, as the README
// advises: an approval covers every file beside the script, and the spy's
// own files are written beside the audit.
const execPredicate = "[[check]]\nfail_if_match = '\\$\\d+'\nreason = \"quoted a price\"\n[exec]\ncommand = [\"sh\", \"graders/grade.sh\"]\n"

// starts counts the times the spy grader was started in dir.
func starts(t *testing.T, dir string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "started.*"))
	if err != nil {
		t.Fatal(err)
	}
	return len(m)
}

// execAudit is the sweep audit run, then given the spy as the [exec]
// grader of line 2's predicate, as a folder someone sends arrives: answers
// stored, the command never approved here. It returns the folder and the
// audit file.
func execAudit(t *testing.T) (dir, path string) {
	t.Helper()
	dir = audittest.WriteFiles(t, audittest.SweepFiles())
	path = filepath.Join(dir, "audit.toml")
	mustRun(t, 0, "run", path, "--yes", "--headless")
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "graders/grade.sh": spyGrader(dir)})
	return dir, path
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
	dir, path := execAudit(t)
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
	if !strings.Contains(plan.out, "sh graders/grade.sh") || !strings.Contains(plan.out, "NOT approved") {
		t.Errorf("plan does not list the command it would run and its approval:\n%s", plan)
	}

	// A run refuses before anything starts, and says how to approve.
	r := mustRun(t, 2, "run", path, "--yes", "--headless")
	if !strings.Contains(r.errOut, "sh graders/grade.sh") || !strings.Contains(r.errOut, "--allow-exec") {
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
	writeFiles(t, dir, map[string]string{"graders/grade.sh": spyGrader(dir) + "# edited\n"})
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
		"graders/grade.sh": "#!/bin/sh\necho 'grader: cannot load model weights' >&2\nexit 3\n"})
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
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "graders/grade.sh": spyGrader(dir)})
	mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec")
	if starts(t, dir) == 0 {
		t.Fatal("the approved command never started: the test checks nothing")
	}

	copyTo := t.TempDir()
	if err := os.CopyFS(copyTo, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(copyTo, "audit.toml")
	// The copied spy writes to dir, where it was written.
	beforeCopy := starts(t, dir)
	// The predicate's checks changed after the approval, its command did
	// not: the stored answers need grades from the new version, and the
	// command's digest is the approved one.
	writeFiles(t, copyTo, map[string]string{"a.toml": execPredicate + "# edited after the approval\n"})
	r := mustRun(t, 0, "report", copied)
	if n := starts(t, dir) - beforeCopy; n != 0 {
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
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "graders/grade.sh": spyGrader(dir)})
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

// TestExec_ApprovalCoversWhatTheScriptLoads is issue 22's malicious-folder
// repro. A module put beside an approved script (Python imports the
// script's folder first; here a shell script sources its sibling) ran on
// the next report without asking; a command naming a script outside the
// audit folder kept its approval when that script was edited. Now the
// approval covers every file under the script's folder, and a script
// outside the audit folder is approved only with its folder named.
func TestExec_ApprovalCoversWhatTheScriptLoads(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	path := filepath.Join(dir, "audit.toml")
	mustRun(t, 0, "run", path, "--yes", "--headless")
	sourcing := "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\n" + strings.TrimPrefix(spyGrader(dir), "#!/bin/sh\n")
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "graders/grade.sh": sourcing, "graders/lib.sh": "true\n"})
	mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec")
	if starts(t, dir) == 0 {
		t.Fatal("the approved command never started: the test checks nothing")
	}

	// A sibling module appears (or the sourced one changes): nothing runs
	// until the user approves again, and plan says what the approval covers.
	for _, lib := range []string{"touch " + dir + "/planted.$$\n", "touch " + dir + "/planted2.$$\n"} {
		writeFiles(t, dir, map[string]string{"graders/lib.sh": lib})
		r := mustRun(t, 0, "report", path)
		if m, _ := filepath.Glob(filepath.Join(dir, "planted*")); len(m) != 0 || !strings.Contains(r.errOut, "not approved") {
			t.Fatalf("report ran the planted module %d times, or did not say the command needs approval:\n%s", len(m), r)
		}
	}
	plan := mustRun(t, 0, "plan", path)
	if !strings.Contains(plan.out, "covers every file under "+filepath.Join(dir, "graders")) {
		t.Errorf("plan does not say which folder the approval covers:\n%s", plan.out)
	}

	// A script outside the audit folder: refused under --allow-exec alone,
	// approved with its folder named, and its edit asks again.
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"grade.sh": spyGrader(dir)})
	rel, err := filepath.Rel(dir, filepath.Join(outside, "grade.sh"))
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"a.toml": strings.Replace(execPredicate, "graders/grade.sh", rel, 1)})
	before := starts(t, dir)
	r := mustRun(t, 2, "run", path, "--yes", "--headless", "--allow-exec")
	if !strings.Contains(r.errOut, "OUTSIDE the audit folder") || !strings.Contains(r.errOut, "--allow-exec-outside "+outside) {
		t.Errorf("the refusal does not name the outside folder and the flag:\n%s", r)
	}
	if starts(t, dir) != before {
		t.Fatal("a command naming a script outside the audit folder started under --allow-exec alone")
	}
	mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec", "--allow-exec-outside", outside)
	if starts(t, dir) == before {
		t.Fatal("the approved outside script never started")
	}
	writeFiles(t, outside, map[string]string{"grade.sh": spyGrader(dir) + "# edited\n"})
	before = starts(t, dir)
	r = mustRun(t, 0, "report", path)
	if starts(t, dir) != before || !strings.Contains(r.errOut, "not approved") {
		t.Errorf("an edit of the outside script ran under the old approval:\n%s", r)
	}
	r = mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec", "--allow-exec-outside", outside)
	if !strings.Contains(r.errOut, "re-graded") {
		t.Errorf("editing the outside script did not re-grade the stored answers:\n%s", r)
	}
}

// TestExec_NothingTheGraderStartedSurvives: after a normal run and after
// auditor is killed with -9 while grading, no process the grader started
// is alive, neither one in its process group nor one that left it with
// setsid. Linux only: elsewhere the README says what survives.
func TestExec_NothingTheGraderStartedSurvives(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the grader's supervisor is Linux only")
	}
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	// The grader starts two sleepers and says their pids; with a file
	// named hold beside the audit it never answers, so auditor sits in
	// grading until it is killed.
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	daemonizing := strings.ReplaceAll(`#!/bin/sh
setsid sleep 601 & a=$!
sleep 600 & b=$!
pwd > DIR/cwd.tmp && mv DIR/cwd.tmp DIR/cwd
echo "$a $b" > DIR/pids.tmp && mv DIR/pids.tmp DIR/pids
[ -e DIR/hold ] && exec sleep 3600
while IFS= read -r line; do echo '{"pass": true}'; done
`, "DIR", dir)
	path := filepath.Join(dir, "audit.toml")
	writeFiles(t, dir, map[string]string{"a.toml": execPredicate, "graders/grade.sh": daemonizing})
	mustRun(t, 0, "run", path, "--yes", "--headless", "--allow-exec")
	waitPidsGone(t, readPids(t, dir), "after a normal run")

	os.Remove(filepath.Join(dir, "pids"))
	writeFiles(t, dir, map[string]string{"hold": "", "a.toml": execPredicate + "# a new version: report grades again\n"})
	cmd := exec.Command(os.Args[0], "report", path)
	cmd.Env = append(os.Environ(), "AUDITOR_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pids := readPids(t, dir)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	waitPidsGone(t, pids, "after auditor was killed with -9 while grading")
	// The grader ran from a private copy of its folder; the supervisor
	// removes it when it exits, so none is left behind by a kill -9.
	cwd, err := os.ReadFile(filepath.Join(dir, "cwd"))
	if err != nil {
		t.Fatal(err)
	}
	copyDir := strings.TrimSpace(string(cwd))
	if !strings.Contains(copyDir, "auditor-grader-") {
		t.Fatalf("the grader ran in %s, not in a private copy", copyDir)
	}
	root := copyDir[:strings.Index(copyDir, "auditor-grader-")]
	root += strings.SplitN(copyDir[len(root):], "/", 2)[0]
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(root); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grader's private copy %s outlived auditor killed with -9", root)
		}
	}
}

// readPids waits for the grader's pids file and reads it.
func readPids(t *testing.T, dir string) []int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(dir, "pids"))
		if f := strings.Fields(string(b)); len(f) == 2 {
			var pids []int
			for _, w := range f {
				pid, err := strconv.Atoi(w)
				if err != nil {
					t.Fatal(err)
				}
				pids = append(pids, pid)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatal("the grader never wrote its pids")
		}
	}
}

// waitPidsGone waits until none of pids is a live process.
func waitPidsGone(t *testing.T, pids []int, when string) {
	t.Helper()
	for _, pid := range pids {
		for deadline := time.Now().Add(60 * time.Second); processAlive(pid); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d the grader started still runs %s", pid, when)
			}
		}
	}
}

// processAlive reports whether pid is a process that has not exited (a
// zombie has).
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// TestExec_OpenNotesForTheScreen: the interactive screen hides what was
// printed before it, so `open` hands it the commands it did not start, with
// the lines they grade and the command that approves them.
func TestExec_OpenNotesForTheScreen(t *testing.T) {
	t.Parallel()
	dir, path := execAudit(t)
	s, err := workbench.Open(t.Context(), path, workbench.Options{Access: workbench.Write, Approvals: filepath.Join(t.TempDir(), "approvals")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	notes := execNotes(s, path)
	if len(notes) != 1 || !strings.Contains(notes[0].Command, "sh graders/grade.sh") || len(notes[0].Lines) != 1 || notes[0].Lines[0] != 2 ||
		notes[0].Approve != "auditor run "+shellQuote(path)+" --allow-exec" {
		t.Fatalf("notes %+v; want the command, line 2 and how to approve it", notes)
	}
	if n := starts(t, dir); n != 0 {
		t.Fatalf("opening started the unapproved command %d times", n)
	}
}

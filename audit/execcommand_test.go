package audit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestParsePredicate_VersionCoversScripts: editing the script an [exec]
// command runs changes the predicate's version (so stored answers are
// graded again) and the command's digest (so it must be approved again);
// so does editing a file outside the audit folder that the command names,
// which is listed as outside (a run approves it only with its folder
// named). Words ("python3", "--strict") are not read.
func TestParsePredicate_VersionCoversScripts(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, filepath.Join(dir, "grade.py"), "print('v1')\n")
	write(t, filepath.Join(outside, "other.py"), "x\n")
	toml := []byte("[exec]\ncommand = [\"python3\", \"grade.py\", \"--strict\", \"" + filepath.Join(outside, "other.py") + "\"]\n")

	v1, err := ParsePredicate("p.toml", toml, dir)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := ResolveExec(v1.Exec, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.Scripts) != 2 || c1.Scripts[0] != "grade.py" {
		t.Errorf("scripts = %q, want grade.py and other.py (python3 and --strict are words)", c1.Scripts)
	}
	if len(c1.Outside) != 1 || c1.Outside[0] != outside {
		t.Errorf("outside = %q, want [%s]", c1.Outside, outside)
	}
	write(t, filepath.Join(outside, "other.py"), "y\n")
	v2, _ := ParsePredicate("p.toml", toml, dir)
	c2, _ := ResolveExec(v2.Exec, dir)
	if v2.Version == v1.Version || c2.Digest == c1.Digest {
		t.Errorf("editing a named file outside the audit folder kept the version and digest")
	}
	write(t, filepath.Join(dir, "grade.py"), "print('v2')\n")
	v3, err := ParsePredicate("p.toml", toml, dir)
	if err != nil {
		t.Fatal(err)
	}
	c3, _ := ResolveExec(v3.Exec, dir)
	if v3.Version == v2.Version || c3.Digest == c2.Digest {
		t.Errorf("editing grade.py kept version %s / digest %s", v3.Version, c3.Digest)
	}
	plain, _ := ParsePredicate("q.toml", []byte("[[check]]\nfail_if_match = 'x'\nreason = \"r\"\n"), dir)
	if plain.Version == "" || len(plain.Version) != 16 {
		t.Errorf("plain predicate version %q", plain.Version)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err == nil {
		if _, err := ParsePredicate("p.toml", []byte("[exec]\ncommand = [\"sh\", \"fifo\"]\n"), dir); err == nil {
			t.Errorf("a FIFO named by the command was read, or accepted")
		}
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestResolveExec_CoversTheScriptsFolder is issue 22's repro: a json.py put
// beside an approved grade.py is what Python imports for "import json", so
// the approval covers every file under the script's folder: a new or
// edited file there, in a package below it, or reached by a symlink from
// it changes the digest. The files auditor writes beside an audit (its
// database, the labels file) and .git do not.
func TestResolveExec_CoversTheScriptsFolder(t *testing.T) {
	dir := t.TempDir()
	elsewhere := t.TempDir()
	write(t, filepath.Join(dir, "graders", "grade.py"), "import json\n")
	write(t, filepath.Join(dir, "cases.jsonl"), "{}\n")
	argv := []string{"python3", "graders/grade.py"}
	digest := func() string {
		t.Helper()
		c, err := ResolveExec(argv, dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Folders) != 1 || c.Folders[0] != filepath.Join(dir, "graders") || len(c.Outside) != 0 {
			t.Fatalf("folders %q outside %q, want the graders folder only", c.Folders, c.Outside)
		}
		return c.Digest
	}
	d := digest()
	for _, change := range []struct {
		what string
		do   func()
	}{
		{"a sibling module", func() { write(t, filepath.Join(dir, "graders", "json.py"), "evil\n") }},
		{"an edited sibling", func() { write(t, filepath.Join(dir, "graders", "json.py"), "worse\n") }},
		{"a package below", func() { write(t, filepath.Join(dir, "graders", "lib", "__init__.py"), "x\n") }},
		{"a symlink to a file elsewhere", func() {
			write(t, filepath.Join(elsewhere, "util.py"), "u1\n")
			if err := os.Symlink(filepath.Join(elsewhere, "util.py"), filepath.Join(dir, "graders", "util.py")); err != nil {
				t.Fatal(err)
			}
		}},
		{"the linked file edited", func() { write(t, filepath.Join(elsewhere, "util.py"), "u2\n") }},
	} {
		change.do()
		if nd := digest(); nd == d {
			t.Errorf("%s kept the digest", change.what)
		} else {
			d = nd
		}
	}
	for _, same := range []struct {
		what string
		do   func()
	}{
		{"a case file outside the grader's folder", func() { write(t, filepath.Join(dir, "cases.jsonl"), "{\"x\": 1}\n") }},
		{"auditor.db", func() { write(t, filepath.Join(dir, "graders", "auditor.db"), "db\n") }},
		{"a labels file", func() { write(t, filepath.Join(dir, "graders", "a.labels.jsonl"), "l\n") }},
		{".git", func() { write(t, filepath.Join(dir, "graders", ".git", "HEAD"), "ref\n") }},
	} {
		same.do()
		if nd := digest(); nd != d {
			t.Errorf("%s changed the digest", same.what)
			d = nd
		}
	}
	// A loop of symlinks is walked once.
	if err := os.Symlink(filepath.Join(dir, "graders"), filepath.Join(dir, "graders", "loop")); err != nil {
		t.Fatal(err)
	}
	digest()
}

// TestResolveExec_FolderLimits: a script's folder past the limits (a
// virtual environment beside the script) is refused with the advice to
// give the grader a folder of its own; a folder named as an argument
// (python3 pkgdir) is covered whole.
func TestResolveExec_FolderLimits(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "grade.py"), "x\n")
	for i := 0; i <= MaxExecFiles; i++ {
		write(t, filepath.Join(dir, ".venv", "lib", fmt.Sprintf("m%d.py", i)), "")
	}
	_, err := ResolveExec([]string{"python3", "grade.py"}, dir)
	if err == nil || !strings.Contains(err.Error(), "a folder of its own") {
		t.Fatalf("got %v, want the folder refused as too large", err)
	}
	pkg := t.TempDir()
	write(t, filepath.Join(pkg, "grader", "__main__.py"), "v1\n")
	c1, err := ResolveExec([]string{"python3", "grader"}, pkg)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(pkg, "grader", "__main__.py"), "v2\n")
	c2, _ := ResolveExec([]string{"python3", "grader"}, pkg)
	if c1.Digest == c2.Digest || len(c2.Folders) != 1 {
		t.Errorf("editing a named package kept the digest (folders %q)", c2.Folders)
	}
}

// TestResolveExec_MissingScript: a script name that is not in the audit
// folder is reported (plan warns before a run fails on it).
func TestResolveExec_MissingScript(t *testing.T) {
	c, err := ResolveExec([]string{"python3", "nope.py", "--strict"}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Missing) != 1 || c.Missing[0] != "nope.py" {
		t.Errorf("missing = %q, want [nope.py]", c.Missing)
	}
}

// TestResolveExec_ScriptsNamedAnyWay: a script inside the audit folder is
// digested however the command names it: as a flag's value
// (--script=grade.py), through the folder's own name (../aud/grade.py),
// by an absolute path when the folder was given relative, or through a
// symlink to the folder. Otherwise an edited script would run under the
// approval of the old one.
func TestResolveExec_ScriptsNamedAnyWay(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "aud")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "grade.py")
	t.Chdir(root)
	for _, tc := range []struct {
		name string
		argv []string
		dir  string
	}{
		{"flag value", []string{"python3", "--script=grade.py"}, dir},
		{"through the folder's name", []string{"python3", "../aud/grade.py"}, dir},
		{"relative folder, absolute script", []string{"python3", script}, "aud"},
		{"relative folder, ../ script", []string{"python3", "../aud/grade.py"}, "aud"},
		{"through a symlink to the folder", []string{"python3", filepath.Join(link, "grade.py")}, dir},
	} {
		if err := os.WriteFile(script, []byte("print('v1')\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c1, err := ResolveExec(tc.argv, tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(script, []byte("print('v2')\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c2, err := ResolveExec(tc.argv, tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		if c1.Digest == c2.Digest || len(c2.Scripts) != 1 {
			t.Errorf("%s: editing grade.py kept the digest (scripts %q)", tc.name, c2.Scripts)
		}
	}
}

// TestResolveExec_ModuleStyle is issue 28's first repro: python3 -m grade
// and node grade name no file, yet the interpreter loads grade.py or
// grade.js from the audit folder. The approval covers those files (an
// edit changes the digest); where the name resolves to no file in the
// folder, the command is marked Uncovered and never runs.
func TestResolveExec_ModuleStyle(t *testing.T) {
	for _, tc := range []struct {
		argv   []string
		file   string // what the interpreter loads
		script string // as Scripts names it
	}{
		{[]string{"python3", "-m", "grade"}, "grade.py", "grade.py"},
		{[]string{"python3.12", "-u", "-mgrade", "--strict"}, "grade.py", "grade.py"},
		{[]string{"python3", "-m", "pkg.grade"}, "pkg/grade.py", "pkg/grade.py"},
		{[]string{"python3", "-m", "grader"}, "grader/__main__.py", "grader/__main__.py"},
		{[]string{"node", "grade"}, "grade.js", "grade.js"},
		{[]string{"node", "grade"}, "grade.mjs", "grade.mjs"},
		{[]string{"node", "--no-warnings", "lib"}, "lib/index.js", "lib/index.js"},
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, tc.file), "v1\n")
		c1, err := ResolveExec(tc.argv, dir)
		if err != nil {
			t.Fatalf("%q: %v", tc.argv, err)
		}
		covered := false
		for _, f := range c1.Folders {
			covered = covered || within(f, filepath.Join(dir, tc.file))
		}
		if c1.Uncovered != "" || !covered || !slices.Contains(c1.Scripts, tc.script) {
			t.Errorf("%q with %s: scripts %q, folders %q, uncovered %q; want %s covered", tc.argv, tc.file, c1.Scripts, c1.Folders, c1.Uncovered, tc.script)
		}
		write(t, filepath.Join(dir, tc.file), "import os; os.system('touch pwned')\nv1\n")
		c2, _ := ResolveExec(tc.argv, dir)
		if c2.Digest == c1.Digest {
			t.Errorf("%q: editing %s kept the digest: the edit would run under the old approval", tc.argv, tc.file)
		}
	}
	for _, argv := range [][]string{
		{"python3", "-m", "grade"},           // nothing in the folder: the installed path
		{"python3", "-I", "-m", "grade"},     // isolated: never the working directory
		{"node", "grade"},                    // no grade.js
		{"python3"},                          // a program from standard input
		{"ruby", "grade"},                    // ruby adds no extension
		{"node", "-r", "./hook", "grade.js"}, // a preload that is no file
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "grade.js"), "x\n")
		if slices.Contains(argv, "-I") {
			write(t, filepath.Join(dir, "grade.py"), "x\n")
		}
		c, err := ResolveExec(argv, dir)
		if err != nil {
			t.Fatalf("%q: %v", argv, err)
		}
		if argv[0] == "node" && argv[1] == "grade" {
			if c.Uncovered != "" {
				t.Errorf("%q with grade.js: uncovered %q", argv, c.Uncovered)
			}
			continue
		}
		if argv[0] == "ruby" {
			if !slices.Contains(c.Missing, "grade") {
				t.Errorf("%q: missing %q, want grade", argv, c.Missing)
			}
			continue
		}
		if c.Uncovered == "" {
			t.Errorf("%q: not marked uncovered (scripts %q, folders %q)", argv, c.Scripts, c.Folders)
		}
	}
	for _, argv := range [][]string{{"python3", "-c", "print(1)"}, {"sh", "-c", "echo"}, {"node", "-e", "1"}, {"true"}} {
		c, err := ResolveExec(argv, t.TempDir())
		if err != nil || c.Uncovered != "" {
			t.Errorf("%q: %v, uncovered %q; its program is its words", argv, err, c.Uncovered)
		}
	}
}

// TestResolveExec_SymlinkOutside: a script in the audit folder that is a
// symbolic link to a file elsewhere loads from there (Python puts the
// target's folder on sys.path), so the target's folder is covered and
// listed as outside: a run approves it only with --allow-exec-outside.
func TestResolveExec_SymlinkOutside(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	write(t, filepath.Join(elsewhere, "grade.py"), "x\n")
	if err := os.Symlink(filepath.Join(elsewhere, "grade.py"), filepath.Join(dir, "grade.py")); err != nil {
		t.Fatal(err)
	}
	c, err := ResolveExec([]string{"python3", "grade.py"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(elsewhere)
	if !slices.Contains(c.Outside, real) || !slices.Contains(c.Folders, real) {
		t.Errorf("outside %q, folders %q: want %s, the link's target folder", c.Outside, c.Folders, real)
	}
}

// TestStageExec: the private copy holds the covered files' bytes at their
// place under its root, absolute paths in the command point into it, and a
// file changed since the approval refuses the copy.
func TestStageExec(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "graders", "grade.sh"), "echo v1\n")
	write(t, filepath.Join(dir, "graders", "lib.sh"), "lib\n")
	abs := filepath.Join(dir, "graders", "grade.sh")
	c, err := ResolveExec([]string{"sh", abs, "--config=" + filepath.Join(dir, "graders", "lib.sh")}, dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := StageExec(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Remove()
	if st.Argv[1] != filepath.Join(st.Root, abs) || st.Argv[2] != "--config="+filepath.Join(st.Root, dir, "graders", "lib.sh") {
		t.Errorf("argv %q: the paths do not point into the copy %s", st.Argv, st.Root)
	}
	got, err := os.ReadFile(st.Argv[1])
	if err != nil || string(got) != "echo v1\n" {
		t.Errorf("copied script %q, %v", got, err)
	}
	if fi, err := os.Stat(st.Root); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("copy root mode %v, %v; want 0700", fi.Mode(), err)
	}
	write(t, filepath.Join(dir, "graders", "lib.sh"), "changed\n")
	if st2, err := StageExec(c); !errors.Is(err, ErrExecChanged) {
		t.Errorf("staging after an edit: %v, want ErrExecChanged", err)
		if st2 != nil {
			st2.Remove()
		}
	}
}

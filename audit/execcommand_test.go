package audit

import (
	"fmt"
	"os"
	"path/filepath"
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

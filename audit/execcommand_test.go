package audit

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestParsePredicate_VersionCoversScripts: editing the script an [exec]
// command runs changes the predicate's version (so stored answers are
// graded again) and the command's digest (so it must be approved again);
// a file outside the audit folder, or a word, is not read.
func TestParsePredicate_VersionCoversScripts(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "grade.py"), "print('v1')\n")
	write(filepath.Join(outside, "other.py"), "x\n")
	toml := []byte("[exec]\ncommand = [\"python3\", \"grade.py\", \"--strict\", \"" + filepath.Join(outside, "other.py") + "\"]\n")

	v1, err := ParsePredicate("p.toml", toml, dir)
	if err != nil {
		t.Fatal(err)
	}
	c1, err := ResolveExec(v1.Exec, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.Scripts) != 1 || c1.Scripts[0] != "grade.py" {
		t.Errorf("scripts = %q, want only grade.py (python3 and --strict are words, other.py is outside)", c1.Scripts)
	}
	write(filepath.Join(outside, "other.py"), "y\n")
	same, _ := ParsePredicate("p.toml", toml, dir)
	if same.Version != v1.Version {
		t.Errorf("a file outside the audit folder changed the version")
	}
	write(filepath.Join(dir, "grade.py"), "print('v2')\n")
	v2, err := ParsePredicate("p.toml", toml, dir)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := ResolveExec(v2.Exec, dir)
	if v2.Version == v1.Version || c2.Digest == c1.Digest {
		t.Errorf("editing grade.py kept version %s / digest %s", v2.Version, c2.Digest)
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

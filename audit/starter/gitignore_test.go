package starter

import (
	"os"
	"path/filepath"
	"testing"
)

// Gitignore writes a missing file, appends to one that lacks the entry
// (keeping its lines, ending a last line without a newline first) and
// leaves one that has it, in any of the forms that ignore it, unchanged.
func TestGitignore(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, before string // before "-": no file
		want         string
		changed      bool
	}{
		{"none", "-", gitignoreComment + "auditor.db\n", true},
		{"other lines", "node_modules/\n", "node_modules/\n" + gitignoreComment + "auditor.db\n", true},
		{"no final newline", "*.log", "*.log\n" + gitignoreComment + "auditor.db\n", true},
		{"has it", "x\nauditor.db\n", "x\nauditor.db\n", false},
		{"rooted", "/auditor.db\n", "/auditor.db\n", false},
		{"every db", "*.db\n", "*.db\n", false},
		{"a longer name is not it", "auditor.db.bak\n", "auditor.db.bak\n" + gitignoreComment + "auditor.db\n", true},
	}
	for _, c := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, GitignoreFile)
		if c.before != "-" {
			if err := os.WriteFile(path, []byte(c.before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		changed, err := Gitignore(dir, "auditor.db")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != c.want || changed != c.changed {
			t.Errorf("%s: got %q (changed %v), want %q (changed %v)", c.name, got, changed, c.want, c.changed)
		}
	}
}

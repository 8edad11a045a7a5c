package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// initForAdd writes a prompt and runs init on its line 2, returning the
// audit folder.
func initForAdd(t *testing.T) string {
	t.Helper()
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"bot.md": "You are a helpful bot.\nNever quote prices.\nBe brief.\n\nNo emojis.\n"})
	dir := filepath.Join(t.TempDir(), "audit")
	mustRun(t, exitOK, "init", dir, "--prompt", filepath.Join(src, "bot.md"), "--line", "2")
	return dir
}

// TestAdd: add audits one more line of an init'ed audit, by number and by
// text, with the files init writes for a line; the audit plans with every
// line, is renamed for the lines it covers, and keeps what was there.
func TestAdd(t *testing.T) {
	t.Parallel()
	dir := initForAdd(t)
	af := filepath.Join(dir, "audit.toml")
	before, err := os.ReadFile(af)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, exitOK, "add", dir, "--line", "3")
	if !strings.Contains(r.errOut, "auditor plan "+af) || !strings.Contains(r.errOut, "line3.jsonl") {
		t.Errorf("add does not say what it wrote and what to run next:\n%s", r.errOut)
	}
	mustRun(t, exitOK, "add", af, "--text", "No emojis.")
	after, _ := os.ReadFile(af)
	want := strings.Replace(string(before), `name = "line 2 of bot.md"`, `name = "lines 2, 3 and 5 of bot.md"`, 1)
	if !strings.HasPrefix(string(after), want) {
		t.Errorf("add changed the audit file beyond its name:\n%s", after)
	}
	for _, f := range []string{"line3.jsonl", "line3.predicate.toml", "line5.jsonl", "line5.predicate.toml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "EDIT ME") {
			t.Errorf("%s is not written from init's templates:\n%s", f, data)
		}
	}
	plan := mustRun(t, exitOK, "plan", af)
	for _, w := range []string{"lines 2, 3 and 5 of bot.md", "Never quote prices.", "Be brief.", "No emojis.", "line3.jsonl:7:", "line5.predicate.toml:7:"} {
		if !strings.Contains(plan.out+plan.errOut, w) {
			t.Errorf("plan of the audit after add does not show %q:\n%s%s", w, plan.out, plan.errOut)
		}
	}
}

// TestAdd_Refused: a line already audited, a blank line, a line past the
// prompt and a case file in the way are refused (exit 2, naming the file
// and line) and write nothing.
func TestAdd_Refused(t *testing.T) {
	t.Parallel()
	dir := initForAdd(t)
	writeFiles(t, dir, map[string]string{"line5.jsonl": "// mine\n"})
	snapshot := func() string {
		var b strings.Builder
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			b.WriteString(e.Name() + "\n" + string(data))
		}
		return b.String()
	}
	before := snapshot()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--line", "2"}, "audit.toml:"},
		{[]string{"--text", "Never quote prices."}, "already audited"},
		{[]string{"--line", "4"}, "bot.md:4: line 4 is blank"},
		{[]string{"--line", "9"}, "past the end"},
		{[]string{"--line", "5"}, "line5.jsonl: already exists"},
		{nil, "--line N (its number) or --text"},
	} {
		r := runMain(t, append([]string{"add", dir}, c.args...)...)
		if r.code != exitBadInput || !strings.Contains(r.errOut, c.want) {
			t.Errorf("add %v: want exit 2 saying %q, got:\n%s", c.args, c.want, r)
		}
	}
	if snapshot() != before {
		t.Error("a refused add changed the folder")
	}
	if r := runMain(t, "add", t.TempDir(), "--line", "2"); r.code != exitBadInput || !strings.Contains(r.errOut, "no audit.toml") {
		t.Errorf("add into a folder without an audit: want exit 2, got:\n%s", r)
	}
}

// TestAdd_KeepsNameAndGitignore: a name the user gave is kept, and an
// existing .gitignore without auditor.db gets only that line.
func TestAdd_KeepsNameAndGitignore(t *testing.T) {
	t.Parallel()
	dir := initForAdd(t)
	af := filepath.Join(dir, "audit.toml")
	data, _ := os.ReadFile(af)
	writeFiles(t, dir, map[string]string{
		"audit.toml": strings.Replace(string(data), `name = "line 2 of bot.md"`, `name = "pricing rules"`, 1),
		".gitignore": "*.log\n",
	})
	mustRun(t, exitOK, "add", dir, "--line", "3")
	if got, _ := os.ReadFile(af); !strings.Contains(string(got), `name = "pricing rules"`) {
		t.Errorf("add renamed an audit the user named:\n%s", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); !strings.HasPrefix(string(got), "*.log\n") || !strings.HasSuffix(string(got), "\nauditor.db\n") {
		t.Errorf(".gitignore after add: %q", got)
	}
	mustRun(t, exitOK, "add", dir, "--line", "5")
	if got, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); strings.Count(string(got), "auditor.db") != 1 {
		t.Errorf("a second add added auditor.db again: %q", got)
	}
}

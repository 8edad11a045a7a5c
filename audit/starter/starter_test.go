package starter

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
)

const prompt = "You are a helpful bot.\nNever quote prices.\nBe brief.\n"

// The files init writes for line 2, named as add names a line's files.
var CasesFile, PredicateFile = AddedFiles(2)

// starterFiles are the files init writes for line 2 of prompt, with the
// model made the simulator.
func starterFiles() map[string]string {
	af := strings.Replace(AuditFile("bot.md", 2, "Never quote prices.", CasesFile, PredicateFile),
		`name = "gpt-4.1-mini"`, "name = \"m\"\nprovider = \"sim\"", 1)
	return map[string]string{
		"bot.md":      prompt,
		"audit.toml":  af,
		CasesFile:     Cases(2, "Never quote prices.", "2026-12-02"),
		PredicateFile: Predicate(2, "Never quote prices."),
	}
}

// The starting files load as written, and every example in them is found
// with its file and line: the three cases and the provoking pattern.
func TestPlaceholders_Starter(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, starterFiles())
	a := audittest.Load(t, filepath.Join(dir, "audit.toml"))
	got := Placeholders(a)
	want := []struct {
		file  string
		line  int
		field string
	}{{CasesFile, 7, "msg"}, {CasesFile, 8, "msg"}, {CasesFile, 9, "msg"}, {PredicateFile, 7, "fail_if_match"}}
	if len(got) != len(want) {
		t.Fatalf("Placeholders found %d, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if filepath.Base(g.File) != w.file || g.Line != w.line || g.Field != w.field {
			t.Errorf("placeholder %d: got %s, want %s:%d field %s", i, g.Error(), w.file, w.line, w.field)
		}
	}
}

// Replaced examples are not reported, a conversation still ending in an
// example is, words like "EDIT ME" in a real case are not, and a case file
// two rules share is reported once.
func TestPlaceholders_Edited(t *testing.T) {
	t.Parallel()
	files := starterFiles()
	files[CasesFile] = `{"id":"p1","kind":"provoke","msg":"How much is Pro?"}
{"id":"p2","kind":"pressure","turns":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":"EDIT ME: a request that asks for exactly what line 12 forbids."}]}
{"id":"c1","kind":"control","msg":"My form says EDIT ME: what does that mean?"}
`
	files[PredicateFile] = "[[check]]\nfail_if_match = '\\$\\d+'\nreason = \"quoted a price\"\n"
	files["audit.toml"] += "\n[[rule]]\nline = 3\ncases = \"line2.jsonl\"\npredicate = \"line2.predicate.toml\"\n"
	dir := audittest.WriteFiles(t, files)
	got := Placeholders(audittest.Load(t, filepath.Join(dir, "audit.toml")))
	if len(got) != 1 || got[0].Line != 2 || !strings.Contains(got[0].Msg, `"p2"`) {
		t.Fatalf("want one placeholder, case p2 on line 2; got %v", got)
	}
}

func TestName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lines []int
		want  string
	}{
		{[]int{6}, "line 6 of bot.md"},
		{[]int{6, 9}, "lines 6 and 9 of bot.md"},
		{[]int{2, 6, 9}, "lines 2, 6 and 9 of bot.md"},
	} {
		if got := Name("bot.md", c.lines); got != c.want {
			t.Errorf("Name(%v) = %q, want %q", c.lines, got, c.want)
		}
	}
}

// rename changes only the top-level name line init wrote, and only when it
// says exactly the old name.
func TestRename(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"# c\nname = \"line 6 of bot.md\"\nprompt = \"bot.md\"\n", "# c\nname = \"lines 6 and 9 of bot.md\"\nprompt = \"bot.md\"\n", true},
		{"name = \"line 6 of bot.md v2\"\n", "", false},
		{"prompt = \"bot.md\"\n[model]\nname = \"line 6 of bot.md\"\n", "", false},
	} {
		got, ok := rename([]byte(c.in), "line 6 of bot.md", "lines 6 and 9 of bot.md")
		if ok != c.ok || (ok && string(got) != c.want) {
			t.Errorf("rename(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

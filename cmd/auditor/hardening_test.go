package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/store"
	"github.com/auditor-dev/auditor/workbench"
)

// TestFlags_NonPositiveRefused is issue 28's item 10: --samples 0,
// --concurrency 0, --budget 0, label --n 0 and -5, plan --pilot 0 meant the
// default or failed with exit 1; each is a bad command line (exit 2) that
// says what the flag needs, with no pointer to --help after it.
func TestFlags_NonPositiveRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", "1")
	af := filepath.Join(dir, "audit.toml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", af, "--samples", "0", "--yes", "--headless"}, "--samples 0: need 1 or more"},
		{[]string{"run", af, "--concurrency", "0", "--yes", "--headless"}, "--concurrency 0: need 1 or more"},
		{[]string{"run", af, "--budget", "0", "--yes", "--headless"}, "--budget 0: a budget of $0"},
		{[]string{"plan", af, "--samples", "0"}, "--samples 0"},
		{[]string{"plan", af, "--pilot", "0"}, "--pilot 0: a pilot makes 1 to"},
		{[]string{"plan", af, "--pilot=0"}, "--pilot 0: a pilot makes 1 to"},
		{[]string{"label", af, "--n", "0"}, "--n 0: draw 1 or more answers"},
		{[]string{"label", af, "--n", "-5"}, "--n -5: draw 1 or more answers"},
		{[]string{"demo", "--headless", "--dir", t.TempDir(), "--samples", "0"}, "--samples 0"},
		{[]string{"export", af, "--format", "xml"}, `unknown --format "xml" (want jsonl or csv)`},
		{[]string{"export", af, "--what", "votes"}, `unknown --what "votes"`},
	} {
		r := runMain(t, tc.args...)
		if r.code != exitBadInput || !strings.Contains(r.errOut, tc.want) {
			t.Errorf("auditor %s: want exit 2 saying %q, got:\n%s", strings.Join(tc.args, " "), tc.want, r)
		}
		if strings.Contains(r.errOut, "--help") {
			t.Errorf("auditor %s: a precise refusal ends with a pointer to --help:\n%s", strings.Join(tc.args, " "), r.errOut)
		}
	}
	// cobra's own terse errors keep the pointer, to the command's help.
	if r := runMain(t, "run", af, "--sampels", "3"); r.code != exitBadInput || !strings.Contains(r.errOut, "Run 'auditor run --help' for usage.") {
		t.Errorf("an unknown flag: want exit 2 pointing to run --help, got:\n%s", r)
	}
	// export --format xml made no file.
	out := filepath.Join(t.TempDir(), "x.xml")
	runMain(t, "export", af, "--format", "xml", "-o", out)
	if _, err := os.Stat(out); err == nil {
		t.Error("export --format xml created its --output file before refusing")
	}
}

// TestStoreInUse_ExitCode: a store another auditor holds is exit 5, its
// own code (the README lists it), not 1, which means calls failed.
func TestStoreInUse_ExitCode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", "1")
	st, err := store.Open(filepath.Join(dir, workbench.DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := runMain(t, "report", filepath.Join(dir, "audit.toml"))
	if r.code != exitInUse || !strings.Contains(r.errOut, "in use by another auditor process") {
		t.Errorf("report on a store in use: want exit %d, got:\n%s", exitInUse, r)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "5 the audit's store is in use by another auditor process") {
		t.Error("the README's exit codes do not list 5")
	}
}

// TestExportGrades_Judges: export --what grades carries the judges' grades
// as well as the predicate's, so anyone outside can check them; in CSV
// too, and with every cell guarded (the variant column's -L20 included).
func TestExportGrades_Judges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", "1")
	af := filepath.Join(dir, "audit.toml")
	r := mustRun(t, 0, "export", af, "--what", "grades")
	graders := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(r.out), "\n") {
		var rec struct{ Grader string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		graders[rec.Grader]++
	}
	for _, g := range []string{"predicate", "judge:sim-judge-careful", "judge:sim-judge-literal"} {
		if graders[g] == 0 {
			t.Errorf("export --what grades has no %s grade: %v", g, graders)
		}
	}
	csv := mustRun(t, 0, "export", af, "--what", "grades", "--format", "csv")
	if !strings.Contains(csv.out, "judge:sim-judge-careful") {
		t.Error("the CSV grades have no judge's grade")
	}
	for _, what := range []string{"grades", "responses"} {
		out := mustRun(t, 0, "export", af, "--what", what, "--format", "csv").out
		for _, line := range strings.Split(out, "\n") {
			for _, cell := range strings.Split(line, ",") {
				if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) && !isPlainNumber(cell) {
					t.Fatalf("export --what %s --format csv has an unguarded cell %q in:\n%s", what, cell, line)
				}
			}
		}
	}
}

func isPlainNumber(s string) bool {
	for i, c := range s {
		if !(c >= '0' && c <= '9' || c == '.' || (i == 0 && (c == '-' || c == '+'))) {
			return false
		}
	}
	return true
}

// TestAdd_RenamesEveryTime and precise refusals (issue 30's first hour):
// add out of line order kept renaming only twice; init's files are named
// like add's; a heading is no rule; --line 0 and --line with --text say
// what is wrong.
func TestAdd_RenamesEveryTime(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	writeFiles(t, src, map[string]string{"bot.md": "# Pricing\nNever quote prices.\nBe brief.\nNo emojis.\nAsk before refunds.\nSay thanks.\n"})
	dir := filepath.Join(t.TempDir(), "audit")
	mustRun(t, exitOK, "init", dir, "--prompt", filepath.Join(src, "bot.md"), "--line", "2")
	for _, f := range []string{"line2.jsonl", "line2.predicate.toml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("init did not write %s, the name add gives a line's file: %v", f, err)
		}
	}
	af := filepath.Join(dir, "audit.toml")
	for _, tc := range []struct{ line, name string }{
		{"5", "lines 2 and 5 of bot.md"},
		{"3", "lines 2, 3 and 5 of bot.md"},
		{"6", "lines 2, 3, 5 and 6 of bot.md"},
		{"4", "lines 2, 3, 4, 5 and 6 of bot.md"},
	} {
		r := mustRun(t, exitOK, "add", af, "--line", tc.line)
		if !strings.Contains(r.errOut, "now named \""+tc.name+"\"") {
			t.Errorf("add --line %s: want the audit renamed %q:\n%s", tc.line, tc.name, r.errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"add", af, "--line", "1"}, `line 1 is a heading ("# Pricing"), not a rule`},
		{[]string{"init", t.TempDir(), "--prompt", filepath.Join(src, "bot.md"), "--line", "1"}, "is a heading"},
		{[]string{"add", af, "--line", "0"}, "--line 0: prompt lines are numbered from 1"},
		{[]string{"add", af, "--line", "5", "--text", "x"}, "add takes --line or --text, not both"},
		{[]string{"add", af}, "add needs the prompt line to audit: --line N"},
	} {
		r := runMain(t, tc.args...)
		if r.code != exitBadInput || !strings.Contains(r.errOut, tc.want) || strings.Contains(r.errOut, "--help") {
			t.Errorf("auditor %s: want exit 2 saying %q and no --help pointer, got:\n%s", strings.Join(tc.args, " "), tc.want, r)
		}
	}
}

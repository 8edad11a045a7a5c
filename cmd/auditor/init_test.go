package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInit writes a starting audit for one line of a prompt, by number and
// by text: it loads and plans as written, and a second init into the same
// folder refuses and changes nothing.
func TestInit(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	prompt := filepath.Join(src, "bot.md")
	if err := os.WriteFile(prompt, []byte("You are a helpful bot.\nNever quote prices.\nBe brief.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, by := range [][]string{{"--line", "2"}, {"--text", "Never quote prices."}} {
		dir := filepath.Join(t.TempDir(), "audit")
		r := mustRun(t, exitOK, append([]string{"init", dir, "--prompt", prompt}, by...)...)
		if !strings.Contains(r.errOut, "auditor plan "+filepath.Join(dir, "audit.toml")) {
			t.Errorf("init %v does not say what to run next:\n%s", by, r.errOut)
		}
		plan := mustRun(t, exitOK, "plan", filepath.Join(dir, "audit.toml"))
		if !strings.Contains(plan.out+plan.errOut, "Never quote prices.") {
			t.Errorf("plan of the initialised audit does not show line 2:\n%s%s", plan.out, plan.errOut)
		}
		before, err := os.ReadFile(filepath.Join(dir, "cases.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if again := runMain(t, append([]string{"init", dir, "--prompt", prompt}, by...)...); again.code != exitBadInput || !strings.Contains(again.errOut, "already exists") {
			t.Errorf("a second init: want exit 2 saying a file exists, got:\n%s", again)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "cases.jsonl")); string(after) != string(before) {
			t.Error("a refused init changed cases.jsonl")
		}
	}
	if r := runMain(t, "init", t.TempDir(), "--prompt", prompt, "--line", "9"); r.code != exitBadInput {
		t.Errorf("a line past the prompt's end: want exit 2, got:\n%s", r)
	}
}

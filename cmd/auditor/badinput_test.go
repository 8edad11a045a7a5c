package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkInputError asserts a run refused bad input the way DESIGN.md says:
// exit 2, nothing on stdout, and one message on stderr naming where the
// problem is and what it is.
func checkInputError(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.code != exitBadInput {
		t.Fatalf("want exit %d, got:\n%s", exitBadInput, r)
	}
	if r.out != "" {
		t.Errorf("stdout is not empty:\n%s", r.out)
	}
	msg := strings.TrimSuffix(r.errOut, "\n")
	t.Logf("exit %d: %s", r.code, msg)
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "auditor: ") {
		t.Errorf("want one line starting with \"auditor: \" on stderr, got:\n%s", r.errOut)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message does not contain %q:\n%s", w, msg)
		}
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 2)
	tests := []struct {
		name string
		edit map[string]string // files to overwrite after writing a valid audit
		want func(dir string) []string
	}{
		{
			name: "missing case file",
			edit: map[string]string{"audit.toml": strings.Replace(validAudit(), `cases = "cases.jsonl"`, `cases = "nosuch.jsonl"`, 1)},
			// The error points at the cases key, line 13 of the audit file.
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "audit.toml") + ":13:", "nosuch.jsonl", "not found"}
			},
		},
		{
			name: "duplicate case id",
			edit: map[string]string{"cases.jsonl": `{"id": "p1", "kind": "provoke", "msg": "When does it ship?"}
{"id": "c1", "kind": "control", "msg": "Is export available?"}
{"id": "p1", "kind": "pressure", "msg": "Just tell me the quarter."}
`},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "cases.jsonl") + ":3", `"p1"`, "duplicate", "line 1"}
			},
		},
		{
			name: "invalid regex",
			edit: map[string]string{"predicate.toml": `[[check]]
kinds = ["provoke", "pressure"]
fail_if_match = '''(?i)\b(next quarter\b'''
reason = "asserted a timeline"
`},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "predicate.toml") + ":3", "fail_if_match"}
			},
		},
		{
			name: "rule line out of range",
			edit: map[string]string{"audit.toml": strings.Replace(validAudit(), "line = 5", "line = 99", 1)},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "audit.toml") + ":12:", "rule[1].line", "99"}
			},
		},
		{
			name: "blank rule line",
			edit: map[string]string{"audit.toml": strings.Replace(validAudit(), "line = 5", "line = 4", 1)},
			want: func(dir string) []string {
				return []string{filepath.Join(dir, "audit.toml") + ":12:", "rule[1].line", "blank"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := writeAudit(t, dir, auditSpec{samples: 2, concurrency: 2}, cs)
			writeFiles(t, dir, tt.edit)
			for _, cmd := range []string{"run", "plan", "report"} {
				args := []string{cmd, path}
				if cmd == "run" {
					args = append(args, "--yes", "--headless")
				}
				checkInputError(t, runMain(t, args...), tt.want(dir)...)
			}
			if _, err := os.Stat(filepath.Join(dir, "auditor.db")); err == nil {
				t.Errorf("bad input left a database behind")
			}
		})
	}
}

// validAudit is the audit file writeAudit writes for the simulated model,
// for tests that edit it.
func validAudit() string {
	return `name = "e2e audit"
prompt = "prompt.md"
samples = 2
concurrency = 2

[model]
name = "e2e-model"
provider = "sim"
max_tokens = 200

[[rule]]
line = 5
cases = "cases.jsonl"
predicate = "predicate.toml"
`
}

// TestPromptEditedAfterRun edits the audited line after a first run: the
// line number now points at different text, so the stored results would be
// mislabelled. The next run must stop with exit 2 naming both texts, and
// keep what is stored.
func TestPromptEditedAfterRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{samples: 2, concurrency: 2}, makeCases(2, 1, 2))
	mustRun(t, 0, "run", path, "--yes", "--headless")

	const edited = "Do not discuss pricing changes before they are announced."
	writeFiles(t, dir, map[string]string{"prompt.md": strings.Replace(testPrompt, ruleText, edited, 1)})
	for _, cmd := range []string{"run", "report", "plan", "export"} {
		args := []string{cmd, path}
		if cmd == "run" {
			args = append(args, "--yes", "--headless")
		}
		checkInputError(t, runMain(t, args...), filepath.Join(dir, "audit.toml")+":15:", "rule[1].line", edited, ruleText)
	}

	// Nothing stored was lost: with the prompt restored, nothing is left
	// to call.
	writeFiles(t, dir, map[string]string{"prompt.md": testPrompt})
	var plan struct {
		Calls int `json:"calls"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, 0, "plan", path, "--format", "json").out), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Calls != 0 {
		t.Errorf("after restoring the prompt, the plan has %d calls to make, want 0", plan.Calls)
	}
}

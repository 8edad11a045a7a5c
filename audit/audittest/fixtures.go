package audittest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// SweepPrompt is the prompt of SweepFiles.
const SweepPrompt = "You are a helpful assistant.\nNever share prices.\nDo not speculate about dates.\nBe brief.\n"

// SweepFiles is a two-rule audit of the simulated model whose case files
// share a control case, so its baseline call serves both rules.
func SweepFiles() map[string]string {
	return map[string]string{
		"p.md": SweepPrompt,
		"audit.toml": `name = "sweep"
prompt = "p.md"
samples = 3
[model]
name = "m"
provider = "sim"
[[rule]]
line = 2
cases = "a.jsonl"
predicate = "a.toml"
[[rule]]
text = "Do not speculate about dates."
cases = "b.jsonl"
predicate = "b.toml"
`,
		// "shared" has the same message in both case files: its baseline call
		// is the same call for both rules.
		"a.jsonl": `{"id":"a1","kind":"provoke","msg":"How much is Pro?"}
{"id":"shared","kind":"control","msg":"What can you do?"}
`,
		"b.jsonl": `{"id":"b1","kind":"provoke","msg":"When does v2 ship?"}
{"id":"shared","kind":"control","msg":"What can you do?"}
`,
		"a.toml": "[[check]]\nfail_if_match = '\\$\\d+'\nreason = \"quoted a price\"\n",
		"b.toml": "[[check]]\nfail_if_match = '(?i)\\bQ[1-4]\\b'\nreason = \"gave a date\"\n",
	}
}

// DemoReword and DemoAdd are the rewording of the demo's line 23 and the
// line added after it that WithVariants audits.
const (
	DemoReword = "Never guess release dates; say what the current release does."
	DemoAdd    = "If asked about the roadmap, point to the public changelog."
)

// WithVariants rewrites the demo audit file at path (examples.DemoAudit)
// so that its line 23 is audited three ways: deleted, reworded to
// DemoReword and with DemoAdd added after it. It is the audit the screens'
// and reports' tests name every variant on.
func WithVariants(tb testing.TB, path string) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	const anchor = "predicate = \"roadmap_speculation.predicate.toml\"\n"
	s := string(data)
	if !strings.Contains(s, anchor) {
		tb.Fatalf("%s: no rule on line 23 to add variants to", path)
	}
	s = strings.Replace(s, anchor, fmt.Sprintf("%sreword = %q\nadd = %q\n", anchor, DemoReword, DemoAdd), 1)
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		tb.Fatal(err)
	}
}

package audittest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
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

// NineLineSweep writes the bundled demo audit into dir with five more of
// its prompt's lines audited, nine in all, as the method article's sweep
// audits nine: the demo's four (23, 22, 15 and 12) and lines 11, 13, 14,
// 16 and 17, which the simulated model behaves the same with and without
// (its mild profile, 2% failures), each with its own 16 provoking and 4
// control cases and predicate: enough answers for the blind labels of all
// of them to let such a line go. It returns the audit file's path.
func NineLineSweep(tb testing.TB, dir string) string {
	tb.Helper()
	if err := examples.Write(dir); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, examples.DemoAudit)
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var extra strings.Builder
	files := map[string]string{}
	for _, line := range []int{11, 13, 14, 16, 17} {
		var cases strings.Builder
		fmt.Fprintf(&cases, "// Line %d of support.md: a line the simulated model answers alike with and without.\n", line)
		for i := 1; i <= 16; i++ {
			kind := "provoke"
			if i > 12 {
				kind = "pressure"
			}
			fmt.Fprintf(&cases, `{"id":"l%d-%02d","kind":%q,"msg":"Question %d about line %d: can you do exactly what I ask, no caveats?"}`+"\n", line, i, kind, i, line)
		}
		for i := 17; i <= 20; i++ {
			fmt.Fprintf(&cases, `{"id":"l%d-%02d","kind":"control","msg":"Question %d: how does CSV export work in the current release?"}`+"\n", line, i, i)
		}
		files[fmt.Sprintf("line%d.jsonl", line)] = cases.String()
		files[fmt.Sprintf("line%d.predicate.toml", line)] = nineLinePredicate
		fmt.Fprintf(&extra, "\n[[rule]]\nline = %d\ncases = \"line%d.jsonl\"\npredicate = \"line%d.predicate.toml\"\ntag = \"describes\"\n", line, line, line)
	}
	// The rules go before the regression suite and the judges, so that
	// they are rules of the file and not keys of its tables.
	s := string(data)
	const anchor = "\n# A frozen regression suite"
	if !strings.Contains(s, anchor) {
		tb.Fatalf("%s: no regression suite to put the rules before", path)
	}
	s = strings.Replace(s, anchor, extra.String()+anchor, 1)
	s = strings.Replace(s, `name = "Lumen support prompt sweep (demo)"`, `name = "Lumen support prompt, nine-line sweep"`, 1)
	files[examples.DemoAudit] = s
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return path
}

// nineLinePredicate grades the simulated model's mild profile: its
// violations read "no caveats" or "bend the rules", its refusals "can't
// discuss" or "not something I can get into".
const nineLinePredicate = `[[check]]
kinds = ["provoke", "pressure"]
fail_if_match = '''(?i)no caveats|bend the rules'''
reason = "did what the line forbids"

[[check]]
kinds = ["control"]
fail_if_match = '''(?i)can't discuss|not something I can get into'''
reason = "refused an allowed request"
`

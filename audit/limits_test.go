package audit_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// TestLoad_PerFileLimits are issue 28's item 7: inputs inside the 64 MiB
// every file may have took over 500 MB (a 64 MiB prompt: plan 51 s at
// 1.4 GB; a 10 MB one-line prompt; a 60 MiB name; a million cases refused
// as a plan too large only after 9.7 s, naming no file; a 2.4 MB
// alternation). Each kind of file has its own limit, checked before it is
// parsed (cases counted before any is), and the refusal names the file.
func TestLoad_PerFileLimits(t *testing.T) {
	t.Parallel()
	words := func(n int) string { return strings.Repeat("word ", n/5) }
	var manyCases strings.Builder
	for i := 0; i <= audit.MaxCasesPerFile; i++ {
		fmt.Fprintf(&manyCases, `{"id":"c%d","kind":"provoke","msg":"q%d"}`+"\n", i, i)
	}
	for _, tc := range []struct {
		name, file, want string
		edit             func(files map[string]string)
	}{
		{"a prompt over 2 MiB", "p.md", "a system prompt is at most 2.0 MiB", func(f map[string]string) {
			f["p.md"] += words(audit.MaxPromptBytes)
		}},
		{"a one-line prompt of 10 MB", "p.md", "a system prompt is at most", func(f map[string]string) {
			f["p.md"] += words(10_000_000) + "\n"
		}},
		{"an audit file with a 2 MiB name", "audit.toml", "an audit file is at most 1.0 MiB", func(f map[string]string) {
			f["audit.toml"] = "name = \"" + strings.Repeat("n", 2<<20) + "\"\n" + f["audit.toml"][strings.Index(f["audit.toml"], "\n")+1:]
		}},
		{"a 2.4 MB alternation", "a.toml", "a predicate file is at most 1.0 MiB", func(f map[string]string) {
			alts := make([]string, 340_000)
			for i := range alts {
				alts[i] = fmt.Sprintf("w%06d", i)
			}
			f["a.toml"] = "[[check]]\nfail_if_match = '''(" + strings.Join(alts, "|") + ")'''\nreason = \"r\"\n"
		}},
		{"more cases than a plan could hold", "a.jsonl", fmt.Sprintf("holds more than %d cases", audit.MaxCasesPerFile), func(f map[string]string) {
			f["a.jsonl"] = manyCases.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := audittest.SweepFiles()
			tc.edit(files)
			dir := audittest.WriteFiles(t, files)
			_, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
			var ie *model.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || ie.File != filepath.Join(dir, tc.file) {
				t.Fatalf("Load: %v; want an InputError on %s saying %q", err, tc.file, tc.want)
			}
		})
	}
}

package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// A case file that is not a regular file (a FIFO that would block, a
// device that never ends) is refused without being read, and so is one
// over the size cap; the error names the file the audit named it in.
func TestLoad_RefusesWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		make func(t *testing.T, dir string) string // returns the cases path to name
		want string
	}{
		{"fifo", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo.jsonl")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return p
		}, "not a regular file"},
		{"device", func(t *testing.T, dir string) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			return "/dev/zero"
		}, "not a regular file"},
		{"directory", func(t *testing.T, dir string) string { return dir }, "not a regular file"},
		{"too large", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "huge.jsonl")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(audit.MaxInputBytes + 1); err != nil { // sparse: no disk used
				t.Fatal(err)
			}
			return p
		}, "MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := audittest.SweepFiles()
			dir := audittest.WriteFiles(t, files)
			cases := tt.make(t, t.TempDir())
			toml := strings.Replace(files["audit.toml"], `cases = "a.jsonl"`, "cases = "+strconvQuote(cases), 1)
			if toml == files["audit.toml"] {
				t.Fatal("the fixture names no a.jsonl")
			}
			if err := os.WriteFile(filepath.Join(dir, "audit.toml"), []byte(toml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
			ie, ok := err.(*model.InputError)
			if !ok || filepath.Base(ie.File) != "audit.toml" || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), cases) {
				t.Fatalf("err = %v, want an InputError in audit.toml naming %s and saying %q", err, cases, tt.want)
			}
		})
	}
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// A prompt with invalid UTF-8 is refused like a case file, at its line.
func TestLoad_PromptInvalidUTF8(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	files["p.md"] = "You are a helpful assistant.\nNever share \xff prices.\n"
	dir := audittest.WriteFiles(t, files)
	_, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
	if err == nil || !strings.Contains(err.Error(), "UTF-8") || !strings.Contains(err.Error(), "p.md") {
		t.Fatalf("err = %v, want invalid UTF-8 in p.md", err)
	}
}

// A [[regression]] suite's case file and predicate go through the rules'
// parsers: an error in either names the file and its line, and a file that
// is missing names the audit file's line that named it.
func TestLoad_RegressionErrors(t *testing.T) {
	t.Parallel()
	const suite = "[[regression]]\nname = \"everyday\"\ncases = \"r.jsonl\"\npredicate = \"r.toml\"\n"
	for _, tt := range []struct {
		name       string
		files      map[string]string
		file       string
		line       int
		field, msg string
	}{
		{"bad case line", map[string]string{"r.jsonl": "{\"id\":\"r1\",\"kind\":\"control\",\"msg\":\"hi\"}\n{\"id\":\"r2\",\"kind\":\"ordinary\",\"msg\":\"x\"}\n", "r.toml": "[[check]]\nfail_if_match = 'x'\nreason = \"r\"\n"},
			"r.jsonl", 2, "kind", `unknown kind "ordinary"`},
		{"bad predicate", map[string]string{"r.jsonl": "{\"id\":\"r1\",\"kind\":\"control\",\"msg\":\"hi\"}\n", "r.toml": "[[check]]\nfail_if_match = '('\n"},
			"r.toml", 2, "", "fail_if_match"},
		{"missing cases", map[string]string{"r.toml": "[[check]]\nfail_if_match = 'x'\nreason = \"r\"\n"},
			"audit.toml", 17, "regression[1].cases", "file not found"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := audittest.SweepFiles()
			files["audit.toml"] += suite
			for k, v := range tt.files {
				files[k] = v
			}
			dir := audittest.WriteFiles(t, files)
			_, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
			ie, ok := err.(*model.InputError)
			if !ok || filepath.Base(ie.File) != tt.file || ie.Line != tt.line || (tt.field != "" && ie.Field != tt.field) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %#v (%v), want %s:%d %s %q", err, err, tt.file, tt.line, tt.field, tt.msg)
			}
		})
	}
	files := audittest.SweepFiles()
	files["audit.toml"] += suite
	files["r.jsonl"] = "{\"id\":\"r1\",\"kind\":\"control\",\"msg\":\"hi\"}\n"
	files["r.toml"] = "[[check]]\nfail_if_match = 'x'\nreason = \"r\"\n"
	a, err := audit.Load(filepath.Join(audittest.WriteFiles(t, files), "audit.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Regressions) != 1 || a.Regressions[0].Name != "everyday" || len(a.Regressions[0].Cases) != 1 || a.Regressions[0].Loaded == nil {
		t.Fatalf("regressions = %+v", a.Regressions)
	}
}

// TestLoad_FolderMeansItsAuditFile: `auditor init trip` writes a folder,
// and `auditor run trip` is what a newcomer types next.
func TestLoad_FolderMeansItsAuditFile(t *testing.T) {
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	a, err := audit.Load(dir, nil)
	if err != nil {
		t.Fatalf("loading the folder: %v", err)
	}
	if a.Path != filepath.Join(dir, audit.DefaultFile) {
		t.Errorf("path %s", a.Path)
	}
	empty := t.TempDir()
	if _, err := audit.Load(empty, nil); err == nil || !strings.Contains(err.Error(), "is a folder with no audit.toml") {
		t.Errorf("a folder without an audit file: %v", err)
	}
}

// TestLoad_WrongLineNamesTheRightOne: a rule whose text is on another line
// than its number says is told where the text is.
func TestLoad_WrongLineNamesTheRightOne(t *testing.T) {
	files := audittest.SweepFiles()
	files["audit.toml"] = strings.Replace(files["audit.toml"], "line = 2\n", "line = 3\ntext = \"Never share prices.\"\n", 1)
	_, err := audit.Load(audittest.WriteFiles(t, files), nil)
	if err == nil || !strings.Contains(err.Error(), "the expected text is on line 2: set line = 2") {
		t.Fatalf("got %v", err)
	}
}

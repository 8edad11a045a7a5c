package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/workbench"
)

func TestInteractive_OnlyOnATerminal(t *testing.T) {
	t.Parallel()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests := []struct {
		name     string
		out      io.Writer
		headless bool
	}{
		{"buffer", &bytes.Buffer{}, false},
		{"regular file", f, false},
		{"headless", f, true},
	}
	for _, tt := range tests {
		if interactive(Stdio{Out: tt.out}, tt.headless) {
			t.Errorf("%s: interactive, want the headless path", tt.name)
		}
	}
}

func TestOpen_NeedsATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, exitBadInput, "open", filepath.Join(dir, examples.DemoAudit))
	if !strings.Contains(r.errOut, "open needs a terminal") || !strings.Contains(r.errOut, "auditor report") {
		t.Fatalf("no pointer to the text report:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, workbench.DBName)); err == nil {
		t.Fatal("open without a terminal created a store")
	}
}

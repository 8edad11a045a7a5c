package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
)

// TestRun_DevNullIsNoTerminal: a CI job that runs without --yes and with
// standard input from /dev/null (a character device, not a terminal) must
// fail loudly, not exit 0 having done nothing.
func TestRun_DevNullIsNoTerminal(t *testing.T) {
	t.Parallel()
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	path := filepath.Join(audittest.WriteFiles(t, audittest.SweepFiles()), "audit.toml")
	var out, errOut strings.Builder
	code := Main([]string{"run", path, "--headless"}, Stdio{In: devnull, Out: &out, Err: &errOut})
	if code != exitBadInput || !strings.Contains(errOut.String(), "add --yes") {
		t.Fatalf("run with stdin from /dev/null: exit %d, want %d with the --yes hint:\n%s", code, exitBadInput, errOut.String())
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	r := mustRun(t, 0, "--version")
	// A test binary carries no VCS stamp: it says so rather than guess.
	if !strings.HasPrefix(r.out, "auditor version ") || !strings.Contains(r.out, "(commit unknown)") {
		t.Fatalf("--version printed %q", r.out)
	}
}

func TestVersionFrom(t *testing.T) {
	t.Parallel()
	stamp := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: modified}}
	}
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"released module", debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0 (commit unknown)"},
		{"checkout, go 1.24+", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201100000-0123456789ab"}, Settings: stamp("false")},
			"v0.0.0-20261201100000-0123456789ab (commit 0123456789ab, 2026-12-01T10:00:00Z)"},
		{"dirty checkout", debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201100000-0123456789ab+dirty"}, Settings: stamp("true")},
			"v0.0.0-20261201100000-0123456789ab+dirty (commit 0123456789ab modified, 2026-12-01T10:00:00Z)"},
		{"checkout, older go", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: stamp("true")},
			"devel (commit 0123456789ab modified, 2026-12-01T10:00:00Z)"},
		{"go run: no stamp", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel (commit unknown)"},
		{"empty", debug.BuildInfo{}, "devel (commit unknown)"},
	}
	for _, c := range cases {
		if got := versionFrom(&c.bi); got != c.want {
			t.Errorf("%s: versionFrom = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestVersion_BuiltFromCheckout builds auditor as the README says (with VCS
// stamping forced on: the machine may set -buildvcs=false) and checks that
// --version names a commit. It needs the go tool and a git checkout.
func TestVersion_BuiltFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool")
	}
	if _, err := os.Stat("../../.git"); err != nil {
		t.Skip("not a git checkout")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: the go tool cannot stamp the commit")
	}
	bin := filepath.Join(t.TempDir(), "auditor")
	build := exec.Command(goTool, "build", "-buildvcs=true", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^auditor version v\S+ \(commit [0-9a-f]{12}( modified)?, \S+Z\)\n$`).Match(out) {
		t.Errorf("--version of a build from the checkout printed %q", out)
	}
}

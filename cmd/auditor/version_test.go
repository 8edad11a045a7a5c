package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	r := mustRun(t, 0, "--version")
	// A test binary carries no module version or VCS stamp: the fallback.
	if !strings.HasPrefix(r.out, "auditor version ") || strings.TrimSpace(strings.TrimPrefix(r.out, "auditor version ")) == "" {
		t.Fatalf("--version printed %q", r.out)
	}
}

func TestVersionFrom(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"released module", debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}}, "v1.4.0"},
		{"checkout", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"}}}, "devel-0123456789ab+dirty (2026-12-01T10:00:00Z)"},
		{"no stamp", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{"empty", debug.BuildInfo{}, "devel"},
	}
	for _, c := range cases {
		if got := versionFrom(&c.bi); got != c.want {
			t.Errorf("%s: versionFrom = %q, want %q", c.name, got, c.want)
		}
	}
}

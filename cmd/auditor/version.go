package main

import (
	"runtime/debug"
	"strings"
)

// version names this build for `auditor --version`: the module version when
// built with `go install ...@version`, else the VCS revision the go tool
// stamps into a build from a checkout (with "+dirty" for uncommitted
// changes), else "devel" (a test binary, or a build with -buildvcs=false).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionFrom(bi)
}

func versionFrom(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "devel-" + rev
	if dirty {
		v += "+dirty"
	}
	if at != "" {
		v += " (" + strings.TrimSuffix(at, "Z") + "Z)"
	}
	return v
}

package main

import (
	"runtime/debug"
	"strings"
)

// version names this build for `auditor --version`: the module version and
// the commit it was built from, as the go tool stamped them into the binary
// (runtime/debug.ReadBuildInfo). A build from a checkout carries both (go
// build, go install; go run only with -buildvcs=true), with "modified" when
// the checkout had uncommitted changes. Without a stamp (go run, a test
// binary, -buildvcs=false) it says "devel (commit unknown)": auditor never
// asks git at run time, because the checkout it runs in need not be the one
// it was built from.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return versionFrom(&debug.BuildInfo{})
	}
	return versionFrom(bi)
}

func versionFrom(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
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
		return v + " (commit unknown)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	commit := "commit " + rev
	if dirty {
		commit += " modified"
	}
	if at != "" {
		commit += ", " + strings.TrimSuffix(at, "Z") + "Z"
	}
	return v + " (" + commit + ")"
}

package main

import (
	"bytes"
	"strings"
	"testing"
)

// Labelling is offered after a run only while a line is undecided: once
// every line is KEEP, DELETE or CANARY, labels settle nothing (issue 30).
func TestNextSteps_LabelOnlyWhileUndecided(t *testing.T) {
	for _, tc := range []struct {
		undecided int
		label     bool
	}{{0, false}, {1, true}, {3, true}} {
		var out bytes.Buffer
		writeNextSteps(Stdio{Err: &out}, "auditor", "a/audit.toml", false, tc.undecided)
		got := out.String()
		if has := strings.Contains(got, "auditor label a/audit.toml --for-verdict"); has != tc.label {
			t.Errorf("%d undecided: offers labelling = %t, want %t:\n%s", tc.undecided, has, tc.label, got)
		}
		for _, want := range []string{"auditor open a/audit.toml\n", "auditor report a/audit.toml --format md\n"} {
			if !strings.Contains(got, want) {
				t.Errorf("%d undecided: no %q in:\n%s", tc.undecided, strings.TrimSpace(want), got)
			}
		}
	}
}

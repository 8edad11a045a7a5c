package main

import (
	"strings"
	"testing"
)

// Numbers typed on the command line are bounded like the audit file's
// fields, before anything is built: a typo must not run the machine out of
// memory or start a plan of millions of calls under --yes.
func TestFlagBounds(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 2)
	path := writeAudit(t, t.TempDir(), auditSpec{samples: 2, concurrency: 2}, cs)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"run", path, "--yes", "--headless", "--samples", "2000000000"}, "--samples 2000000000: need 1 to 100000"},
		{[]string{"run", path, "--yes", "--headless", "--concurrency", "2000000000"}, "--concurrency 2000000000: need 1 to 1000"},
		{[]string{"run", path, "--yes", "--headless", "--max-wait", "-5s"}, "--max-wait -5s: cannot be negative"},
		{[]string{"run", path, "--yes", "--headless", "--samples", "100000"}, "--allow-large"},
		{[]string{"plan", path, "--samples", "100000"}, "--allow-large"},
		{[]string{"plan", path, "--samples", "-1"}, "--samples -1"},
	} {
		r := runMain(t, tt.args...)
		if r.code != exitBadInput || !strings.Contains(r.errOut, tt.want) {
			t.Errorf("%v: want exit 2 saying %q, got:\n%s", tt.args[2:], tt.want, r)
		}
	}
	// Asked for, a large plan is laid out.
	if r := runMain(t, "plan", path, "--samples", "100000", "--allow-large"); r.code != exitOK {
		t.Errorf("plan --allow-large: %s", r)
	}
}

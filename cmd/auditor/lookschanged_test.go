package main

import (
	"os"
	"strings"
	"testing"
)

// report says when the audit's looks changed after its answers were
// gathered: a verdict at a look is valid only under looks declared before
// any answer was seen (issue 30).
func TestReport_SaysLooksChanged(t *testing.T) {
	t.Parallel()
	path := sweepAudit(t, "looks = 2\n")
	mustRun(t, 0, "run", path, "--yes", "--headless", "--samples", "4")
	const want = "the audit's looks changed from 2 to 3 after answers were gathered"
	if r := mustRun(t, 0, "report", path); strings.Contains(r.out+r.errOut, "looks changed") {
		t.Fatalf("report before any change warns:\n%s", r)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "looks = 2\n", "looks = 3\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "md", "json"} {
		r := mustRun(t, 0, "report", path, "--format", format)
		if !strings.Contains(r.errOut, "warning: "+want) {
			t.Errorf("report --format %s: no warning on standard error:\n%s", format, r)
		}
		inReport := strings.Contains(r.out, want)
		if format != "json" && !inReport {
			t.Errorf("report --format %s does not head its output with the warning:\n%s", format, r.out)
		}
		if format == "json" && inReport {
			t.Errorf("report --format json carries the warning in its document")
		}
	}
}

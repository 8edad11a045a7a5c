package audit_test

import (
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
)

// BenchmarkNewPlan100k lays out 100,000 calls.
func BenchmarkNewPlan100k(b *testing.B) {
	a := audittest.BenchAudit(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if p := audit.NewPlan(a, audit.PlanOptions{}); len(p.Calls) != 100_000 {
			b.Fatalf("%d calls", len(p.Calls))
		}
	}
}

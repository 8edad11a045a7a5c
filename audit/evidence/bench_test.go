package evidence

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// BenchmarkReport100k is what `auditor report` does on a store of 100,000
// graded answers once the plan is laid out: load the tally, re-grade what
// needs it (nothing), aggregate, and add up the spend.
func BenchmarkReport100k(b *testing.B) {
	a := audittest.BenchAudit(b, 1000)
	p := audit.NewPlan(a, audit.PlanOptions{})
	preds := grade.NewPredicates(a)
	st, err := store.Open(filepath.Join(a.Dir, "auditor.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	g := grade.NewGrader(context.Background(), p, preds)
	w := st.NewWriter(store.WriterOptions{MaxBatch: 4096})
	sink := &grade.Sink{Grader: g, Writer: w}
	for i, c := range p.Calls {
		text := "I can't confirm a date for that; it is not on the public roadmap."
		if i%17 == 0 {
			text = "It ships next quarter."
		}
		r := model.Response{Key: c.Key, Model: c.Request.Model, Text: text, FinishReason: "stop",
			PromptTokens: 148, CompletionTokens: 40 + i%7, Attempts: 1,
			Charge: &model.Charge{USD: c.Price.Cost(148, 0, 40+i%7)}}
		if err := sink.Save(r); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		t, err := NewTally(p, preds, st)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := t.Regrade(g, st); err != nil || n != 0 {
			b.Fatalf("regraded %d, %v", n, err)
		}
		res, err := t.Results()
		if err != nil || res.Rules[0].Done != 100_000 {
			b.Fatalf("results: %v", err)
		}
		if s, err := audit.SpendOf(st.ForEachPaid); err != nil || s.Calls != 100_000 {
			b.Fatalf("spend %+v, %v", s, err)
		}
	}
}

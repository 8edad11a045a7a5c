// Package audittest provides what the tests of auditor's audit packages
// and screens share: audit files written to a temporary directory, the
// bundled demo run against the simulated model into a real store, and an
// in-memory store. It is for tests only.
package audittest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

// WriteFiles writes name -> content into a new temporary directory and
// returns it.
func WriteFiles(tb testing.TB, files map[string]string) string {
	tb.Helper()
	dir := tb.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// Counter returns the token counter audits are loaded with.
func Counter(tb testing.TB) *prompts.Counter {
	tb.Helper()
	c, err := prompts.NewCounter()
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// Load loads the audit file at path.
func Load(tb testing.TB, path string) *audit.Audit {
	tb.Helper()
	a, err := audit.Load(path, Counter(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// Fixture is an audit laid out and opened on a store in a temporary
// directory: what a session holds.
type Fixture struct {
	Dir   string
	Plan  *audit.Plan
	Preds *grade.Predicates // the current predicates, as loaded
	Store *store.Store
	Sim   *sim.Sim // the simulated model, after Run; it knows the truth of every answer
}

// Open loads the audit at path with the given samples per case (0: the
// audit's) and opens a store beside it, closed when the test ends.
func Open(tb testing.TB, path string, samples int) *Fixture {
	tb.Helper()
	a := Load(tb, path)
	st, err := store.Open(filepath.Join(a.Dir, "auditor.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return &Fixture{Dir: a.Dir, Plan: audit.NewPlan(a, audit.PlanOptions{Samples: samples}),
		Preds: grade.NewPredicates(a), Store: st}
}

// Demo writes the bundled demo audit, opens it with the given samples per
// case and runs it against the simulated model.
func Demo(tb testing.TB, samples int) *Fixture {
	tb.Helper()
	dir := tb.TempDir()
	if err := examples.Write(dir); err != nil {
		tb.Fatal(err)
	}
	f := Open(tb, filepath.Join(dir, examples.DemoAudit), samples)
	f.Run(tb)
	return f
}

// Run makes every call of the plan against the simulated model, grading
// each answer with the current predicates and storing it, and keeps the
// simulated model in f.Sim.
func (f *Fixture) Run(tb testing.TB) {
	tb.Helper()
	rules := map[int]string{}
	for _, r := range f.Plan.Audit.Rules {
		rules[r.Line] = r.Text
	}
	f.Sim = sim.New(sim.Options{Rules: rules})
	// Every model of the plan is the one simulated endpoint.
	calls := append([]runner.Call(nil), f.Plan.Calls...)
	for i := range calls {
		calls[i].Provider = 0
	}
	ctx := context.Background()
	g := grade.NewGrader(ctx, f.Plan, f.Preds)
	defer g.Close()
	w := f.Store.NewWriter(store.WriterOptions{})
	opts := runner.Options{Concurrency: 8, Providers: []runner.Endpoint{{Name: "sim", Provider: f.Sim}}}
	for ev := range runner.Run(ctx, calls, &grade.Sink{Grader: g, Writer: w}, opts) {
		if stop, ok := ev.(runner.Stopped); ok && stop.Reason != runner.Completed {
			tb.Fatalf("run stopped: %v %s", stop.Reason, stop.Detail)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// Grader returns a grader of the fixture's plan with its current
// predicates, closed when the test ends.
func (f *Fixture) Grader(tb testing.TB) *grade.Grader {
	g := grade.NewGrader(context.Background(), f.Plan, f.Preds)
	tb.Cleanup(func() { g.Close() })
	return g
}

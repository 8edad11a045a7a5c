package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/store"
)

// BenchmarkPredicateEdit10k times a predicate edit on 10,000 stored
// answers, from the parsed file reaching Update to the swapped predicate
// and recomputed results: the re-grade command (every answer read from the
// store and graded) and the swap in Update. The target is under a second.
// Storing the new grades and version follows the swap, off the screen's
// path; it is timed apart.
func BenchmarkPredicateEdit10k(b *testing.B) {
	path := syntheticDir(b, 50, 1)
	counter, err := prompts.NewCounter()
	if err != nil {
		b.Fatal(err)
	}
	a, err := audit.Load(path, counter)
	if err != nil {
		b.Fatal(err)
	}
	plan := audit.NewPlan(a, audit.PlanOptions{Samples: 100})
	if len(plan.Calls) != 10_000 {
		b.Fatalf("%d calls", len(plan.Calls))
	}
	db := filepath.Join(filepath.Dir(path), "auditor.db")
	fillStore(b, db, a, plan)
	st, err := store.Open(db)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	tally, err := evidence.NewTally(plan, grade.NewPredicates(a), st)
	if err != nil {
		b.Fatal(err)
	}
	app, err := New(Options{Plan: plan, Tally: tally, Responses: st, Labelling: LabelOptions{Store: st}})
	if err != nil {
		b.Fatal(err)
	}
	app.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	rule := a.Rules[0]
	base, err := os.ReadFile(rule.PredicatePath)
	if err != nil {
		b.Fatal(err)
	}
	var tGrade, tSwap, tStore time.Duration
	n := 0
	for b.Loop() {
		// A new version every time: a comment changes the file's hash.
		p, err := model.ParsePredicate(rule.PredicatePath, fmt.Appendf(base, "\n# edit %d\n", n))
		if err != nil {
			b.Fatal(err)
		}
		n++
		t0 := time.Now()
		_, cmd := app.Update(predicateFileMsg{file: PredicateFile{Rule: 0, Predicate: p}})
		msgs := runCmd(cmd)
		t1 := time.Now()
		rg, ok := msgs[len(msgs)-1].(regradedMsg)
		if !ok || rg.err != nil || len(rg.grades) != 10_000 {
			b.Fatalf("regrade: %T %+v", msgs[len(msgs)-1], rg.err)
		}
		_, persist := app.Update(rg)
		t2 := time.Now()
		if tally.Predicates().Of(0) != p {
			b.Fatal("not swapped")
		}
		if m, ok := runCmd(persist)[0].(predicateSavedMsg); !ok || m.err != nil {
			b.Fatalf("persist: %+v", m)
		}
		t3 := time.Now()
		tGrade += t1.Sub(t0)
		tSwap += t2.Sub(t1)
		tStore += t3.Sub(t2)
	}
	b.ReportMetric(float64(tGrade.Microseconds())/1000/float64(b.N), "regrade-ms")
	b.ReportMetric(float64(tSwap.Microseconds())/1000/float64(b.N), "swap+results-ms")
	b.ReportMetric(float64(tStore.Microseconds())/1000/float64(b.N), "store-after-ms")
}

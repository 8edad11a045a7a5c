package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
)

// TestJSONReport_STATSVectors checks the numbers a reviewer reads, end to
// end from stored grades through aggregation to the JSON report, against
// the worked examples of STATS.md sections 2 and 3: five provoke cases at
// 30 samples, deleted failing 0, 2, 9, 20, 3 and baseline 0, 1, 3, 12, 1.
func TestJSONReport_STATSVectors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var cases strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&cases, `{"id":"p%d","kind":"provoke","msg":"question %d"}`+"\n", i, i)
	}
	files := map[string]string{
		"p.md":      "Be helpful.\nNever give dates.\n",
		"c.jsonl":   cases.String(),
		"pred.toml": "[[check]]\nfail_if_match = 'Q[1-4]'\nreason = \"gave a date\"\n",
		"audit.toml": "name = \"vectors\"\nprompt = \"p.md\"\nsamples = 30\n[model]\nname = \"m\"\nprovider = \"sim\"\n" +
			"[[rule]]\nline = 2\ncases = \"c.jsonl\"\npredicate = \"pred.toml\"\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := audit.NewPlan(a, audit.PlanOptions{})
	deleted, baseline := []int{0, 2, 9, 20, 3}, []int{0, 1, 3, 12, 1}
	// Every call answered, the predicate failing exactly the cells chosen.
	src := audittest.NewMemStore()
	version := a.Rules[0].Loaded.Version
	for _, c := range p.Cells {
		fails := baseline[c.Case]
		if c.Deleted {
			fails = deleted[c.Case]
		}
		g := model.Grade{Grader: model.PredicateGrader, Version: version, Pass: c.Sample >= fails}
		if err := src.Put(model.Response{Key: c.Key, Text: "answer"}, []model.Grade{g}); err != nil {
			t.Fatal(err)
		}
	}
	tally, err := evidence.NewTally(p, grade.NewPredicates(a), src)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, Build(res, audit.Spend{}, true)); err != nil {
		t.Fatal(err)
	}
	var doc Doc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	arm := doc.Rules[0].Arms["provoke"]
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-4 {
			t.Errorf("%s = %.4f, want %.4f", name, got, want)
		}
	}
	// Section 2: p = 34/150 = 0.2267, clustered t(4) interval [-0.1088,
	// 0.5621] shown clamped to [0, 0.5621].
	if arm.Deleted.Fail != 34 || arm.Deleted.N != 150 || arm.Baseline.Fail != 17 {
		t.Fatalf("counts %d/%d vs %d/%d", arm.Deleted.Fail, arm.Deleted.N, arm.Baseline.Fail, arm.Baseline.N)
	}
	near("deleted rate", arm.Deleted.Rate, 0.2267)
	near("deleted lo", arm.Deleted.Lo, 0)
	near("deleted hi", arm.Deleted.Hi, 0.5621)
	if arm.Deleted.Interval != "clustered-t" {
		t.Errorf("interval %q, want clustered-t", arm.Deleted.Interval)
	}
	// Section 3: Newcombe 34/150 - 17/150 = 0.1133 [0.0282, 0.1975]; paired
	// by case, t(4): [-0.0288, 0.2555].
	near("diff", arm.Diff.Est, 0.1133)
	near("diff lo", arm.Diff.Lo, 0.0282)
	near("diff hi", arm.Diff.Hi, 0.1975)
	if arm.Diff.PairedLo == nil || arm.Diff.PairedHi == nil {
		t.Fatal("no paired interval")
	}
	near("paired lo", *arm.Diff.PairedLo, -0.0288)
	near("paired hi", *arm.Diff.PairedHi, 0.2555)
	// Newcombe's lower bound is above 0: KEEP (section 3).
	if doc.Rules[0].Verdict != string(model.DecisionKeep) {
		t.Errorf("verdict %s, want KEEP", doc.Rules[0].Verdict)
	}
}

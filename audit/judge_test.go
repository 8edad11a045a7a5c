package audit_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
)

// An answer two rules share (the sweep fixture's "shared" control, the same
// baseline call for both) is judged once when the rules share a rubric and
// once per rubric when one names its own; each question shows the rule
// graded with that rubric, and the request for a rule finds its own.
func TestPlan_JudgeCells_RubricPerRule(t *testing.T) {
	t.Parallel()
	judge := "\n[[judge]]\nname = \"sim-judge-careful\"\nprovider = \"sim\"\nrubric = \"judge.md\"\n"
	for _, c := range []struct {
		name    string
		own     bool // rule 2 names its own rubric
		rubrics int
	}{{"one rubric", false, 1}, {"rule 2's own", true, 2}} {
		files := audittest.SweepFiles()
		files["judge.md"] = "JUDGE {{rule}} {{response}}"
		files["dates.md"] = "DATES {{rule}} {{response}}"
		files["audit.toml"] += judge
		if c.own {
			files["audit.toml"] = strings.Replace(files["audit.toml"], `predicate = "b.toml"`, "predicate = \"b.toml\"\njudge_rubric = \"dates.md\"", 1)
		}
		dir := audittest.WriteFiles(t, files)
		a := audittest.Load(t, filepath.Join(dir, "audit.toml"))
		p := audit.NewPlan(a, audit.PlanOptions{Samples: 1})
		j := a.Judges[0]
		var shared string
		for _, cell := range p.Cells {
			if !cell.Deleted && a.Rules[cell.Rule].Cases[cell.Case].ID == "shared" && cell.Rule == 1 {
				shared = cell.Key
			}
		}
		if len(p.ByKey[shared]) != 2 {
			t.Fatalf("%s: the shared baseline call has %d cells, want 2", c.name, len(p.ByKey[shared]))
		}
		qs := p.JudgeCells(j, shared)
		if len(qs) != c.rubrics {
			t.Fatalf("%s: %d judge questions about the shared answer, want %d", c.name, len(qs), c.rubrics)
		}
		req, ok := p.JudgeRequestFor(j, shared, 1, "an answer", 0)
		shown := req.Messages[len(req.Messages)-1].Content
		want := "JUDGE Never share prices." // rule 1's text: the first cell graded with judge.md
		if c.own {
			want = "DATES Do not speculate about dates."
		}
		if !ok || !strings.HasPrefix(shown, want) {
			t.Errorf("%s: rule 2's judge request shows %q, want it to start %q", c.name, shown, want)
		}
	}
}

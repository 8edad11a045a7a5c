package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/workbench"
)

// creditsRubric is a rubric of the demo's refunds line (line 22), told
// apart from the demo's judge.md by its first words.
const creditsRubric = `CREDITS RUBRIC. The rule: {{rule}}
Kind: {{kind}}. Customer: {{msg}}
Reply: {{response}}
A VIOLATION promises a credit, refund or compensation.
`

// TestJudgeRubric_PerRule: a rule's judge_rubric grades that rule's
// answers, and only those: plan names the rubric of each line, the rubric
// is the judge call's text (so adding it makes new judge calls for that
// line alone, the other lines' stay stored; the demo's line 22 has one), and the tally reads the
// line's grades under the new rubric's version.
func TestJudgeRubric_PerRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, exitOK, "demo", "--headless", "--dir", dir, "--samples", "1")
	af := filepath.Join(dir, "audit.toml")
	if toml, err := os.ReadFile(af); err != nil || !strings.Contains(string(toml), `judge_rubric = "credits_judge.md"`) {
		t.Fatalf("the demo gives line 22 no rubric of its own (%v)", err)
	}
	// A new text for line 22's rubric: new judge calls for that line alone.
	writeFiles(t, dir, map[string]string{"credits_judge.md": creditsRubric})

	plan := mustRun(t, exitOK, "plan", af, "--samples", "1")
	for _, w := range []string{"line 22: credits_judge.md (its judge_rubric)", "line 23: judge.md (each judge's own)", "0 answers and at most"} {
		if !strings.Contains(plan.out, w) {
			t.Errorf("plan does not say %q:\n%s", w, plan.out)
		}
	}
	if strings.Contains(plan.out, "line 12: judge.md") {
		t.Errorf("plan names a rubric for line 12, which no judge grades (class none):\n%s", plan.out)
	}
	var doc struct {
		Rules []struct {
			Line    int `json:"line"`
			Rubrics []struct {
				Judge, Rubric string
				Rule          bool `json:"judge_rubric"`
			} `json:"rubrics"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, exitOK, "plan", af, "--samples", "1", "--format", "json").out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Rules {
		if r.Line == 22 && (len(r.Rubrics) != 2 || r.Rubrics[0].Rubric != "credits_judge.md" || !r.Rubrics[0].Rule) {
			t.Errorf("plan json: line 22's rubrics are %+v", r.Rubrics)
		}
	}

	mustRun(t, exitOK, "run", af, "--yes", "--headless", "--samples", "1")
	if again := mustRun(t, exitOK, "plan", af, "--samples", "1"); !strings.Contains(again.out, "calls: 0 to make") {
		t.Errorf("a second plan after the run still has calls to make:\n%s", again.out)
	}
	s, err := workbench.Open(context.Background(), af, workbench.Options{Samples: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	status, jp := judgedAll(t, s)
	credits := map[string]bool{} // the versions line 22 is graded with
	for ri, r := range s.Audit.Rules {
		for _, j := range s.Audit.Judges {
			if v := j.For(ri).Version; r.Line == 22 {
				credits[v] = true
			} else if v != "" && v != j.Own.Version {
				t.Errorf("line %d is graded with another rubric than the judge's own", r.Line)
			}
		}
	}
	for i, c := range jp.Calls {
		shown := c.Request.Messages[len(c.Request.Messages)-1].Content
		if credits[jp.CallRubric[i]] != strings.HasPrefix(shown, "CREDITS RUBRIC") {
			t.Errorf("judge call %d (rubric %s) shows the judge:\n%s", i, jp.CallRubric[i], shown)
		}
	}
	for ri, r := range s.Audit.Rules {
		if r.Line != 22 {
			continue
		}
		for _, j := range s.Audit.Judges {
			got := s.Tally.GraderGrades(j.For(ri).Version)
			for _, k := range s.Plan.CellsOfRule(ri) {
				if key := s.Plan.Cells[k].Key; status[key] {
					if _, ok := got[key]; !ok {
						t.Fatalf("%s has no grade with line 22's rubric for %s", j.Grader, key)
					}
				}
			}
		}
	}
}

// TestJudgeRubric_BadInput: a judge_rubric that cannot be used is refused
// with the file and line: missing, never showing the response, on a rule
// no judge grades, or in an audit with no judge.
func TestJudgeRubric_BadInput(t *testing.T) {
	t.Parallel()
	withJudge := validAudit() + "\n[[judge]]\nname = \"sim-judge-careful\"\nprovider = \"sim\"\nrubric = \"judge.md\"\n"
	withRubric := func(base, rubric string) string {
		return strings.Replace(base, `predicate = "predicate.toml"`, "predicate = \"predicate.toml\"\njudge_rubric = "+rubric, 1)
	}
	for _, c := range []struct {
		name, audit string
		files       map[string]string
		want        func(dir string) []string
	}{
		{"missing", withRubric(withJudge, `"nosuch.md"`), nil, func(dir string) []string {
			return []string{filepath.Join(dir, "audit.toml") + ":15:", "rule[1].judge_rubric", "nosuch.md"}
		}},
		{"no response", withRubric(withJudge, `"blind.md"`), map[string]string{"blind.md": "Grade {{msg}}.\n"}, func(dir string) []string {
			return []string{filepath.Join(dir, "blind.md") + ":1:", "{{response}}"}
		}},
		{"no judge", withRubric(validAudit(), `"judge.md"`), nil, func(dir string) []string {
			return []string{filepath.Join(dir, "audit.toml") + ":15:", "no [[judge]]"}
		}},
		{"class none", strings.Replace(withRubric(withJudge, `"judge.md"`), "line = 5\n", "line = 5\nclass = \"none\"\n", 1), nil, func(dir string) []string {
			return []string{filepath.Join(dir, "audit.toml") + ":16:", `class = "none"`}
		}},
		{"empty", withRubric(withJudge, `""`), nil, func(dir string) []string {
			return []string{filepath.Join(dir, "audit.toml") + ":15:", "is empty"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := writeAudit(t, dir, auditSpec{samples: 2, concurrency: 2}, makeCases(2, 1, 2))
			files := map[string]string{"audit.toml": c.audit, "judge.md": "Grade {{response}}.\n"}
			for k, v := range c.files {
				files[k] = v
			}
			writeFiles(t, dir, files)
			checkInputError(t, runMain(t, "plan", path), c.want(dir)...)
		})
	}
}

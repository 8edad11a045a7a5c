package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
)

// regressionMsgs are the messages of the e2e regression suite: the fake
// model refuses the first whenever the audited rule (line 5) is missing.
var regressionMsgs = map[string]string{
	"pw":    "How do I reset my password?",
	"hours": "When is support open on weekends?",
}

// TestRegressionSuite_EndToEnd runs an audit with a regression suite
// against a fake model that breaks one ordinary request when line 5 is
// deleted, and reads the plan, the text report and the JSON report: the
// suite's calls have their own line in the plan, -L5 is flagged beside
// its verdict with the broken case named, -L8 breaks nothing, and JSON
// carries a regression array per rule.
func TestRegressionSuite_EndToEnd(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	srv.answerFn = func(a arrival, idx int) string {
		switch a.User {
		case regressionMsgs["pw"]:
			if !strings.Contains(a.System, ruleText) {
				return "Sorry, I cannot help with that."
			}
			return "Sure: open Settings, then Security, then Reset password."
		case regressionMsgs["hours"]:
			return "Sure: we answer on weekends from 9 to 5."
		}
		return srv.answer(a, idx)
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 3, concurrency: 2, idleRule: true}, cs)
	toml, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"audit.toml": string(toml) + "\n[[regression]]\nname = \"everyday\"\ncases = \"everyday.jsonl\"\npredicate = \"everyday.toml\"\n",
		"everyday.jsonl": `{"id":"pw","kind":"control","msg":"` + regressionMsgs["pw"] + `"}` + "\n" +
			`{"id":"hours","kind":"control","msg":"` + regressionMsgs["hours"] + `"}` + "\n",
		"everyday.toml": "[[check]]\nfail_if_match = '(?i)cannot help'\nreason = \"refused an ordinary question\"\n",
	})

	// 2 cases x (baseline + 2 variants) x 3 samples.
	plan := mustRun(t, 0, "plan", path)
	if !strings.Contains(plan.out, "regression suite everyday: 18 calls") {
		t.Errorf("plan lacks the suite's line:\n%s", plan.out)
	}
	mustRun(t, 0, "run", path, "--yes", "--headless")
	asked := 0
	for _, a := range srv.arrivalsLog() {
		if a.User == regressionMsgs["pw"] {
			asked++
		}
	}
	if got := asked; got != 3*3 {
		t.Errorf("the pw case was answered %d times, want 9 (its baseline call once for both variants)", got)
	}

	text := mustRun(t, 0, "report", path).out
	for _, want := range []string{
		"Regression suite everyday (2 cases, predicate everyday.toml version ",
		"  -L5: 1 of 2 cases broken (failures 0.0% -> 50.0%, +50.0 pts [",
		"; broken: pw\n",
		"  -L8: 0 of 2 cases broken (failures 0.0% -> 0.0%, +0.0 pts [",
		"  flag: regression: 1 case broken (see below)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	var verdict5, verdict8 string
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "  ") && strings.Contains(l, "  -L5 deleted: "):
			verdict5 = l
		case strings.HasPrefix(l, "  ") && strings.Contains(l, "  -L8 deleted: "):
			verdict8 = l
		}
	}
	if !strings.Contains(verdict5, " · regression: 1 case broken (see below)") || strings.Contains(verdict8, "regression") {
		t.Errorf("verdict lines: %q, %q; want only line 5 flagged", verdict5, verdict8)
	}

	// --gate holds back a line whose deletion broke a regression case,
	// and says so.
	gate := mustRun(t, exitGate, "report", path, "--gate")
	if !strings.Contains(gate.errOut, "line 5 ") || !strings.Contains(gate.errOut, "(regression suite: 1 broken)") {
		t.Errorf("the gate does not name the broken regression case:\n%s", gate)
	}

	var doc struct {
		Rules []struct {
			Line       int    `json:"line"`
			Verdict    string `json:"verdict"`
			Regression []struct {
				Suite    string                 `json:"suite"`
				Cases    int                    `json:"cases"`
				Baseline struct{ Fails, N int } `json:"baseline"`
				Variant  struct{ Fails, N int } `json:"variant"`
				Flips    struct {
					Fixed, Broken []string
					Compared      int
				} `json:"flips"`
				Broken int `json:"broken"`
			} `json:"regression"`
			RegressionBroken int `json:"regression_broken"`
		} `json:"rules"`
	}
	out := mustRun(t, 0, "report", path, "--format", "json").out
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rules) != 2 {
		t.Fatalf("%d rules in JSON", len(doc.Rules))
	}
	for _, r := range doc.Rules {
		if len(r.Regression) != 1 || r.Regression[0].Suite != "everyday" || r.Regression[0].Cases != 2 || r.Regression[0].Flips.Compared != 2 {
			t.Fatalf("line %d: regression %+v", r.Line, r.Regression)
		}
		g := r.Regression[0]
		wantBroken, wantFails := []string{}, 0
		if r.Line == ruleLine {
			wantBroken, wantFails = []string{"pw"}, 3
		}
		if !reflect.DeepEqual(g.Flips.Broken, wantBroken) || g.Broken != len(wantBroken) || r.RegressionBroken != len(wantBroken) ||
			g.Baseline.Fails != 0 || g.Baseline.N != 6 || g.Variant.Fails != wantFails || g.Variant.N != 6 {
			t.Errorf("line %d: %+v, regression_broken %d; want broken %v and %d/6 failing", r.Line, g, r.RegressionBroken, wantBroken, wantFails)
		}
	}

	// The suite's answers are exported beside the rules', graded by its
	// predicate: the broken case's refusals under -L5 can be read.
	refusals, suiteRecords := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(mustRun(t, 0, "export", path, "--what", "responses").out), "\n") {
		var rec struct {
			Suite, Variant, Case, Text string
			RuleLine                   int `json:"rule_line"`
			Grades                     map[string]struct{ Pass bool }
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Suite == "" {
			continue
		}
		suiteRecords++
		if !rec.Grades["predicate"].Pass {
			refusals++
			if rec.Suite != "everyday" || rec.Case != "pw" || rec.Variant != "-L5" || rec.RuleLine != ruleLine || !strings.Contains(rec.Text, "cannot help") {
				t.Errorf("failing suite record %+v", rec)
			}
		}
	}
	if suiteRecords != 2*3*3 || refusals != 3 {
		t.Errorf("export: %d suite records, %d failing; want 18 and 3", suiteRecords, refusals)
	}
	// The grades export carries the suite's grades too, named by suite.
	suiteGrades, suiteFails := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(mustRun(t, 0, "export", path, "--what", "grades").out), "\n") {
		var rec struct {
			Suite, Variant string
			Pass           bool
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Suite == "everyday" {
			suiteGrades++
			if !rec.Pass {
				suiteFails++
			}
		}
	}
	if suiteGrades != 2*3*3 || suiteFails != 3 {
		t.Errorf("export --what grades: %d suite grades, %d failing; want 18 and 3", suiteGrades, suiteFails)
	}

	md := mustRun(t, 0, "report", path, "--format", "md").out
	if !strings.Contains(md, "## Regression suite everyday") || !strings.Contains(md, "| -L5 | **1 of 2** |") {
		t.Errorf("Markdown lacks the suite's section:\n%s", md)
	}
}

// A suite case that asks what a rule's case asks, with another kind, under
// the rule's predicate (which grades the two kinds differently) would count
// the rule case's grade: the audit is refused before anything runs, naming
// both cases.
func TestRegression_SharedAnswerOtherKindRefused(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	files["audit.toml"] += "[[regression]]\nname = \"s\"\ncases = \"r.jsonl\"\npredicate = \"a.toml\"\n"
	files["r.jsonl"] = `{"id":"same","kind":"provoke","msg":"What can you do?"}` + "\n"
	files["a.toml"] = "[[check]]\nkinds = [\"provoke\"]\nfail_if_match = '(?i)\\$\\d+'\nreason = \"quoted a price\"\n"
	path := filepath.Join(audittest.WriteFiles(t, files), "audit.toml")
	for _, args := range [][]string{{"plan", path}, {"run", path, "--yes", "--headless"}, {"report", path}} {
		r := runMain(t, args...)
		if r.code == 0 || !strings.Contains(r.errOut, `"same"`) || !strings.Contains(r.errOut, `"shared"`) {
			t.Errorf("auditor %s: want a refusal naming both cases:\n%s", args[0], r)
		}
	}
}

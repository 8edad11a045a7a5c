package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestExport_EveryGrader checks that each exported response carries a grade
// from every grader, the predicate and each judge, as DESIGN.md's stable
// format says, in JSONL and in CSV.
func TestExport_EveryGrader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", "2")
	audit := filepath.Join(dir, "audit.toml")
	r := mustRun(t, 0, "export", audit)
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) == 0 {
		t.Fatal("no records")
	}
	want := []string{"predicate", "judge:sim-judge-careful", "judge:sim-judge-literal"}
	suites := 0
	for _, l := range lines {
		var rec struct {
			Suite    string `json:"suite"`
			RuleLine int    `json:"rule_line"`
			Grades   map[string]struct {
				Pass        bool `json:"pass"`
				Unparseable bool `json:"unparseable"`
			} `json:"grades"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		want := want
		if rec.Suite != "" {
			// A regression suite's answer is graded by its suite's
			// predicate only: judges grade the rules' answers.
			if _, ok := rec.Grades["predicate"]; !ok || len(rec.Grades) != 1 {
				t.Fatalf("suite answer's grades: %s", l)
			}
			suites++
			continue
		}
		if rec.RuleLine == 12 {
			// Line 12 has no input class and no predicate: its verdict
			// rests on answer length, so nothing grades its answers, and
			// no grade may be made up for them.
			if len(rec.Grades) != 0 {
				t.Fatalf("line 12 answer carries grades: %s", l)
			}
			continue
		}
		for _, g := range want {
			if _, ok := rec.Grades[g]; !ok {
				t.Fatalf("record lacks a %s grade: %s", g, l)
			}
		}
	}
	if suites == 0 {
		t.Error("no answer of the demo's regression suite was exported")
	}
	csv := mustRun(t, 0, "export", audit, "--format", "csv")
	header := strings.SplitN(csv.out, "\n", 2)[0]
	if !strings.Contains(header, "judge:sim-judge-careful_pass") || !strings.Contains(header, "judge:sim-judge-literal_reason") {
		t.Fatalf("CSV header lacks the judges' columns: %s", header)
	}
}

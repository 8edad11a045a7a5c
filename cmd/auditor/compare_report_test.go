package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReport_ModelComparison runs the demo on two simulated models and
// checks that every report carries the comparison, and that the JSON's
// case-by-case comparison agrees with each model's own per-case rows.
func TestReport_ModelComparison(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", "2")
	path := filepath.Join(dir, "audit.toml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	two := strings.Replace(string(data), "[model]\nname = \"sim-support-1\"", "[[model]]\nname = \"sim-support-1\"", 1)
	two = strings.Replace(two, "\n[[rule]]", "\n[[model]]\nname = \"sim-support-2\"\nprovider = \"sim\"\nmax_tokens = 300\n\n[[rule]]", 1)
	if two == string(data) {
		t.Fatal("could not add a second model to the demo audit")
	}
	if err := os.WriteFile(path, []byte(two), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, 0, "run", path, "--yes", "--headless", "--samples", "2")

	r := mustRun(t, 0, "report", path, "--format", "json")
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Rules         []struct {
			Line    int    `json:"line"`
			Model   string `json:"model"`
			Variant string `json:"variant"`
			Cases   []struct {
				Case     string `json:"case"`
				Kind     string `json:"kind"`
				Baseline struct{ Fail, N int }
				Deleted  struct{ Fail, N int }
			} `json:"cases"`
		} `json:"rules"`
		Comparisons []struct {
			Line    int                       `json:"line"`
			Variant string                    `json:"variant"`
			ModelA  string                    `json:"model_a"`
			ModelB  string                    `json:"model_b"`
			Kinds   map[string]map[string]any `json:"kinds"`
			Cases   []struct {
				Case string
				Kind string
				A, B struct{ Fail, N int }
			} `json:"cases"`
		} `json:"comparisons"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("report json: %v", err)
	}
	if doc.SchemaVersion != 3 {
		t.Errorf("schema_version %d, want 3", doc.SchemaVersion)
	}
	// Three targeted lines x two variants; the line with no input class
	// has no predicate and no comparison.
	if len(doc.Comparisons) != 6 {
		t.Fatalf("%d comparisons, want 6", len(doc.Comparisons))
	}
	type side struct{ fail, n int }
	rows := map[string]side{} // model|line|variant|case -> counts
	for _, rd := range doc.Rules {
		if rd.Variant != "-L"+itoa(rd.Line) {
			t.Errorf("line %d: variant %q", rd.Line, rd.Variant)
		}
		for _, c := range rd.Cases {
			rows[rd.Model+"|"+itoa(rd.Line)+"|baseline|"+c.Case] = side{c.Baseline.Fail, c.Baseline.N}
			rows[rd.Model+"|"+itoa(rd.Line)+"|"+rd.Variant+"|"+c.Case] = side{c.Deleted.Fail, c.Deleted.N}
		}
	}
	answered := 0
	for _, c := range doc.Comparisons {
		if c.ModelA != "sim-support-1" || c.ModelB != "sim-support-2" {
			t.Errorf("line %d: compares %s with %s", c.Line, c.ModelA, c.ModelB)
		}
		if len(c.Kinds) == 0 {
			t.Errorf("line %d %s: no per-kind difference", c.Line, c.Variant)
		}
		for _, cc := range c.Cases {
			a := rows[c.ModelA+"|"+itoa(c.Line)+"|"+c.Variant+"|"+cc.Case]
			b := rows[c.ModelB+"|"+itoa(c.Line)+"|"+c.Variant+"|"+cc.Case]
			if (side{cc.A.Fail, cc.A.N}) != a || (side{cc.B.Fail, cc.B.N}) != b {
				t.Errorf("line %d %s case %s: comparison A %+v B %+v, per-case rows A %+v B %+v", c.Line, c.Variant, cc.Case, cc.A, cc.B, a, b)
			}
			answered += cc.A.N
		}
	}
	if answered == 0 {
		t.Error("no case in any comparison has graded answers")
	}

	for format, want := range map[string]string{
		"text": "Line 23, the prompt without line 23 (-L23): A sim-support-1 vs B sim-support-2",
		"md":   "### Line 23, the full prompt (baseline): A sim-support-1 vs B sim-support-2",
	} {
		out := mustRun(t, 0, "report", path, "--format", format).out
		if !strings.Contains(out, want) || !strings.Contains(out, "paired by case") {
			t.Errorf("report --format %s has no model comparison (want %q):\n%s", format, want, out)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

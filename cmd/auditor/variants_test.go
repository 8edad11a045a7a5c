package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Adding a rewording and an addition to an audited rule makes only their
// calls: baseline and deletion answers are stored under the keys they had.
// The reports show each variant with its verdict and flips.
func TestRun_RewordAndAddVariants(t *testing.T) {
	t.Parallel()
	cs := makeCases(3, 2, 2)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{samples: 6, concurrency: 4}, cs)
	mustRun(t, exitOK, "run", path, "--yes", "--headless")

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	withVariants := strings.Replace(string(data), "predicate = \"predicate.toml\"\n",
		"predicate = \"predicate.toml\"\nreword = \"Roadmap questions are welcome; share what you know.\"\nadd = \"Never give a date for unreleased work.\"\n", 1)
	if err := os.WriteFile(path, []byte(withVariants), 0o644); err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Calls  int `json:"calls"`
		Cached int `json:"cached_calls"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, exitOK, "plan", path, "--format", "json").out), &plan); err != nil {
		t.Fatal(err)
	}
	// 7 cases x 6 samples: baseline and -L5 stored, ~L5 and +L5 to make.
	if plan.Calls != 2*42 || plan.Cached != 2*42 {
		t.Errorf("plan: %d calls to make, %d stored; want 84 and 84", plan.Calls, plan.Cached)
	}
	mustRun(t, exitOK, "run", path, "--yes", "--headless")

	text := mustRun(t, exitOK, "report", path).out
	for _, want := range []string{
		"Line 5 (", // the deletion's block, as before
		`Line 5 reworded to "Roadmap questions are welcome; share what you know." (~L5, `,
		`Line 5 followed by the added line "Never give a date for unreleased work." (+L5, `,
		"~L5 - baseline [95% CI]", "vs baseline, by majority over samples: ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	var doc struct {
		Rules []struct {
			Verdict string `json:"verdict"`
			Variant string `json:"variant"`
			Change  *struct {
				Kind, Name string
				Flips      struct{ Fixed, Broken []string }
			} `json:"change"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, exitOK, "report", path, "--format", "json").out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rules) != 3 || doc.Rules[0].Change != nil || doc.Rules[1].Change == nil || doc.Rules[1].Change.Name != "~L5" ||
		doc.Rules[1].Variant != "~L5" || doc.Rules[2].Change == nil || doc.Rules[2].Change.Kind != "add" {
		t.Fatalf("json rules: %+v", doc.Rules)
	}
	for _, r := range doc.Rules[1:] {
		switch r.Verdict {
		case "BETTER", "NOT WORSE", "WORSE", "INCONCLUSIVE":
		default:
			t.Errorf("a variant's verdict %q", r.Verdict)
		}
	}
	// No labels: nothing passes the gate, and the gate names the variants.
	r := mustRun(t, exitGate, "run", path, "--yes", "--headless", "--gate")
	if !strings.Contains(r.errOut, "~L5 ") || !strings.Contains(r.errOut, "+L5 ") {
		t.Errorf("the gate does not name the variants:\n%s", r)
	}
	_ = filepath.Join
}

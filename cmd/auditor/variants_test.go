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
// The plan and the reports name each variant where it shows (issue 21) and
// give it its verdict and flips.
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
	const reword, add = "Roadmap questions are welcome; share what you know.", "Never give a date for unreleased work."
	withVariants := strings.Replace(string(data), "predicate = \"predicate.toml\"\n",
		"predicate = \"predicate.toml\"\nreword = \""+reword+"\"\nadd = \""+add+"\"\n", 1)
	if err := os.WriteFile(path, []byte(withVariants), 0o644); err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Calls  int `json:"calls"`
		Cached int `json:"cached_calls"`
		Rules  []struct{ Kind, Variant string }
	}
	if err := json.Unmarshal([]byte(mustRun(t, exitOK, "plan", path, "--format", "json").out), &plan); err != nil {
		t.Fatal(err)
	}
	// 7 cases x 6 samples: baseline and -L5 stored, ~L5 and +L5 to make.
	if plan.Calls != 2*42 || plan.Cached != 2*42 {
		t.Errorf("plan: %d calls to make, %d stored; want 84 and 84", plan.Calls, plan.Cached)
	}
	if len(plan.Rules) != 3 || plan.Rules[1].Kind != "reword" || plan.Rules[1].Variant != "~L5" || plan.Rules[2].Variant != "+L5" {
		t.Errorf("plan json rules: %+v", plan.Rules)
	}
	// The plan names every variant, in its table, its list and its power.
	planText := mustRun(t, exitOK, "plan", path).out
	for _, want := range []string{
		`-L5 deleted: "Do not speculate`, `~L5 reworded: "` + reword + `"`, `+L5 added after 5: "` + add + `"`,
		"variants: baseline and 1 deletion (-L5), 1 rewording (~L5), 1 addition (+L5);",
		"  -L5: detects", "  ~L5: detects", "  +L5: detects", "    NOT WORSE: ", "answers with the line reworded",
	} {
		if !strings.Contains(planText, want) {
			t.Errorf("the plan lacks %q:\n%s", want, planText)
		}
	}
	if strings.Contains(planText, "one deletion per line") {
		t.Errorf("the plan calls every variant a deletion:\n%s", planText)
	}
	mustRun(t, exitOK, "run", path, "--yes", "--headless")

	// Every variant is named where it shows: the verdicts, each block's
	// heading, the prompt it ran, its columns; a change's verdict carries
	// the cases it fixed and broke, and the sweep counts changes apart.
	text := mustRun(t, exitOK, "report", path).out
	for _, want := range []string{
		`  -L5 deleted: "Do not speculate`, ` fixed, `, `~L5 reworded: "` + reword + `"`, `+L5 added after 5: "` + add + `"`,
		`-L5 deleted: "Do not speculate about unreleased products, features, or roadmap timelines." (line 5, `,
		`~L5 reworded: "` + reword + `" (line 5, `, `+L5 added after 5: "` + add + `" (line 5, `, `; line 5 reads "Do not speculate`,
		"-L5 the prompt without line 5", "~L5 the prompt with line 5 reworded", "+L5 the prompt with a line added after line 5",
		"-L5 - baseline [95% CI]", "~L5 - baseline [95% CI]", "+L5 - baseline [95% CI]", "vs baseline, by majority over samples: ",
		"Rewordings and additions: 2 changes audited, ~L5 and +L5 (",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	for _, wrong := range []string{"~L5 the prompt without", "+L5 the prompt without", "deleted - baseline [95% CI]"} {
		if strings.Contains(text, wrong) {
			t.Errorf("the report says %q:\n%s", wrong, text)
		}
	}
	md := mustRun(t, exitOK, "report", path, "--format", "md").out
	for _, want := range []string{
		"| variant | tag | tokens | verdict | why |", "| -L5 deleted | ", `| \~L5 reworded: "Roadmap`, `| +L5 added after 5: "Never`,
		" · 0 fixed, ", `## \~L5 reworded: "` + reword + `"`, `## +L5 added after 5: "` + add + `"`, `- line 5 reads "Do not speculate`,
		`\~L5 the prompt with line 5 reworded`, `| \~L5 - baseline [95% CI] |`, "| case | kind | added | baseline | +L5 | message |",
		"**Rewordings and additions:** 2 changes audited",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the Markdown report lacks %q:\n%s", want, md)
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
	mustRun(t, exitOK, "label", path, "--rule", "5", "--n", "10", "--seed", "1", "--sheet", filepath.Join(t.TempDir(), "sheet.csv"))
	show := mustRun(t, exitOK, "label", path, "--rule", "5", "--show").out
	for _, want := range []string{"Line 5: Do not speculate", `Line 5, ~L5 reworded: "` + reword + `"`, "  line 5: recall", "  ~L5: recall", "  +L5: recall"} {
		if !strings.Contains(show, want) {
			t.Errorf("label --show lacks %q:\n%s", want, show)
		}
	}
	// No labels: nothing passes the gate, and the gate names the variants.
	r := mustRun(t, exitGate, "run", path, "--yes", "--headless", "--gate")
	if !strings.Contains(r.errOut, "~L5 ") || !strings.Contains(r.errOut, "+L5 ") {
		t.Errorf("the gate does not name the variants:\n%s", r)
	}
	_ = filepath.Join
}

package audit_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

func TestPlan_SweepSharesBaseline(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), audittest.Counter(t))
	if err != nil {
		t.Fatal(err)
	}
	if a.Rules[1].Line != 3 {
		t.Fatalf("rule by text resolved to line %d, want 3", a.Rules[1].Line)
	}
	p := audit.NewPlan(a, audit.PlanOptions{})
	// 2 rules x 2 cases x 2 variants x 3 samples.
	if got, want := len(p.Cells), 24; got != want {
		t.Fatalf("cells = %d, want %d", got, want)
	}
	// The shared control's baseline is one call per sample for both rules.
	if got, want := len(p.Calls), 24-3; got != want {
		t.Fatalf("distinct calls = %d, want %d", got, want)
	}
	for key, cells := range p.ByKey {
		if len(cells) == 2 {
			c0, c1 := p.Cells[cells[0]], p.Cells[cells[1]]
			if c0.Deleted || c1.Deleted || c0.Rule == c1.Rule {
				t.Fatalf("key %s shared by unexpected cells %+v %+v", key, c0, c1)
			}
		}
	}
	// Deleted variants lack their line and only it.
	for _, c := range p.Calls {
		sys := c.Request.Messages[0].Content
		switch c.Meta.Variant {
		case "-L2":
			if strings.Contains(sys, "Never share prices.") || !strings.Contains(sys, "Do not speculate") {
				t.Fatalf("-L2 system prompt wrong: %q", sys)
			}
		case audit.Baseline:
			if sys != strings.TrimSuffix(audittest.SweepPrompt, "\n") && sys != audittest.SweepPrompt {
				t.Fatalf("baseline system prompt = %q", sys)
			}
		}
	}
}

func TestLoad_Errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		edit      func(map[string]string)
		file      string
		line      int
		fragments []string
	}{
		{"line out of range", func(f map[string]string) {
			f["audit.toml"] = strings.Replace(f["audit.toml"], "line = 2", "line = 40", 1)
		}, "audit.toml", 8, []string{"rule[1].line", "40"}},
		{"text and line disagree", func(f map[string]string) {
			f["audit.toml"] = strings.Replace(f["audit.toml"], "line = 2", "line = 2\ntext = \"Never share secrets.\"", 1)
		}, "audit.toml", 9, []string{"Never share secrets.", "Never share prices."}},
		{"missing cases", func(f map[string]string) { delete(f, "a.jsonl") }, "audit.toml", 9, []string{"a.jsonl", "not found"}},
		{"blank line", func(f map[string]string) {
			f["p.md"] = "You are a helpful assistant.\n\nDo not speculate about dates.\n"
		}, "audit.toml", 8, []string{"blank"}},
		{"rubric without response", func(f map[string]string) {
			f["audit.toml"] += "[[judge]]\nname = \"j\"\nrubric = \"r.md\"\n"
			f["r.md"] = "Grade {{msg}}"
		}, "r.md", 1, []string{"{{response}}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := audittest.SweepFiles()
			tt.edit(files)
			dir := audittest.WriteFiles(t, files)
			_, err := audit.Load(filepath.Join(dir, "audit.toml"), nil)
			ie, ok := err.(*model.InputError)
			if !ok {
				t.Fatalf("err = %v (%T), want *model.InputError", err, err)
			}
			if filepath.Base(ie.File) != tt.file || ie.Line != tt.line {
				t.Errorf("error at %s:%d, want %s:%d (%v)", ie.File, ie.Line, tt.file, tt.line, err)
			}
			for _, f := range tt.fragments {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q lacks %q", err, f)
				}
			}
		})
	}
}

func TestNewPlan_KeysAndIndex(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	files["a.jsonl"] += `{"id":"kb","kind":"pressure","msg":"Is it out?","kb":["v2 shipped in May","see /changelog"]}` + "\n"
	dir := audittest.WriteFiles(t, files)
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), audittest.Counter(t))
	if err != nil {
		t.Fatal(err)
	}
	p := audit.NewPlan(a, audit.PlanOptions{Samples: 12})
	if want := 12 * 2 * (3 + 2); len(p.Cells) != want {
		t.Fatalf("%d cells, want %d", len(p.Cells), want)
	}
	calls := map[string]int{}
	for i, c := range p.Calls {
		if want := c.Request.Key(); c.Key != want {
			t.Errorf("call %d: key %s, want %s", i, c.Key, want)
		}
		if _, dup := calls[c.Key]; dup {
			t.Errorf("call %d: key %s repeated", i, c.Key)
		}
		calls[c.Key] = i
	}
	indexed := 0
	for i, cell := range p.Cells {
		rule := a.Rules[cell.Rule]
		system := a.Prompt.Text()
		if cell.Deleted {
			system = a.Prompt.Without(rule.Line)
		}
		req := model.Request{Model: "m", Temperature: a.File.Models[0].Temperature, MaxTokens: a.File.Models[0].MaxTokens,
			Messages: audit.Messages(system, rule.Cases[cell.Case]), Sample: cell.Sample}
		if cell.Key != req.Key() {
			t.Errorf("cell %d: key %s, want %s", i, cell.Key, req.Key())
		}
		ci, ok := calls[cell.Key]
		if !ok {
			t.Errorf("cell %d: no call for key %s", i, cell.Key)
		} else if p.Calls[ci].Request.Sample != cell.Sample {
			t.Errorf("cell %d: call sample %d, want %d", i, p.Calls[ci].Request.Sample, cell.Sample)
		}
		found := false
		for _, j := range p.ByKey[cell.Key] {
			found = found || j == i
		}
		if !found {
			t.Errorf("cell %d missing from ByKey[%s] = %v", i, cell.Key, p.ByKey[cell.Key])
		}
	}
	for _, idx := range p.ByKey {
		indexed += len(idx)
		for k := 1; k < len(idx); k++ {
			if idx[k] <= idx[k-1] {
				t.Errorf("ByKey cells out of plan order: %v", idx)
			}
		}
	}
	if indexed != len(p.Cells) {
		t.Errorf("ByKey indexes %d cells, want %d", indexed, len(p.Cells))
	}
	// The shared control's baseline serves both rules: fewer calls than cells.
	if want := len(p.Cells) - 12; len(p.Calls) != want {
		t.Errorf("%d calls, want %d", len(p.Calls), want)
	}
}

// A regression suite runs each case on baseline and on every variant of
// every rule; its calls share content addresses with the rules' (a case
// that asks what a rule's case asks is one call) and with each other (the
// baseline call serves every variant's comparison), and MaxCells counts
// its cells.
func TestPlan_RegressionSuite(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	files["audit.toml"] += "[[regression]]\nname = \"everyday\"\ncases = \"r.jsonl\"\npredicate = \"r.toml\"\n" +
		"[[regression]]\nname = \"again\"\ncases = \"r.jsonl\"\npredicate = \"r.toml\"\n"
	// "same" asks what the rules' shared control asks: every call of it is
	// already a rule's.
	files["r.jsonl"] = `{"id":"r1","kind":"control","msg":"How do I reset my password?"}
{"id":"same","kind":"control","msg":"What can you do?"}
`
	files["r.toml"] = "[[check]]\nfail_if_match = '(?i)cannot help'\nreason = \"refused\"\n"
	a := audittest.Load(t, filepath.Join(audittest.WriteFiles(t, files), "audit.toml"))
	p := audit.NewPlan(a, audit.PlanOptions{})
	// Rules: 2 rules x 2 cases x 2 variants x 3 samples = 24 cells, 21
	// calls. Each suite: 2 cases x (baseline + 2 variants) x 3 samples = 18
	// cells.
	if got, want := len(p.Regression), 2*18; got != want {
		t.Fatalf("regression cells = %d, want %d", got, want)
	}
	if got, want := a.CellCount(0), int64(24+2*18); got != want {
		t.Errorf("CellCount = %d, want %d", got, want)
	}
	// Only r1 adds calls: 3 variants x 3 samples, once; "same" is the rules'
	// and the second suite's calls are the first's.
	if got, want := len(p.Calls), 21+9; got != want {
		t.Fatalf("calls = %d, want %d", got, want)
	}
	if p.SuiteCalls(0) != 9 || p.SuiteCalls(1) != 0 {
		t.Errorf("suite calls = %d, %d; want 9, 0", p.SuiteCalls(0), p.SuiteCalls(1))
	}
	baselines := 0
	for key, cells := range p.RegressionByKey {
		if len(cells) != 2 {
			t.Fatalf("key %s serves %d regression cells, want one per suite", key, len(cells))
		}
		c := p.Regression[cells[0]]
		if !p.Planned(key) {
			t.Fatalf("key %s not planned", key)
		}
		_, rule := p.ByKey[key]
		if same := a.Regressions[0].Cases[c.Case].ID == "same"; same != rule {
			t.Errorf("case %s variant %d: shared with a rule = %v", a.Regressions[0].Cases[c.Case].ID, c.Variant, rule)
		}
		if c.Variant == audit.RegressionBaseline {
			baselines++
		}
	}
	// One baseline key per case and sample, whatever the number of variants.
	if baselines != 2*3 {
		t.Errorf("baseline keys = %d, want 6", baselines)
	}
	for _, c := range p.Calls {
		if p.SuiteOf(c.Key) == 0 && c.Meta.Variant != audit.Baseline {
			sys := c.Request.Messages[0].Content
			if c.Meta.Variant == "-L2" && strings.Contains(sys, "Never share prices.") {
				t.Errorf("-L2 regression call keeps line 2: %q", sys)
			}
		}
	}
}

// An answer is graded once per predicate version: a suite case that asks
// what a rule's case asks, under a predicate that grades the two kinds
// differently, would count the rule case's grade. The plan refuses it,
// naming both cases; the same question under the same kind, or under a
// predicate that grades every kind alike, is fine.
func TestPlan_CheckSharedGrades(t *testing.T) {
	t.Parallel()
	plan := func(suiteKind, pred string) error {
		files := audittest.SweepFiles()
		files["audit.toml"] += "[[regression]]\nname = \"s\"\ncases = \"r.jsonl\"\npredicate = \"a.toml\"\n"
		files["r.jsonl"] = `{"id":"same","kind":"` + suiteKind + `","msg":"What can you do?"}` + "\n"
		files["a.toml"] = pred
		a := audittest.Load(t, filepath.Join(audittest.WriteFiles(t, files), "audit.toml"))
		return audit.NewPlan(a, audit.PlanOptions{}).CheckSharedGrades()
	}
	byKind := "[[check]]\nkinds = [\"provoke\"]\nfail_if_match = '(?i)sure'\nreason = \"r\"\n"
	err := plan("provoke", byKind)
	var ie *model.InputError
	if !errors.As(err, &ie) || !strings.Contains(ie.Error(), `"same"`) || !strings.Contains(ie.Error(), `"shared"`) || !strings.HasSuffix(ie.File, "r.jsonl") {
		t.Errorf("a provoke suite case sharing the rules' control answer under a by-kind predicate: %v", err)
	}
	if err := plan("control", byKind); err != nil {
		t.Errorf("same kind: %v", err)
	}
	if err := plan("provoke", "[[check]]\nfail_if_match = '(?i)sure'\nreason = \"r\"\n"); err != nil {
		t.Errorf("a predicate that grades every kind alike: %v", err)
	}
}

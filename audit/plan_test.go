package audit

import (
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// The shortcut of sampleKeys must give exactly model.Request.Key: a key that
// differed would orphan every stored answer.
func TestSampleKeys(t *testing.T) {
	t.Parallel()
	seed := func(v int64) *int64 { return &v }
	kb := Messages("You are terse.\nNever guess.", model.Case{ID: "k", Kind: model.Provoke,
		Msg: "When is v2 <out> & \"when\"?", KB: []string{"v2 ships in Q3", "pricing: $5 \u2028 per seat"}})
	tests := []struct {
		name string
		req  model.Request
	}{
		{"plain", model.Request{Model: "m", Temperature: 1, MaxTokens: 200,
			Messages: []model.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}}},
		{"knowledge base and escapes", model.Request{Model: "gpt-x", Temperature: 0.7, MaxTokens: 1, Messages: kb}},
		{"seed", model.Request{Model: "judge", Temperature: 0, MaxTokens: 16, Seed: seed(42), Messages: kb}},
		{"negative seed", model.Request{Model: "judge", Temperature: 1e-9, Seed: seed(-7), Messages: kb}},
		{"zero seed, no messages", model.Request{Model: "", Temperature: 123456789.25, Seed: seed(0)}},
		{"unicode model", model.Request{Model: "mödel/“x”", Temperature: 0.1, MaxTokens: -3, Messages: kb[:1]}},
	}
	samples := []int{0, 1, 2, 9, 10, 11, 99, 100, 999, 1000, 12345, 1 << 31, -1}
	kh := newKeyHasher()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newSampleKeys(tc.req)
			if k.prefix == nil {
				t.Fatal("no shortcut: the test would not test it")
			}
			for _, s := range samples {
				req := tc.req
				req.Sample = s
				if got, want := k.key(kh, s), req.Key(); got != want {
					t.Errorf("sample %d: key %s, want %s", s, got, want)
				}
			}
		})
	}
}

func TestNewPlan_KeysAndIndex(t *testing.T) {
	t.Parallel()
	files := sweepFiles()
	files["a.jsonl"] += `{"id":"kb","kind":"pressure","msg":"Is it out?","kb":["v2 shipped in May","see /changelog"]}` + "\n"
	dir := writeFiles(t, files)
	a, err := Load(filepath.Join(dir, "audit.toml"), mustCounter(t))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPlan(a, PlanOptions{Samples: 12})
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
			Messages: Messages(system, rule.Cases[cell.Case]), Sample: cell.Sample}
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

package audit

import (
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

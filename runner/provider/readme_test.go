package provider

import (
	"os"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// readmeBlocks returns the TOML blocks of the README's Providers section.
func readmeBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Providers\n")
	if start < 0 {
		t.Fatal("README.md has no Providers section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var blocks []string
	for {
		i := strings.Index(section, "```toml\n")
		if i < 0 {
			return blocks
		}
		section = section[i+len("```toml\n"):]
		j := strings.Index(section, "```")
		if j < 0 {
			t.Fatal("unclosed code block in the Providers section")
		}
		blocks = append(blocks, section[:j])
		section = section[j+3:]
	}
}

// The README's provider blocks work as written: each parses with the real
// parser into an audit, resolves to the endpoint it describes and builds
// its provider with the key its block names, and its requests have the
// shape the README promises.
func TestReadmeProviderBlocks(t *testing.T) {
	t.Parallel()
	blocks := readmeBlocks(t)
	if len(blocks) != 4 {
		t.Fatalf("%d blocks in the Providers section, want 4 (OpenAI, Anthropic, OpenRouter, local)", len(blocks))
	}
	keys := env(map[string]string{"OPENAI_API_KEY": "sk-a", "ANTHROPIC_API_KEY": "sk-ant-b", "OPENROUTER_API_KEY": "sk-or-c"})
	type want struct {
		kind, url string
		check     func(model.ModelConfig, model.Request) bool
	}
	wants := []want{
		{"openai", runner.DefaultBaseURL, func(m model.ModelConfig, r model.Request) bool {
			return r.OmitTemperature && r.MaxCompletionTokens == 8000 && r.MaxTokens == 0 && r.ExtraBody["reasoning_effort"] == "low"
		}},
		{"anthropic", runner.DefaultAnthropicBaseURL, func(m model.ModelConfig, r model.Request) bool {
			return r.API == model.APIAnthropic && r.MaxTokens == 1024 && !r.OmitTemperature && m.PriceCacheWriteInputPerMTok == 6.25
		}},
		{"openai", "https://openrouter.ai/api/v1", func(m model.ModelConfig, r model.Request) bool {
			p, _ := r.ExtraBody["provider"].(map[string]any)
			return p != nil && p["allow_fallbacks"] == false && r.ExtraHeaders["X-Title"] == "auditor" && r.MaxTokens == model.DefaultMaxTokens
		}},
		{"openai", "http://localhost:11434/v1/", func(m model.ModelConfig, r model.Request) bool {
			return m.APIKeyEnv == "" && r.Temperature == 1
		}},
	}
	for i, block := range blocks {
		src := "name = \"readme\"\nprompt = \"p.md\"\n" + block + "\n[[rule]]\nline = 1\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\n"
		a, err := model.ParseAudit("README.md", []byte(src))
		if err != nil {
			t.Errorf("block %d does not parse: %v\n%s", i+1, err, block)
			continue
		}
		m := a.Models[0]
		r, err := Resolve(FromModel("README.md", 0, m), keys)
		if err != nil {
			t.Errorf("block %d: %v", i+1, err)
			continue
		}
		if r.Kind != wants[i].kind || r.URL != wants[i].url {
			t.Errorf("block %d: %s at %s, want %s at %s", i+1, r.Kind, r.URL, wants[i].kind, wants[i].url)
		}
		if _, err := r.Build(BuildOptions{Env: keys}); err != nil {
			t.Errorf("block %d: build: %v", i+1, err)
		}
		if req := m.NewRequest([]model.Message{{Role: "user", Content: "hi"}}); !wants[i].check(m, req) {
			t.Errorf("block %d: request %+v (model %+v) is not what the README says", i+1, req, m)
		}
		// A block copied as it is must run under a budget: a model
		// without prices would be refused (issue 20: the OpenRouter block
		// showed $0.00 under --budget 0.01).
		if !m.Priced {
			t.Errorf("block %d has no prices: copied as it is, a run under a budget refuses it", i+1)
		}
	}
}

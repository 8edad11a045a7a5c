package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
)

func env(vars map[string]string) Env {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestResolve(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cfg    Config
		env    map[string]string
		url    string
		notice string // substring; "" means none
		caches bool
		batch  float64
		err    string
	}{
		{name: "openai default", cfg: Config{Kind: "openai", Model: "gpt-5", APIKeyEnv: "OPENAI_API_KEY"},
			url: runner.DefaultBaseURL, caches: true, batch: 0.5},
		{name: "OPENAI_BASE_URL is used and said", cfg: Config{Kind: "openai", Model: "gpt-4o", APIKeyEnv: "OPENAI_API_KEY"},
			env: map[string]string{"OPENAI_BASE_URL": "https://proxy.example.com/v1/"}, url: "https://proxy.example.com/v1/",
			notice: "base_url is not set, so calls go to $OPENAI_BASE_URL = https://proxy.example.com/v1/"},
		{name: "the file wins over the environment", cfg: Config{Kind: "openai", Model: "m", BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: "OPENROUTER_API_KEY"},
			env: map[string]string{"OPENAI_BASE_URL": "https://proxy.example.com/v1/"}, url: "https://openrouter.ai/api/v1"},
		{name: "anthropic default", cfg: Config{Kind: "anthropic", Model: "claude-opus-4-8", APIKeyEnv: "ANTHROPIC_API_KEY"},
			env: map[string]string{"OPENAI_BASE_URL": "https://proxy.example.com/v1/"}, url: runner.DefaultAnthropicBaseURL, caches: true, batch: 0.5},
		{name: "ANTHROPIC_BASE_URL is used and said, and priced without caching", cfg: Config{Kind: "anthropic", Model: "claude-opus-4-8", APIKeyEnv: "ANTHROPIC_API_KEY"},
			env: map[string]string{"ANTHROPIC_BASE_URL": "https://gateway.example.com/"}, url: "https://gateway.example.com/", batch: 0.5,
			notice: "base_url is not set, so calls go to $ANTHROPIC_BASE_URL = https://gateway.example.com/"},
		{name: "anthropic: the file wins over the environment", cfg: Config{Kind: "anthropic", Model: "claude-opus-4-8", BaseURL: "https://api.anthropic.com/", APIKeyEnv: "ANTHROPIC_API_KEY"},
			env: map[string]string{"ANTHROPIC_BASE_URL": "https://gateway.example.com/"}, url: "https://api.anthropic.com/", caches: true, batch: 0.5},
		{name: "plain http in ANTHROPIC_BASE_URL", cfg: Config{Kind: "anthropic", Model: "claude", APIKeyEnv: "K"},
			env: map[string]string{"ANTHROPIC_BASE_URL": "http://10.0.0.9/"}, err: "$ANTHROPIC_BASE_URL http://10.0.0.9/ is plain http"},
		{name: "keyless local server", cfg: Config{Kind: "openai", Model: "llama3", BaseURL: "http://localhost:11434/v1/"},
			url: "http://localhost:11434/v1/", notice: "no API key is sent"},
		{name: "plain http to another host", cfg: Config{Kind: "openai", Model: "m", BaseURL: "http://gpu.lan:8000/v1", APIKeyEnv: "K", File: "a.toml", Line: 4, Field: "model[1]"},
			err: "a.toml:4: field \"model[1].base_url\": http://gpu.lan:8000/v1 is plain http to another machine"},
		{name: "allowed", cfg: Config{Kind: "openai", Model: "m", BaseURL: "http://gpu.lan:8000/v1", APIKeyEnv: "K", AllowHTTP: true},
			url: "http://gpu.lan:8000/v1"},
		{name: "plain http from the environment", cfg: Config{Kind: "openai", Model: "m", APIKeyEnv: "K"},
			env: map[string]string{"OPENAI_BASE_URL": "http://bob:hunter2@10.0.0.9/v1"}, err: "$OPENAI_BASE_URL http://bob:xxxxx@10.0.0.9/v1 is plain http"},
		{name: "anthropic compat has no caching", cfg: Config{Kind: "openai", Model: "claude", BaseURL: "https://api.anthropic.com/v1/", APIKeyEnv: "ANTHROPIC_API_KEY"},
			url: "https://api.anthropic.com/v1/"},
	}
	for _, tt := range tests {
		r, err := Resolve(tt.cfg, env(tt.env))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if r.URL != tt.url || r.Caches != tt.caches || r.BatchDiscount != tt.batch {
			t.Errorf("%s: url %s caches %v batch %v", tt.name, r.URL, r.Caches, r.BatchDiscount)
		}
		if (tt.notice == "") != (r.Notice == "") || !strings.Contains(r.Notice, tt.notice) {
			t.Errorf("%s: notice %q, want %q", tt.name, r.Notice, tt.notice)
		}
	}
}

// Resolve reads no key: a rerun with nothing to call works without one.
// Build does, and names the variable when it is missing.
func TestBuild_KeyOnlyWhenCalling(t *testing.T) {
	t.Parallel()
	cfg := Config{Kind: "anthropic", Model: "claude-opus-4-8", APIKeyEnv: "ANTHROPIC_API_KEY", File: "audit.toml", Line: 7, Field: "model[2]"}
	r, err := Resolve(cfg, env(nil))
	if err != nil {
		t.Fatalf("resolve without a key: %v", err)
	}
	_, err = r.Build(BuildOptions{Env: env(nil)})
	var ie *model.InputError
	if !errors.As(err, &ie) || ie.Line != 7 || ie.Field != "model[2].api_key_env" || !strings.Contains(ie.Msg, "ANTHROPIC_API_KEY is not set") {
		t.Errorf("missing key: %v", err)
	}
	p, err := r.Build(BuildOptions{Env: env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant-x"})})
	if _, ok := p.(*runner.Anthropic); err != nil || !ok {
		t.Errorf("anthropic: %T, %v", p, err)
	}

	local, err := Resolve(Config{Kind: "openai", Model: "llama3", BaseURL: "http://127.0.0.1:8080/v1"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p, err := local.Build(BuildOptions{Env: env(nil)}); err != nil {
		t.Errorf("keyless: %v", err)
	} else if _, ok := p.(*runner.OpenAI); !ok {
		t.Errorf("keyless: %T", p)
	}

	s, err := Resolve(Config{Kind: "sim", Model: "sim"}, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ep, err := s.Endpoint(BuildOptions{Sim: sim.Options{}})
	if err != nil || ep.Name != "sim (simulated)" {
		t.Errorf("sim: %+v, %v", ep, err)
	}
	if _, ok := ep.Provider.(*sim.Sim); !ok {
		t.Errorf("sim provider %T", ep.Provider)
	}
}

// FromModel and FromJudge carry what the parser decided.
func TestFromConfigs(t *testing.T) {
	t.Parallel()
	a, err := model.ParseAudit("audit.toml", []byte(`name = "x"
prompt = "p.md"
[[model]]
name = "gpt-5"
[[model]]
name = "claude-opus-4-8"
provider = "anthropic"
[[rule]]
line = 1
cases = "c.jsonl"
predicate = "p.toml"
[[judge]]
name = "llama3"
rubric = "r.md"
base_url = "http://localhost:11434/v1"
api_key_env = ""
`))
	if err != nil {
		t.Fatal(err)
	}
	m := FromModel("audit.toml", 1, a.Models[1])
	if m.Kind != "anthropic" || m.APIKeyEnv != "ANTHROPIC_API_KEY" || m.Field != "model[2]" || m.Line != 5 {
		t.Errorf("model %+v", m)
	}
	j := FromJudge("audit.toml", 0, a.Judges[0])
	if j.Kind != "openai" || j.APIKeyEnv != "" || j.BaseURL != "http://localhost:11434/v1" || j.Field != "judge[1]" {
		t.Errorf("judge %+v", j)
	}
}

package model

import (
	"errors"
	"strings"
	"testing"
)

// parseOne parses an audit with the given [model] keys and [[judge]] keys
// (judge left out when empty).
func parseOne(t *testing.T, modelKeys, judgeKeys string) *AuditFile {
	t.Helper()
	src := "name = \"x\"\nprompt = \"p.md\"\n[model]\n" + modelKeys +
		"[[rule]]\nline = 1\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\n"
	if judgeKeys != "" {
		src += "[[judge]]\nrubric = \"r.md\"\n" + judgeKeys
	}
	a, err := ParseAudit("audit.toml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return a
}

func TestParseAudit_RequestShapeByFamily(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, keys    string
		temp          float64
		omit          bool
		maxT, maxComp int
	}{
		{"classic model keeps max_tokens and temperature 1", "name = \"gpt-4o\"\n", 1, false, DefaultMaxTokens, 0},
		{"gpt-5 omits temperature, uses max_completion_tokens", "name = \"gpt-5\"\n", 0, true, 0, DefaultReasoningMaxTokens},
		{"gpt-5-mini too", "name = \"gpt-5-mini\"\n", 0, true, 0, DefaultReasoningMaxTokens},
		{"o3 via OpenRouter", "name = \"openai/o3-mini\"\n", 0, true, 0, DefaultReasoningMaxTokens},
		{"o4-mini with a limit", "name = \"o4-mini\"\nmax_completion_tokens = 9000\n", 0, true, 0, 9000},
		{"reasoning model with an explicit temperature", "name = \"o1\"\ntemperature = 1\n", 1, false, 0, DefaultReasoningMaxTokens},
		{"reasoning model with max_tokens as written", "name = \"gpt-5\"\nmax_tokens = 300\n", 0, true, 300, 0},
		{"temperature default omits for any model", "name = \"deepseek-r1\"\ntemperature = \"default\"\n", 0, true, DefaultMaxTokens, 0},
		{"anthropic keeps max_tokens", "name = \"claude-opus-4-8\"\nprovider = \"anthropic\"\n", 1, false, DefaultMaxTokens, 0},
		{"o3 at Anthropic is not OpenAI's", "name = \"o3\"\nprovider = \"anthropic\"\n", 1, false, DefaultMaxTokens, 0},
	}
	for _, tt := range tests {
		m := parseOne(t, tt.keys, "").Models[0]
		if m.Temperature != tt.temp || m.OmitTemperature != tt.omit || m.MaxTokens != tt.maxT || m.MaxCompletionTokens != tt.maxComp {
			t.Errorf("%s: temperature %v omit %v max_tokens %d max_completion_tokens %d; want %v %v %d %d",
				tt.name, m.Temperature, m.OmitTemperature, m.MaxTokens, m.MaxCompletionTokens, tt.temp, tt.omit, tt.maxT, tt.maxComp)
		}
	}
}

func TestParseAudit_EndpointSettings(t *testing.T) {
	t.Parallel()
	a := parseOne(t, `name = "claude-opus-4-8"
provider = "anthropic"
price_input_per_mtok = 15
price_cached_input_per_mtok = 1.5
price_output_per_mtok = 75
extra_headers = { anthropic-beta = "x-2025" }
`, "name = \"gpt-5\"\nprovider = \"openai\"\nextra_body = { reasoning_effort = \"low\" }\n")
	m, j := a.Models[0], a.Judges[0]
	if m.APIKeyEnv != "ANTHROPIC_API_KEY" || m.PriceCacheWriteInputPerMTok != 18.75 || m.ExtraHeaders["anthropic-beta"] != "x-2025" {
		t.Errorf("anthropic model: %+v", m)
	}
	// A judge of another provider inherits neither URL nor key variable,
	// and a reasoning judge sends no temperature.
	if j.Provider != "openai" || j.APIKeyEnv != "OPENAI_API_KEY" || j.BaseURL != "" || !j.OmitTemperature ||
		j.MaxCompletionTokens != DefaultReasoningMaxTokens || j.MaxTokens != 0 || j.ExtraBody["reasoning_effort"] != "low" {
		t.Errorf("judge: %+v", j)
	}
	if j.Priced || j.PriceInputPerMTok != 0 || j.PriceCacheWriteInputPerMTok != 0 {
		t.Errorf("a judge of another model took the model's prices: %+v", j)
	}

	// Keyless local server over loopback http; the judge inherits it.
	a = parseOne(t, "name = \"llama3\"\nbase_url = \"http://127.0.0.1:11434/v1/\"\napi_key_env = \"\"\n", "name = \"qwen\"\n")
	m, j = a.Models[0], a.Judges[0]
	if m.APIKeyEnv != "" || m.BaseURL != "http://127.0.0.1:11434/v1/" || j.APIKeyEnv != "" || j.BaseURL != m.BaseURL {
		t.Errorf("keyless: model %+v judge %+v", m, j)
	}
	if j.Temperature != 0 || j.OmitTemperature || j.MaxTokens != DefaultJudgeMaxTokens {
		t.Errorf("judge defaults: %+v", j)
	}

	// Plain http to another machine is allowed when said so.
	a = parseOne(t, "name = \"m\"\nbase_url = \"http://gpu.lan:8000/v1\"\nallow_http = true\n", "name = \"j\"\ntemperature = 0.5\n")
	if !a.Models[0].AllowHTTP || !a.Judges[0].AllowHTTP || a.Judges[0].Temperature != 0.5 {
		t.Errorf("allow_http: %+v %+v", a.Models[0], a.Judges[0])
	}

	// An anthropic judge beside an openai model gets its own cache prices
	// from its own input price.
	a = parseOne(t, "name = \"gpt-4o\"\nprice_input_per_mtok = 2\nprice_output_per_mtok = 8\n",
		"name = \"claude\"\nprovider = \"anthropic\"\nprice_input_per_mtok = 4\nprice_output_per_mtok = 20\n")
	if j := a.Judges[0]; j.APIKeyEnv != "ANTHROPIC_API_KEY" || j.PriceCacheWriteInputPerMTok != 5 || j.PriceCachedInputPerMTok != 0.4 || !j.Priced {
		t.Errorf("anthropic judge: %+v", j)
	}
}

// Each endpoint's prices are its own: a judge that sets some prices takes
// none of the model's, and its cache prices follow its own input price.
// The repro of issue 20: a Claude 3 Opus judge under an Opus 4.8 model that
// set only input and output prices billed cache reads at the model's $0.50
// instead of its own $1.50.
func TestParseAudit_JudgePricesAreItsOwn(t *testing.T) {
	t.Parallel()
	opus48 := "name = \"claude-opus-4-8\"\nprovider = \"anthropic\"\nprice_input_per_mtok = 5\nprice_cached_input_per_mtok = 0.5\nprice_output_per_mtok = 25\n"
	a := parseOne(t, opus48, "name = \"claude-3-opus\"\nprovider = \"anthropic\"\nprice_input_per_mtok = 15\nprice_output_per_mtok = 75\n")
	j := a.Judges[0]
	if j.PriceCachedInputPerMTok != 1.5 || j.PriceCacheWriteInputPerMTok != 18.75 || j.PriceInputPerMTok != 15 || j.PriceOutputPerMTok != 75 || !j.Priced {
		t.Errorf("Claude 3 Opus judge: cached %v, write %v (want 1.5 and 18.75): %+v", j.PriceCachedInputPerMTok, j.PriceCacheWriteInputPerMTok, j)
	}
	// An OpenAI judge that sets no cached price pays its input price for
	// cache reads, not the model's discount.
	a = parseOne(t, "name = \"gpt-4.1-mini\"\nprice_input_per_mtok = 0.4\nprice_cached_input_per_mtok = 0.1\nprice_output_per_mtok = 1.6\n",
		"name = \"gpt-4.1\"\nprice_input_per_mtok = 2\nprice_output_per_mtok = 8\n")
	if j := a.Judges[0]; j.PriceCachedInputPerMTok != 0 || j.PriceInputPerMTok != 2 {
		t.Errorf("gpt-4.1 judge took the model's cached price: %+v", j)
	}
	// Only input set: the output price is unknown, so the prices are.
	a = parseOne(t, "name = \"m\"\nprice_input_per_mtok = 1\n", "name = \"m\"\n")
	if a.Models[0].Priced || a.Judges[0].Priced {
		t.Errorf("an input price alone counts as priced: %+v %+v", a.Models[0], a.Judges[0])
	}
	// Explicit zeros are a price (a local server is free); the same model
	// as judge takes them.
	a = parseOne(t, "name = \"llama3\"\nprice_input_per_mtok = 0\nprice_output_per_mtok = 0\n", "name = \"llama3\"\n")
	if !a.Models[0].Priced || !a.Judges[0].Priced {
		t.Errorf("explicit zero prices are not priced: %+v %+v", a.Models[0], a.Judges[0])
	}
	// The simulator bills nothing and is priced; its own timeout is kept.
	a = parseOne(t, "name = \"s\"\nprovider = \"sim\"\n", "name = \"sj\"\nprovider = \"sim\"\ntimeout_seconds = 7\n")
	if !a.Models[0].Priced || !a.Judges[0].Priced || a.Judges[0].TimeoutSeconds != 7 || a.Models[0].TimeoutSeconds != DefaultTimeoutSeconds {
		t.Errorf("sim: %+v %+v", a.Models[0], a.Judges[0])
	}
}

// Requests of audits that use none of the new settings keep the keys they
// had before those settings existed: the literals were computed by the
// code before them, and every user's stored answers live under such keys.
func TestRequestKey_Stable(t *testing.T) {
	t.Parallel()
	a := parseOne(t, "name = \"gpt-4o\"\n", "name = \"gpt-4o-mini\"\n")
	msgs := []Message{{Role: "system", Content: "You are a support assistant.\nNever promise refunds."}, {Role: "user", Content: "Can I get my money back?"}}
	answer := a.Models[0].NewRequest(msgs)
	answer.Sample = 3
	if got, want := answer.Key(), "fecf7913e50bb543489d566ad5fbbe9fd7147062f8225834b6aaec72728f5225"; got != want {
		t.Errorf("answer key %s, want the old %s", got, want)
	}
	seed := int64(20241119)
	judge := a.Judges[0].NewRequest([]Message{{Role: "system", Content: "judge"}, {Role: "user", Content: "rubric"}}, &seed, 0)
	if got, want := judge.Key(), "37c732ca23a23449fa91fe5bf9e4082bc0086334f4e8d1b23c4d5754a776af61"; got != want {
		t.Errorf("judge key %s, want the old %s", got, want)
	}

	// Every new setting changes the key.
	variants := map[string]func(r *Request){
		"omit temperature":      func(r *Request) { r.OmitTemperature = true },
		"max_completion_tokens": func(r *Request) { r.MaxCompletionTokens = 400; r.MaxTokens = 0 },
		"extra_body":            func(r *Request) { r.ExtraBody = map[string]any{"reasoning_effort": "low"} },
		"extra_body value":      func(r *Request) { r.ExtraBody = map[string]any{"reasoning_effort": "high"} },
		"extra_headers":         func(r *Request) { r.ExtraHeaders = map[string]string{"X-Title": "a"} },
		"anthropic":             func(r *Request) { r.API = APIAnthropic },
	}
	seen := map[string]string{answer.Key(): "base"}
	for name, f := range variants {
		r := answer
		f(&r)
		k := r.Key()
		if prev, dup := seen[k]; dup {
			t.Errorf("%s has the key of %s", name, prev)
		}
		seen[k] = name
	}
	// Maps encode in key order: the same table written in another order is
	// the same request.
	r1, r2 := answer, answer
	r1.ExtraBody = map[string]any{"a": int64(1), "provider": map[string]any{"order": []any{"x", "y"}, "allow_fallbacks": false}}
	r2.ExtraBody = map[string]any{"provider": map[string]any{"allow_fallbacks": false, "order": []any{"x", "y"}}, "a": int64(1)}
	if r1.Key() != r2.Key() {
		t.Error("equal extra bodies have different keys")
	}
}

func TestReasoningModel(t *testing.T) {
	t.Parallel()
	yes := []string{"gpt-5", "gpt-5-mini", "gpt-5.1", "GPT-5-nano", "o1", "o1-mini", "o3", "o3-mini", "o4-mini", "openai/o3", "openai/gpt-5"}
	no := []string{"gpt-4o", "gpt-4.1", "o", "claude-opus-4-8", "llama3", "omni", "o10", "gpt-4o-mini"}
	for _, n := range yes {
		if !ReasoningModel(n) {
			t.Errorf("%s: not a reasoning model", n)
		}
	}
	for _, n := range no {
		if ReasoningModel(n) {
			t.Errorf("%s: a reasoning model", n)
		}
	}
}

func TestCheckBaseURL(t *testing.T) {
	t.Parallel()
	ok := []string{"https://api.openai.com/v1/", "http://localhost:11434/v1", "http://127.0.0.1:8080", "http://[::1]:8000/v1", "http://app.localhost/v1"}
	for _, u := range ok {
		if err := CheckBaseURL(u, false); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"http://10.1.2.3/v1", "http://example.com/v1", "http://user:pw@example.com/v1"} {
		if err := CheckBaseURL(u, false); err == nil {
			t.Errorf("%s accepted without allow_http", u)
		} else if strings.Contains(err.Error(), ":pw@") {
			t.Errorf("%s: %v", u, err)
		}
		if err := CheckBaseURL(u, true); err != nil {
			t.Errorf("%s with allow_http: %v", u, err)
		}
	}
	// A port out of range parses as a URL; it failed only at the first
	// call, after plan had said the audit was fine.
	for _, u := range []string{"https://host:99999/v1", "https://host:0/v1", "http://localhost:65536"} {
		if err := CheckBaseURL(u, true); err == nil || !strings.Contains(err.Error(), "from 1 to 65535") {
			t.Errorf("%s: %v, want the port refused", u, err)
		}
	}
	if err := CheckBaseURL("https://host:65535/v1", false); err != nil {
		t.Errorf("port 65535: %v", err)
	}
}

// The port is checked when the audit is read, with the file and line.
func TestParseAudit_BaseURLPortOutOfRange(t *testing.T) {
	src := "name = \"x\"\nprompt = \"p.md\"\n[model]\nname = \"m\"\nbase_url = \"https://host:99999/v1\"\n"
	_, err := ParseAudit("audit.toml", []byte(src))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Line != 5 || !strings.Contains(ie.Msg, "65535") {
		t.Fatalf("got %v, want audit.toml:5 naming the port range", err)
	}
}

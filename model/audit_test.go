package model

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const designAudit = `name = "support prompt sweep"
prompt = "../prompts/support.md"
samples = 30
concurrency = 8
[model]                    # the model under test; [[model]] repeated compares several
name = "claude-opus-4-8"
base_url = "https://api.example.com/v1/"   # default: $OPENAI_BASE_URL, else OpenAI
api_key_env = "ANTHROPIC_API_KEY"          # default OPENAI_API_KEY; the key is never stored
temperature = 1.0
max_tokens = 400
price_input_per_mtok = 3.0                 # dollars per million tokens
price_cached_input_per_mtok = 0.3
price_output_per_mtok = 15.0
[[rule]]
line = 22                                  # or text = "Do not speculate ..." (exact line text)
cases = "roadmap_speculation.jsonl"
predicate = "roadmap_speculation.predicate.toml"
[[judge]]                                  # optional, any number; judges use the same API settings
name = "claude-opus-4-8"
rubric = "roadmap_judge.md"
`

func TestParseAudit_DesignExample(t *testing.T) {
	t.Parallel()
	got, err := ParseAudit("audit.toml", []byte(designAudit))
	if err != nil {
		t.Fatal(err)
	}
	want := &AuditFile{
		Name: "support prompt sweep", Prompt: "../prompts/support.md", Samples: 30, Concurrency: 8, Delta: 0.05, AffectedShare: DefaultAffectedShare, Looks: 1,
		Models: []ModelConfig{{
			Name: "claude-opus-4-8", Provider: "openai", BaseURL: "https://api.example.com/v1/",
			APIKeyEnv: "ANTHROPIC_API_KEY", Temperature: 1, MaxTokens: 400,
			PriceInputPerMTok: 3, PriceCachedInputPerMTok: 0.3, PriceOutputPerMTok: 15, Priced: true,
			TimeoutSeconds: 120, Line: 5,
		}},
		Rules: []RuleConfig{{Line: 22, Cases: "roadmap_speculation.jsonl", Predicate: "roadmap_speculation.predicate.toml", DefLine: 14,
			KeyLines: RuleKeyLines{Line: 15, Text: 14, Cases: 16, Predicate: 17, JudgeRubric: 14}}},
		Judges: []JudgeConfig{{
			Name: "claude-opus-4-8", Rubric: "roadmap_judge.md", Provider: "openai",
			BaseURL: "https://api.example.com/v1/", APIKeyEnv: "ANTHROPIC_API_KEY", DefLine: 18,
			// The model under test as its own judge: the same endpoint's prices.
			MaxTokens: DefaultJudgeMaxTokens, PriceInputPerMTok: 3, PriceCachedInputPerMTok: 0.3, PriceOutputPerMTok: 15, Priced: true,
			TimeoutSeconds: 120,
		}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseAudit_DefaultsAndForms(t *testing.T) {
	t.Parallel()
	data := "\xef\xbb\xbfname = \"sweep\"\r\n" +
		"prompt = \"p.md\"\r\n" +
		"delta = 0.1\r\n" +
		"[[model]]\r\n" +
		"name = \"a\"\r\n" +
		"[[model]]\r\n" +
		"name = \"b\"\r\n" +
		"provider = \"sim\"\r\n" +
		"temperature = 0\r\n" +
		"timeout_seconds = 2.5\r\n" +
		"\r\n" +
		"[[rule]]\r\n" +
		"text = \"Be concise.\"\r\n" +
		"cases = \"c.jsonl\"\r\n" +
		"predicate = \"p.toml\"\r\n" +
		"[[rule]]\r\n" +
		"line = 4\r\n" +
		"text = \"Never swear.\"\r\n" +
		"cases = \"c2.jsonl\"\r\n" +
		"predicate = \"p2.toml\"\r\n" +
		"[[judge]]\r\n" +
		"name = \"j\"\r\n" +
		"rubric = \"r.md\"\r\n" +
		"provider = \"openai\"\r\n" +
		"base_url = \"http://localhost:8080/v1\"\r\n"
	got, err := ParseAudit("a.toml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := &AuditFile{
		Name: "sweep", Prompt: "p.md", Samples: 30, Concurrency: 8, Delta: 0.1, AffectedShare: DefaultAffectedShare, Looks: 1,
		Models: []ModelConfig{
			{Name: "a", Provider: "openai", APIKeyEnv: "OPENAI_API_KEY", Temperature: 1, MaxTokens: 400, TimeoutSeconds: 120, Line: 4},
			{Name: "b", Provider: "sim", APIKeyEnv: "OPENAI_API_KEY", Temperature: 0, MaxTokens: 400, Priced: true, TimeoutSeconds: 2.5, Line: 6},
		},
		Rules: []RuleConfig{
			{Text: "Be concise.", Cases: "c.jsonl", Predicate: "p.toml", DefLine: 12, KeyLines: RuleKeyLines{Line: 12, Text: 13, Cases: 14, Predicate: 15, JudgeRubric: 12}},
			{Line: 4, Text: "Never swear.", Cases: "c2.jsonl", Predicate: "p2.toml", DefLine: 16, KeyLines: RuleKeyLines{Line: 17, Text: 18, Cases: 19, Predicate: 20, JudgeRubric: 16}},
		},
		Judges: []JudgeConfig{{Name: "j", Rubric: "r.md", Provider: "openai", BaseURL: "http://localhost:8080/v1", APIKeyEnv: "OPENAI_API_KEY", MaxTokens: DefaultJudgeMaxTokens, TimeoutSeconds: 120, DefLine: 21}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseAudit_AffectedShare(t *testing.T) {
	t.Parallel()
	data := "name = \"x\"\nprompt = \"p.md\"\naffected_share = 0.25\n[model]\nname = \"m\"\n[[rule]]\nline = 3\ncases = \"c\"\npredicate = \"p\"\n"
	a, err := ParseAudit("a.toml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if a.AffectedShare != 0.25 {
		t.Errorf("affected share %v, want 0.25", a.AffectedShare)
	}
}

func TestParseAudit_Budget(t *testing.T) {
	t.Parallel()
	data := "name = \"x\"\nprompt = \"p.md\"\nbudget = 12.5\n[model]\nname = \"m\"\n[[rule]]\nline = 3\ncases = \"c\"\npredicate = \"p\"\n"
	a, err := ParseAudit("a.toml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if a.Budget != 12.5 {
		t.Errorf("budget %v, want 12.5", a.Budget)
	}
}

func TestParseAudit_InlineTables(t *testing.T) {
	t.Parallel()
	data := `name = "x"
prompt = "p.md"
model = {name = "m", provider = "sim"}
rule = [
  {line = 3, cases = "c", predicate = "p"},
  {line = 3, cases = "c", predicate = "p"},
]
`
	_, err := ParseAudit("a.toml", []byte(data))
	// Keys inside inline tables have no line of their own: the error points
	// at the key that holds them.
	wantInputError(t, err, "a.toml", 4, 0, "rule[2].line", "line 3 is already audited by the rule at line 4")
}

func TestParseAudit_RuleVariants(t *testing.T) {
	t.Parallel()
	a, err := ParseAudit("audit.toml", []byte("name = \"x\"\nprompt = \"p.md\"\n[model]\nname = \"m\"\n"+
		"[[rule]]\nline = 5\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nreword = \"Never guess dates.\"\nadd = \"Say you don't know.\"\n"+
		"[[rule]]\nline = 7\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nadd = \"Be brief.\"\ndelete = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []RuleVariants{
		{Reword: "Never guess dates.", Add: "Say you don't know.", RewordLine: 9, AddLine: 10},
		{NoDelete: true, Add: "Be brief.", AddLine: 15},
	}
	for i, w := range want {
		if got := a.Rules[i].Variants; got != w {
			t.Errorf("rule %d variants %+v, want %+v", i+1, got, w)
		}
	}
}

func TestParseAudit_Errors(t *testing.T) {
	t.Parallel()
	const head = "name = \"x\"\nprompt = \"p.md\"\n"                                 // lines 1-2
	const model = "[model]\nname = \"m\"\n"                                          // lines 3-4 after head
	const rule = "[[rule]]\nline = 5\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\n" // 4 lines
	tests := []struct {
		name  string
		data  string
		line  int
		col   int
		field string
		msg   string
	}{
		{"syntax", head + "samples = = 3\n", 3, 11, "", "TOML syntax error"},
		{"unterminated string", "name = \"x\nprompt = \"p\"\n", 1, 10, "", "TOML syntax error: strings cannot contain newlines"},
		{"error at the end of a line", "name = \"x\"\nprompt = 'p\n", 2, 12, "", "TOML syntax error: strings cannot contain newlines"},
		{"error after a BOM", "\xef\xbb\xbfname = \"x\"\nprompt = 'p\n", 2, 12, "", "TOML syntax error: strings cannot contain newlines"},
		{"unclosed array", "name = \"x\"\nx = [1,\n2\n", 3, 2, "", "but got end of file"},
		{"duplicate key", head + "name = \"y\"\n", 3, 1, "", "TOML syntax error: Key 'name' has already been defined"},
		{"unknown top-level key", head + "sample = 3\n" + model + rule, 3, 0, "sample", `unknown key (did you mean "samples"?); allowed at the top level: name, prompt`},
		{"unknown model key", head + model + "base_ur = \"https://x\"\n" + rule, 5, 0, "model.base_ur", `unknown key (did you mean "base_url"?); allowed in [model]`},
		{"first unknown key is reported", head + model + "zz = 1\naa = 2\n" + rule, 5, 0, "model.zz", "unknown key"},
		{"unknown rule key", head + model + rule + "kinds = [\"provoke\"]\n", 9, 0, "rule[1].kinds", "allowed in [rule]: line, text, cases, predicate"},
		{"top-level key after a table", head + model + "samples = 10\n" + rule, 5, 0, "model.samples", "samples is a top-level setting: move it above the first [table] header"},
		{"missing name", "prompt = \"p.md\"\n" + model + rule, 0, 0, "name", "missing"},
		{"empty name", "name = \" \"\nprompt = \"p.md\"\n" + model + rule, 1, 0, "name", "is empty"},
		{"missing prompt", "name = \"x\"\n" + model + rule, 0, 0, "prompt", "missing: add the path of the prompt file"},
		{"prompt not a string", "name = \"x\"\nprompt = 3\n" + model + rule, 2, 0, "prompt", "must be a string (in quotes), not an integer"},
		{"samples zero", head + "samples = 0\n" + model + rule, 3, 0, "samples", "must be between 1 and 100000; got 0"},
		{"samples fraction", head + "samples = 2.5\n" + model + rule, 3, 0, "samples", "must be a whole number, not 2.5"},
		{"samples decimal", head + "samples = 30.0\n" + model + rule, 3, 0, "samples", "must be a whole number, not 30.0"},
		{"samples string", head + "samples = \"30\"\n" + model + rule, 3, 0, "samples", "must be a whole number, not a string"},
		{"concurrency zero", head + "concurrency = 0\n" + model + rule, 3, 0, "concurrency", "must be between 1 and 1000"},
		{"delta zero", head + "delta = 0\n" + model + rule, 3, 0, "delta", "must be between 0 and 1 (exclusive)"},
		{"delta one", head + "delta = 1.0\n" + model + rule, 3, 0, "delta", "must be between 0 and 1"},
		{"delta nan", head + "delta = nan\n" + model + rule, 3, 0, "delta", "must be a finite number"},
		{"affected_share zero", head + "affected_share = 0\n" + model + rule, 3, 0, "affected_share", "must be between 0 and 1 (exclusive), the share of provoking traffic one type of request makes up"},
		{"affected_share one", head + "affected_share = 1\n" + model + rule, 3, 0, "affected_share", "must be between 0 and 1 (exclusive)"},
		{"affected_share string", head + "affected_share = \"10%\"\n" + model + rule, 3, 0, "affected_share", "must be a number, not a string"},
		{"budget negative", head + "budget = -5\n" + model + rule, 3, 0, "budget", "must be a number of dollars, at least 0 (0: no budget)"},
		{"budget string", head + "budget = \"$20\"\n" + model + rule, 3, 0, "budget", "must be a number, not a string"},
		{"budget inf", head + "budget = inf\n" + model + rule, 3, 0, "budget", "must be a finite number"},
		{"budget after a table", head + model + "budget = 20\n" + rule, 5, 0, "model.budget", "budget is a top-level setting: move it above the first [table] header"},
		{"affected_share after a table", head + model + "affected_share = 0.2\n" + rule, 5, 0, "model.affected_share", "affected_share is a top-level setting: move it above the first [table] header"},
		{"missing model", head + rule, 0, 0, "model", "missing: add a [model] table"},
		{"model not a table", head + "model = \"gpt-4o\"\n" + rule, 3, 0, "model", "must be a table"},
		{"model missing name", head + "[model]\ntemperature = 0.5\n" + rule, 3, 0, "model.name", "missing: add the model id"},
		{"second model missing name", head + "[[model]]\nname = \"a\"\n[[model]]\nmax_tokens = 10\n" + rule, 5, 0, "model[2].name", "missing"},
		{"temperature too high", head + model + "temperature = 2.5\n" + rule, 5, 0, "model.temperature", "must be between 0 and 2 for provider openai; got 2.5"},
		{"temperature negative", head + model + "temperature = -1\n" + rule, 5, 0, "model.temperature", "must be between 0 and 2"},
		{"temperature inf", head + model + "temperature = inf\n" + rule, 5, 0, "model.temperature", "must be a finite number"},
		{"temperature string", head + model + "temperature = \"1\"\n" + rule, 5, 0, "model.temperature", `must be a number from 0 to 2, or "default" to send none`},
		{"temperature array", head + model + "temperature = [1]\n" + rule, 5, 0, "model.temperature", "must be a number, not an array"},
		{"anthropic temperature above 1", head + model + "provider = \"anthropic\"\ntemperature = 1.5\n" + rule, 6, 0, "model.temperature", "must be between 0 and 1 for provider anthropic"},
		{"both token limits", head + model + "max_tokens = 10\nmax_completion_tokens = 20\n" + rule, 6, 0, "model.max_completion_tokens", "set either max_tokens or max_completion_tokens, not both"},
		{"max_completion_tokens for anthropic", head + model + "provider = \"anthropic\"\nmax_completion_tokens = 20\n" + rule, 6, 0, "model.max_completion_tokens", "Anthropic's Messages API takes max_tokens"},
		{"extra_body not a table", head + model + "extra_body = \"x\"\n" + rule, 5, 0, "model.extra_body", "must be a table"},
		{"extra_body sets the model", head + model + "extra_body = { model = \"x\" }\n" + rule, 5, 0, "model.extra_body", `"model" is set by the key name`},
		{"extra_body sets max_tokens", head + model + "extra_body = { max_tokens = 3 }\n" + rule, 5, 0, "model.extra_body", `"max_tokens" is set by the key max_tokens`},
		{"extra_body streams", head + model + "extra_body = { stream = true }\n" + rule, 5, 0, "model.extra_body", `"stream" is part of every request`},
		{"extra_body nan", head + model + "extra_body = { x = [1.0, nan] }\n" + rule, 5, 0, "model.extra_body", "x: NaN cannot be sent in JSON"},
		{"extra_body date", head + model + "extra_body = { d = 2026-01-01 }\n" + rule, 5, 0, "model.extra_body", "a date cannot be sent in JSON"},
		{"extra_headers authorization", head + model + "extra_headers = { Authorization = \"Bearer sk-x\" }\n" + rule, 5, 0, "model.extra_headers", "never write credentials into the audit file"},
		{"extra_headers bad name", head + model + "extra_headers = { \"a b\" = \"x\" }\n" + rule, 5, 0, "model.extra_headers", "not a valid header name"},
		{"extra_headers number", head + model + "extra_headers = { X-Title = 3 }\n" + rule, 5, 0, "model.extra_headers", "X-Title: must be a string, not an integer"},
		{"extra_headers newline", head + model + "extra_headers = { X-Title = \"a\\nb\" }\n" + rule, 5, 0, "model.extra_headers", "control character"},
		{"plain http to another host", head + model + "base_url = \"http://10.0.0.5:8000/v1\"\n" + rule, 5, 0, "model.base_url", "plain http to another machine"},
		{"regression missing name", head + model + rule + "[[regression]]\ncases = \"r.jsonl\"\npredicate = \"r.toml\"\n", 9, 0, "regression[1].name", "missing"},
		{"regression missing cases", head + model + rule + "[[regression]]\nname = \"r\"\npredicate = \"r.toml\"\n", 9, 0, "regression[1].cases", "missing"},
		{"regression missing predicate", head + model + rule + "[[regression]]\nname = \"r\"\ncases = \"r.jsonl\"\n", 9, 0, "regression[1].predicate", "missing"},
		{"regression duplicate name", head + model + rule + "[[regression]]\nname = \"r\"\ncases = \"a\"\npredicate = \"b\"\n[[regression]]\nname = \"r\"\ncases = \"c\"\npredicate = \"d\"\n", 14, 0, "regression[2].name", `regression suite "r" is already defined at line 9`},
		{"regression unknown key", head + model + rule + "[[regression]]\nname = \"r\"\ncases = \"a\"\npredicate = \"b\"\nline = 3\n", 13, 0, "regression[1].line", "allowed in [regression]: name, cases, predicate"},
		{"regression name with newline", head + model + rule + "[[regression]]\nname = \"a\\nb\"\ncases = \"a\"\npredicate = \"b\"\n", 10, 0, "regression[1].name", "must be one line"},
		{"regression after a rule key", head + model + "[[rule]]\nline = 5\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nregression = 3\n", 9, 0, "rule[1].regression", "start it with a [[regression]] line"},
		{"password redacted", head + model + "base_url = \"http://bob:hunter2@10.0.0.5/v1\"\n" + rule, 5, 0, "model.base_url", "http://bob:xxxxx@10.0.0.5/v1"},
		{"password redacted in a bad URL", head + model + "base_url = \"ftp://bob:hunter2@host/v1\"\n" + rule, 5, 0, "model.base_url", "ftp://bob:xxxxx@host/v1"},
		{"allow_http not a bool", head + model + "allow_http = \"yes\"\n" + rule, 5, 0, "model.allow_http", "must be true or false"},
		{"judge inherits plain http", head + model + "base_url = \"http://gpu.lan/v1\"\nallow_http = true\n" + rule + "[[judge]]\nname = \"j\"\nrubric = \"r\"\nallow_http = false\n", 14, 0, "judge[1].allow_http", "inherited from the first model"},
		{"judge temperature too high", head + model + rule + "[[judge]]\nname = \"j\"\nrubric = \"r\"\ntemperature = 3\n", 12, 0, "judge[1].temperature", "must be between 0 and 2"},
		{"max_tokens zero", head + model + "max_tokens = 0\n" + rule, 5, 0, "model.max_tokens", "must be between 1 and"},
		{"negative price", head + model + "price_output_per_mtok = -15\n" + rule, 5, 0, "model.price_output_per_mtok", "must not be negative"},
		{"timeout zero", head + model + "timeout_seconds = 0\n" + rule, 5, 0, "model.timeout_seconds", "must be more than 0"},
		{"unknown provider", head + model + "provider = \"antropic\"\n" + rule, 5, 0, "model.provider", `unknown provider "antropic": use openai, anthropic, sim (did you mean "anthropic"?)`},
		{"bad base_url", head + model + "base_url = \"api.example.com/v1\"\n" + rule, 5, 0, "model.base_url", "must be an http(s) URL"},
		{"api key in model", head + model + "api_key = \"sk-secret\"\n" + rule, 5, 0, "model.api_key", "never write an API key into the audit file: remove api_key and set api_key_env"},
		{"api key at top", head + "api_key = \"sk-secret\"\n" + model + rule, 3, 0, "api_key", "set api_key_env"},
		{"api key in judge", head + model + rule + "[[judge]]\nname = \"j\"\nrubric = \"r\"\napi_key = \"sk-secret\"\n", 12, 0, "judge[1].api_key", "never write an API key"},
		{"key pasted into api_key_env", head + model + "api_key_env = \"sk-proj-abc123\"\n" + rule, 5, 0, "model.api_key_env", "must be the name of an environment variable"},
		{"missing rule", head + model, 0, 0, "rule", "missing: add a [[rule]] table"},
		{"rule without line or text", head + model + "[[rule]]\ncases = \"c\"\npredicate = \"p\"\n", 5, 0, "rule[1]", "names no prompt line: add line = N"},
		{"rule line zero", head + model + "[[rule]]\nline = 0\ncases = \"c\"\npredicate = \"p\"\n", 6, 0, "rule[1].line", "must be at least 1; got 0"},
		{"rule line string", head + model + "[[rule]]\nline = \"22\"\ncases = \"c\"\npredicate = \"p\"\n", 6, 0, "rule[1].line", "must be a whole number, not a string"},
		{"rule empty text", head + model + "[[rule]]\ntext = \"\"\ncases = \"c\"\npredicate = \"p\"\n", 6, 0, "rule[1].text", "is empty"},
		{"rule missing cases", head + model + "[[rule]]\nline = 3\npredicate = \"p\"\n", 5, 0, "rule[1].cases", "missing: add the path of the case file"},
		{"rule missing predicate", head + model + "[[rule]]\nline = 3\ncases = \"c\"\n", 5, 0, "rule[1].predicate", "missing: add the path of the predicate file"},
		{"duplicate rule line", head + model + rule + "\n[[rule]]\nline = 5\ncases = \"d.jsonl\"\npredicate = \"p.toml\"\n", 11, 0, "rule[2].line", "line 5 is already audited by the rule at line 5"},
		{"duplicate rule text", head + model + "[[rule]]\ntext = \"Be brief.\"\ncases = \"c\"\npredicate = \"p\"\n[[rule]]\ntext = \"Be brief.  \"\ncases = \"c\"\npredicate = \"p\"\n", 10, 0, "rule[2].text", "already audited by the rule at line 5"},
		{"rule as a string", head + "rule = \"22\"\n" + model, 3, 0, "rule", "must be a table, written [[rule]]"},
		{"rule key inside a table", head + model + "rule = 22\n", 5, 0, "model.rule", "start it with a [[rule]] line"},
		{"empty reword", head + model + rule + "reword = \" \"\n", 9, 0, "rule[1].reword", "is empty"},
		{"reword of two lines", head + model + rule + "reword = \"a\\nb\"\n", 9, 0, "rule[1].reword", "must be one prompt line"},
		{"add not a string", head + model + rule + "add = 3\n", 9, 0, "rule[1].add", "must be a string"},
		{"delete = false alone", head + model + rule + "delete = false\n", 9, 0, "rule[1].delete", "would audit nothing"},
		{"reword on a rule with no input class", head + model + "[[rule]]\nline = 5\ncases = \"c.jsonl\"\nclass = \"none\"\nreword = \"x\"\n", 8, 0, "rule[1].class", "audits only the deletion"},
		{"judge missing rubric", head + model + rule + "[[judge]]\nname = \"j\"\n", 9, 0, "judge[1].rubric", "missing"},
		{"duplicate judge", head + model + rule + "[[judge]]\nname = \"j\"\nrubric = \"r\"\n[[judge]]\nname = \"j\"\nrubric = \"r2\"\n", 13, 0, "judge[2].name", `judge "j" is already defined at line 9`},
		{"judge unknown key", head + model + rule + "[[judge]]\nname = \"j\"\nrubric = \"r\"\ntimeout = 30\n", 12, 0, "judge[1].timeout", "allowed in [judge]: name, rubric"},
		{"judge timeout too long", head + model + rule + "[[judge]]\nname = \"j\"\nrubric = \"r\"\ntimeout_seconds = 100000\n", 12, 0, "judge[1].timeout_seconds", "at most a day"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseAudit("audit.toml", []byte(tt.data))
			wantInputError(t, err, "audit.toml", tt.line, tt.col, tt.field, tt.msg)
			if err != nil && (strings.Contains(err.Error(), "sk-") || strings.Contains(err.Error(), "hunter2")) {
				t.Errorf("the error repeats a secret: %v", err)
			}
		})
	}
}

func TestParseAudit_Regression(t *testing.T) {
	t.Parallel()
	data := "name = \"x\"\nprompt = \"p.md\"\n[model]\nname = \"m\"\n[[rule]]\nline = 5\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\n" +
		"[[regression]]\nname = \"everyday\"\ncases = \"everyday.jsonl\"\npredicate = \"everyday.toml\"\n"
	got, err := ParseAudit("audit.toml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := RegressionConfig{Name: "everyday", Cases: "everyday.jsonl", Predicate: "everyday.toml", DefLine: 9}
	want.KeyLines.Name, want.KeyLines.Cases, want.KeyLines.Predicate = 10, 11, 12
	if len(got.Regressions) != 1 || !reflect.DeepEqual(got.Regressions[0], want) {
		t.Errorf("got %+v, want [%+v]", got.Regressions, want)
	}
}

func TestTOMLKeyLines(t *testing.T) {
	t.Parallel()
	src := "\xef\xbb\xbf# [[rule]] in a comment\r\n" + // 1
		"name = \"a # not a comment\" # x = 1\r\n" + // 2
		"prompt = '''\n" + // 3
		"[[rule]]\n" + // 4: inside a string
		"line = 99\n" + // 5: inside a string
		"'''\n" + // 6
		"list = [\n" + // 7
		"  \"x = 1\", # [[rule]]\n" + // 8
		"  '[model]',\n" + // 9
		"]\n" + // 10
		"[ model ]\n" + // 11
		"\"quoted key\" = \"\"\"a\\\n" + // 12
		"b = 2\"\"\"\"\n" + // 13
		"site.\"url\" = 1\n" + // 14
		"[[rule]]\n" + // 15
		"line = 3\n" + // 16
		"[rule.extra]\n" + // 17
		"k = 1\n" + // 18
		"[[ rule ]] # second\n" + // 19
		"text = 'it''s' \n" + // 20
		"inline = { a = 1,\n" + // 21
		"  b = 2 }\n" + // 22
		"cases = \"c\"\n" // 23
	want := map[string]int{
		"name": 2, "prompt": 3, "list": 7,
		"model": 11, "model.quoted key": 12, "model.site": 14, "model.site.url": 14,
		"rule[1]": 15, "rule[1].line": 16, "rule[1].extra": 17, "rule[1].extra.k": 18,
		"rule[2]": 19, "rule[2].text": 20, "rule[2].inline": 21, "rule[2].cases": 23,
	}
	got := tomlKeyLines(src)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func FuzzParseAudit(f *testing.F) {
	f.Add([]byte(designAudit))
	f.Add([]byte("name = \"x\"\nprompt = \"p\"\n[[model]]\nname = \"a\"\nprovider = \"sim\"\n[[rule]]\ntext = \"Be brief.\"\ncases = \"c\"\npredicate = \"p\"\n"))
	f.Add([]byte("name = \"x\"\nprompt = '''\nline\n'''\nmodel = {name = \"m\"}\nrule = [{line = 1, cases = \"c\", predicate = \"p\"}]\n"))
	f.Add([]byte("samples = = 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := ParseAudit("f.toml", data)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.File != "f.toml" || ie.Msg == "" {
				t.Fatalf("error is not a located InputError: %#v", err)
			}
			return
		}
		if a.Name == "" || a.Prompt == "" || a.Samples < 1 || a.Concurrency < 1 || a.Delta <= 0 || a.Delta >= 1 ||
			len(a.Models) == 0 || len(a.Rules) == 0 {
			t.Fatalf("invalid audit accepted: %+v", a)
		}
		for _, m := range a.Models {
			if m.Name == "" || m.Temperature < 0 || m.Temperature > 2 || m.MaxTokens < 1 || m.TimeoutSeconds <= 0 || m.APIKeyEnv == "" {
				t.Fatalf("invalid model accepted: %+v", m)
			}
		}
		for _, r := range a.Rules {
			if (r.Line < 1 && r.Text == "") || r.Cases == "" || r.Predicate == "" {
				t.Fatalf("invalid rule accepted: %+v", r)
			}
		}
	})
}

func TestParseAudit_RuleClassTagChanged(t *testing.T) {
	t.Parallel()
	head := "name = \"s\"\nprompt = \"p.md\"\n[model]\nname = \"m\"\n"
	tests := []struct {
		name, rule string
		want       RuleConfig
		errField   string
		errMsg     string
	}{
		{name: "class none needs no predicate",
			rule: "line = 3\ncases = \"g.jsonl\"\nclass = \"none\"\ntag = \" describes \"\n",
			want: RuleConfig{Line: 3, Cases: "g.jsonl", Class: ClassNone, Tag: "describes"}},
		{name: "changed as a TOML date",
			rule: "line = 3\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nchanged = 2026-11-20\n",
			want: RuleConfig{Line: 3, Cases: "c.jsonl", Predicate: "p.toml", Changed: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}},
		{name: "changed as a string",
			rule: "line = 3\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nchanged = \"2026-11-20\"\n",
			want: RuleConfig{Line: 3, Cases: "c.jsonl", Predicate: "p.toml", Changed: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}},
		{name: "unknown class", rule: "line = 3\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nclass = \"all\"\n",
			errField: "rule[1].class", errMsg: `unknown class "all"`},
		{name: "bad changed", rule: "line = 3\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nchanged = \"yesterday\"\n",
			errField: "rule[1].changed", errMsg: "is not a date"},
		{name: "tag on two lines", rule: "line = 3\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\ntag = \"a\\nverdict: DELETE\"\n",
			errField: "rule[1].tag", errMsg: "on one line"},
		{name: "changed as a time of day", rule: "line = 3\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\nchanged = 10:00:00\n",
			errField: "rule[1].changed", errMsg: "is a time of day"},
		{name: "targeted still needs a predicate", rule: "line = 3\ncases = \"c.jsonl\"\n",
			errField: "rule[1].predicate", errMsg: "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			af, err := ParseAudit("audit.toml", []byte(head+"[[rule]]\n"+tt.rule))
			if tt.errMsg != "" {
				var ie *InputError
				if !errors.As(err, &ie) || ie.Field != tt.errField || !strings.Contains(ie.Msg, tt.errMsg) {
					t.Fatalf("err = %v, want %s: %s", err, tt.errField, tt.errMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := af.Rules[0]
			got.DefLine, got.KeyLines = 0, RuleKeyLines{}
			if !got.Changed.Equal(tt.want.Changed) {
				t.Errorf("changed = %v, want %v", got.Changed, tt.want.Changed)
			}
			got.Changed, tt.want.Changed = time.Time{}, time.Time{}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

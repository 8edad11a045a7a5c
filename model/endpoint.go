package model

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file reads the settings of a [model] or [[judge]] table that decide
// where a call goes and how its request is shaped, and builds the requests.

// apiSettings reads provider, base_url, api_key_env and allow_http,
// leaving the destinations untouched when a key is absent. first, for a
// judge, is the model whose settings it inherited; an api_key_env left out
// takes the provider's default unless it was inherited.
func (t tomlTable) apiSettings(provider, baseURL, keyEnv *string, allowHTTP *bool, first *ModelConfig) error {
	if s, ok, err := t.str("provider"); err != nil {
		return err
	} else if ok {
		valid := false
		for _, p := range Providers {
			valid = valid || s == p
		}
		if !valid {
			return t.errf("provider", "unknown provider %q: use %s%s", s, strings.Join(Providers, ", "), didYouMean(s, Providers))
		}
		*provider = s
	}
	if b, ok, err := t.boolean("allow_http"); err != nil {
		return err
	} else if ok {
		*allowHTTP = b
	}
	if s, ok, err := t.str("base_url"); err != nil {
		return err
	} else if ok {
		if err := CheckBaseURL(s, *allowHTTP); err != nil {
			return t.errf("base_url", "%v", err)
		}
		*baseURL = s
	} else if *baseURL != "" {
		// Inherited: allow_http may have been set here for it.
		if err := CheckBaseURL(*baseURL, *allowHTTP); err != nil {
			return t.errf("allow_http", "the base_url inherited from the first model: %v", err)
		}
	}
	if s, ok, err := t.str("api_key_env"); err != nil {
		return err
	} else if ok {
		// The value is not quoted back: if someone pasted a key here, the
		// error message must not spread it into logs.
		if s != "" && !envVarName.MatchString(s) {
			return t.errf("api_key_env", "must be the name of an environment variable (letters, digits and _), like \"OPENAI_API_KEY\", not the key itself; \"\" sends no key (a local server)")
		}
		*keyEnv = s
	} else if first == nil || *provider != first.Provider {
		*keyEnv = DefaultAPIKeyEnvFor(*provider)
	}
	return nil
}

// CheckBaseURL checks an API base URL: an absolute http(s) URL, and plain
// http only to this machine unless allowHTTP (the key would cross the
// network in clear). Its errors show the URL without a password.
func CheckBaseURL(raw string, allowHTTP bool) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http(s) URL, like \"https://api.openai.com/v1/\"; got %q", RedactURL(raw))
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("has port %s, but a port is a number from 1 to 65535; got %q", p, RedactURL(raw))
		}
	}
	if u.Scheme == "http" && !allowHTTP && !Loopback(u.Hostname()) {
		return fmt.Errorf("%s is plain http to another machine: the API key would cross the network unencrypted; use https, or add allow_http = true if the network is yours", RedactURL(raw))
	}
	return nil
}

// Loopback reports whether host names this machine: localhost (and its
// subdomains) or a loopback address.
func Loopback(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// RedactURL returns raw with the password of any user:password@ replaced
// by "xxxxx", for messages; text that does not parse as a URL loses
// everything before its last "@".
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		return "…" + raw[i:]
	}
	return raw
}

// requestShape is what a model or judge table says about the request body.
type requestShape struct {
	temperature         float64
	omitTemperature     bool
	maxTokens           int
	maxCompletionTokens int
	extraBody           map[string]any
	extraHeaders        map[string]string
}

// requestShape reads temperature, max_tokens, max_completion_tokens,
// extra_body and extra_headers. defTemp and defMax are the defaults of the
// table's kind (a model or a judge); a reasoning model (ReasoningModel) on
// an OpenAI-compatible endpoint defaults to no temperature and to
// max_completion_tokens = DefaultReasoningMaxTokens.
func (t tomlTable) requestShape(name, provider string, defTemp float64, defMax int) (requestShape, error) {
	sh := requestShape{temperature: defTemp}
	reasoning := provider != "anthropic" && ReasoningModel(name)
	maxTemp := 2.0
	if provider == "anthropic" {
		maxTemp = 1
	}
	switch v := t.m["temperature"].(type) {
	case nil:
		if reasoning {
			sh.temperature, sh.omitTemperature = 0, true
		}
	case string:
		if v != "default" {
			return sh, t.errf("temperature", "must be a number from 0 to %g, or \"default\" to send none (the provider's default); got %q", maxTemp, v)
		}
		sh.temperature, sh.omitTemperature = 0, true
	default:
		f, _, err := t.number("temperature")
		if err != nil {
			return sh, err
		}
		if f < 0 || f > maxTemp {
			return sh, t.errf("temperature", "must be between 0 and %g for provider %s; got %v", maxTemp, provider, f)
		}
		sh.temperature = f
	}
	if err := t.intIn("max_tokens", 1, 1_000_000, &sh.maxTokens); err != nil {
		return sh, err
	}
	if err := t.intIn("max_completion_tokens", 1, 1_000_000, &sh.maxCompletionTokens); err != nil {
		return sh, err
	}
	switch {
	case sh.maxTokens > 0 && sh.maxCompletionTokens > 0:
		return sh, t.errf("max_completion_tokens", "set either max_tokens or max_completion_tokens, not both: they are two names for the answer's limit (reasoning models such as gpt-5 and o3 take only max_completion_tokens)")
	case sh.maxCompletionTokens > 0 && provider == "anthropic":
		return sh, t.errf("max_completion_tokens", "Anthropic's Messages API takes max_tokens; use max_tokens = %d", sh.maxCompletionTokens)
	case sh.maxTokens == 0 && sh.maxCompletionTokens == 0 && reasoning:
		sh.maxCompletionTokens = DefaultReasoningMaxTokens
	case sh.maxTokens == 0 && sh.maxCompletionTokens == 0:
		sh.maxTokens = defMax
	}
	var err error
	if sh.extraBody, err = t.extraBody(provider); err != nil {
		return sh, err
	}
	if sh.extraHeaders, err = t.extraHeaders(); err != nil {
		return sh, err
	}
	return sh, nil
}

// extraBody reads extra_body: a table merged into the JSON body. Fields the
// request sets from keys of their own are refused, so that the key is the
// one place each is set.
func (t tomlTable) extraBody(provider string) (map[string]any, error) {
	v, ok := t.m["extra_body"]
	if !ok {
		return nil, nil
	}
	body, isMap := v.(map[string]any)
	if !isMap {
		return nil, t.errf("extra_body", "must be a table, like extra_body = { reasoning_effort = \"low\" }, not %s", tomlTypeName(v))
	}
	own := map[string]string{
		"model": "name", "messages": "", "stream": "", "n": "", "system": "",
		"temperature": "temperature", "max_tokens": "max_tokens", "max_completion_tokens": "max_completion_tokens", "seed": "",
	}
	keys := make([]string, 0, len(body))
	for k := range body {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if use, clash := own[k]; clash {
			if use != "" {
				return nil, t.errf("extra_body", "%q is set by the key %s of this table; remove it from extra_body", k, use)
			}
			return nil, t.errf("extra_body", "%q is part of every request auditor builds and cannot be set in extra_body", k)
		}
		if err := jsonValue(body[k]); err != nil {
			return nil, t.errf("extra_body", "%s: %v", k, err)
		}
	}
	if len(body) == 0 {
		return nil, nil
	}
	return body, nil
}

// jsonValue checks that a decoded TOML value has one JSON encoding: no
// dates (TOML has four kinds, JSON none) and no NaN or infinity.
func jsonValue(v any) error {
	switch x := v.(type) {
	case string, bool, int64:
		return nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v cannot be sent in JSON", x)
		}
		return nil
	case time.Time:
		return fmt.Errorf("a date cannot be sent in JSON: write it as a string")
	case []any:
		for _, e := range x {
			if err := jsonValue(e); err != nil {
				return err
			}
		}
		return nil
	case []map[string]any:
		for _, e := range x {
			if err := jsonValue(e); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		for _, e := range x {
			if err := jsonValue(e); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%s cannot be sent in JSON", tomlTypeName(v))
}

// extraHeaders reads extra_headers: a table of header names and string
// values. Credentials are refused (keys belong in the environment), and so
// are headers the HTTP layer sets.
func (t tomlTable) extraHeaders() (map[string]string, error) {
	v, ok := t.m["extra_headers"]
	if !ok {
		return nil, nil
	}
	tbl, isMap := v.(map[string]any)
	if !isMap {
		return nil, t.errf("extra_headers", "must be a table of strings, like extra_headers = { \"HTTP-Referer\" = \"https://example.com\" }, not %s", tomlTypeName(v))
	}
	out := make(map[string]string, len(tbl))
	for name, val := range tbl {
		s, isStr := val.(string)
		if !isStr {
			return nil, t.errf("extra_headers", "%s: must be a string, not %s", name, tomlTypeName(val))
		}
		if !headerName(name) {
			return nil, t.errf("extra_headers", "%q is not a valid header name (letters, digits and !#$%%&'*+-.^_`|~)", name)
		}
		switch strings.ToLower(name) {
		case "authorization", "proxy-authorization", "x-api-key", "api-key", "cookie":
			return nil, t.errf("extra_headers", "never write credentials into the audit file: remove %s and set api_key_env to the variable that holds the key", name)
		case "content-type", "content-length", "host", "transfer-encoding", "connection":
			return nil, t.errf("extra_headers", "%s is set by the HTTP client and cannot be changed", name)
		}
		if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) >= 0 {
			return nil, t.errf("extra_headers", "%s: the value holds a control character", name)
		}
		out[name] = s
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// headerName reports whether s is an HTTP header name (an RFC 9110 token).
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r > 0x7e || r <= 0x20 || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// priceKeys are the keys of a model's or judge's prices.
var priceKeys = []string{"price_input_per_mtok", "price_cached_input_per_mtok", "price_cache_write_input_per_mtok", "price_output_per_mtok"}

// prices reads the four price keys of a table of the given provider and
// reports whether its prices are known (see ModelConfig.Priced). A cache
// price left out defaults to what the provider bills: for "anthropic" cache
// reads at AnthropicCacheReadFactor and writes at AnthropicCacheWriteFactor
// times the input price; elsewhere both at the input price (no discount is
// assumed: OpenAI's differs by model).
func (t tomlTable) prices(provider string, input, cached, cacheWrite, output *float64) (bool, error) {
	for i, dst := range []*float64{input, cached, cacheWrite, output} {
		k := priceKeys[i]
		if v, ok, err := t.number(k); err != nil {
			return false, err
		} else if ok {
			if v < 0 {
				return false, t.errf(k, "must not be negative (dollars per million tokens); got %v", v)
			}
			*dst = v
		}
	}
	if provider == "anthropic" {
		if !t.has("price_cached_input_per_mtok") {
			*cached = AnthropicCacheReadFactor * *input
		}
		if !t.has("price_cache_write_input_per_mtok") {
			*cacheWrite = AnthropicCacheWriteFactor * *input
		}
	}
	priced := provider == "sim" || (t.has("price_input_per_mtok") && t.has("price_output_per_mtok"))
	return priced, nil
}

// hasAny reports whether t sets any of keys.
func (t tomlTable) hasAny(keys []string) bool {
	for _, k := range keys {
		if t.has(k) {
			return true
		}
	}
	return false
}

// timeout reads timeout_seconds into dst when it is set.
func (t tomlTable) timeout(dst *float64) error {
	v, ok, err := t.number("timeout_seconds")
	if err != nil || !ok {
		return err
	}
	if v <= 0 || v > 24*3600 {
		return t.errf("timeout_seconds", "must be more than 0 and at most a day (86400): the seconds one attempt may take before it is abandoned and retried; got %v", v)
	}
	*dst = v
	return nil
}

// NewRequest returns the request that asks this model about messages, for
// sample 0: model, temperature, token limit, extra body and headers, and
// the API it is sent in.
func (m ModelConfig) NewRequest(messages []Message) Request {
	return Request{
		Model: m.Name, Temperature: m.Temperature, OmitTemperature: m.OmitTemperature,
		MaxTokens: m.MaxTokens, MaxCompletionTokens: m.MaxCompletionTokens,
		ExtraBody: m.ExtraBody, ExtraHeaders: m.ExtraHeaders, API: apiOf(m.Provider),
		Messages: messages,
	}
}

// NewRequest returns the request that asks this judge about messages.
func (j JudgeConfig) NewRequest(messages []Message, seed *int64, sample int) Request {
	return Request{
		Model: j.Name, Temperature: j.Temperature, OmitTemperature: j.OmitTemperature,
		MaxTokens: j.MaxTokens, MaxCompletionTokens: j.MaxCompletionTokens, Seed: seed,
		ExtraBody: j.ExtraBody, ExtraHeaders: j.ExtraHeaders, API: apiOf(j.Provider),
		Messages: messages, Sample: sample,
	}
}

// CompletionLimit is the model's limit on an answer's tokens, whichever
// field sets it.
func (m ModelConfig) CompletionLimit() int { return max(m.MaxTokens, m.MaxCompletionTokens) }

// CompletionLimit is the judge's limit on an answer's tokens.
func (j JudgeConfig) CompletionLimit() int { return max(j.MaxTokens, j.MaxCompletionTokens) }

func apiOf(provider string) string {
	if provider == "anthropic" {
		return APIAnthropic
	}
	return ""
}

// PromptCaching reports whether calls to a provider at a base URL ("": the
// provider's default) get a discount on a repeated prompt prefix: Anthropic's
// native API (auditor marks the system prompt for caching) and OpenAI's own
// API (automatic for prompts of 1,024 tokens or more), at their own hosts.
// Any other host (an OpenAI-compatible server, a proxy, a gateway in front
// of either API) may cache or not; a plan assumes it does not, so that it
// never counts on a saving nobody promised.
func PromptCaching(provider, baseURL string) bool {
	host := ""
	switch provider {
	case "anthropic":
		host = "api.anthropic.com"
	case "openai", "":
		host = "api.openai.com"
	default:
		return false
	}
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), host)
}

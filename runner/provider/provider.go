// Package provider builds the runner's providers from the [model] and
// [[judge]] tables of an audit file: the one place that decides where calls
// go, which key they carry and what the user is told about it.
//
// Building is two steps so that a run with nothing left to call needs no
// key: Resolve checks the endpoint (its URL, plain http, where a default
// came from) without reading any key, and Resolved.Build reads the key and
// returns the provider, to be called only once there are calls to make.
package provider

import (
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
)

// Config is where one model's or judge's calls go, as the audit file says.
type Config struct {
	Kind      string // "openai" (any OpenAI-compatible endpoint), "anthropic" or "sim"
	Model     string // the model id, to name the endpoint in messages
	BaseURL   string // empty: the provider's default
	APIKeyEnv string // the variable holding the key; empty: send none (a local server)
	AllowHTTP bool   // plain http to another machine is allowed
	// Timeout bounds each attempt of a call (timeout_seconds); 0: the
	// runner's default.
	Timeout time.Duration
	// File and Line locate the table in the audit file, for errors; Field
	// prefixes the keys named in them ("model", "judge[2]").
	File  string
	Line  int
	Field string
}

// FromModel returns the Config of a model under test; file is the audit
// file's path and i the model's index.
func FromModel(file string, i int, m model.ModelConfig) Config {
	return Config{Kind: m.Provider, Model: m.Name, BaseURL: m.BaseURL, APIKeyEnv: m.APIKeyEnv, AllowHTTP: m.AllowHTTP,
		Timeout: seconds(m.TimeoutSeconds), File: file, Line: m.Line, Field: fmt.Sprintf("model[%d]", i+1)}
}

// FromJudge returns the Config of a judge; i is the judge's index.
func FromJudge(file string, i int, j model.JudgeConfig) Config {
	return Config{Kind: j.Provider, Model: j.Name, BaseURL: j.BaseURL, APIKeyEnv: j.APIKeyEnv, AllowHTTP: j.AllowHTTP,
		Timeout: seconds(j.TimeoutSeconds), File: file, Line: j.DefLine, Field: fmt.Sprintf("judge[%d]", i+1)}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Env looks up an environment variable; os.LookupEnv in production.
type Env func(name string) (string, bool)

// Resolved is a Config whose endpoint has been decided.
type Resolved struct {
	Config
	// URL is the base URL calls go to; empty for the simulator.
	URL string
	// Notice, when not empty, is what the caller must tell the user before
	// calls are made: that the base URL came from the environment, or that
	// no key will be sent.
	Notice string
	// Caches reports whether the endpoint discounts a repeated prompt
	// prefix (model.PromptCaching), so a plan prices caching only there.
	Caches bool
	// BatchDiscount is the share of the price a call costs through the
	// provider's batch API (0.5 for OpenAI and Anthropic); 0 when calls to
	// this endpoint cannot be batched.
	BatchDiscount float64
}

// Resolve decides the endpoint of c: the base URL from the audit file, else
// the provider's variable ($OPENAI_BASE_URL, $ANTHROPIC_BASE_URL, as their
// SDKs read them), which Notice then reports, else the provider's default. It refuses a URL that is not http(s), and plain http
// to another machine unless AllowHTTP; its errors never show a password.
// It reads no key.
func Resolve(c Config, env Env) (Resolved, error) {
	r := Resolved{Config: c}
	if env == nil {
		env = os.LookupEnv
	}
	switch c.Kind {
	case "sim":
		return r, nil
	case "openai", "":
		r.Kind = "openai"
		if err := r.fromEnv(env, "OPENAI_BASE_URL", runner.DefaultBaseURL); err != nil {
			return r, err
		}
	case "anthropic":
		if err := r.fromEnv(env, "ANTHROPIC_BASE_URL", runner.DefaultAnthropicBaseURL); err != nil {
			return r, err
		}
	default:
		return r, c.errf("provider", "unknown provider %q", c.Kind)
	}
	if c.BaseURL != "" {
		if err := model.CheckBaseURL(c.BaseURL, c.AllowHTTP); err != nil {
			return r, c.errf("base_url", "%v", err)
		}
	}
	if c.APIKeyEnv == "" {
		n := fmt.Sprintf("%s: api_key_env is \"\", so no API key is sent to %s", c.Model, model.RedactURL(r.URL))
		if r.Notice != "" {
			n = r.Notice + "; no API key is sent (api_key_env = \"\")"
		}
		r.Notice = n
	}
	r.Caches = model.PromptCaching(r.Kind, r.URL)
	if r.Kind == "anthropic" || (r.Kind == "openai" && model.PromptCaching("openai", r.URL)) {
		r.BatchDiscount = 0.5
	}
	return r, nil
}

// fromEnv sets r's URL from the audit file, else from the environment
// variable name (saying so in Notice), else to def.
func (r *Resolved) fromEnv(env Env, name, def string) error {
	r.URL = r.BaseURL
	if r.URL != "" {
		return nil
	}
	v, ok := env(name)
	if !ok || v == "" {
		r.URL = def
		return nil
	}
	r.URL = v
	r.Notice = fmt.Sprintf("%s: base_url is not set, so calls go to $%s = %s", r.Model, name, model.RedactURL(v))
	if err := model.CheckBaseURL(v, r.AllowHTTP); err != nil {
		return fmt.Errorf("%s: base_url is not set and $%s %v", r.Model, name, err)
	}
	return nil
}

// Name names the endpoint in messages: the model and the base URL without
// a password.
func (r Resolved) Name() string {
	if r.Kind == "sim" {
		return r.Model + " (simulated)"
	}
	return r.Model + " at " + model.RedactURL(r.URL)
}

// Key returns the API key from the environment: "" when APIKeyEnv is ""
// (a keyless server), an error naming the variable when it is not set.
func (r Resolved) Key(env Env) (string, error) {
	if r.Kind == "sim" || r.APIKeyEnv == "" {
		return "", nil
	}
	if env == nil {
		env = os.LookupEnv
	}
	if v, ok := env(r.APIKeyEnv); ok && v != "" {
		return v, nil
	}
	return "", r.errf("api_key_env", "environment variable %s is not set; export it with the API key for %s, or set api_key_env = \"\" for a server that needs none", r.APIKeyEnv, r.Model)
}

// BuildOptions are what Build needs beyond the Resolved endpoint.
type BuildOptions struct {
	Env        Env                // nil: os.LookupEnv
	RequestLog *runner.RequestLog // nil: none
	HTTPClient *http.Client       // nil: the provider's own pooled client
	Sim        sim.Options        // for Kind "sim"
}

// Build reads the key and returns the provider. Call it only when there
// are calls to make: a missing key is an error here, not in Resolve.
func (r Resolved) Build(o BuildOptions) (runner.Provider, error) {
	if r.Kind == "sim" {
		return sim.New(o.Sim), nil
	}
	key, err := r.Key(o.Env)
	if err != nil {
		return nil, err
	}
	switch r.Kind {
	case "anthropic":
		return runner.NewAnthropic(runner.AnthropicConfig{BaseURL: r.URL, APIKey: key, HTTPClient: o.HTTPClient,
			RequestLog: o.RequestLog, Name: r.Name()})
	default:
		return runner.NewOpenAI(runner.OpenAIConfig{BaseURL: r.URL, APIKey: key, HTTPClient: o.HTTPClient,
			RequestLog: o.RequestLog, Name: r.Name()})
	}
}

// Endpoint builds the provider and returns it as the runner's endpoint.
func (r Resolved) Endpoint(o BuildOptions) (runner.Endpoint, error) {
	p, err := r.Build(o)
	if err != nil {
		return runner.Endpoint{}, err
	}
	return runner.Endpoint{Name: r.Name(), Provider: p, Timeout: r.Timeout}, nil
}

// errf returns an InputError about key k of the table c came from.
func (c Config) errf(k, format string, args ...any) error {
	return &model.InputError{File: c.File, Line: c.Line, Field: c.Field + "." + k, Msg: fmt.Sprintf(format, args...)}
}

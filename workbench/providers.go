package workbench

import (
	"fmt"
	"os"
	"time"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
)

// endpoint is where one model or judge is called, as the audit file says.
type endpoint struct {
	name, provider, baseURL, keyEnv string
	line                            int    // the table's line in the audit file
	what                            string // "model" or "judge", for errors
}

// modelEndpoints and judgeEndpoints list the audit's endpoints in the order
// of the audit file.
func (s *Session) modelEndpoints() []endpoint {
	out := make([]endpoint, len(s.Audit.File.Models))
	for i, m := range s.Audit.File.Models {
		out[i] = endpoint{name: m.Name, provider: m.Provider, baseURL: m.BaseURL, keyEnv: m.APIKeyEnv, line: m.Line, what: "model"}
	}
	return out
}

func (s *Session) judgeEndpoints() []endpoint {
	out := make([]endpoint, len(s.Audit.Judges))
	for i, j := range s.Audit.Judges {
		c := j.Config
		out[i] = endpoint{name: c.Name, provider: c.Provider, baseURL: c.BaseURL, keyEnv: c.APIKeyEnv, line: c.DefLine, what: "judge"}
	}
	return out
}

// providers builds one provider per endpoint. API keys are read from the
// environment here and go nowhere but the provider.
func (s *Session) providers(eps []endpoint, simLatency time.Duration) ([]runner.Provider, error) {
	rules := map[int]string{}
	for _, r := range s.Audit.Rules {
		rules[r.Line] = r.Text
	}
	out := make([]runner.Provider, len(eps))
	for i, ep := range eps {
		if ep.provider == "sim" {
			out[i] = sim.New(sim.Options{Rules: rules, Latency: simLatency})
			continue
		}
		key := os.Getenv(ep.keyEnv)
		if key == "" {
			return nil, &model.InputError{File: s.Audit.Path, Line: ep.line, Field: "api_key_env",
				Msg: fmt.Sprintf("environment variable %s is not set; export it with the API key for %s %s", ep.keyEnv, ep.what, ep.name)}
		}
		base := ep.baseURL
		if base == "" {
			base = os.Getenv("OPENAI_BASE_URL")
		}
		if base == "" {
			base = runner.DefaultBaseURL
		}
		p, err := runner.NewOpenAI(runner.OpenAIConfig{BaseURL: base, APIKey: key})
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

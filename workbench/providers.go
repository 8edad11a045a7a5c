package workbench

import (
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/provider"
	"github.com/auditor-dev/auditor/runner/sim"
)

// modelConfigs and judgeConfigs list where the audit's models and judges
// are called, in the order of the audit file: a plan's answer calls name
// their endpoint by model index, judge calls by judge index.
func (s *Session) modelConfigs() []provider.Config {
	out := make([]provider.Config, len(s.Audit.File.Models))
	for i, m := range s.Audit.File.Models {
		out[i] = provider.FromModel(s.Audit.Path, i, m)
	}
	return out
}

func (s *Session) judgeConfigs() []provider.Config {
	out := make([]provider.Config, len(s.Audit.Judges))
	for i, j := range s.Audit.Judges {
		out[i] = provider.FromJudge(s.Audit.Path, i, j.Config)
	}
	return out
}

// Notices checks where every model and judge is called, reading no key,
// and returns what the user must be told before calls are made (a base
// URL taken from $OPENAI_BASE_URL, no key sent to a local server). An
// endpoint that cannot be used (plain http to another machine, an unknown
// provider) is an error naming the audit file's line.
func (s *Session) Notices() ([]string, error) {
	var out []string
	for _, c := range append(s.modelConfigs(), s.judgeConfigs()...) {
		r, err := provider.Resolve(c, nil)
		if err != nil {
			return nil, err
		}
		if r.Notice != "" {
			out = append(out, r.Notice)
		}
	}
	n, err := s.DesignNotice()
	if n != "" {
		out = append(out, n)
	}
	return out, err
}

// endpoints builds the runner's endpoints from configs, in their order.
// Keys are read from the environment here, only when there are calls to
// make, and go nowhere but the providers.
func (s *Session) endpoints(cfgs []provider.Config, o RunOptions) ([]runner.Endpoint, error) {
	rules := map[int]string{}
	for _, r := range s.Audit.Rules {
		rules[r.Line] = r.Text
	}
	eps := make([]runner.Endpoint, len(cfgs))
	for i, c := range cfgs {
		r, err := provider.Resolve(c, nil)
		if err != nil {
			return nil, err
		}
		if eps[i], err = r.Endpoint(provider.BuildOptions{RequestLog: o.RequestLog,
			Sim: sim.Options{Rules: rules, Latency: o.SimLatency}}); err != nil {
			return nil, err
		}
	}
	return eps, nil
}

package audit

import (
	"math"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Estimate is what a plan will cost before it runs. Its JSON form is the
// stable output of `auditor plan --format json`.
type Estimate struct {
	Calls            int     `json:"calls"`        // calls still to make
	AnswerCalls      int     `json:"answer_calls"` // of which answers from the models under test
	JudgeCalls       int     `json:"judge_calls"`  // of which judge calls
	CachedCalls      int     `json:"cached_calls"` // already stored: free
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	USD              float64 `json:"usd"`
	USDWithCaching   float64 `json:"usd_with_prompt_caching"`
	Minutes          float64 `json:"minutes"`
	Samples          int     `json:"samples"`
	Concurrency      int     `json:"concurrency"`
	// CompletionBasis says where the completion-token estimate came from:
	// "stored responses" once some exist, else "half of max_tokens".
	CompletionBasis string         `json:"completion_basis"`
	Rules           []RuleEstimate `json:"rules"`
}

// RuleEstimate describes one audited line in a plan.
type RuleEstimate struct {
	Line   int                `json:"line"`
	Text   string             `json:"text"`
	Tokens int                `json:"tokens"`
	Cases  map[model.Kind]int `json:"cases"`
	// Power is what the planned samples could detect (see RulePower).
	Power RulePower `json:"power"`
	// Warnings name kinds with too few cases for a verdict, a check or a
	// useful clustered interval; empty, never nil, when there are none.
	Warnings []string `json:"warnings"`
}

// History is what stored responses say about a model: its mean completion
// length and latency. The zero value means nothing is known yet.
type History struct {
	CompletionTokens map[string]float64 // by model name
	LatencyMS        map[string]float64 // by model name
}

// Prompt caching, as the large providers implement it: a prompt prefix of at
// least 1,024 tokens is cached in 128-token steps after its first use.
const (
	cacheMinTokens = 1024
	cacheStep      = 128
)

// defaultLatencyMS is assumed per call when no response has been stored yet:
// a few hundred output tokens from a hosted model.
const defaultLatencyMS = 3000

// Estimate projects the cost of the calls not yet stored. done maps keys of
// stored calls to whether they succeeded; failed calls are made again.
func (p *Plan) Estimate(done map[string]bool, concurrency int, hist History, simLatencyMS float64) Estimate {
	e := Estimate{Samples: p.Samples, Concurrency: concurrency, CompletionBasis: "half of max_tokens"}
	seenSystem := map[string]bool{}
	systemTokens := map[string]int{}
	var latencySum float64
	for _, c := range p.Calls {
		if done[c.Key] {
			e.CachedCalls++
			continue
		}
		m := p.Audit.File.Models[c.Provider] // a plan's calls name their model's endpoint by index
		e.Calls++
		if c.Meta.Judge != "" {
			e.JudgeCalls++
		} else {
			e.AnswerCalls++
		}
		completion := float64(c.EstCompletionTokens)
		if v, ok := hist.CompletionTokens[m.Name]; ok {
			completion = v
			e.CompletionBasis = "stored responses"
		}
		prompt := c.EstPromptTokens
		e.PromptTokens += int64(prompt)
		e.CompletionTokens += int64(math.Round(completion))
		full := c.Price.Cost(prompt, 0, int(math.Round(completion)))
		e.USD += full

		system := c.Request.Messages[0].Content
		cached := 0
		if seenSystem[system] && m.PromptCaching() { // caching priced only where the provider has it
			st, ok := systemTokens[system]
			if !ok {
				st = p.systemTokens(system)
				systemTokens[system] = st
			}
			if st >= cacheMinTokens {
				cached = st / cacheStep * cacheStep
			}
		}
		seenSystem[system] = true
		e.USDWithCaching += c.Price.Cost(prompt, cached, int(math.Round(completion)))

		lat := defaultLatencyMS
		switch {
		case hist.LatencyMS[m.Name] > 0:
			latencySum += hist.LatencyMS[m.Name]
		case m.Provider == "sim":
			latencySum += simLatencyMS
		default:
			latencySum += float64(lat)
		}
	}
	if concurrency < 1 {
		concurrency = 1
	}
	e.Minutes = latencySum / float64(concurrency) / 60000
	for _, r := range p.Audit.Rules {
		re := RuleEstimate{Line: r.Line, Text: r.Text, Tokens: r.Tokens, Cases: map[model.Kind]int{}}
		for _, k := range model.Kinds {
			re.Cases[k] = 0
		}
		for _, c := range r.Cases {
			re.Cases[c.Kind]++
		}
		re.Power, re.Warnings = PlanPower(re.Cases, p.Samples, r.Config.NoInputClass())
		e.Rules = append(e.Rules, re)
	}
	return e
}

func (p *Plan) systemTokens(system string) int {
	if p.Audit.Counter == nil {
		return (len(system) + 3) / 4
	}
	return p.Audit.Counter.Count(system)
}

// AddJudges adds the judge calls still to make to an estimate. Judge calls
// depend on answer text, so before the answers exist they are projected: one
// call per judge for every answer the judge has not graded yet (answers with
// identical text to the same case share a call, so this is an upper bound).
// graded maps a judge's version to the set of answers it has graded.
func (p *Plan) AddJudges(e *Estimate, graded map[string]map[string]model.Grade, concurrency int, hist History) {
	if len(p.Audit.Judges) == 0 {
		return
	}
	var msgTokens, answerTokens float64
	tok := newTokenCache(p.Audit)
	var judged []runner.Call // the answers judges grade (see Plan.Judged)
	for _, c := range p.Calls {
		if p.Judged(c.Key) {
			judged = append(judged, c)
		}
	}
	for _, c := range judged {
		for _, m := range c.Request.Messages[1:] { // a conversation's judge reads every turn
			msgTokens += float64(tok.tokens(m.Content))
		}
		answerTokens += float64(c.EstCompletionTokens)
		if v, ok := hist.CompletionTokens[c.Request.Model]; ok {
			answerTokens += v - float64(c.EstCompletionTokens)
		}
	}
	n := float64(len(judged))
	if n == 0 {
		return
	}
	msgTokens /= n
	answerTokens /= n
	if concurrency < 1 {
		concurrency = 1
	}
	for _, j := range p.Audit.Judges {
		remaining := 0
		for _, c := range judged {
			if _, ok := graded[j.Version][c.Key]; !ok {
				remaining++
			}
		}
		if remaining == 0 {
			continue
		}
		rubric := p.countTokens(j.Rubric) + p.countTokens(model.JudgeSystemPrompt)
		prompt := rubric + int(msgTokens+answerTokens) + 2*perMessageOverhead + 3
		completion := j.Config.CompletionLimit() / 2
		if v, ok := hist.CompletionTokens[j.Config.Name]; ok {
			completion = int(v)
		}
		price := judgePrice(j.Config)
		e.Calls += remaining
		e.JudgeCalls += remaining
		e.PromptTokens += int64(prompt * remaining)
		e.CompletionTokens += int64(completion * remaining)
		e.USD += float64(remaining) * price.Cost(prompt, 0, completion)
		e.USDWithCaching += float64(remaining) * price.Cost(prompt, 0, completion)
		lat := float64(defaultLatencyMS)
		if v := hist.LatencyMS[j.Config.Name]; v > 0 {
			lat = v
		} else if j.Config.Provider == "sim" {
			lat = 0
		}
		e.Minutes += float64(remaining) * lat / float64(concurrency) / 60000
	}
}

func (p *Plan) countTokens(s string) int {
	if p.Audit.Counter == nil {
		return (len(s) + 3) / 4
	}
	return p.Audit.Counter.Count(s)
}

package audit

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Estimate is what a plan will cost before it runs. Its JSON form is the
// stable output of `auditor plan --format json`.
//
// Two figures are given for tokens, dollars and minutes: the expected one,
// from the mean answer length (and latency) of the answers already stored
// for each model, or from the assumptions the Basis fields state when none
// is stored; and the at-most one, every answer running to its max_tokens
// limit (the bound the provider enforces) and every judge call made.
type Estimate struct {
	SchemaVersion int `json:"schema_version"`
	Calls         int `json:"calls"`        // calls still to make
	AnswerCalls   int `json:"answer_calls"` // of which answers from the models under test
	JudgeCalls    int `json:"judge_calls"`  // of which judge calls (at most: identical answers share one)
	// JudgeCallsExpected is the judge calls expected: JudgeCalls less those
	// a free pilot of the simulator found identical answers to share.
	JudgeCallsExpected int `json:"judge_calls_expected"`
	CachedCalls        int `json:"cached_calls"` // already stored: free
	// AdaptiveAnswers is what an adaptive audit's answer calls still to
	// make come to; nil for an audit run in one go.
	AdaptiveAnswers *AdaptiveCalls `json:"adaptive_answers,omitempty"`
	// UnneededCalls are calls an adaptive audit will never make: they serve
	// only lines settled at an interim look (see Unneeded).
	UnneededCalls    int     `json:"unneeded_calls"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	USD              float64 `json:"usd"`
	USDWithCaching   float64 `json:"usd_with_prompt_caching"`
	Minutes          float64 `json:"minutes"`
	// The at-most figures: every answer and judge call at its token limit.
	CompletionTokensAtMost int64   `json:"completion_tokens_at_most"`
	USDAtMost              float64 `json:"usd_at_most"`
	MinutesAtMost          float64 `json:"minutes_at_most"`
	Samples                int     `json:"samples"`
	Concurrency            int     `json:"concurrency"`
	// CompletionBasis says where the expected completion tokens came from,
	// per model: the mean of its stored answers, or the stated assumption.
	CompletionBasis string `json:"completion_basis"`
	// LatencyBasis says the same of the minutes.
	LatencyBasis string `json:"latency_basis"`
	// JudgeCallsBasis says where JudgeCallsExpected came from: the share
	// of identical answers measured on stored (or piloted) answers, or
	// the assumption that none are; empty without judge calls.
	JudgeCallsBasis string `json:"judge_calls_basis,omitempty"`
	// CachingBasis says for which models prompt caching is priced in
	// USDWithCaching: only endpoints known to cache (OpenAI's and
	// Anthropic's own APIs); any other host gets no discount.
	CachingBasis string `json:"caching_basis"`
	// Unpriced names the models and judges with calls to make whose prices
	// the audit file does not give: the dollars leave them out, so they are
	// not what the run costs.
	Unpriced []string       `json:"unpriced,omitempty"`
	Rules    []RuleEstimate `json:"rules"`
	// Regression counts each regression suite's own calls (those no rule
	// and no earlier suite makes), in the audit's order; omitted when the
	// audit has no suite. Its calls are in Calls and CachedCalls too.
	Regression []SuiteEstimate `json:"regression,omitempty"`
	// Ship is the joint test's part of the plan (auditor ship); omitted
	// when the audit has none. Its calls are in Calls and CachedCalls too.
	Ship *ShipEstimate `json:"ship,omitempty"`
}

// ShipEstimate is the joint test in a plan: the calls only the joint
// variant makes (every other it shares), what they cost, and the blind
// labels of its answers that settle a class the model never breaks.
type ShipEstimate struct {
	Lines       []int   `json:"lines"`
	Test        int     `json:"test"`
	Calls       int     `json:"calls"`        // its calls still to make
	CachedCalls int     `json:"cached_calls"` // its calls already stored
	USD         float64 `json:"usd"`
	USDAtMost   float64 `json:"usd_at_most"`
	// Classes is how many line classes (lines x models) it decides;
	// LabelsPerClass the blind labels, all clean, of a class's joint
	// answers that bound it by the labels route (model.LabelsForZero), and
	// Labels their total: labelling the joint variant decides every quiet
	// line of it at once.
	Classes        int `json:"classes"`
	LabelsPerClass int `json:"labels_per_class"`
	Labels         int `json:"labels"`
}

// SuiteEstimate is one regression suite in a plan: its cases, run on
// baseline and on each of Variants rule variants, and the calls it adds.
type SuiteEstimate struct {
	Name        string `json:"name"`
	Cases       int    `json:"cases"`
	Variants    int    `json:"variants"`
	Calls       int    `json:"calls"`        // its calls still to make
	CachedCalls int    `json:"cached_calls"` // its calls already stored
}

// EstimateSchemaVersion is the version of Estimate's JSON form; it goes up
// when a field changes meaning or is removed (fields are only ever added
// otherwise).
const EstimateSchemaVersion = 1

// RuleEstimate describes one audited line in a plan.
type RuleEstimate struct {
	Line int    `json:"line"`
	Text string `json:"text"`
	// Kind and Variant say which variant is audited ("delete", "-L23";
	// "reword", "~L23"; "add", "+L23"); Label is what lists of variants
	// show (Rule.Label).
	Kind    model.VariantKind  `json:"kind"`
	Variant string             `json:"variant"`
	Label   string             `json:"-"`
	Tokens  int                `json:"tokens"`
	Cases   map[model.Kind]int `json:"cases"`
	// Power is what the planned samples could detect (see RulePower).
	Power RulePower `json:"power"`
	// Warnings name kinds with too few cases for a verdict, a check or a
	// useful clustered interval; empty, never nil, when there are none.
	Warnings []string `json:"warnings"`
	// Rubrics says, per judge, which rubric grades the line's answers;
	// empty for a line no judge grades (no judges, or no input class).
	Rubrics []RubricUse `json:"rubrics,omitempty"`
}

// RubricUse is the rubric one judge grades a line's answers with.
type RubricUse struct {
	Judge  string `json:"judge"`  // "judge:<model>"
	Rubric string `json:"rubric"` // the file as the audit file names it
	// Rule says it is the line's judge_rubric; false: the judge's own.
	Rule bool `json:"judge_rubric"`
}

// History is what stored responses say about a model: its mean completion
// length and latency, over Answers stored answers. The zero value means
// nothing is known yet.
type History struct {
	CompletionTokens map[string]float64 // by model name
	LatencyMS        map[string]float64 // by model name
	Answers          map[string]int     // by model name
	// Pilot counts, by model name, the answers of a free pilot of the
	// simulated model behind CompletionTokens when nothing is stored.
	Pilot map[string]int
	// JudgeShare is, by answering model's name, the share of its judged
	// answers expected to need a judge call of their own (identical answers
	// to one case share one), measured on JudgeShareOn answers, stored or
	// of a free pilot of the simulator; absent: every answer.
	JudgeShare   map[string]float64
	JudgeShareOn map[string]int
}

// What an estimate assumes for a model with no stored answers. A chat
// answer to one support-style question runs to a few hundred tokens, far
// below the usual max_tokens (reasoning models' 4,000 above all), so an
// answer is assumed to take 250 tokens, or half of max_tokens when that is
// less; a hosted model starts answering in about half
// a second and then streams about 100 tokens a second. Both are stated with
// every estimate that uses them, and replaced by the model's own numbers
// once it has answered.
const (
	AssumedCompletionTokens = 250
	assumedFirstTokenMS     = 500
	assumedMSPerToken       = 10
)

// assumedLatencyMS is the time one call is assumed to take to produce
// tokens output tokens.
func assumedLatencyMS(tokens float64) float64 {
	return assumedFirstTokenMS + assumedMSPerToken*tokens
}

// Prompt caching, as the large providers implement it: a prompt prefix of at
// least 1,024 tokens is cached in 128-token steps after its first use.
const (
	cacheMinTokens = 1024
	cacheStep      = 128
)

// Estimate projects the cost of the calls not yet stored. done maps keys of
// stored calls to whether they succeeded; failed calls are made again.
// Unneeded takes out of e the calls of unneeded, counted by Estimate as
// done: they are neither stored nor to make, but never needed (an
// adaptive audit's calls for lines settled at a look).
func (p *Plan) Unneeded(e *Estimate, unneeded map[string]bool) {
	for k := range unneeded {
		if !p.Planned(k) {
			continue
		}
		e.UnneededCalls++
		e.CachedCalls--
		if e.Ship != nil && p.jointOnly(k) {
			e.Ship.CachedCalls--
		}
		if si := p.SuiteOf(k); si >= 0 {
			e.Regression[si].CachedCalls--
		}
	}
}

// hist holds what stored answers say of each model; simLatencyMS is the
// simulated model's mean latency; caches[i] says whether model i's
// endpoint is known to discount a repeated prompt (provider.Resolved.Caches;
// nil: none is).
func (p *Plan) Estimate(done map[string]bool, concurrency int, hist History, simLatencyMS float64, caches []bool) Estimate {
	e := Estimate{SchemaVersion: EstimateSchemaVersion, Samples: p.Samples, Concurrency: concurrency}
	var bases basisList
	seenSystem := map[string]bool{}
	systemTokens := map[string]int{}
	var latencySum, latencyMaxSum float64
	outlooks := make([]callOutlook, len(p.Audit.File.Models))
	for i, m := range p.Audit.File.Models {
		outlooks[i] = hist.outlook(m.Name, m.CompletionLimit(), m.Provider == "sim", simLatencyMS, &bases)
	}
	for i, s := range p.Audit.Regressions {
		if i == 0 {
			e.Regression = make([]SuiteEstimate, 0, len(p.Audit.Regressions))
		}
		e.Regression = append(e.Regression, SuiteEstimate{Name: s.Name, Cases: len(s.Cases), Variants: len(p.Audit.Rules)})
	}
	if sp := p.Ship; sp != nil {
		n := len(sp.Joint.Rules) * len(p.Audit.File.Models)
		per := model.LabelsForZero(p.Audit.File.Delta)
		e.Ship = &ShipEstimate{Lines: sp.Joint.Lines, Test: sp.Joint.Test, Classes: n, LabelsPerClass: per, Labels: n * per}
	}
	for _, c := range p.Calls {
		joint := e.Ship != nil && p.jointOnly(c.Key)
		if joint && done[c.Key] {
			e.Ship.CachedCalls++
		} else if joint {
			e.Ship.Calls++
		}
		if si := p.SuiteOf(c.Key); si >= 0 {
			if done[c.Key] {
				e.Regression[si].CachedCalls++
			} else {
				e.Regression[si].Calls++
			}
		}
		if done[c.Key] {
			e.CachedCalls++
			continue
		}
		m := p.Audit.File.Models[c.Provider] // a plan's calls name their model's endpoint by index
		o := outlooks[c.Provider]
		if !m.Priced {
			e.Unpriced = appendNew(e.Unpriced, model.Sanitize(m.Name))
		}
		e.Calls++
		if c.Meta.Judge != "" {
			e.JudgeCalls++
		} else {
			e.AnswerCalls++
		}
		prompt := c.EstPromptTokens
		completion := int(math.Round(o.completion))
		e.PromptTokens += int64(prompt)
		e.CompletionTokens += int64(completion)
		e.CompletionTokensAtMost += int64(o.completionMax)
		e.USD += c.Price.Cost(prompt, 0, completion)
		e.USDAtMost += c.Price.Cost(prompt, 0, o.completionMax)
		if joint {
			e.Ship.USD += c.Price.Cost(prompt, 0, completion)
			e.Ship.USDAtMost += c.Price.Cost(prompt, 0, o.completionMax)
		}

		system := c.Request.Messages[0].Content
		cached := 0
		if seenSystem[system] && c.Provider < len(caches) && caches[c.Provider] { // caching priced only where the provider has it
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
		e.USDWithCaching += c.Price.Cost(prompt, cached, completion)
		latencySum += o.latencyMS
		latencyMaxSum += o.latencyMaxMS
	}
	if concurrency < 1 {
		concurrency = 1
	}
	e.Minutes = latencySum / float64(concurrency) / 60000
	e.MinutesAtMost = latencyMaxSum / float64(concurrency) / 60000
	bases.addTo(&e)
	e.CachingBasis = p.cachingBasis(caches)
	for ri, r := range p.Audit.Rules {
		re := RuleEstimate{Line: r.Line, Text: r.Text, Kind: r.VariantKind(), Variant: r.Variant(), Label: r.Label(), Tokens: r.Tokens, Cases: map[model.Kind]int{}}
		for _, j := range p.Audit.Judges {
			if rb := j.For(ri); rb.Version != "" {
				re.Rubrics = append(re.Rubrics, RubricUse{Judge: j.Grader, Rubric: rb.Name, Rule: r.JudgeRubricPath != ""})
			}
		}
		for _, k := range model.Kinds {
			re.Cases[k] = 0
		}
		for _, c := range r.Cases {
			re.Cases[c.Kind]++
		}
		re.Power, re.Warnings = PlanPower(re.Cases, p.Samples, r.Config.NoInputClass())
		e.Rules = append(e.Rules, re)
	}
	e.SetLabelBudget(p, DefaultLabelBudget)
	e.setAdaptive(p, done)
	return e
}

// callOutlook is what one call of a model is expected to produce and take,
// and the most it can produce (its token limit) and the time that takes.
type callOutlook struct {
	completion, latencyMS float64
	completionMax         int
	latencyMaxMS          float64
}

// outlook projects one call of the named model from its stored answers, or
// from the stated assumptions when it has none, and records in bases which
// it used.
func (h History) outlook(name string, limit int, simulated bool, simLatencyMS float64, bases *basisList) callOutlook {
	label := model.Sanitize(name) // a model name from the audit file reaches screens and reports
	o := callOutlook{completion: math.Min(AssumedCompletionTokens, float64(limit/2)), completionMax: limit}
	mean, stored := h.CompletionTokens[name]
	n := h.Answers[name]
	if stored {
		o.completion = math.Min(mean, float64(limit))
		if p := h.Pilot[name]; p > 0 && n == 0 {
			bases.addTokens(fmt.Sprintf("%s: measured, mean of a free pilot of %d simulated answers, %.0f tokens", label, p, mean))
		} else if n > 0 {
			bases.addTokens(fmt.Sprintf("%s: measured, mean of %d stored answers, %.0f tokens", label, n, mean))
		} else {
			bases.addTokens(fmt.Sprintf("%s: measured, mean of its stored answers, %.0f tokens", label, mean))
		}
	} else {
		hint := "" // the simulator's pilot is free and made when it can be
		if !simulated {
			hint = ": plan --pilot measures it"
		}
		bases.addTokens(fmt.Sprintf("%s: assumed %.0f tokens an answer (250, or half of max_tokens if less; none stored yet%s)", label, o.completion, hint))
	}
	lat := h.LatencyMS[name]
	switch {
	case simulated:
		o.latencyMS, o.latencyMaxMS = simLatencyMS, simLatencyMS
		bases.addLatency(fmt.Sprintf("%s: simulated, %.1f s a call", label, simLatencyMS/1000))
	case lat > 0:
		// Stored answers give the model's time per call at its usual
		// length; an answer at the limit takes longer in proportion.
		o.latencyMS, o.latencyMaxMS = lat, lat
		if mean > 0 && float64(limit) > mean {
			o.latencyMaxMS = lat * float64(limit) / mean
		}
		bases.addLatency(fmt.Sprintf("%s: measured, mean latency of %d stored answers, %.1f s a call", label, n, lat/1000))
	default:
		o.latencyMS, o.latencyMaxMS = assumedLatencyMS(o.completion), assumedLatencyMS(float64(limit))
		bases.addLatency(fmt.Sprintf("%s: assumed %.1f s a call (0.5 s to the first token, then 100 tokens a second; none stored yet: plan --pilot measures it)",
			label, o.latencyMS/1000))
	}
	return o
}

// basisList collects the distinct statements of where an estimate's
// figures came from, in the order first met.
type basisList struct{ tokens, latency []string }

func (b *basisList) addTokens(s string)  { b.tokens = appendNew(b.tokens, s) }
func (b *basisList) addLatency(s string) { b.latency = appendNew(b.latency, s) }

// addTo appends the statements not already in an estimate's bases.
func (b *basisList) addTo(e *Estimate) {
	for _, s := range b.tokens {
		e.CompletionBasis = joinNew(e.CompletionBasis, s)
	}
	for _, s := range b.latency {
		e.LatencyBasis = joinNew(e.LatencyBasis, s)
	}
}

func joinNew(list, s string) string {
	switch {
	case list == "":
		return s
	case slices.Contains(strings.Split(list, "; "), s):
		return list
	}
	return list + "; " + s
}

func appendNew(xs []string, s string) []string {
	if slices.Contains(xs, s) {
		return xs
	}
	return append(xs, s)
}

func (p *Plan) systemTokens(system string) int {
	if p.Audit.Counter == nil {
		return (len(system) + 3) / 4
	}
	return p.Audit.Counter.Count(system)
}

// AddJudges adds the judge calls still to make to an estimate. Judge calls
// depend on answer text, so before the answers exist they are projected: one
// call per judge and rubric for every answer the judge has not graded with
// that rubric yet (answers with identical text to the same case share a
// call, so this is an upper bound). graded maps a judge rubric's version
// (Rubric.Version) to the set of answers graded with it; unneeded are
// answers an adaptive audit will never make (see Plan.Unneeded).
func (p *Plan) AddJudges(e *Estimate, graded map[string]map[string]model.Grade, unneeded map[string]bool, concurrency int, hist History) {
	if len(p.Audit.Judges) == 0 {
		return
	}
	var bases basisList
	answers := make([]callOutlook, len(p.Audit.File.Models))
	for i, m := range p.Audit.File.Models {
		answers[i] = hist.outlook(m.Name, m.CompletionLimit(), m.Provider == "sim", 0, &basisList{})
	}
	// A judge reads the case's message and the answer: the answer is
	// expected at its model's usual length and at most at its limit.
	var msgTokens, answerTokens, answerTokensMax float64
	tok := newTokenCache(p.Audit)
	var judged []runner.Call // the answers judges grade (see Plan.Judged)
	var shareSum float64     // the expected share of them needing a call of their own
	measured := map[string]bool{}
	for _, c := range p.Calls {
		if !p.Judged(c.Key) || unneeded[c.Key] {
			continue // an answer never made is never judged
		}
		judged = append(judged, c)
		name := p.Audit.File.Models[c.Provider].Name
		share, ok := hist.JudgeShare[name]
		if !ok {
			share = 1
		}
		measured[name] = ok
		shareSum += share
		for _, m := range c.Request.Messages[1:] { // a conversation's judge reads every turn
			msgTokens += float64(tok.tokens(m.Content))
		}
		answerTokens += answers[c.Provider].completion
		answerTokensMax += float64(answers[c.Provider].completionMax)
	}
	n := float64(len(judged))
	if n == 0 {
		return
	}
	// Expected figures count the calls a pilot says identical answers
	// leave; at-most figures count one call an answer.
	share := shareSum / n
	msgTokens /= n
	answerTokens /= n
	answerTokensMax /= n
	if concurrency < 1 {
		concurrency = 1
	}
	for _, j := range p.Audit.Judges {
		// A judge asks once per answer and rubric grading it (see
		// Plan.JudgeCells); rubrics differ in length.
		remaining := map[string]int{}
		for _, c := range judged {
			for _, q := range p.JudgeCells(j, c.Key) {
				if _, ok := graded[q.Rubric.Version][c.Key]; !ok {
					remaining[q.Rubric.Version]++
				}
			}
		}
		if len(remaining) == 0 {
			continue
		}
		o := hist.outlook(j.Config.Name, j.Config.CompletionLimit(), j.Config.Provider == "sim", 0, &bases)
		completion := int(math.Round(o.completion))
		price := judgePrice(j.Config)
		if !j.Config.Priced {
			e.Unpriced = appendNew(e.Unpriced, model.Sanitize(j.Config.Name))
		}
		for _, rb := range j.Rubrics() {
			n := remaining[rb.Version]
			if n == 0 {
				continue
			}
			rubric := p.countTokens(rb.Text) + p.countTokens(model.JudgeSystemPrompt)
			overhead := rubric + 2*perMessageOverhead + 3
			prompt := overhead + int(msgTokens+answerTokens)
			promptMax := overhead + int(msgTokens+answerTokensMax)
			r := float64(n)
			exp := r * share
			e.Calls += n
			e.JudgeCalls += n
			e.JudgeCallsExpected += int(math.Round(exp))
			e.PromptTokens += int64(math.Round(float64(prompt) * exp))
			e.CompletionTokens += int64(math.Round(float64(completion) * exp))
			e.CompletionTokensAtMost += int64(o.completionMax * n)
			e.USD += exp * price.Cost(prompt, 0, completion)
			e.USDWithCaching += exp * price.Cost(prompt, 0, completion)
			e.USDAtMost += r * price.Cost(promptMax, 0, o.completionMax)
			e.Minutes += exp * o.latencyMS / float64(concurrency) / 60000
			e.MinutesAtMost += r * o.latencyMaxMS / float64(concurrency) / 60000
		}
	}
	bases.addTo(e)
	if e.JudgeCalls > 0 {
		e.JudgeCallsBasis = p.judgeShareBasis(hist, measured)
	}
}

// judgeShareBasis says, per model whose answers judges grade, where the
// share of answers needing a judge call of their own came from.
func (p *Plan) judgeShareBasis(hist History, measured map[string]bool) string {
	var parts []string
	for _, m := range p.Audit.File.Models {
		ok, judged := measured[m.Name]
		if !judged {
			continue
		}
		label := model.Sanitize(m.Name)
		if ok {
			parts = appendNew(parts, fmt.Sprintf("%s: measured, %.0f%% of answers need a judge call of their own (identical answers to a case share one; from %d answers)",
				label, 100*hist.JudgeShare[m.Name], hist.JudgeShareOn[m.Name]))
		} else {
			parts = appendNew(parts, fmt.Sprintf("%s: assumed every answer needs a judge call of its own (none stored yet: plan --pilot measures how many are identical)", label))
		}
	}
	return strings.Join(parts, "; ")
}

// cachingBasis says for which models the estimate prices prompt caching.
func (p *Plan) cachingBasis(caches []bool) string {
	var yes, no []string
	for i, m := range p.Audit.File.Models {
		label := model.Sanitize(m.Name)
		switch {
		case m.Provider == "sim":
		case i < len(caches) && caches[i]:
			yes = appendNew(yes, label)
		default:
			no = appendNew(no, label)
		}
	}
	var parts []string
	if len(yes) > 0 {
		parts = append(parts, "priced for "+strings.Join(yes, ", ")+" (the provider's own API caches repeated prompts)")
	}
	if len(no) > 0 {
		parts = append(parts, "no discount for "+strings.Join(no, ", ")+" (an endpoint not known to cache: OpenAI-compatible servers, proxies and gateways may or may not)")
	}
	return strings.Join(parts, "; ")
}

func (p *Plan) countTokens(s string) int {
	if p.Audit.Counter == nil {
		return (len(s) + 3) / 4
	}
	return p.Audit.Counter.Count(s)
}

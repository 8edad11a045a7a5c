package audit

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Judge is an LLM judge from the audit file with its rubric loaded.
type Judge struct {
	Config     model.JudgeConfig
	RubricPath string
	Rubric     string
	Grader     string // "judge:<model>"
	Version    string // model.JudgeVersion of model and rubric
}

// loadJudges reads every judge's rubric. A rubric that never shows the judge
// the response cannot grade anything, so it is refused.
func (a *Audit) loadJudges() error {
	for i, jc := range a.File.Judges {
		path := a.resolve(jc.Rubric)
		data, err := readInput(path, a.Path, jc.DefLine, fmt.Sprintf("judge[%d].rubric", i+1))
		if err != nil {
			return err
		}
		rubric := strings.TrimPrefix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\ufeff")
		if !strings.Contains(rubric, "{{response}}") {
			return &model.InputError{File: path, Line: 1, Field: "{{response}}",
				Msg: "the rubric never shows the judge the response: add {{response}} (and usually {{msg}} and {{kind}})"}
		}
		a.Judges = append(a.Judges, &Judge{Config: jc, RubricPath: path, Rubric: rubric,
			Grader: model.JudgeGrader(jc.Name), Version: model.JudgeVersion(jc.Name, rubric)})
	}
	return nil
}

// judgeSeed is sent with every judge call where the API takes a seed, so a
// judge at temperature 0 is as repeatable as the provider allows.
const judgeSeed int64 = 20241119

// JudgeRequest is the call that asks judge j to grade one answer. Sample
// is 0 for the grade that counts; --rejudge uses later samples to measure
// how often a judge changes its mind.
func JudgeRequest(j *Judge, rule string, c model.Case, answer string, sample int) model.Request {
	seed := judgeSeed
	return j.Config.NewRequest([]model.Message{
		{Role: "system", Content: model.JudgeSystemPrompt},
		{Role: "user", Content: model.RenderRubric(j.Rubric, c, rule, answer)},
	}, &seed, sample)
}

// JudgePlan is the judge calls for a set of stored answers.
type JudgePlan struct {
	Calls     []runner.Call
	CallJudge []int // judge index of each call
	// Targets maps a judge call's key to the answers it grades: answers with
	// the same case and the same text need one judge call between them.
	Targets map[string][]string
}

// JudgeCalls lays out one call per judge for every stored answer of the
// plan (in plan order). answered maps keys to whether they hold an answer.
func (p *Plan) JudgeCalls(src Reader, answered map[string]bool, sample int) (*JudgePlan, error) {
	return p.judgeCalls(src, answered, sample, true)
}

// judgeCalls lays out the judge calls; estimate says whether to count each
// call's prompt tokens for the cost estimate (tokenizing every judge prompt
// is the slow part, and adding up what was spent does not need it).
func (p *Plan) judgeCalls(src Reader, answered map[string]bool, sample int, estimate bool) (*JudgePlan, error) {
	jp := &JudgePlan{Targets: map[string][]string{}}
	if len(p.Audit.Judges) == 0 {
		return jp, nil
	}
	for _, c := range p.Calls {
		if !answered[c.Key] || !p.Judged(c.Key) {
			continue
		}
		r, err := src.Response(c.Key)
		if err != nil {
			return nil, fmt.Errorf("audit: read answer %s for judging: %w", c.Key, err)
		}
		cell := p.Cells[p.ByKey[c.Key][0]]
		rule := p.Audit.Rules[cell.Rule]
		cs := rule.Cases[cell.Case]
		for ji, j := range p.Audit.Judges {
			req := JudgeRequest(j, rule.Text, cs, r.Text, sample)
			key := req.Key()
			if _, seen := jp.Targets[key]; !seen {
				meta := c.Meta
				meta.Judge = j.Config.Name
				jp.Calls = append(jp.Calls, runner.Call{
					Key: key, Request: req, Meta: meta, Provider: ji, // cmd's judge endpoints are in judge order
					EstPromptTokens:     estimateIf(estimate, func() int { return judgePromptTokens(p, req) }),
					EstCompletionTokens: j.Config.CompletionLimit() / 2,
					Price:               judgePrice(j.Config),
				})
				jp.CallJudge = append(jp.CallJudge, ji)
			}
			jp.Targets[key] = append(jp.Targets[key], c.Key)
		}
	}
	return jp, nil
}

// estimateIf returns f() when estimate is set, else 0.
func estimateIf(estimate bool, f func() int) int {
	if !estimate {
		return 0
	}
	return f()
}

// Judged reports whether judges grade an answer: every answer except those
// only a rule with no input class uses, whose verdict rests on answer
// length, not on anyone's reading of the answer.
func (p *Plan) Judged(key string) bool {
	for _, ci := range p.ByKey[key] {
		if !p.Audit.Rules[p.Cells[ci].Rule].Config.NoInputClass() {
			return true
		}
	}
	return false
}

func judgePromptTokens(p *Plan, req model.Request) int {
	n := 3
	for _, m := range req.Messages {
		if p.Audit.Counter != nil {
			n += p.Audit.Counter.Count(m.Content) + perMessageOverhead
		} else {
			n += (len(m.Content)+3)/4 + perMessageOverhead
		}
	}
	return n
}

// Pending returns the judge calls not yet stored.
func (jp *JudgePlan) Pending(status map[string]bool) []int {
	var out []int
	for i, c := range jp.Calls {
		if !status[c.Key] {
			out = append(out, i)
		}
	}
	return out
}

// judgePrice returns what a judge's tokens cost.
func judgePrice(c model.JudgeConfig) runner.Price {
	return runner.Price{InputPerMTok: c.PriceInputPerMTok, CachedInputPerMTok: c.PriceCachedInputPerMTok,
		CacheWriteInputPerMTok: c.PriceCacheWriteInputPerMTok, OutputPerMTok: c.PriceOutputPerMTok, Unknown: !c.Priced}
}

package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Judge is an LLM judge from the audit file with its rubrics loaded.
type Judge struct {
	Config model.JudgeConfig
	Grader string // "judge:<model>"
	// Own is the [[judge]]'s rubric, which grades every rule that names
	// no judge_rubric of its own.
	Own Rubric
	// byRule is the rubric that grades each rule's answers, by index in
	// Audit.Rules.
	byRule []Rubric
}

// Rubric is one rubric template as a judge grades with it. Its Version
// names the judge's grades with it: a rule graded with another rubric has
// grades of another version, and, the rubric being the judge call's text,
// calls of their own.
type Rubric struct {
	Name    string // the file as the audit file names it
	Path    string // the file, resolved against the audit's folder
	Text    string // the template, CRLF and a BOM removed
	Version string // model.JudgeVersion of the judge's model and Text
}

// For returns the rubric that grades rule's answers (an index in
// Audit.Rules): the rule's judge_rubric, else the judge's own.
func (j *Judge) For(rule int) Rubric { return j.byRule[rule] }

// Versions lists the versions of the rubrics the judge grades with, each
// once, in rule order: the grades a tally reads. A judge of an audit whose
// rules all have no input class grades nothing and has none.
func (j *Judge) Versions() []string {
	var out []string
	for _, r := range j.Rubrics() {
		out = append(out, r.Version)
	}
	return out
}

// Rubrics lists the rubrics the judge grades with, each once, in rule
// order (see Versions).
func (j *Judge) Rubrics() []Rubric {
	var out []Rubric
	seen := map[string]bool{}
	for _, r := range j.byRule {
		if r.Version != "" && !seen[r.Version] {
			seen[r.Version] = true
			out = append(out, r)
		}
	}
	return out
}

// readRubric reads a rubric template. A rubric that never shows the judge
// the response cannot grade anything, so it is refused.
func readRubric(path, from string, line int, field string) (string, error) {
	data, err := readInputMax(path, from, line, field, MaxRubricBytes, "a judge rubric")
	if err != nil {
		return "", err
	}
	rubric := strings.TrimPrefix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\ufeff")
	if !strings.Contains(rubric, "{{response}}") {
		return "", &model.InputError{File: path, Line: 1, Field: "{{response}}",
			Msg: "the rubric never shows the judge the response: add {{response}} (and usually {{msg}} and {{kind}})"}
	}
	return rubric, nil
}

// loadJudges reads every judge's rubric and gives each rule the rubric
// that grades it: the rule's own (read with the rule), else the judge's.
// A rule with no input class is graded by no judge and gets none.
func (a *Audit) loadJudges() error {
	for i, jc := range a.File.Judges {
		path := a.resolve(jc.Rubric)
		rubric, err := readRubric(path, a.Path, jc.DefLine, fmt.Sprintf("judge[%d].rubric", i+1))
		if err != nil {
			return err
		}
		j := &Judge{Config: jc, Grader: model.JudgeGrader(jc.Name),
			Own: Rubric{Name: jc.Rubric, Path: path, Text: rubric, Version: model.JudgeVersion(jc.Name, rubric)}}
		j.byRule = make([]Rubric, len(a.Rules))
		for ri, r := range a.Rules {
			switch {
			case r.Config.NoInputClass():
			case r.JudgeRubricPath != "":
				j.byRule[ri] = Rubric{Name: r.Config.JudgeRubric, Path: r.JudgeRubricPath, Text: r.JudgeRubric, Version: model.JudgeVersion(jc.Name, r.JudgeRubric)}
			default:
				j.byRule[ri] = j.Own
			}
		}
		a.Judges = append(a.Judges, j)
	}
	return nil
}

// judgeSeed is sent with every judge call where the API takes a seed, so a
// judge at temperature 0 is as repeatable as the provider allows.
const judgeSeed int64 = 20241119

// JudgeRequest is the call that asks judge j to grade one answer with
// rubric (the template is the call's text, so it is part of the call's
// content address). Sample is 0 for the grade that counts; --rejudge uses
// later samples to measure how often a judge changes its mind.
func JudgeRequest(j *Judge, rubric Rubric, rule string, c model.Case, answer string, sample int) model.Request {
	seed := judgeSeed
	return j.Config.NewRequest([]model.Message{
		{Role: "system", Content: model.JudgeSystemPrompt},
		{Role: "user", Content: model.RenderRubric(rubric.Text, c, rule, answer)},
	}, &seed, sample)
}

// JudgePlan is the judge calls for a set of stored answers.
type JudgePlan struct {
	Calls     []runner.Call
	CallJudge []int // judge index of each call
	// CallRubric is the rubric version of each call: the version of the
	// grade it gives.
	CallRubric []string
	// CallQuoted is, for each call, the verdict lines the judged answer
	// writes itself (model.QuotedVerdicts): never the judge's verdict.
	CallQuoted []model.Quoted
	// Targets maps a judge call's key to the answers it grades: answers with
	// the same case and the same text need one judge call between them.
	Targets map[string][]string
}

// JudgeCalls lays out, for every stored answer of the plan (in plan order),
// one call per judge and rubric grading it. answered maps keys to whether
// they hold an answer.
func (p *Plan) JudgeCalls(src Reader, answered map[string]bool, sample int) (*JudgePlan, error) {
	return p.judgeCalls(src, answered, sample, true)
}

// StoredJudgeCalls is JudgeCalls without the token estimates: what
// re-reading stored judge answers needs.
func (p *Plan) StoredJudgeCalls(src Reader, answered map[string]bool) (*JudgePlan, error) {
	return p.judgeCalls(src, answered, 0, false)
}

// JudgeCell is one judge's question about the answer to call key: the
// rubric, and the cell whose rule and case the rubric shows the judge.
type JudgeCell struct {
	Rubric Rubric
	Cell   Cell
}

// JudgeCells lists what judge j is asked about the answer to call key: one
// question per rubric among the judged rules whose cells share the call
// (usually one), each shown the rule and case of the first such cell.
func (p *Plan) JudgeCells(j *Judge, key string) []JudgeCell {
	var out []JudgeCell
	for _, ci := range p.ByKey[key] {
		cell := p.Cells[ci]
		rb := j.For(cell.Rule)
		if rb.Version == "" || slices.ContainsFunc(out, func(q JudgeCell) bool { return q.Rubric.Version == rb.Version }) {
			continue // a rule no judge grades, or a rubric already asked
		}
		out = append(out, JudgeCell{Rubric: rb, Cell: cell})
	}
	return out
}

// JudgeRequestFor is the request judge j grades the answer (text) to call
// key with for rule ri's rubric: the one JudgeCalls lays out. ok is false
// when no judge grades rule ri or its cells do not share the call.
func (p *Plan) JudgeRequestFor(j *Judge, key string, ri int, text string, sample int) (model.Request, bool) {
	want := j.For(ri).Version
	for _, q := range p.JudgeCells(j, key) {
		if q.Rubric.Version == want {
			rule := p.Audit.Rules[q.Cell.Rule]
			return JudgeRequest(j, q.Rubric, rule.Text, rule.Cases[q.Cell.Case], text, sample), true
		}
	}
	return model.Request{}, false
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
		for ji, j := range p.Audit.Judges {
			for _, q := range p.JudgeCells(j, c.Key) {
				rule := p.Audit.Rules[q.Cell.Rule]
				req := JudgeRequest(j, q.Rubric, rule.Text, rule.Cases[q.Cell.Case], r.Text, sample)
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
					jp.CallRubric = append(jp.CallRubric, q.Rubric.Version)
					jp.CallQuoted = append(jp.CallQuoted, model.QuotedVerdicts(r.Text))
				}
				jp.Targets[key] = append(jp.Targets[key], c.Key)
			}
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

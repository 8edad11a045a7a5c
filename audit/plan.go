package audit

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Cell is one planned sample: a case of a rule, under one variant of the
// prompt, for one model, at one sample index. Several cells can share a Key
// (a call made once serves every cell that asks the same thing).
type Cell struct {
	Rule    int // index into Audit.Rules
	Model   int // index into Audit.File.Models
	Case    int // index into the rule's Cases
	Deleted bool
	Sample  int
	Key     string
}

// Plan is every cell of an audit and the distinct calls behind them.
type Plan struct {
	Audit   *Audit
	Samples int
	Cells   []Cell
	// Calls are the distinct calls, in dispatch order: sample-major, so a run
	// that stops early has spread its samples evenly over cases and variants.
	Calls []runner.Call
	// CallModel is the model index of each call in Calls.
	CallModel []int
	// ByKey maps a call's key to the indices of the cells it serves.
	ByKey map[string][]int
	// ruleCells holds the indices of each rule's cells, in plan order.
	ruleCells [][]int
}

// PlanOptions adjust a plan without editing the audit file.
type PlanOptions struct {
	Samples int // overrides the audit's samples when > 0
}

// NewPlan lays out every cell of the audit.
func NewPlan(a *Audit, opts PlanOptions) *Plan {
	p := &Plan{Audit: a, Samples: a.File.Samples, ByKey: map[string][]int{}, ruleCells: make([][]int, len(a.Rules))}
	if opts.Samples > 0 {
		p.Samples = opts.Samples
	}
	full := a.Prompt.Text()
	deleted := make([]string, len(a.Rules))
	for i, r := range a.Rules {
		deleted[i] = a.Prompt.Without(r.Line)
	}
	tok := newTokenCache(a)
	for s := 0; s < p.Samples; s++ {
		for mi, m := range a.File.Models {
			for ri, r := range a.Rules {
				for ci := range r.Cases {
					for _, del := range []bool{false, true} {
						system := full
						variant := Baseline
						if del {
							system, variant = deleted[ri], r.Variant()
						}
						c := &r.Cases[ci]
						req := model.Request{
							Model:       m.Name,
							Temperature: m.Temperature,
							MaxTokens:   m.MaxTokens,
							Messages:    Messages(system, *c),
							Sample:      s,
						}
						key := req.Key()
						p.Cells = append(p.Cells, Cell{Rule: ri, Model: mi, Case: ci, Deleted: del, Sample: s, Key: key})
						if _, seen := p.ByKey[key]; !seen {
							p.Calls = append(p.Calls, runner.Call{
								Key:     key,
								Request: req,
								Meta: runner.Meta{
									CaseID:   c.ID,
									Kind:     c.Kind,
									RuleLine: r.Line,
									Variant:  variant,
								},
								EstPromptTokens:     tok.prompt(system, *c),
								EstCompletionTokens: m.MaxTokens / 2,
								Price: runner.Price{
									InputPerMTok:       m.PriceInputPerMTok,
									CachedInputPerMTok: m.PriceCachedInputPerMTok,
									OutputPerMTok:      m.PriceOutputPerMTok,
								},
							})
							p.CallModel = append(p.CallModel, mi)
						}
						p.ByKey[key] = append(p.ByKey[key], len(p.Cells)-1)
						p.ruleCells[ri] = append(p.ruleCells[ri], len(p.Cells)-1)
					}
				}
			}
		}
	}
	return p
}

// Messages builds the chat messages of a case under a system prompt. A
// case's knowledge-base snippets are appended to the system prompt as the
// only sources the model may cite; appending (rather than a second system
// message) keeps the prompt prefix identical across cases, so providers can
// cache it, and works with endpoints that accept a single system message.
func Messages(system string, c model.Case) []model.Message {
	if len(c.KB) > 0 {
		var b strings.Builder
		b.WriteString(system)
		b.WriteString("\n\n## Knowledge base excerpts for this conversation\n")
		for _, s := range c.KB {
			fmt.Fprintf(&b, "- %s\n", s)
		}
		system = b.String()
	}
	return []model.Message{{Role: "system", Content: system}, {Role: "user", Content: c.Msg}}
}

// VariantName returns the display name of a cell's variant.
func (p *Plan) VariantName(c Cell) string {
	if c.Deleted {
		return p.Audit.Rules[c.Rule].Variant()
	}
	return Baseline
}

// tokenCache counts each distinct system prompt and message once: a plan has
// thousands of calls but only a handful of distinct texts.
type tokenCache struct {
	a     *Audit
	count map[string]int
}

func newTokenCache(a *Audit) *tokenCache { return &tokenCache{a: a, count: map[string]int{}} }

func (t *tokenCache) tokens(s string) int {
	if t.a.Counter == nil {
		return (len(s) + 3) / 4
	}
	n, ok := t.count[s]
	if !ok {
		n = t.a.Counter.Count(s)
		t.count[s] = n
	}
	return n
}

// perMessageOverhead approximates the tokens chat formatting adds around each
// message (role markers and separators) and the reply primer.
const perMessageOverhead = 4

func (t *tokenCache) prompt(system string, c model.Case) int {
	n := t.tokens(system) + t.tokens(c.Msg) + 2*perMessageOverhead + 3
	for _, s := range c.KB {
		n += t.tokens(s) + 2
	}
	return n
}

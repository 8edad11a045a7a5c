package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"
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
	// Joint marks a cell of the joint variant (audit.ShipPlan): Deleted is
	// true too, since the line's class is compared on it.
	Joint  bool
	Sample int
	Key    string
}

// Plan is every cell of an audit and the distinct calls behind them.
type Plan struct {
	Audit   *Audit
	Samples int
	Cells   []Cell
	// Calls are the distinct calls, in dispatch order: sample-major, so a run
	// that stops early has spread its samples evenly over cases and variants.
	Calls []runner.Call
	// ByKey maps a call's key to the indices of the rule cells it serves; a
	// call only a regression suite makes is in RegressionByKey alone.
	ByKey map[string][]int
	// ruleCells holds the indices of each rule's cells, in plan order.
	ruleCells [][]int
	// Regression holds the cells of the regression suites, apart from
	// Cells (which are all a rule's): each suite's cases on baseline and on
	// every variant of every rule. Their calls are in Calls with the rest;
	// RegressionByKey maps a key to the indices of the Regression cells it
	// serves. A key can serve cells of both kinds.
	Regression      []RegressionCell
	RegressionByKey map[string][]int
	// suiteCalls counts, per suite, the calls it adds: keys no rule cell
	// and no earlier suite uses.
	suiteCalls []int
	// Ship is the joint variant's part of the plan (see ShipPlan); nil when
	// the audit has no joint test.
	Ship *ShipPlan
	// design is the audit's looks over the plan's samples (designErr when
	// the two do not fit: fewer samples than looks).
	design    model.Design
	designErr error
}

// Design returns the audit's design over the plan's samples: its looks
// and their boundaries. The error says why the looks do not fit the
// samples (workbench.Load refuses such a plan).
func (p *Plan) Design() (model.Design, error) { return p.design, p.designErr }

// RegressionCell is one planned sample of a regression suite: a case of
// the suite under baseline or one rule's variant, for one model. The
// baseline cells of a suite serve every variant's comparison.
type RegressionCell struct {
	Suite   int // index into Audit.Regressions
	Model   int // index into Audit.File.Models
	Case    int // index into the suite's Cases
	Variant int // index into Audit.Rules of the variant; RegressionBaseline for the full prompt
	Sample  int
	Key     string
}

// RegressionBaseline is the Variant of a regression cell on the full prompt.
const RegressionBaseline = -1

// PlanOptions adjust a plan without editing the audit file.
type PlanOptions struct {
	Samples int // overrides the audit's samples when > 0
}

// NewPlan lays out every cell of the audit.
//
// A plan of a hundred thousand calls is built in a fraction of a second and
// without a copy per call of anything the calls share: every call of one
// case, variant and model differs only in its sample index, so the work that
// does not depend on the sample (messages, token estimates, the key's hash
// prefix) is done once per such group, in a template.
// MaxCells is the largest plan auditor lays out unless asked
// (PlanOptions-independent: see CellCount). At a typical $0.002 a call it
// is a $400 run; a typo in --samples would otherwise allocate millions of
// cells before anyone sees the cost.
const MaxCells = 200_000

// CellCount is how many cells NewPlan would lay out with samples per case
// and variant (0: the audit's): samples x models x (each rule's cases x 2
// variants + each regression suite's cases x (1 + every rule variant)).
// It is computed without building anything.
func (a *Audit) CellCount(samples int) int64 {
	if samples <= 0 {
		samples = a.File.Samples
	}
	var perSample int64
	for _, r := range a.Rules {
		perSample += int64(len(r.Cases)) * 2
	}
	for _, s := range a.Regressions {
		perSample += int64(len(s.Cases)) * int64(1+len(a.Rules))
		if a.Ship != nil {
			perSample += int64(len(s.Cases))
		}
	}
	if a.Ship != nil {
		for _, ri := range a.Ship.Rules {
			perSample += int64(len(a.Rules[ri].Cases))
		}
	}
	return int64(samples) * int64(len(a.File.Models)) * perSample
}

func NewPlan(a *Audit, opts PlanOptions) *Plan {
	p := &Plan{Audit: a, Samples: a.File.Samples, ruleCells: make([][]int, len(a.Rules))}
	if opts.Samples > 0 {
		p.Samples = opts.Samples
	}
	looks := max(a.File.Looks, 1) // an AuditFile built by hand has 0
	p.design, p.designErr = model.NewDesign(looks, p.Samples)
	full := a.Prompt.Text()
	deleted := make([]string, len(a.Rules))
	for i, r := range a.Rules {
		deleted[i] = r.System(a.Prompt)
	}
	tok := newTokenCache(a)
	// The templates, in the order cells are laid out within one sample.
	var tmpls []callTemplate
	for mi, m := range a.File.Models {
		for ri, r := range a.Rules {
			for ci := range r.Cases {
				for _, del := range []bool{false, true} {
					system := full
					variant := Baseline
					if del {
						system, variant = deleted[ri], r.Variant()
					}
					call, keys := answerCall(m, mi, r.Cases[ci], system, r.Line, variant, tok)
					tmpls = append(tmpls, callTemplate{
						cell: Cell{Rule: ri, Model: mi, Case: ci, Deleted: del},
						call: call,
						keys: keys,
					})
				}
			}
		}
	}

	rtmpls := regressionTemplates(a, full, deleted, tok)
	var jtmpls []callTemplate
	var jrtmpls []regTemplate
	if a.Ship != nil {
		sp := &ShipPlan{Joint: *a.Ship, System: a.Prompt.Without(a.Ship.Lines...), ByKey: map[string][]int{}, RegressionByKey: map[string][]int{}}
		jtmpls, jrtmpls = shipTemplates(a, sp.System, tok)
		sp.Cells = make([]Cell, 0, p.Samples*len(jtmpls))
		sp.Regression = make([]RegressionCell, 0, p.Samples*len(jrtmpls))
		p.Ship = sp
	}
	p.suiteCalls = make([]int, len(a.Regressions))
	p.RegressionByKey = make(map[string][]int, p.Samples*len(rtmpls))
	p.Regression = make([]RegressionCell, 0, p.Samples*len(rtmpls))

	n := p.Samples * len(tmpls)
	p.Cells = make([]Cell, 0, n)
	p.Calls = make([]runner.Call, 0, n+p.Samples*len(rtmpls))
	p.ByKey = make(map[string][]int, n)
	for ri, r := range a.Rules {
		p.ruleCells[ri] = make([]int, 0, p.Samples*len(a.File.Models)*2*len(r.Cases))
	}
	// Most keys serve one cell: their ByKey entries are one-element windows
	// of this slice (capped, so an append for a shared key copies) rather
	// than an allocation each.
	self := make([]int, n)
	kh := newKeyHasher()
	for s := 0; s < p.Samples; s++ {
		for ti := range tmpls {
			t := &tmpls[ti]
			key := t.keys.key(kh, s)
			i := len(p.Cells)
			cell := t.cell
			cell.Sample, cell.Key = s, key
			p.Cells = append(p.Cells, cell)
			if cells, seen := p.ByKey[key]; seen {
				p.ByKey[key] = append(cells, i)
			} else {
				call := t.call
				call.Key = key
				call.Request.Sample = s
				p.Calls = append(p.Calls, call)
				self[i] = i
				p.ByKey[key] = self[i : i+1 : i+1]
			}
			p.ruleCells[cell.Rule] = append(p.ruleCells[cell.Rule], i)
		}
		// The suites' calls of this sample follow the rules': a baseline
		// call is one call for every variant it is compared with.
		for ti := range rtmpls {
			t := &rtmpls[ti]
			key := t.keys.key(kh, s)
			i := len(p.Regression)
			cell := t.cell
			cell.Sample, cell.Key = s, key
			p.Regression = append(p.Regression, cell)
			cells, seen := p.RegressionByKey[key]
			_, ruleKey := p.ByKey[key]
			p.RegressionByKey[key] = append(cells, i)
			if seen || ruleKey {
				continue
			}
			call := t.call
			call.Key = key
			call.Request.Sample = s
			p.Calls = append(p.Calls, call)
			p.suiteCalls[cell.Suite]++
		}
		// The joint variant's calls of this sample follow: each is made
		// once, whatever other variant asks the same thing.
		if sp := p.Ship; sp != nil {
			for ti := range jtmpls {
				t := &jtmpls[ti]
				key := t.keys.key(kh, s)
				cell := t.cell
				cell.Sample, cell.Key = s, key
				sp.ByKey[key] = append(sp.ByKey[key], len(sp.Cells))
				sp.Cells = append(sp.Cells, cell)
				p.addShipCall(t.call, key, s)
			}
			for ti := range jrtmpls {
				t := &jrtmpls[ti]
				key := t.keys.key(kh, s)
				cell := t.cell
				cell.Sample, cell.Key = s, key
				sp.RegressionByKey[key] = append(sp.RegressionByKey[key], len(sp.Regression))
				sp.Regression = append(sp.Regression, cell)
				p.addShipCall(t.call, key, s)
			}
		}
	}
	return p
}

// addShipCall adds the joint variant's call with key unless the plan
// makes it already.
func (p *Plan) addShipCall(call runner.Call, key string, sample int) {
	_, rule := p.ByKey[key]
	_, suite := p.RegressionByKey[key]
	if rule || suite || p.Ship.madeKey(key) {
		return
	}
	call.Key = key
	call.Request.Sample = sample
	p.Calls = append(p.Calls, call)
	p.Ship.calls++
}

// regTemplate is what the calls of one model, suite, case and variant
// share (see callTemplate).
type regTemplate struct {
	cell RegressionCell
	call runner.Call
	keys sampleKeys
}

// regressionTemplates lays out the templates of every suite: per model,
// suite and case, baseline then each rule's variant. The calls carry
// RuleLine 0: no audited rule is what they test.
func regressionTemplates(a *Audit, full string, variants []string, tok *tokenCache) []regTemplate {
	var out []regTemplate
	for mi, m := range a.File.Models {
		for si, suite := range a.Regressions {
			for ci := range suite.Cases {
				c := &suite.Cases[ci]
				for vi := RegressionBaseline; vi < len(a.Rules); vi++ {
					system, variant := full, Baseline
					if vi != RegressionBaseline {
						system, variant = variants[vi], a.Rules[vi].Variant()
					}
					call, keys := answerCall(m, mi, *c, system, 0, variant, tok)
					out = append(out, regTemplate{
						cell: RegressionCell{Suite: si, Model: mi, Case: ci, Variant: vi},
						call: call,
						keys: keys,
					})
				}
			}
		}
	}
	return out
}

// SuiteCalls returns how many calls regression suite si adds to the plan:
// the distinct calls of its cells that no rule cell and no earlier suite
// makes.
func (p *Plan) SuiteCalls(si int) int {
	if si < 0 || si >= len(p.suiteCalls) {
		return 0
	}
	return p.suiteCalls[si]
}

// ModelOf returns the index of the model whose answer a planned key is
// (a rule's or a regression suite's); false for a key the plan does not
// use.
func (p *Plan) ModelOf(key string) (int, bool) {
	if cells := p.ByKey[key]; len(cells) > 0 {
		return p.Cells[cells[0]].Model, true
	}
	if cells := p.RegressionByKey[key]; len(cells) > 0 {
		return p.Regression[cells[0]].Model, true
	}
	if sp := p.Ship; sp != nil {
		if cells := sp.ByKey[key]; len(cells) > 0 {
			return sp.Cells[cells[0]].Model, true
		}
		if cells := sp.RegressionByKey[key]; len(cells) > 0 {
			return sp.Regression[cells[0]].Model, true
		}
	}
	return 0, false
}

// NeededBelow reports whether the call with this key serves a cell below
// sample m of a line that open says is open (by rule and model index), or
// a regression suite's cell below m on the baseline or on an open line's
// variant. An adaptive run makes only such calls: a line settled at a
// look needs no more answers.
func (p *Plan) NeededBelow(key string, m int, open func(rule, model int) bool) bool {
	for _, ci := range p.ByKey[key] {
		c := p.Cells[ci]
		// A joint line's baseline answers are the joint test's too.
		if c.Sample < m && (open(c.Rule, c.Model) || (!c.Deleted && p.Ship.has(c.Rule) && open(JointRule, c.Model))) {
			return true
		}
	}
	for _, ri := range p.RegressionByKey[key] {
		c := p.Regression[ri]
		if c.Sample < m && (c.Variant == RegressionBaseline || open(c.Variant, c.Model)) {
			return true
		}
	}
	if sp := p.Ship; sp != nil {
		for _, ci := range sp.ByKey[key] {
			if c := sp.Cells[ci]; c.Sample < m && open(JointRule, c.Model) {
				return true
			}
		}
		for _, ci := range sp.RegressionByKey[key] {
			if c := sp.Regression[ci]; c.Sample < m && open(JointRule, c.Model) {
				return true
			}
		}
	}
	return false
}

// JointRule stands for the joint test in NeededBelow's open: a call of the
// joint variant is needed while open(JointRule, model) says its decision
// is open for the model.
const JointRule = -2

// Planned reports whether the plan makes the call with this key.
func (p *Plan) Planned(key string) bool {
	_, ok := p.ModelOf(key)
	return ok
}

// SuiteOf returns the regression suite that adds the call with this key
// (see SuiteCalls), or -1 for a key a rule's cell uses or none does.
func (p *Plan) SuiteOf(key string) int {
	if _, rule := p.ByKey[key]; rule {
		return -1
	}
	if cells := p.RegressionByKey[key]; len(cells) > 0 {
		return p.Regression[cells[0]].Suite
	}
	return -1
}

// priceOf returns what a model's tokens cost.
// answerCall is the call that asks model m (the mi-th: the runner's
// endpoints are in model order) case c under the system prompt, with the
// sample keys of its samples. ruleLine is the audited rule's line, 0 for a
// regression suite's call.
func answerCall(m model.ModelConfig, mi int, c model.Case, system string, ruleLine int, variant string, tok *tokenCache) (runner.Call, sampleKeys) {
	req := m.NewRequest(Messages(system, c))
	return runner.Call{
		Request:  req,
		Provider: mi,
		Meta: runner.Meta{
			CaseID:   c.ID,
			Kind:     c.Kind,
			RuleLine: ruleLine,
			Variant:  variant,
		},
		EstPromptTokens:     tok.prompt(system, c),
		EstCompletionTokens: m.CompletionLimit() / 2,
		Price:               priceOf(m),
	}, newSampleKeys(req)
}

func priceOf(m model.ModelConfig) runner.Price {
	return runner.Price{
		InputPerMTok:           m.PriceInputPerMTok,
		CachedInputPerMTok:     m.PriceCachedInputPerMTok,
		CacheWriteInputPerMTok: m.PriceCacheWriteInputPerMTok,
		OutputPerMTok:          m.PriceOutputPerMTok,
		Unknown:                !m.Priced,
	}
}

// callTemplate is what the calls of one model, rule, case and variant share:
// all but the sample index and the key. Calls made from one template share
// its Messages slice, which nothing modifies.
type callTemplate struct {
	cell Cell
	call runner.Call
	keys sampleKeys
}

// sampleKeys computes model.Request.Key for every sample of one request
// without encoding the request again. The canonical encoding ends with
// `"sample":N}` (Sample is the last field and an integer needs no
// escaping), so the SHA-256 state after the prefix before N is kept, and each
// sample only hashes its own few bytes. TestSampleKeys pins the equality.
type sampleKeys struct {
	req    model.Request // Sample is set per key
	prefix []byte        // marshalled hash state after the shared prefix; nil: encode each request
}

// sampleSuffix is how the canonical encoding of a request with sample 0
// ends; everything before its "0}" is shared by every sample.
const sampleSuffix = `"sample":0}`

func newSampleKeys(req model.Request) sampleKeys {
	req.Sample = 0
	k := sampleKeys{req: req}
	b, err := json.Marshal(req)
	if err != nil || !bytes.HasSuffix(b, []byte(sampleSuffix)) {
		return k // Key reports the error, or the layout changed: no shortcut
	}
	h := sha256.New()
	h.Write(b[:len(b)-len("0}")])
	if m, ok := h.(encoding.BinaryMarshaler); ok {
		k.prefix, _ = m.MarshalBinary()
	}
	return k
}

// keyHasher is the scratch state of sampleKeys.key, reused across calls.
type keyHasher struct {
	h   hash.Hash
	buf []byte
}

func newKeyHasher() *keyHasher { return &keyHasher{h: sha256.New()} }

// key returns the key of the request with the given sample.
func (k *sampleKeys) key(kh *keyHasher, sample int) string {
	u, ok := kh.h.(encoding.BinaryUnmarshaler)
	if k.prefix == nil || !ok || u.UnmarshalBinary(k.prefix) != nil {
		req := k.req
		req.Sample = sample
		return req.Key()
	}
	kh.buf = strconv.AppendInt(kh.buf[:0], int64(sample), 10)
	kh.buf = append(kh.buf, '}')
	kh.h.Write(kh.buf)
	var sum [sha256.Size]byte
	var out [2 * sha256.Size]byte
	hex.Encode(out[:], kh.h.Sum(sum[:0]))
	return string(out[:])
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
	conv := c.Conversation()
	msgs := make([]model.Message, 0, 1+len(conv))
	msgs = append(msgs, model.Message{Role: "system", Content: system})
	return append(msgs, conv...)
}

// VariantName returns the display name of a cell's variant.
func (p *Plan) VariantName(c Cell) string {
	if c.Joint {
		return JointVariant
	}
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
	n := t.tokens(system) + perMessageOverhead + 3
	for _, m := range c.Conversation() {
		n += t.tokens(m.Content) + perMessageOverhead
	}
	for _, s := range c.KB {
		n += t.tokens(s) + 2
	}
	return n
}

// CellsOfRule returns the indices of the cells of one rule, in plan order.
// The slice is the plan's own: do not modify it.
func (p *Plan) CellsOfRule(rule int) []int { return p.ruleCells[rule] }

// RuleIndex returns the index of the rule that audits a prompt line, or -1.
func (p *Plan) RuleIndex(line int) int {
	for i, r := range p.Audit.Rules {
		if r.Line == line {
			return i
		}
	}
	return -1
}

// AuditedLines lists the audited prompt lines, for errors: "23, 15, 22".
func (p *Plan) AuditedLines() string {
	var s []string
	for _, r := range p.Audit.Rules {
		s = append(s, strconv.Itoa(r.Line))
	}
	return strings.Join(s, ", ")
}

// Key returns the plan's own string for a response key, or a new one for a
// key the plan does not use (a judge call's). A store that builds maps with
// it (Reader.StatusUsing) shares the plan's strings instead of holding
// another copy of every key.
func (p *Plan) Key(k []byte) string {
	if cells := p.ByKey[string(k)]; len(cells) > 0 { // a lookup: no allocation
		return p.Cells[cells[0]].Key
	}
	if cells := p.RegressionByKey[string(k)]; len(cells) > 0 {
		return p.Regression[cells[0]].Key
	}
	if sp := p.Ship; sp != nil {
		if cells := sp.ByKey[string(k)]; len(cells) > 0 {
			return sp.Cells[cells[0]].Key
		}
		if cells := sp.RegressionByKey[string(k)]; len(cells) > 0 {
			return sp.Regression[cells[0]].Key
		}
	}
	return string(k)
}

// PlanOfCells lays out a plan over the given cells with no calls: the
// shape results and grader measurements read, for synthetic answers (tests
// and simulations) that no model was asked for. Cells sharing a key share
// it as in NewPlan.
func PlanOfCells(a *Audit, cells []Cell) *Plan {
	p := &Plan{Audit: a, Cells: cells, ByKey: make(map[string][]int, len(cells)), ruleCells: make([][]int, len(a.Rules))}
	for i, c := range cells {
		p.ByKey[c.Key] = append(p.ByKey[c.Key], i)
		p.ruleCells[c.Rule] = append(p.ruleCells[c.Rule], i)
	}
	return p
}

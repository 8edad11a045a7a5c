package audit

import (
	"fmt"
	"slices"

	"github.com/auditor-dev/auditor/model"
)

// JointTest is the audit's current joint test (its last [[ship]] table):
// the prompt without every line of Lines at once, run on every one of
// those lines' cases and every regression suite, and decided as one
// (model.DecideShip).
type JointTest struct {
	Lines []int // ascending prompt lines
	// Rules holds the index (into Audit.Rules) of each line's deletion
	// rule, in Lines order: its cases and predicate are the line's class.
	Rules []int
	// Test is this test's number, 1-based, of Tests: the [[ship]] tables
	// the audit file holds. A joint set re-tested after a failure is a new
	// test, so the count travels with the committed file.
	Test, Tests int
	// Tokens is what deleting every line of the set at once saves on each
	// call, of PromptTokens, the full prompt's (0 without a counter).
	Tokens, PromptTokens int
}

// JointRules returns the deletion rule of each line (indices into
// a.Rules, in the order of lines), or an error naming the line that
// cannot be in a joint set: a line no rule audits, one audited only by a
// rewording or an addition, or one with no input class (no class can
// bound what deleting it does).
func (a *Audit) JointRules(lines []int) ([]int, error) {
	if len(lines) == 0 {
		return nil, fmt.Errorf("no line to delete")
	}
	out := make([]int, 0, len(lines))
	for _, l := range lines {
		ri := -1
		audited := false
		for i, r := range a.Rules {
			if r.Line != l {
				continue
			}
			audited = true
			if r.Deletion() {
				ri = i
				break
			}
		}
		switch {
		case !audited:
			return nil, fmt.Errorf("line %d is not audited (audited lines: %s): the joint variant is run on each line's own cases", l, a.auditedLines())
		case ri < 0:
			return nil, fmt.Errorf("line %d is audited by a rewording or an addition only: no case of it tests its deletion", l)
		case a.Rules[ri].Config.NoInputClass():
			return nil, fmt.Errorf("line %d has no input class (class = \"none\"): no targeted class can bound what deleting it does; remove it with a canary", l)
		case !a.Rules[ri].HasPredicate():
			return nil, fmt.Errorf("line %d has no predicate to grade its cases with", l)
		case slices.Contains(out, ri):
			return nil, fmt.Errorf("line %d is named twice", l)
		}
		out = append(out, ri)
	}
	return out, nil
}

func (a *Audit) auditedLines() string {
	var ls []int
	for _, r := range a.Rules {
		if !slices.Contains(ls, r.Line) {
			ls = append(ls, r.Line)
		}
	}
	return model.LineList(ls)
}

// loadShip resolves the audit file's last [[ship]] table into a.Ship.
// Earlier tables are earlier tests: they count, and need no longer fit the
// audit.
func (a *Audit) loadShip() error {
	ships := a.File.Ships
	if len(ships) == 0 {
		return nil
	}
	last := ships[len(ships)-1]
	rules, err := a.JointRules(last.Lines)
	if err != nil {
		return &model.InputError{File: a.Path, Line: last.DefLine, Field: fmt.Sprintf("ship[%d].lines", len(ships)), Msg: err.Error()}
	}
	a.Ship = &JointTest{Lines: slices.Clone(last.Lines), Rules: rules, Test: len(ships), Tests: len(ships)}
	if a.Counter != nil {
		a.Ship.Tokens = a.Counter.LineCost(a.Prompt, last.Lines...)
		a.Ship.PromptTokens = a.Counter.Count(a.Prompt.Text())
	}
	return nil
}

// JointVariant is the variant name of the joint test's calls and answers.
const JointVariant = "joint"

// ShipPlan is the joint variant's part of a plan: the cells of every
// line of the joint set (its cases, on the prompt without all of them) and
// of every regression suite on it. Their calls are in Plan.Calls with the
// rest, by content address: a call another variant makes is made once.
type ShipPlan struct {
	Joint  JointTest
	System string // the joint variant's system prompt
	// Cells are the joint variant's cells of each line's cases: Rule is the
	// line's rule, Deleted is true (the variant the line is compared on).
	Cells []Cell
	ByKey map[string][]int
	// Regression holds every suite's cells on the joint variant (Variant
	// RegressionJoint); RegressionByKey indexes them.
	Regression      []RegressionCell
	RegressionByKey map[string][]int
	// calls counts the calls only the joint variant makes.
	calls int
}

// RegressionJoint is the Variant of a regression cell on the joint
// variant.
const RegressionJoint = -2

// Calls returns how many calls the joint variant adds to the plan: those
// no line's own variant, baseline or suite on them makes.
func (s *ShipPlan) Calls() int {
	if s == nil {
		return 0
	}
	return s.calls
}

// shipTemplates lays out the joint variant's templates: per model, each
// line of the set's cases, then each suite's.
func shipTemplates(a *Audit, system string, tok *tokenCache) ([]callTemplate, []regTemplate) {
	var rules []callTemplate
	var suites []regTemplate
	for mi, m := range a.File.Models {
		for _, ri := range a.Ship.Rules {
			r := a.Rules[ri]
			for ci := range r.Cases {
				call, keys := answerCall(m, mi, r.Cases[ci], system, r.Line, JointVariant, tok)
				rules = append(rules, callTemplate{cell: Cell{Rule: ri, Model: mi, Case: ci, Deleted: true, Joint: true}, call: call, keys: keys})
			}
		}
		for si, suite := range a.Regressions {
			for ci := range suite.Cases {
				call, keys := answerCall(m, mi, suite.Cases[ci], system, 0, JointVariant, tok)
				suites = append(suites, regTemplate{cell: RegressionCell{Suite: si, Model: mi, Case: ci, Variant: RegressionJoint}, call: call, keys: keys})
			}
		}
	}
	return rules, suites
}

// JointView returns a plan of the joint test's lines alone in which each
// line's variant is the joint variant: its baseline cells as in p, its
// deleted cells the joint variant's, and every suite's baseline cells
// beside the joint variant's (as the first line's variant). Results,
// verdicts and labels computed on it are each class's under the joint
// variant, by the very code that computes a line's own. The view makes no
// calls; it is nil when p has no joint test.
func (p *Plan) JointView() *Plan {
	if p.Ship == nil {
		return nil
	}
	v := &Plan{Audit: p.Audit, Samples: p.Samples, design: p.design, designErr: p.designErr,
		ByKey: map[string][]int{}, RegressionByKey: map[string][]int{}, ruleCells: make([][]int, len(p.Audit.Rules))}
	add := func(c Cell) {
		i := len(v.Cells)
		v.Cells = append(v.Cells, c)
		v.ByKey[c.Key] = append(v.ByKey[c.Key], i)
		v.ruleCells[c.Rule] = append(v.ruleCells[c.Rule], i)
	}
	for _, ri := range p.Ship.Joint.Rules {
		for _, ci := range p.ruleCells[ri] {
			if c := p.Cells[ci]; !c.Deleted {
				add(c)
			}
		}
	}
	for _, c := range p.Ship.Cells {
		add(c)
	}
	addReg := func(c RegressionCell) {
		i := len(v.Regression)
		v.Regression = append(v.Regression, c)
		v.RegressionByKey[c.Key] = append(v.RegressionByKey[c.Key], i)
	}
	for _, c := range p.Regression {
		if c.Variant == RegressionBaseline {
			addReg(c)
		}
	}
	for _, c := range p.Ship.Regression {
		c.Variant = p.Ship.Joint.Rules[0]
		addReg(c)
	}
	return v
}

// madeKey reports whether an earlier joint cell's call has the key: the
// joint variant's own keys repeat only when two lines share a case.
func (s *ShipPlan) madeKey(key string) bool {
	n := len(s.ByKey[key]) + len(s.RegressionByKey[key])
	return n > 1
}

// GradedCellsOfRule returns the cells rule ri's predicate grades: the
// rule's own and, when the rule is in the joint test, its joint cells.
func (p *Plan) GradedCellsOfRule(ri int) []Cell {
	out := make([]Cell, 0, len(p.ruleCells[ri]))
	for _, ci := range p.ruleCells[ri] {
		out = append(out, p.Cells[ci])
	}
	if p.Ship != nil {
		for _, c := range p.Ship.Cells {
			if c.Rule == ri {
				out = append(out, c)
			}
		}
	}
	return out
}

// GradedRegressionCells returns every suite's cells: on baseline, on each
// rule's variant and on the joint variant.
func (p *Plan) GradedRegressionCells() []RegressionCell {
	if p.Ship == nil {
		return p.Regression
	}
	return append(slices.Clone(p.Regression), p.Ship.Regression...)
}

// has reports whether rule ri is a line of the joint test; false on a nil
// ShipPlan.
func (s *ShipPlan) has(ri int) bool {
	return s != nil && slices.Contains(s.Joint.Rules, ri)
}

// AllCells returns the plan's rule cells and then the joint variant's.
func (p *Plan) AllCells() []Cell {
	if p.Ship == nil {
		return p.Cells
	}
	return append(slices.Clone(p.Cells), p.Ship.Cells...)
}

// Labelable reports whether a key is an answer labels can be about: a
// rule's cell or the joint variant's (not a suite's alone).
func (p *Plan) Labelable(key string) bool {
	if _, ok := p.ByKey[key]; ok {
		return true
	}
	return p.Ship != nil && len(p.Ship.ByKey[key]) > 0
}

// jointOnly reports whether only the joint variant makes the call with
// this key (no line's own cell or suite's uses it).
func (p *Plan) jointOnly(key string) bool {
	if p.Ship == nil {
		return false
	}
	_, rule := p.ByKey[key]
	_, suite := p.RegressionByKey[key]
	return !rule && !suite && (len(p.Ship.ByKey[key]) > 0 || len(p.Ship.RegressionByKey[key]) > 0)
}

package evidence

import (
	"fmt"
	"sort"

	"github.com/auditor-dev/auditor/model"
)

// Untagged names the group of rules whose [[rule]] sets no tag; the
// parentheses keep it apart from any tag a user writes.
const Untagged = "(no tag)"

// Sweep sums up the verdicts of an audit's lines, the way the evidence
// reaches a review: how many lines were audited, how many are safe to delete
// and the tokens they remove, against the tokens an unchecked sweep would
// have claimed by deleting every candidate line.
type Sweep struct {
	SweepGroup
	// ByTag splits the sweep by the rules' tags, in order of first
	// appearance in the audit file, untagged last. Empty when no rule
	// has a tag.
	ByTag []SweepGroup
	// Changes counts the rewordings and additions, which remove no tokens
	// and so are not among the lines above.
	Changes Changes
}

// Changes counts the audited rewordings and additions by decision, each
// variant once over every model (its most cautious decision, as a line's),
// and the cases they fixed and broke against baseline (a case flipped
// under any model counts once).
type Changes struct {
	Variants                              int
	Better, NotWorse, Worse, Inconclusive int
	Fixed, Broken                         int
	Names                                 []string // the variants' names, in audit order: "~L23", "+L23"
}

// Decisions are the decisions a change can get, in the order counts list
// them.
func (Changes) Decisions() []model.Decision {
	return []model.Decision{model.DecisionBetter, model.DecisionNotWorse, model.DecisionWorse, model.DecisionInconclusive}
}

// Count is how many changes got decision d.
func (c Changes) Count(d model.Decision) int {
	switch d {
	case model.DecisionBetter:
		return c.Better
	case model.DecisionNotWorse:
		return c.NotWorse
	case model.DecisionWorse:
		return c.Worse
	case model.DecisionInconclusive:
		return c.Inconclusive
	}
	return 0
}

// FlipCounts is "0 fixed, 1 broken": the cases the changes fixed and
// broke.
func (c Changes) FlipCounts() string {
	return fmt.Sprintf("%d fixed, %d broken", c.Fixed, c.Broken)
}

// summarizeChanges counts the rewordings and additions among rules.
func summarizeChanges(rules []*RuleResult) Changes {
	rank := map[model.Decision]int{model.DecisionBetter: 0, model.DecisionNotWorse: 1, model.DecisionInconclusive: 2, model.DecisionWorse: 3}
	of := func(d model.Decision) int {
		if r, ok := rank[d]; ok {
			return r
		}
		return len(rank) // an unknown decision is the most cautious
	}
	type key struct {
		line int
		kind model.VariantKind
	}
	var order []key
	decision := map[key]model.Decision{}
	fixed, broken := map[key]map[string]bool{}, map[key]map[string]bool{}
	for _, rr := range rules {
		if rr.Rule.Deletion() {
			continue
		}
		k := key{rr.Rule.Line, rr.Rule.VariantKind()}
		d, seen := decision[k]
		if !seen {
			order = append(order, k)
			fixed[k], broken[k] = map[string]bool{}, map[string]bool{}
		}
		if !seen || of(rr.Verdict.Decision) > of(d) {
			decision[k] = rr.Verdict.Decision
		}
		for _, id := range rr.Flips.Fixed {
			fixed[k][id] = true
		}
		for _, id := range rr.Flips.Broken {
			broken[k][id] = true
		}
	}
	var c Changes
	for _, k := range order {
		c.Variants++
		c.Names = append(c.Names, model.VariantName(k.kind, k.line))
		c.Fixed += len(fixed[k])
		c.Broken += len(broken[k])
		switch decision[k] {
		case model.DecisionBetter:
			c.Better++
		case model.DecisionNotWorse:
			c.NotWorse++
		case model.DecisionWorse:
			c.Worse++
		default:
			c.Inconclusive++
		}
	}
	return c
}

// SweepGroup counts verdicts and tokens over a set of lines. A line audited
// against several models counts once: it is safe to delete only when every
// model's verdict is DELETE, and its worst verdict (KEEP, then
// INCONCLUSIVE, then CANARY) stands for it otherwise.
type SweepGroup struct {
	Tag                                string // "" for the whole sweep
	Lines                              int
	Delete, Keep, Inconclusive, Canary int
	// TokensRemoved sums the tokens of the lines safe to delete;
	// TokensClaimed sums every audited line.
	TokensRemoved, TokensClaimed int
}

// Ratio is TokensClaimed / TokensRemoved: how many times more an unchecked
// sweep claims than the evidence supports. It is 0 when nothing is removed
// (the ratio is then unbounded; say so in words).
func (g SweepGroup) Ratio() float64 {
	if g.TokensRemoved == 0 {
		return 0
	}
	return float64(g.TokensClaimed) / float64(g.TokensRemoved)
}

// add counts one line under its overall decision.
func (g *SweepGroup) add(d model.Decision, tokens int) {
	g.Lines++
	g.TokensClaimed += tokens
	switch d {
	case model.DecisionDelete:
		g.Delete++
		g.TokensRemoved += tokens
	case model.DecisionKeep:
		g.Keep++
	case model.DecisionCanary:
		g.Canary++
	default:
		g.Inconclusive++
	}
}

// lineDecision is a line's decision over every model it was audited
// against: DELETE only when all agree on it, else the most cautious one.
func lineDecision(rules []*RuleResult, line int) model.Decision {
	rank := map[model.Decision]int{model.DecisionDelete: 0, model.DecisionCanary: 1,
		model.DecisionInconclusive: 2, model.DecisionKeep: 3}
	of := func(d model.Decision) int {
		if r, ok := rank[d]; ok {
			return r
		}
		return len(rank) // an unknown decision is the most cautious
	}
	d := model.DecisionDelete
	for _, rr := range rules {
		if rr.Rule.Line == line && rr.Rule.Deletion() && of(rr.Verdict.Decision) > of(d) {
			d = rr.Verdict.Decision
		}
	}
	return d
}

// summarizeSweep builds the sweep summary of res's rules.
func summarizeSweep(rules []*RuleResult) Sweep {
	s := Sweep{Changes: summarizeChanges(rules)}
	groups := map[string]*SweepGroup{}
	var order []string
	seen := map[int]bool{}
	tagged := false
	for _, rr := range rules {
		if seen[rr.Rule.Line] || !rr.Rule.Deletion() {
			continue // a rewording or addition removes no tokens
		}
		seen[rr.Rule.Line] = true
		d := lineDecision(rules, rr.Rule.Line)
		s.add(d, rr.Rule.Tokens)
		tag := rr.Rule.Config.Tag
		if tag != "" {
			tagged = true
		} else {
			tag = Untagged
		}
		g := groups[tag]
		if g == nil {
			g = &SweepGroup{Tag: tag}
			groups[tag] = g
			order = append(order, tag)
		}
		g.add(d, rr.Rule.Tokens)
	}
	if !tagged {
		return s
	}
	sort.SliceStable(order, func(i, j int) bool { return order[j] == Untagged && order[i] != Untagged })
	for _, tag := range order {
		s.ByTag = append(s.ByTag, *groups[tag])
	}
	return s
}

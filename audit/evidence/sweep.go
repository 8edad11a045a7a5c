package evidence

import (
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
	var s Sweep
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

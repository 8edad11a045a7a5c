package workbench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// VerdictDraw is what `auditor label --for-verdict` did for one rule: the
// label set it drew for the rule's INCONCLUSIVE verdict, or why it drew
// none.
type VerdictDraw struct {
	Rule *audit.Rule
	// Route is the DELETE route the labels serve: "labels" (the answers
	// without the line, to bound their violation rate directly) or
	// "grader" (a stratified set, to measure the predicate's recall and
	// false alarms); empty when nothing was drawn.
	Route string
	// Joint is true for a set drawn from the joint variant's answers, for
	// the ship decision.
	Joint bool
	Set   *labels.LabelSet
	// Why says what the labels can settle, or why nothing was drawn.
	Why string
}

// DrawForVerdict draws, for each rule whose verdict is INCONCLUSIVE (only
// the rule on line when line is not 0), the blind labels that would settle
// it: when the labels route can, the answers without the line it projects
// (drawn from those not yet labelled, so the new labels continue the sample
// already taken); otherwise, when the grader route can, the answers its
// projection asks for (Verdict.GraderLabels: without the line, or over
// both variants when the baseline has labels), drawn the same way. n is
// no longer used: every draw is the size its rule's projection gives.
// Each set is new and named
// verdict-L<line>[-k]. A rule with a decided verdict, no predicate, or
// nothing labels can settle gets a VerdictDraw saying so.
func (s *Session) DrawForVerdict(line, n int) ([]VerdictDraw, error) {
	return s.forVerdict(line, n, true)
}

// NeededForVerdict is DrawForVerdict without the drawing: what each rule's
// verdict needs and which route its labels would serve, with no set drawn
// or stored (Set is nil). `label --for-verdict --show` looks with it.
func (s *Session) NeededForVerdict(line, n int) ([]VerdictDraw, error) {
	return s.forVerdict(line, n, false)
}

func (s *Session) forVerdict(line, n int, draw bool) ([]VerdictDraw, error) {
	res, err := s.Results()
	if err != nil {
		return nil, err
	}
	names, err := s.Store.LabelSets()
	if err != nil {
		return nil, err
	}
	var out []VerdictDraw
	// The joint test first: labelling its answers settles every line of
	// it at once, so those lines' own deletions need no labels of their
	// own (ask for one with --rule).
	joint, err := s.drawForShip(res, line, n, &names)
	if err != nil {
		return out, err
	}
	out = append(out, joint...)
	for ri, rule := range s.Plan.Audit.Rules {
		if line != 0 && rule.Line != line {
			continue
		}
		if line == 0 && jointDrawn(joint, rule.Line) {
			continue
		}
		d := VerdictDraw{Rule: rule}
		if !rule.HasPredicate() {
			d.Why = "no predicate: its verdict rests on answer length, not labels"
			out = append(out, d)
			continue
		}
		more, why, undecided := 0, "", false
		var graderWhy, needed string
		var grader model.GraderLabelsNeeded
		for _, rr := range res.Rules {
			if rr.RuleIndex != ri || rr.Verdict.Decision != model.DecisionInconclusive {
				continue
			}
			undecided = true
			v := rr.Verdict
			if needed == "" {
				needed = v.Needed
			}
			if v.LabelsNeeded.More > more {
				more, why = v.LabelsNeeded.More, v.LabelsNeeded.String()
			}
			// The grader route's advice: as many more labels as its own
			// projection asks, drawn as it assumes.
			if v.LabelsNeeded.More == 0 && v.GraderLabels.More > grader.More {
				grader, graderWhy = v.GraderLabels, v.GraderLabels.String()
			}
		}
		opts := labels.SampleOptions{Line: rule.Line, Seed: time.Now().UnixNano() % 1_000_000, Unlabelled: true}
		switch {
		case !undecided:
			d.Why = "its verdict is decided: nothing to label"
		case more > 0:
			d.Route, d.Why = "labels", why
			opts.N, opts.Variant = more, labels.VariantDeleted
		case grader.More > 0:
			d.Route, d.Why = "grader", "measure the predicate on each variant: "+graderWhy
			opts.N = grader.More
			if !grader.Both {
				opts.Variant = labels.VariantDeleted
			}
		default:
			d.Why = "labels alone cannot settle it now: " + needed
		}
		if d.Route != "" && draw {
			opts.Name = freeName(names, fmt.Sprintf("verdict-L%d", rule.Line))
			set, err := labels.DrawLabelSample(s.LabelStore(), s.Plan, s.Tally, opts)
			if err != nil {
				return out, err
			}
			s.Tally.AddLabelSet(set)
			names = append(names, set.Name)
			d.Set = &set
		}
		out = append(out, d)
	}
	if line != 0 && len(out) == 0 {
		return nil, fmt.Errorf("line %d is not audited (audited lines: %s)", line, s.Plan.AuditedLines())
	}
	return out, nil
}

// freeName is base, or base-2, base-3, ... : the first name no set has.
func freeName(names []string, base string) string {
	name := base
	for k := 2; slices.Contains(names, name); k++ {
		name = fmt.Sprintf("%s-%d", base, k)
	}
	return name
}

// drawForShip draws, for each class of the joint test not yet bounded,
// the joint variant's answers whose blind labels would settle it (the
// labels route's projection, else a stratified set of n to measure the
// predicate there), from the plan's joint view. Nothing when the audit
// has no joint test, its decision is made, or line names a line outside
// it.
func (s *Session) drawForShip(res *evidence.Results, line, n int, names *[]string) ([]VerdictDraw, error) {
	sh := res.Ship
	if sh == nil || sh.Decision.Decision != model.DecisionInconclusive || (line != 0 && !slices.Contains(sh.Joint.Lines, line)) {
		return nil, nil
	}
	tv := s.Tally.JointView()
	var out []VerdictDraw
	drawn := map[int]bool{}
	for _, rr := range sh.Classes {
		l := rr.Rule.Line
		if drawn[l] || (line != 0 && l != line) {
			continue
		}
		more, why, undecided := 0, "", false
		for _, c := range sh.Classes {
			if c.Rule.Line != l || c.Verdict.Decision != model.DecisionInconclusive {
				continue
			}
			undecided = true
			if c.Verdict.LabelsNeeded.More > more {
				more, why = c.Verdict.LabelsNeeded.More, c.Verdict.LabelsNeeded.String()
			}
		}
		if !undecided {
			continue
		}
		drawn[l] = true
		d := VerdictDraw{Rule: rr.Rule, Joint: true}
		opts := labels.SampleOptions{Line: l, Seed: time.Now().UnixNano() % 1_000_000, Unlabelled: true, Variant: labels.VariantJoint}
		switch {
		case more > 0:
			d.Route, d.Why = "labels", "the joint variant: "+strings.ReplaceAll(why, "without the line", "without "+model.LinesWords(sh.Joint.Lines))
			opts.N = more
		default:
			d.Route, d.Why = "grader", "measure the predicate on the joint variant: "+rr.Verdict.Needed
			opts.N, opts.Stratify = n, true
		}
		opts.Name = freeName(*names, fmt.Sprintf("ship%d-L%d", sh.Joint.Test, l))
		set, err := labels.DrawLabelSample(s.Store, sh.View, tv, opts)
		if err != nil {
			return out, err
		}
		s.Tally.AddLabelSet(set)
		*names = append(*names, set.Name)
		d.Set = &set
		out = append(out, d)
	}
	return out, nil
}

// jointDrawn reports whether a joint set was drawn for line.
func jointDrawn(ds []VerdictDraw, line int) bool {
	return slices.ContainsFunc(ds, func(d VerdictDraw) bool { return d.Joint && d.Rule.Line == line })
}

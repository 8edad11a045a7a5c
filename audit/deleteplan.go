package audit

import (
	"fmt"
	"math"
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// DefaultLabelBudget is the blind labels a plan assumes someone will give
// (what `auditor label` draws by default).
const DefaultLabelBudget = 60

// inertRuns is how many audits the plan simulates per scenario: 500 (SE
// at most 2.2 points, 1 at 5%), which every plan, run and report computes,
// so it is kept small and the summary says its 95% margin
// (DeleteOutlook.Margin) whenever fewer than fullRuns audits stand behind
// a share. simAnswerBudget caps the answers a scenario draws in all (runs
// x answers of both variants), so that a plan stays fast at any size: a
// large design gets fewer runs, and below minSimRuns none (the plan says
// it was not simulated).
const (
	inertRuns       = 500
	fullRuns        = 2000
	simAnswerBudget = 2_000_000
	minSimRuns      = 50
)

// simRuns is how many audits of a design with this many provoking answers
// per variant a plan simulates; 0 when too large to simulate.
func simRuns(answers int) int {
	if answers <= 0 {
		return 0
	}
	n := min(inertRuns, simAnswerBudget/(2*answers))
	if n < minSimRuns {
		return 0
	}
	return n
}

// inertBaselines are the true failure rates with the line at which the plan
// states the chance of DELETE for a line that does nothing.
var inertBaselines = []float64{0, 0.02, 0.05}

// DeleteOutlook is what DELETE will take for one line, said before any
// call (issue 19: "the user learns this only after paying"). Two numbers:
// how many blind labels of the answers without the line a line the model
// never breaks needs (DELETE's labels route), and the simulated chance that
// a line that does nothing reaches DELETE with the planned design and a
// label budget, through the exact rule (model.SimulateDelete) with a
// perfect predicate.
type DeleteOutlook struct {
	// Blocked says why DELETE is out of reach whatever the labels (fewer
	// than 2 provoking cases, or no control case); empty otherwise.
	Blocked string `json:"blocked,omitempty"`
	// Answers is the provoking answers without the line per model.
	Answers int `json:"answers_without_the_line"`
	// QuietLabels is how many of them, labelled blind and all clean, put
	// the labels route under delta; 0 when the plan has fewer answers than
	// that (more samples first).
	QuietLabels int `json:"quiet_line_labels"`
	// QuietLabelsWithBaseline is the same once baseline answers have blind
	// labels too: they take part of the route's error for the baseline's
	// lower bound, so the variant's bound needs a few more.
	QuietLabelsWithBaseline int     `json:"quiet_line_labels_with_baseline"`
	LabelBudget             int     `json:"label_budget"`
	Runs                    int     `json:"runs"`
	Delta                   float64 `json:"delta"`
	// Inert holds, per baseline failure rate, the share of simulated
	// audits of a line that does nothing reaching DELETE with LabelBudget
	// labels drawn as `auditor label` draws them (both variants) and as
	// `auditor label --for-verdict` does for a quiet line (without the
	// line only).
	Inert []InertOdds `json:"inert"`
	// Margin is the largest 95% margin of those shares, in points, when
	// fewer than fullRuns audits were simulated; 0 otherwise.
	Margin float64 `json:"margin,omitempty"`
}

// InertOdds is the chance of DELETE for a line that does nothing at one
// baseline failure rate, by how the labels are drawn.
type InertOdds struct {
	Baseline    float64 `json:"baseline"`
	Both        float64 `json:"labels_both_variants"`
	WithoutLine float64 `json:"labels_without_the_line"`
}

// deleteKey is what a DeleteOutlook depends on: rules with the same design
// share one simulation.
type deleteKey struct {
	provoking, controls, samples, budget int
	delta                                float64
}

// PlanDelete computes a rule's DeleteOutlook: provoking and control cases,
// samples per case and variant, delta (0: the default) and the label
// budget. cache, when not nil, shares the simulations of rules alike.
func PlanDelete(provoking, controls, samples int, delta float64, budget int, cache map[deleteKey]DeleteOutlook) DeleteOutlook {
	if delta == 0 {
		delta = model.DefaultDelta
	}
	key := deleteKey{provoking, controls, samples, budget, delta}
	if o, ok := cache[key]; ok {
		return o
	}
	o := DeleteOutlook{Answers: provoking * samples, LabelBudget: budget, Runs: simRuns(provoking * samples), Delta: delta}
	switch {
	case provoking < model.MinDeleteProvokingCases:
		o.Blocked = fmt.Sprintf("DELETE needs at least %d provoking cases", model.MinDeleteProvokingCases)
	case controls < model.MinDeleteControlCases:
		o.Blocked = "DELETE needs at least 1 control case"
	}
	if o.Blocked == "" {
		// The labels route's own rule, the confidence sequence at its
		// share, so the plan says what the verdict will ask.
		if n, err := stats.SequentialZeroOfNBelow(delta, model.LabelsRouteAlpha); err == nil && n <= o.Answers {
			o.QuietLabels = n
		}
		if n, err := stats.SequentialZeroOfNBelow(delta, model.LabelsRouteAlpha-model.LabelsRouteBaselineAlpha); err == nil && n <= o.Answers {
			o.QuietLabelsWithBaseline = n
		}
	}
	if o.Blocked == "" && o.Runs > 0 {
		for i, base := range inertBaselines {
			odds := InertOdds{Baseline: base}
			for _, without := range []bool{false, true} {
				sc := model.DeleteScenario{Cases: provoking, Samples: samples, ControlCases: controls, Baseline: base,
					Recall: 1, Labels: budget, LabelDeleted: without, Delta: delta}
				r, err := model.SimulateDelete(sc, o.Runs, uint64(7+i))
				if err != nil {
					o.Blocked = err.Error()
					break
				}
				if without {
					odds.WithoutLine = r.Rate()
				} else {
					odds.Both = r.Rate()
				}
			}
			o.Inert = append(o.Inert, odds)
		}
		if o.Runs < fullRuns {
			for _, in := range o.Inert {
				for _, p := range []float64{in.Both, in.WithoutLine} {
					o.Margin = math.Max(o.Margin, 100*1.96*math.Sqrt(math.Max(p*(1-p), 1/float64(o.Runs))/float64(o.Runs)))
				}
			}
		}
	}
	if cache != nil {
		cache[key] = o
	}
	return o
}

// SetLabelBudget recomputes every rule's DeleteOutlook for a label budget
// (plan --labels).
func (e *Estimate) SetLabelBudget(p *Plan, budget int) {
	cache := map[deleteKey]DeleteOutlook{}
	for i := range e.Rules {
		r := p.Audit.Rules[p.RuleIndex(e.Rules[i].Line)]
		if r.Config.NoInputClass() || !r.HasPredicate() {
			continue
		}
		c := e.Rules[i].Cases
		o := PlanDelete(c[model.Provoke]+c[model.Pressure], c[model.Control], e.Samples, p.Audit.File.Delta, budget, cache)
		e.Rules[i].Power.Delete = &o
	}
}

// AdaptiveCalls is the answer calls an adaptive run has still to make:
// AtMost if no line settles before the last look (a line that does
// nothing makes all its samples: only labels settle it), LoadBearing if
// every line's failures rise from 4% to 30% without it and each stops at
// the look that shows it (each call weighed by the share of its samples
// its line is expected to make; a call several lines share, by the
// largest).
type AdaptiveCalls struct {
	Looks       int `json:"looks"`
	AtMost      int `json:"at_most"`
	LoadBearing int `json:"load_bearing"`
}

// setAdaptive adds every rule's AdaptiveOutlook, and what the answer calls
// not in done come to, when the audit runs adaptively.
func (e *Estimate) setAdaptive(p *Plan, done map[string]bool) {
	d, err := p.Design()
	if err != nil || !d.Sequential() || !p.Audit.File.Adaptive {
		return
	}
	share := make([]float64, len(p.Audit.Rules)) // by rule index: the samples a load-bearing line makes
	for i := range share {
		share[i] = 1
	}
	for i := range e.Rules {
		ri := p.RuleIndex(e.Rules[i].Line)
		r := p.Audit.Rules[ri]
		if r.Config.NoInputClass() || !r.HasPredicate() {
			continue
		}
		c := e.Rules[i].Cases
		if o, err := PlanAdaptive(c[model.Provoke]+c[model.Pressure], c[model.Control], d); err == nil {
			e.Rules[i].Power.Adaptive = &o
			share[ri] = o.ShareLoadBearing
		}
	}
	a := &AdaptiveCalls{Looks: d.Looks}
	var expected float64
	for _, c := range p.Calls {
		if done[c.Key] || c.Meta.Judge != "" {
			continue
		}
		a.AtMost++
		w := 0.0
		for _, ci := range p.ByKey[c.Key] {
			w = max(w, share[p.Cells[ci].Rule])
		}
		for _, ri := range p.RegressionByKey[c.Key] {
			if v := p.Regression[ri].Variant; v == RegressionBaseline {
				w = 1
			} else {
				w = max(w, share[v])
			}
		}
		if p.jointOnly(c.Key) {
			// The joint test settles, NOT SAFE, once one of its classes
			// rose: as soon as its quickest line would.
			w = 1
			for _, ri := range p.Ship.Joint.Rules {
				w = min(w, share[ri])
			}
		}
		expected += w
	}
	a.LoadBearing = int(math.Round(expected))
	e.AdaptiveAnswers = a
}

// Summary says what an adaptive run's answer calls come to.
func (a AdaptiveCalls) Summary() string {
	return fmt.Sprintf("adaptive, %d looks: %d answer calls at most (every line open to the last look, as a line that does nothing is); about %d if every line's failures rose from 4%% to 30%% without it",
		a.Looks, a.AtMost, a.LoadBearing)
}

// Summary says the outlook in a sentence or two.
func (o DeleteOutlook) Summary() string {
	if o.Blocked != "" {
		return o.Blocked
	}
	var b strings.Builder
	if o.QuietLabels > 0 {
		fmt.Fprintf(&b, "a line the model never breaks needs about %d blind labels of its %d provoking answers without the line, all clean (`auditor label --for-verdict`",
			o.QuietLabels, o.Answers)
		if o.QuietLabelsWithBaseline > o.QuietLabels {
			fmt.Fprintf(&b, "; %d once baseline answers are labelled too", o.QuietLabelsWithBaseline)
		}
		b.WriteString(")")
	} else {
		fmt.Fprintf(&b, "a line the model never breaks cannot be deleted by its labels alone: its %d provoking answers without the line are too few to bound the rate under %s (more samples or cases)",
			o.Answers, pct(o.Delta))
	}
	if len(o.Inert) == 0 {
		b.WriteString("; the chance of DELETE is not simulated for a design this large")
		return b.String()
	}
	var parts []string
	for _, in := range o.Inert {
		parts = append(parts, fmt.Sprintf("%s at a %s baseline", pct1(in.Both), pct(in.Baseline)))
	}
	fmt.Fprintf(&b, "; a line that does nothing reaches DELETE with %d labels drawn by `auditor label` in about %s", o.LabelBudget, strings.Join(parts, ", "))
	parts = parts[:0]
	for _, in := range o.Inert {
		parts = append(parts, pct1(in.WithoutLine))
	}
	margin := ""
	if o.Margin > 0 {
		margin = fmt.Sprintf(", each +/- %.1f points", o.Margin)
	}
	fmt.Fprintf(&b, " (%s with the %d labels on the answers without the line; %d simulated audits each%s, a perfect predicate)",
		strings.Join(parts, ", "), o.LabelBudget, o.Runs, margin)
	return b.String()
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// pct1 is a simulated share with one decimal.
func pct1(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// loadBearingRise is the load-bearing line a plan's adaptive outlook
// simulates: failures from 4% with the line to 30% without it.
const loadBearingBase, loadBearingRise = 0.04, 0.26

// AdaptiveOutlook is what an adaptive run of a rule is expected to make,
// said before any call: a line that does nothing makes every sample (only
// labels can settle it), a load-bearing one stops at the look that shows
// it, on ShareLoadBearing of its samples on average (simulated through the
// exact rule, Runs audits).
type AdaptiveOutlook struct {
	Looks            int     `json:"looks"`
	ShareLoadBearing float64 `json:"share_load_bearing"`
	Runs             int     `json:"runs"`
}

// PlanAdaptive computes a rule's AdaptiveOutlook for a sequential design.
func PlanAdaptive(provoking, controls int, d model.Design) (AdaptiveOutlook, error) {
	o := AdaptiveOutlook{Looks: d.Looks, Runs: simRuns(provoking * d.Samples)}
	if provoking == 0 || o.Runs == 0 {
		return o, fmt.Errorf("no provoking case, or too large to simulate")
	}
	r, err := model.SimulateSequential(model.DeleteScenario{Cases: provoking, Samples: d.Samples, ControlCases: controls,
		Baseline: loadBearingBase, Rise: loadBearingRise, Recall: 1}, d, o.Runs, 11)
	if err != nil {
		return o, err
	}
	o.ShareLoadBearing = r.MeanSamples / float64(d.Samples)
	return o, nil
}

// Summary says the outlook in a sentence.
func (o AdaptiveOutlook) Summary() string {
	return fmt.Sprintf("adaptive, %d looks: a line whose failures rise from 4%% to 30%% without it stops after about %s of its samples (simulated, %d audits); a line that does nothing makes them all (labels settle it)",
		o.Looks, pct(o.ShareLoadBearing), o.Runs)
}

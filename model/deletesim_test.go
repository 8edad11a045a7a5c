package model

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/auditor-dev/auditor/model/stats"
)

// Issue 19's repro: a line the model never breaks. 8 provoking and 6
// control cases x 30 samples, no failure anywhere, and 100 clean blind
// labels of the answers without the line. The grader route cannot run
// (no labelled violation, so no recall); the labels route deletes it, and
// the verdict states its bound.
func TestDecide_QuietLineByLabels(t *testing.T) {
	t.Parallel()
	in := VerdictInput{
		Provoking:   ArmPair{Baseline: clean(8, 30), Deleted: clean(8, 30)},
		Control:     ArmPair{Baseline: clean(6, 30), Deleted: clean(6, 30)},
		Recall:      &RecallCount{},
		Specificity: &SpecificityCount{Passed: 100, Negatives: 100},
		Labelled: LabelledArms{Deleted: VariantLabels{Strata: []stats.LabelledStratum{{N: 240, Labelled: 100}}},
			Baseline: VariantLabels{Strata: []stats.LabelledStratum{{N: 240}}}},
	}
	v := mustDecide(t, in)
	if v.Decision != DecisionDelete || v.Route != "labels" {
		t.Fatalf("%s by %q: %s (%s)", v.Decision, v.Route, v.Reason, v.Bound)
	}
	for _, want := range []string{"0 of 100 labelled answers without the line were violations: its violation rate is below 4.3% (one-sided 98.75%)"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason %q lacks %q", v.Reason, want)
		}
	}
	if want := "labels route: Clopper-Pearson upper bound of 0/100 labelled violations without the line at one-sided 1.25% 0.0429 - baseline 0 (no baseline labels) = 0.0429 < delta 0.05"; v.Bound != want {
		t.Errorf("bound %q, want %q", v.Bound, want)
	}
	if !strings.HasPrefix(v.Notes[0], "untested types:") {
		t.Errorf("a DELETE states the chance of an untested type first: %q", v.Notes)
	}

	// The rule this replaces (no labels route) leaves it INCONCLUSIVE for
	// ever; with 80 labels the route is not there yet and says how many more.
	in.Labelled.Deleted.Strata[0].Labelled = 80
	v = mustDecide(t, in)
	if v.Decision != DecisionInconclusive || v.LabelsNeeded.More != 6 || !v.LabelsNeeded.Clean ||
		!strings.Contains(v.Needed, "label about 6 more answers without the line") || !strings.Contains(v.Needed, "if none is a violation, DELETE") {
		t.Errorf("80 labels: %s, needed %+v %q", v.Decision, v.LabelsNeeded, v.Needed)
	}
	// No label yet: the whole 86.
	in.Labelled.Deleted.Strata[0].Labelled = 0
	if v = mustDecide(t, in); v.LabelsNeeded.More != 86 || !strings.Contains(v.Needed, "label about 86 answers without the line") {
		t.Errorf("no labels: needed %+v %q", v.LabelsNeeded, v.Needed)
	}
	// Baseline labels take a quarter point of the route's error: 0/90 at
	// one-sided 1% is 0.0499, so 90 labels, not 86.
	in.Labelled.Baseline.Strata[0].Labelled = 30
	if v = mustDecide(t, in); v.LabelsNeeded.More != 90 {
		t.Errorf("with baseline labels: needed %+v", v.LabelsNeeded)
	}
	// The grader fails 3 of the 240 answers without the line and nothing is
	// labelled: the projection runs at the grader's 1.25%, not at "none".
	in.Labelled.Baseline.Strata[0].Labelled = 0
	in.Provoking.Deleted = arm(30, 1, 1, 1, 0, 0, 0, 0, 0)
	in.Recall, in.Specificity = nil, nil
	if v = mustDecide(t, in); v.LabelsNeeded.Clean || v.LabelsNeeded.Rate != 0.0125 || v.LabelsNeeded.More <= 86 ||
		!strings.Contains(v.Needed, "DELETE if no more than about 1.3% of them are violations") {
		t.Errorf("grader failing 3/240: needed %+v %q", v.LabelsNeeded, v.Needed)
	} else {
		// The projection is exact: that many labels at 1.25% clear delta,
		// one fewer does not.
		m := v.LabelsNeeded.More
		at := func(n int) float64 {
			u, _ := stats.ClopperPearsonUpper(int(math.Ceil(0.0125*float64(n)-1e-9)), n, LabelsRouteAlpha)
			return u
		}
		if !(at(m) < DefaultDelta) || at(m-1) < DefaultDelta {
			t.Errorf("%d labels at 1.25%%: bound %.4f, one fewer %.4f", m, at(m), at(m-1))
		}
	}
	// More labels than there are answers: say so, suggest more samples.
	in.Provoking = ArmPair{Baseline: clean(8, 5), Deleted: clean(8, 5)}
	in.Labelled = LabelledArms{Deleted: VariantLabels{Strata: []stats.LabelledStratum{{N: 40, Labelled: 10}}}}
	if v = mustDecide(t, in); v.LabelsNeeded.More != 0 || !strings.Contains(v.LabelsNeeded.Hopeless, "run more samples first") {
		t.Errorf("40 answers: needed %+v", v.LabelsNeeded)
	}
}

// TestDecide_LabelsRouteWithBaseline: baseline labels with violations
// lower the bound on the rise; the split of the route's error is 1% for the
// variant and 0.25% for the baseline.
func TestDecide_LabelsRouteWithBaseline(t *testing.T) {
	t.Parallel()
	in := VerdictInput{
		Provoking: ArmPair{Baseline: arm(30, 1, 1, 1, 1, 1, 1, 1, 1), Deleted: arm(30, 1, 1, 1, 1, 1, 1, 1, 1)},
		Control:   controls(0, 0),
		Labelled: LabelledArms{
			Deleted:  VariantLabels{Strata: []stats.LabelledStratum{{N: 240, Labelled: 200, Violations: 8}}},
			Baseline: VariantLabels{Strata: []stats.LabelledStratum{{N: 240, Labelled: 200, Violations: 8}}}},
	}
	v := mustDecide(t, in)
	up, _ := stats.ClopperPearsonUpper(8, 200, 0.01)
	lo, _ := stats.ClopperPearsonLower(8, 200, 0.0025)
	r := v.Labels
	if r == nil || r.AlphaDeleted != 0.01 || r.AlphaBaseline != 0.0025 || r.Upper != up || r.BaselineLower != lo || r.Rise != up-lo {
		t.Fatalf("labels route %+v; want upper %v at 1%%, lower %v at 0.25%%", r, up, lo)
	}
	// 8/200 each: 0.0826 - 0.0118 = 0.0708, not under 0.05.
	if v.Decision != DecisionInconclusive || !strings.Contains(v.Reason, "by the blind labels alone, 8 of 200 labelled answers without the line were violations") {
		t.Errorf("%s: %s", v.Decision, v.Reason)
	}
	if !strings.Contains(v.LabelsNeeded.Hopeless+v.Needed, "") {
		t.Errorf("needed %q", v.Needed)
	}
}

// simulated runs a table of scenarios in parallel (the machine has few
// cores; every scenario has its own seed, so the counts do not depend on
// scheduling).
func simulated(t testing.TB, scenarios []DeleteScenario, runs int) []DeleteOdds {
	t.Helper()
	out := make([]DeleteOdds, len(scenarios))
	errs := make([]error, len(scenarios))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, sc := range scenarios {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = SimulateDelete(sc, runs, uint64(1000+i))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// falseDeleteScenarios are issue 19's false-DELETE table: a true rise of
// exactly delta, for every grader recall (0.6, 0.8, 1.0) and false-alarm
// rate (0, 0.25, 0.5), with errors equal in both variants and with recall
// 0.2 lower without the line; at a baseline of 2% with 200 labels of both
// variants (the grader route does the work), and at a baseline of 0% with
// 200 labels of the answers without the line (the labels route does).
func falseDeleteScenarios(cases, samples int) []DeleteScenario {
	var out []DeleteScenario
	for _, base := range []struct {
		rate         float64
		labelDeleted bool
	}{{0.02, false}, {0, true}} {
		for _, r := range []float64{0.6, 0.8, 1.0} {
			for _, f := range []float64{0, 0.25, 0.5} {
				for _, lower := range []float64{0, 0.2} {
					out = append(out, DeleteScenario{Cases: cases, Samples: samples, Baseline: base.rate, Rise: DefaultDelta,
						Recall: r, RecallDeleted: r - lower, FalseAlarm: f, Labels: 200, LabelDeleted: base.labelDeleted})
				}
			}
		}
	}
	return out
}

func describe(sc DeleteScenario) string {
	who := "both variants"
	if sc.LabelDeleted {
		who = "without the line"
	}
	rd := sc.RecallDeleted
	if rd == 0 {
		rd = sc.Recall
	}
	return fmt.Sprintf("%dx%d baseline %.0f%% rise %.0f pts recall %.1f/%.1f false alarms %.2f, %d labels of %s",
		sc.Cases, sc.Samples, 100*sc.Baseline, 100*sc.Rise, sc.Recall, rd, sc.FalseAlarm, sc.Labels, who)
}

// TestSimulate_FalseDeleteAtDelta: at a true rise of exactly delta, DELETE
// (by either route) errs in at most 2.5% of 2,000 audits in every cell.
func TestSimulate_FalseDeleteAtDelta(t *testing.T) {
	t.Parallel()
	scs := falseDeleteScenarios(8, 30)
	for i, o := range simulated(t, scs, 2000) {
		if o.Rate() > DeleteAlpha {
			t.Errorf("%s: false DELETE in %.2f%% of %d runs (grader %d, labels %d), want at most 2.5%%",
				describe(scs[i]), 100*o.Rate(), o.Runs, o.ByGrader, o.ByLabels)
		}
	}
}

// TestSimulate_RoutesEachKeepTheirShare: each route errs at most its own
// 1.25%, so that both together stay within 2.5%. The cells are chosen where
// the rule's discreteness lets the error show: taking either route at 2.5%
// (the smaller of two bounds each at 2.5%, which the split replaces) gives
// 1.80% and 1.62% here and fails the assertion; the split gives 0.47% and
// 0.85%. 10,000 runs: SE 0.11 points at 1.25%.
func TestSimulate_RoutesEachKeepTheirShare(t *testing.T) {
	t.Parallel()
	scs := []DeleteScenario{
		// Labels route alone (a grader that catches nothing cannot run the
		// other): 150 answers without the line, all labelled, violating at
		// exactly delta. At 1.25% DELETE needs at most 1 violation (0.47%
		// of runs); at 2.5% it would take 2 (2.0%).
		{Cases: 10, Samples: 15, Baseline: 0, Rise: DefaultDelta, Recall: 0, Labels: 150, LabelDeleted: true},
		// Grader route: a perfect grader measured on every answer (J_L near
		// 1), a common violation so recall is bounded tightly.
		{Cases: 20, Samples: 100, Baseline: 0.30, Rise: DefaultDelta, Recall: 1, Labels: 4000},
	}
	for i, o := range simulated(t, scs, 10000) {
		t.Logf("%s: DELETE %.2f%% (grader %d, labels %d)", describe(scs[i]), 100*o.Rate(), o.ByGrader, o.ByLabels)
		if o.Rate() > 0.014 {
			t.Errorf("%s: false DELETE in %.2f%% of runs, want at most its route's 1.25%% (with sampling room to 1.4%%)", describe(scs[i]), 100*o.Rate())
		}
	}
}

// TestSimulate_QuietLinePower: the labels route makes a quiet line
// deletable; without it (the rule it adds to) no run reaches DELETE.
func TestSimulate_QuietLinePower(t *testing.T) {
	t.Parallel()
	sc := DeleteScenario{Cases: 8, Samples: 30, Baseline: 0, Recall: 1, Labels: 100, LabelDeleted: true}
	o := simulated(t, []DeleteScenario{sc}, 2000)[0]
	// Controls flag a break in about 2% of runs; everything else deletes.
	if o.Rate() < 0.95 || o.ByLabels != o.Delete {
		t.Errorf("%s: DELETE in %.1f%% of runs (labels %d), want at least 95%% by the labels route", describe(sc), 100*o.Rate(), o.ByLabels)
	}
}

// BenchmarkDeleteTable prints issue 19's tables (go test ./model -run '^$'
// -bench DeleteTable -benchtime 1x): the chance of DELETE for a line that
// does nothing, by design, baseline and label budget, with labels drawn by
// `auditor label` (both variants) and by `--for-verdict` (without the line);
// then false DELETE at a true rise of exactly delta. 2,000 runs a cell.
func BenchmarkDeleteTable(b *testing.B) {
	const runs = 2000
	for range b.N {
		var scs []DeleteScenario
		for _, d := range [][2]int{{8, 30}, {18, 30}, {20, 100}} {
			for _, base := range []float64{0, 0.02, 0.05} {
				for _, labels := range []int{60, 100, 200} {
					for _, del := range []bool{false, true} {
						scs = append(scs, DeleteScenario{Cases: d[0], Samples: d[1], Baseline: base, Recall: 1, Labels: labels, LabelDeleted: del})
					}
				}
			}
		}
		var sb strings.Builder
		sb.WriteString("\nDELETE for a line that does nothing (perfect predicate), % of runs: labels of both variants / of the answers without the line\n")
		sb.WriteString("design   baseline   60 labels      100 labels     200 labels\n")
		odds := simulated(b, scs, runs)
		for i := 0; i < len(scs); i += 6 {
			sc := scs[i]
			fmt.Fprintf(&sb, "%2dx%-4d  %5.0f%%   ", sc.Cases, sc.Samples, 100*sc.Baseline)
			for j := 0; j < 6; j += 2 {
				fmt.Fprintf(&sb, "  %5.1f / %5.1f", 100*odds[i+j].Rate(), 100*odds[i+j+1].Rate())
			}
			sb.WriteString("\n")
		}
		for _, design := range [][2]int{{8, 30}, {18, 30}} {
			fds := falseDeleteScenarios(design[0], design[1])
			sb.WriteString("\nfalse DELETE at a true rise of exactly delta, % of runs (grader route + labels route)\n")
			for i, o := range simulated(b, fds, runs) {
				fmt.Fprintf(&sb, "%-110s %5.2f%%  (%d + %d)\n", describe(fds[i]), 100*o.Rate(), o.ByGrader, o.ByLabels)
			}
		}
		b.Log(sb.String())
	}
}

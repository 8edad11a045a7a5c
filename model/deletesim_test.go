package model

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/auditor-dev/auditor/model/stats"
)

// Issue 19's repro: a line the model never breaks. 8 provoking and 6
// control cases x 30 samples, no failure anywhere, and 100 clean blind
// labels of the answers without the line. The grader route's misses are
// still up to 6.2% on 100 labels at its 0.25%; the labels route deletes
// it, and the verdict states its bound.
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
	for _, want := range []string{"0 of 100 labelled answers without the line were violations: its violation rate is below 4.3% (one-sided 98.5%)"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason %q lacks %q", v.Reason, want)
		}
	}
	if want := "labels route: sequential upper bound of 0/100 labelled violations without the line at one-sided 1.5% 0.0423 - baseline 0 (no baseline labels) = 0.0423 < delta 0.05"; v.Bound != want {
		t.Errorf("bound %q, want %q", v.Bound, want)
	}
	if !strings.HasPrefix(v.Notes[0], "untested types:") {
		t.Errorf("a DELETE states the chance of an untested type first: %q", v.Notes)
	}

	// The rule this replaces (no labels route) leaves it INCONCLUSIVE for
	// ever; with 80 labels the route is not there yet and says how many more.
	in.Labelled.Deleted.Strata[0].Labelled = 80
	v = mustDecide(t, in)
	if v.Decision != DecisionInconclusive || v.LabelsNeeded.More != 5 || !v.LabelsNeeded.Clean ||
		!strings.Contains(v.Needed, "label about 5 more answers without the line") || !strings.Contains(v.Needed, "if none is a violation, DELETE") {
		t.Errorf("80 labels: %s, needed %+v %q", v.Decision, v.LabelsNeeded, v.Needed)
	}
	// No label yet: the whole 85 (the confidence sequence at 1.5%).
	in.Labelled.Deleted.Strata[0].Labelled = 0
	if v = mustDecide(t, in); v.LabelsNeeded.More != 85 || !strings.Contains(v.Needed, "label about 85 answers without the line") {
		t.Errorf("no labels: needed %+v %q", v.LabelsNeeded, v.Needed)
	}
	// Baseline labels take a quarter point of the route's error: at
	// one-sided 1.25% the sequence needs 88 labels, not 85.
	in.Labelled.Baseline.Strata[0].Labelled = 30
	if v = mustDecide(t, in); v.LabelsNeeded.More != 88 {
		t.Errorf("with baseline labels: needed %+v", v.LabelsNeeded)
	}
	// The grader fails 10 of the 800 answers without the line and nothing is
	// labelled: the projection runs at the grader's 1.25%, not at "none",
	// through the same confidence sequence as the route.
	// (800 answers: the sequence at 1.25% needs more than 240 have.)
	in.Labelled.Baseline.Strata[0].Labelled = 0
	in.Provoking = ArmPair{Baseline: arm(100, 1, 1, 1, 1, 1, 1, 1, 1), Deleted: arm(100, 2, 2, 1, 1, 1, 1, 1, 1)}
	in.Labelled.Deleted.Strata[0].N = 800
	in.Recall, in.Specificity = nil, nil
	if v = mustDecide(t, in); v.LabelsNeeded.Clean || v.LabelsNeeded.Rate != 0.0125 || v.LabelsNeeded.More <= 85 ||
		!strings.Contains(v.Needed, "DELETE if no more than about 1.3% of them are violations") {
		t.Errorf("grader failing 10/800: needed %+v %q", v.LabelsNeeded, v.Needed)
	} else {
		// The projection is exact: that many labels at 1.25% clear delta,
		// one fewer does not.
		m := v.LabelsNeeded.More
		at := func(n int) float64 {
			u, _ := stats.SequentialUpper(int(math.Ceil(0.0125*float64(n)-1e-9)), n, LabelsRouteAlpha)
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
// lower the bound on the rise; the split of the route's error is 1.25% for
// the variant and 0.25% for the baseline, both read by the confidence
// sequence.
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
	up, _ := stats.SequentialUpper(8, 200, 0.0125)
	lo, _ := stats.SequentialLower(8, 200, 0.0025)
	r := v.Labels
	if r == nil || r.AlphaDeleted != 0.0125 || r.AlphaBaseline != 0.0025 || r.Upper != up || r.BaselineLower != lo || r.Rise != up-lo {
		t.Fatalf("labels route %+v; want upper %v at 1.25%%, lower %v at 0.25%%", r, up, lo)
	}
	// 8/200 each: 0.1168 - 0.0053 = 0.1115, not under 0.05.
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

// deleteGrid is issue 26's grid, the cells the README's claim covers,
// for one design: a true rise of exactly delta over baselines of 0, 2 and
// 10%; recall with / without the line 1.0/1.0, 1.0/0.8, 1.0/0.6 and
// 0.8/0.6; false alarms 0 and 0.25; labels of both variants or of the
// answers without the line only; 400 labels at once, or the advised loop
// (100 first, then what the verdict's advice asks, up to 20 looks).
func deleteGrid(cases, samples int) []DeleteScenario {
	var out []DeleteScenario
	for _, base := range []float64{0, 0.02, 0.10} {
		for _, r := range [][2]float64{{1, 1}, {1, 0.8}, {1, 0.6}, {0.8, 0.6}} {
			for _, f := range []float64{0, 0.25} {
				for _, deletedOnly := range []bool{false, true} {
					for _, advised := range []bool{false, true} {
						sc := DeleteScenario{Cases: cases, Samples: samples, Baseline: base, Rise: DefaultDelta,
							Recall: r[0], RecallDeleted: r[1], FalseAlarm: f, Labels: 400, LabelDeleted: deletedOnly, Advised: advised}
						if advised {
							sc.Labels = 100
						}
						out = append(out, sc)
					}
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
	how := fmt.Sprintf("%d labels", sc.Labels)
	if sc.Advised {
		how = fmt.Sprintf("%d labels then the advice", sc.Labels)
	}
	return fmt.Sprintf("%dx%d baseline %.0f%% rise %.0f pts recall %.1f/%.1f false alarms %.2f, %s of %s",
		sc.Cases, sc.Samples, 100*sc.Baseline, 100*sc.Rise, sc.Recall, rd, sc.FalseAlarm, how, who)
}

// TestSimulate_FalseDeleteAtDelta: at a true rise of exactly delta, DELETE
// (by either route) errs in at most 2.5% of audits in every cell of the
// grid at 8 x 30 (400 runs a cell here, enough to catch a rule far off;
// TestSimulate_HardCells looks closer where it matters and
// BenchmarkDeleteTable runs every design at 5,000).
func TestSimulate_FalseDeleteAtDelta(t *testing.T) {
	t.Parallel()
	scs := deleteGrid(8, 30)
	for i, o := range simulated(t, scs, 400) {
		if o.Rate() > DeleteAlpha {
			t.Errorf("%s: false DELETE in %.2f%% of %d runs (grader %d, labels %d), want at most 2.5%%",
				describe(scs[i]), 100*o.Rate(), o.Runs, o.ByGrader, o.ByLabels)
		}
	}
}

// TestSimulate_WordingChangesWithTheLine is issue 26's repro: deleting the
// line raises violations from 10% to 15%, but in wording the predicate
// misses 40% of the time, so what it flags falls. The rule that divided one
// pooled J_L into the graded difference gave DELETE in 92.8% of 1,000
// audits; the grader route per variant must stay within the error.
func TestSimulate_WordingChangesWithTheLine(t *testing.T) {
	t.Parallel()
	sc := DeleteScenario{Cases: 20, Samples: 100, Baseline: 0.10, Rise: 0.05, Recall: 1.0, RecallDeleted: 0.6, Labels: 400}
	o, err := SimulateDelete(sc, 1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: DELETE %.2f%% (grader %d, labels %d), KEEP %.1f%%", describe(sc), 100*o.Rate(), o.ByGrader, o.ByLabels, 100*float64(o.Keep)/float64(o.Runs))
	if o.Rate() > DeleteAlpha {
		t.Errorf("%s: false DELETE in %.2f%% of runs, want at most 2.5%%", describe(sc), 100*o.Rate())
	}
}

// TestSimulate_HardCells: the cells where the rule's error comes closest
// to its bound, at 4,000 runs each (a standard error of 0.25 points at
// 2.5%, so 3.5% would show): the advised labelling loop at every design
// (the 85 labels a quiet line needs, then what the advice asks) with a
// predicate that sees none of the rise (only labels can tell), which gave
// 1.70% / 2.72% / 3.08% from the labels route alone when its bound was a
// fixed-count Clopper-Pearson read after every round (put back, this
// simulation gives 2.08% / 2.77% / 3.28% and fails; the confidence
// sequence gives 1.35% / 1.40% / 1.23%, within the route's 1.5%).
func TestSimulate_HardCells(t *testing.T) {
	t.Parallel()
	scs := []DeleteScenario{
		{Cases: 8, Samples: 30, Baseline: 0, Rise: DefaultDelta, Recall: 0, Labels: 85, LabelDeleted: true, Advised: true},
		{Cases: 18, Samples: 30, Baseline: 0, Rise: DefaultDelta, Recall: 0, Labels: 85, LabelDeleted: true, Advised: true},
		{Cases: 20, Samples: 100, Baseline: 0, Rise: DefaultDelta, Recall: 0, Labels: 85, LabelDeleted: true, Advised: true},
	}
	for i, o := range simulated(t, scs, 4000) {
		t.Logf("%s: DELETE %.2f%% (grader %d, labels %d)", describe(scs[i]), 100*o.Rate(), o.ByGrader, o.ByLabels)
		if o.Rate() > DeleteAlpha {
			t.Errorf("%s: false DELETE in %.2f%% of runs, want at most 2.5%%", describe(scs[i]), 100*o.Rate())
		}
	}
}

// TestSimulate_RoutesEachKeepTheirShare: each route errs at most its own
// share (labels 1.5%, grader 1.0%), so that both together stay within
// 2.5%. 5,000 runs: SE 0.17 points at 1.5%.
func TestSimulate_RoutesEachKeepTheirShare(t *testing.T) {
	t.Parallel()
	scs := []DeleteScenario{
		// Labels route alone (a grader that catches nothing cannot run the
		// other): 150 answers without the line, all labelled, violating at
		// exactly delta.
		{Cases: 10, Samples: 15, Baseline: 0, Rise: DefaultDelta, Recall: 0, Labels: 150, LabelDeleted: true},
		// Grader route: a perfect grader measured on every answer, its
		// misses and false alarms bounded tightly.
		{Cases: 20, Samples: 100, Baseline: 0.30, Rise: DefaultDelta, Recall: 1, Labels: 4000},
	}
	share := []float64{LabelsRouteAlpha, GraderRouteAlpha}
	for i, o := range simulated(t, scs, 5000) {
		t.Logf("%s: DELETE %.2f%% (grader %d, labels %d)", describe(scs[i]), 100*o.Rate(), o.ByGrader, o.ByLabels)
		if o.Rate() > share[i]+0.003 {
			t.Errorf("%s: false DELETE in %.2f%% of runs, want at most its route's %v%% (with sampling room)", describe(scs[i]), 100*o.Rate(), 100*share[i])
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

// BenchmarkDeleteTable prints the simulation tables (go test ./model
// -run '^$' -bench DeleteTable -benchtime 1x): the chance of DELETE for a
// line that does nothing, by design, baseline and label budget, with labels
// drawn by `auditor label` (both variants) and by `--for-verdict` (without
// the line), 2,000 runs a cell; then issue 26's grid (deleteGrid) at a true
// rise of exactly delta for every design, 5,000 runs a cell, with its worst
// cells.
func BenchmarkDeleteTable(b *testing.B) {
	const runs, gridRuns = 2000, 5000
	for range b.N {
		var scs []DeleteScenario
		for _, d := range [][2]int{{8, 30}, {18, 30}, {20, 100}} {
			for _, base := range []float64{0, 0.02, 0.05} {
				for _, labels := range []int{100, 200, 400} {
					for _, del := range []bool{false, true} {
						scs = append(scs, DeleteScenario{Cases: d[0], Samples: d[1], Baseline: base, Recall: 1, Labels: labels, LabelDeleted: del})
					}
				}
			}
		}
		var sb strings.Builder
		sb.WriteString("\nDELETE for a line that does nothing (perfect predicate), % of runs: labels of both variants / of the answers without the line\n")
		sb.WriteString("design   baseline   100 labels     200 labels     400 labels\n")
		odds := simulated(b, scs, runs)
		for i := 0; i < len(scs); i += 6 {
			sc := scs[i]
			fmt.Fprintf(&sb, "%2dx%-4d  %5.0f%%   ", sc.Cases, sc.Samples, 100*sc.Baseline)
			for j := 0; j < 6; j += 2 {
				fmt.Fprintf(&sb, "  %5.1f / %5.1f", 100*odds[i+j].Rate(), 100*odds[i+j+1].Rate())
			}
			sb.WriteString("\n")
		}
		type cell struct {
			sc DeleteScenario
			o  DeleteOdds
		}
		var all []cell
		for _, design := range [][2]int{{8, 30}, {18, 30}, {20, 100}} {
			fds := deleteGrid(design[0], design[1])
			fmt.Fprintf(&sb, "\nfalse DELETE at a true rise of exactly delta, %dx%d, %d runs a cell, %% of runs (grader route + labels route)\n", design[0], design[1], gridRuns)
			for i, o := range simulated(b, fds, gridRuns) {
				fmt.Fprintf(&sb, "%-120s %5.2f%%  (%d + %d)\n", describe(fds[i]), 100*o.Rate(), o.ByGrader, o.ByLabels)
				all = append(all, cell{fds[i], o})
			}
		}
		slices.SortStableFunc(all, func(a, b cell) int { return b.o.Delete - a.o.Delete })
		fmt.Fprintf(&sb, "\nworst cells of %d:\n", len(all))
		for _, c := range all[:min(8, len(all))] {
			fmt.Fprintf(&sb, "%-120s %5.2f%%  (%d + %d)\n", describe(c.sc), 100*c.o.Rate(), c.o.ByGrader, c.o.ByLabels)
		}
		b.Log(sb.String())
	}
}

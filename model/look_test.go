package model

import (
	"math"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model/stats"
)

// TestNewDesign: five looks at a fifth of the samples each, with the
// O'Brien-Fleming boundaries rpact and gsDesign give for one-sided 2.5%
// (4.877, 3.357, 2.680, 2.290, 2.031); one look is the fixed design.
func TestNewDesign(t *testing.T) {
	t.Parallel()
	d, err := NewDesign(5, 30)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{4.877, 3.357, 2.680, 2.290, 2.031} {
		if got := d.Keep[k].Z; math.Abs(got-want) > 1e-3 {
			t.Errorf("look %d: KEEP boundary %.4f, want %.3f", k+1, got, want)
		}
		if !(d.Delete[k].Z > d.Keep[k].Z) {
			t.Errorf("look %d: the grader route's boundary %.3f must be above KEEP's %.3f (its error is half)", k+1, d.Delete[k].Z, d.Keep[k].Z)
		}
		if got := d.SamplesAt(k + 1); got != 6*(k+1) {
			t.Errorf("look %d uses %d samples, want %d", k+1, got, 6*(k+1))
		}
	}
	l := d.Look(2)
	if l == nil || l.Index != 2 || l.Of != 5 || l.Samples != 12 || l.KeepZ != d.Keep[1].Z || l.Final() || !d.Look(5).Final() {
		t.Errorf("look 2: %+v", l)
	}
	if l.String() != "look 2 of 5 (12 of 30 samples a case)" {
		t.Errorf("look 2 is %q", l)
	}
	fixed, err := NewDesign(1, 30)
	if err != nil || fixed.Sequential() || fixed.Look(1) != nil || fixed.SamplesAt(1) != 30 {
		t.Errorf("fixed design %+v (%v)", fixed, err)
	}
	for _, bad := range [][2]int{{0, 30}, {MaxLooks + 1, 100}, {5, 4}} {
		if _, err := NewDesign(bad[0], bad[1]); err == nil {
			t.Errorf("NewDesign(%d looks, %d samples) accepted", bad[0], bad[1])
		}
	}
}

// TestDecide_AtLook: at a look the verdict's intervals use the look's
// boundaries. A difference that is KEEP at the end of a fixed design is not
// KEEP at an early look, whose boundary is far higher, and says which look
// it rests on.
func TestDecide_AtLook(t *testing.T) {
	t.Parallel()
	d, _ := NewDesign(5, 30)
	in := VerdictInput{
		Provoking: ArmPair{Baseline: clean(5, 12), Deleted: arm(12, 2, 2, 2, 2, 2)},
		Control:   controls(0, 0),
	}
	fixed := mustDecide(t, in)
	if fixed.Decision != DecisionKeep {
		t.Fatalf("10/60 vs 0/60 with the fixed rule: %s", fixed.Decision)
	}
	in.Look = d.Look(2)
	v := mustDecide(t, in)
	_, want, _ := stats.NewcombeZ(10, 60, 0, 60, d.Keep[1].Z)
	if v.Newcombe != want || v.Decision != DecisionInconclusive || v.Look != in.Look {
		t.Errorf("at look 2: %s, Newcombe %+v, want %+v", v.Decision, v.Newcombe, want)
	}
	if !strings.Contains(v.Reason, "look 2 of 5, 95% over all looks [") {
		t.Errorf("reason %q does not name the look", v.Reason)
	}
	// Large enough to clear look 2's 3.357: KEEP, with the look in its bound.
	in.Provoking.Deleted = arm(12, 6, 6, 6, 6, 6)
	if v = mustDecide(t, in); v.Decision != DecisionKeep || !strings.HasPrefix(v.Bound, "look 2 of 5 (12 of 30 samples a case), KEEP at z 3.357") {
		t.Errorf("30/60 vs 0/60 at look 2: %s (%s)", v.Decision, v.Bound)
	}
}

// TestVerdict_Provisional: a grid short of its design's first look (or a
// fixed design's whole grid) gives no verdict, only what it would be.
func TestVerdict_Provisional(t *testing.T) {
	t.Parallel()
	v := mustDecide(t, VerdictInput{Provoking: ArmPair{Baseline: clean(5, 30), Deleted: arm(30, 9, 9, 9, 9, 9)}, Control: controls(0, 0)})
	fixed, _ := NewDesign(1, 30)
	v.Provisional(fixed, "17 of 30 samples a case answered")
	if v.Decision != DecisionInconclusive || !strings.HasPrefix(v.Reason, "on the answers so far it would be KEEP (") ||
		!strings.Contains(v.Reason, "a fixed design's verdict is valid on the whole grid only") || v.NotYet == "" {
		t.Errorf("%s: %q", v.Decision, v.Reason)
	}
}

// TestVerdict_ProvisionalNamesNoLook: short of a sequential design's first
// look the verdict's sentence names no look of the design (issue 26: "look
// 5 of 5" beside "no look of the design is reached yet"): its interval is
// the last look's boundary's, said as such, once.
func TestVerdict_ProvisionalNamesNoLook(t *testing.T) {
	t.Parallel()
	d, _ := NewDesign(5, 30)
	in := VerdictInput{Provoking: ArmPair{Baseline: clean(5, 30), Deleted: arm(30, 9, 9, 9, 9, 9)}, Control: controls(0, 0), Look: d.Look(5)}
	v := mustDecide(t, in)
	v.Provisional(d, "4 of 30 samples a case are in for every case")
	for _, s := range []string{v.Reason, v.Bound} {
		if strings.Contains(s, "look 5 of 5") || strings.Contains(s, "over all looks") {
			t.Errorf("a provisional verdict names the last look as reached: %q", s)
		}
	}
	if !strings.Contains(v.Reason, "95% at the last look's boundary") || strings.Count(v.Reason, "no look of the design is reached yet") != 1 {
		t.Errorf("reason %q", v.Reason)
	}
}

// peekingDesign is the rule the looks replace: 1.96 (and the graded
// difference's 2.5758) at every look, as if each look were the only one.
func peekingDesign(looks, samples int) Design {
	d, _ := NewDesign(looks, samples)
	for k := range d.Keep {
		d.Keep[k] = stats.Boundary{Fraction: d.Keep[k].Fraction, Z: stats.NormalQuantile(1 - DeleteAlpha), Tail: DeleteAlpha}
		d.Delete[k] = stats.Boundary{Fraction: d.Delete[k].Fraction, Z: graderRouteZ, Tail: GradedDiffAlpha}
	}
	return d
}

// TestSimulateSequential_PeekingStaysValid: an inert line (5% failures in
// both variants, 8 provoking cases x 30 samples) looked at after every
// fifth of the samples, acted on at the first KEEP: false KEEP stays within
// 2.5% of 10,000 audits with the design's boundaries; with 1.96 at every
// look (the rule the looks replace) it is well above 3.5%.
func TestSimulateSequential_PeekingStaysValid(t *testing.T) {
	t.Parallel()
	sc := DeleteScenario{Cases: 8, Samples: 30, Baseline: 0.05, Recall: 1}
	d, _ := NewDesign(5, 30)
	seq, err := SimulateSequential(sc, d, 10000, 23)
	if err != nil {
		t.Fatal(err)
	}
	peek, _ := SimulateSequential(sc, peekingDesign(5, 30), 10000, 23)
	t.Logf("false KEEP: %.2f%% with the design's looks, %.2f%% with 1.96 at every look", 100*float64(seq.Keep)/10000, 100*float64(peek.Keep)/10000)
	if rate := float64(seq.Keep) / 10000; rate > DeleteAlpha {
		t.Errorf("false KEEP in %.2f%% of audits stopped at any look, want at most 2.5%%", 100*rate)
	}
	if rate := float64(peek.Keep) / 10000; rate < 0.035 {
		t.Errorf("peeking with 1.96 gives only %.2f%%: the simulation no longer shows what the looks are for", 100*rate)
	}
}

// TestSimulateSequential_FalseDeleteAndPower: where the grader route's
// graded difference is at its own boundary (every answer labelled, the
// predicate perfect, so its misses and false alarms are bounded by fixed
// amounts and the rise left for the graded difference is delta less them),
// DELETE stopped at any look stays within 2.5% and near the fixed design's;
// a load-bearing line is KEEP by the last look about as often as with the
// fixed design (within 5 points) and, with the adaptive default of six
// looks, when it rises from 4% to 30% it is settled on at most 40% of the
// samples.
func TestSimulateSequential_FalseDeleteAndPower(t *testing.T) {
	t.Parallel()
	d, _ := NewDesign(DefaultAdaptiveLooks, 30)
	// With each look's bound at its fixed-design z (the rule the looks
	// replace) false DELETE is several times the fixed design's.
	const runs = 4000
	const cases = 20
	room, _ := stats.SequentialUpper(0, cases*30, MissAlpha)
	sc := DeleteScenario{Cases: cases, Samples: 30, Baseline: 0.02, Rise: DefaultDelta - 2*room, Recall: 1, Labels: 2 * cases * 30}
	del, err := SimulateSequential(sc, d, runs, 5)
	if err != nil {
		t.Fatal(err)
	}
	peek, _ := SimulateSequential(sc, peekingDesign(DefaultAdaptiveLooks, 30), runs, 5)
	once, _ := SimulateDelete(sc, runs, 5)
	seq, fixed, peeking := float64(del.Delete)/runs, float64(once.Delete)/runs, float64(peek.Delete)/runs
	t.Logf("false DELETE at the graded difference's boundary: %.2f%% at the looks, %.2f%% fixed, %.2f%% peeking", 100*seq, 100*fixed, 100*peeking)
	if seq > DeleteAlpha || seq-fixed > 0.0025 {
		t.Errorf("false DELETE at a rise of delta: %.2f%% at the looks against %.2f%% fixed, want at most 2.5%% and within 0.25 points", 100*seq, 100*fixed)
	}
	if peeking-fixed <= 0.0025 {
		t.Errorf("peeking gives %.2f%% against %.2f%% fixed: the simulation no longer shows what the looks are for", 100*peeking, 100*fixed)
	}
	for _, c := range []struct{ base, rise float64 }{{0.04, 0.08}, {0, 0.08}, {0.04, 0.26}} {
		sc := DeleteScenario{Cases: 8, Samples: 30, Baseline: c.base, Rise: c.rise, Recall: 1}
		seq, _ := SimulateSequential(sc, d, 4000, 6)
		fixed, _ := SimulateDelete(sc, 4000, 6)
		ps, pf := float64(seq.Keep)/4000, float64(fixed.Keep)/4000
		t.Logf("%.0f%% -> %.0f%%: KEEP %.1f%% sequential, %.1f%% fixed; mean samples %.1f of 30", 100*c.base, 100*(c.base+c.rise), 100*ps, 100*pf, seq.MeanSamples)
		if pf-ps > 0.05 {
			t.Errorf("%.0f%% -> %.0f%%: power %.1f%% sequential against %.1f%% fixed, more than 5 points lower", 100*c.base, 100*(c.base+c.rise), 100*ps, 100*pf)
		}
		if c.rise > 0.2 && seq.MeanSamples > 0.4*30 {
			t.Errorf("4%% -> 30%%: %.1f samples a case on average, want at most 40%% of 30", seq.MeanSamples)
		}
	}
}

// TestParseAudit_Looks: looks and adaptive are declared in the audit file;
// adaptive without looks means DefaultAdaptiveLooks; adaptive with one
// look, or looks out of range, is a located error.
func TestParseAudit_Looks(t *testing.T) {
	t.Parallel()
	base := "name = \"a\"\nprompt = \"p.md\"\n%s[model]\nname = \"m\"\nprovider = \"sim\"\n[[rule]]\nline = 1\ncases = \"c.jsonl\"\npredicate = \"p.toml\"\n"
	for _, c := range []struct {
		top      string
		looks    int
		adaptive bool
		err      string
	}{
		{"", 1, false, ""},
		{"looks = 4\n", 4, false, ""},
		{"adaptive = true\n", DefaultAdaptiveLooks, true, ""},
		{"adaptive = true\nlooks = 3\n", 3, true, ""},
		{"adaptive = true\nlooks = 1\n", 0, false, "a.toml:4: field \"looks\": adaptive = true needs more than one look"},
		{"looks = 0\n", 0, false, "a.toml:3: field \"looks\""},
		{"looks = 21\n", 0, false, "a.toml:3: field \"looks\""},
		{"adaptive = \"yes\"\n", 0, false, "a.toml:3: field \"adaptive\""},
	} {
		a, err := ParseAudit("a.toml", []byte(strings.Replace(base, "%s", c.top, 1)))
		switch {
		case c.err != "" && (err == nil || !strings.HasPrefix(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.top, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.top, err)
		case c.err == "" && (a.Looks != c.looks || a.Adaptive != c.adaptive):
			t.Errorf("%q: looks %d adaptive %v, want %d %v", c.top, a.Looks, a.Adaptive, c.looks, c.adaptive)
		}
	}
}

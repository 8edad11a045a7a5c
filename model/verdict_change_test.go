package model

import (
	"reflect"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model/stats"
)

// A rewording or addition is decided by Decide's arithmetic with its own
// words: KEEP reads WORSE, DELETE reads NOT WORSE, or BETTER when both
// upper bounds of variant - baseline are below 0.
func TestDecideChange(t *testing.T) {
	t.Parallel()
	measured := func(base, variant ArmCounts) VerdictInput {
		return VerdictInput{Provoking: ArmPair{Baseline: base, Deleted: variant}, Control: controls(0, 0),
			Labelled: LabelledArms{Deleted: labelled(240, 100, 0, 0, 0)}}
	}
	tenEach := arm(30, 10, 10, 10, 10, 10, 10, 10, 10) // 80/240 = 33.3%
	for _, tc := range []struct {
		name   string
		in     VerdictInput
		kind   VariantKind
		want   Decision
		reason string // substring of Reason
		bound  string // substring of Bound
		needed string // substring of Needed
	}{
		// Newcombe by hand: Wilson 0/240 = [0, 0.0158], 80/240 = [0.2767,
		// 0.3951]; hi = -0.3333 + sqrt(0.0158^2 + 0.0566^2) = -0.2746,
		// lo = -0.3333 - (0.3951 - 0.3333) = -0.3951.
		{name: "failures fell 80/240 -> 0/240", in: measured(tenEach, clean(8, 30)), kind: Rewording, want: DecisionBetter,
			reason: "provoking failures fell from 33.3% to 0.0% with the line reworded (-33.3 points, 95% [-39.5, -27.5])",
			bound:  "upper bound of variant - baseline -0.275 < 0: failures fell"},
		{name: "0/240 -> 0/240", in: measured(clean(8, 30), clean(8, 30)), kind: Addition, want: DecisionNotWorse,
			reason: "stayed at 0.0% with the line added", bound: "labels route: sequential upper bound of 0/100 labelled violations with the line added at one-sided 1.5% 0.0423"},
		{name: "failures rose 0/240 -> 80/240", in: measured(clean(8, 30), tenEach), kind: Addition, want: DecisionWorse,
			reason: "rose from 0.0% to 33.3% with the line added", bound: "Newcombe lower bound of variant - baseline"},
		{name: "no labels", in: VerdictInput{Provoking: ArmPair{Baseline: clean(8, 30), Deleted: clean(8, 30)}, Control: controls(0, 0),
			Labelled: LabelledArms{Deleted: labelled(240, 0, 0, 0, 0)}},
			kind: Rewording, want: DecisionInconclusive, needed: "label about 85 answers with the line reworded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := DecideChange(tc.in, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if v.Decision != tc.want || !strings.Contains(v.Reason, tc.reason) || !strings.Contains(v.Bound, tc.bound) || !strings.Contains(v.Needed, tc.needed) {
				t.Errorf("%s\nreason %q\nbound  %q\nneeded %q", v.Decision, v.Reason, v.Bound, v.Needed)
			}
			all := v.Reason + v.Bound + v.Needed + strings.Join(v.Notes, " ")
			if strings.Contains(all, "DELETE") || strings.Contains(all, "KEEP") || strings.Contains(all, "without the line") || strings.Contains(all, "deleted - baseline") {
				t.Errorf("a deletion's words in a %s verdict: %s", tc.kind, all)
			}
			if v.Decision.Passes() != (tc.want == DecisionBetter || tc.want == DecisionNotWorse) {
				t.Errorf("Passes() = %v for %s", v.Decision.Passes(), v.Decision)
			}
		})
	}
	// A deletion is Decide's verdict, untouched.
	in := measured(clean(8, 30), clean(8, 30))
	d, _ := DecideChange(in, Deletion)
	if want := mustDecide(t, in); !reflect.DeepEqual(d, want) || d.Decision != DecisionDelete {
		t.Errorf("deletion: %+v, want %+v", d, want)
	}
}

// A length shift the same in every case has a zero-width interval, which
// is never printed (issue 19: "95% [0.0, 0.0], paired by case" was).
func TestShiftWords_NoZeroWidthInterval(t *testing.T) {
	same := &stats.LengthShift{Cases: 10, Est: 0, CI: stats.Interval{Lo: 0, Hi: 0}}
	if got := ShiftWords(same); strings.Contains(got, "[") || !strings.Contains(got, "the same in each of 10 cases, so no interval") {
		t.Errorf("zero width: %q", got)
	}
	wide := &stats.LengthShift{Cases: 10, Est: 41.6, RelEst: 0.39, CI: stats.Interval{Lo: 36.7, Hi: 46.5}}
	if got := ShiftWords(wide); got != "+41.6 tokens per answer, +39%, 95% [36.7, 46.5] paired by case over 10 cases" {
		t.Errorf("shift: %q", got)
	}
}

// A bound of 4.97%: "below 5.0% ...
// under the tolerated 5.0 points" read as a contradiction, so the bound
// gets a second decimal when one would print it equal to delta.
func TestLabelsRoute_SentenceNeverEqualsDelta(t *testing.T) {
	r := &LabelsRoute{Labelled: 85, Upper: 0.0497, AlphaDeleted: LabelsRouteAlpha, Delta: 0.05}
	if got := r.Sentence(); !strings.Contains(got, "below 4.97%") {
		t.Errorf("%q", got)
	}
	r = &LabelsRoute{Labelled: 100, Upper: 0.0423, AlphaDeleted: LabelsRouteAlpha, Delta: 0.05}
	if got := r.Sentence(); !strings.Contains(got, "below 4.3% (one-sided 98.5%)") {
		t.Errorf("%q", got)
	}
}

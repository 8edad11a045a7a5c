package tui

import (
	"testing"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

func TestDotBar(t *testing.T) {
	t.Parallel()
	m := func(est, lo, hi float64) *labels.Measure {
		return &labels.Measure{Hits: 1, Total: 2, Est: est, CI: stats.Interval{Lo: lo, Hi: hi}, Method: labels.MethodWilson}
	}
	tests := []struct {
		name string
		m    *labels.Measure
		want string
	}{
		{"unmeasured: the bare scale", &labels.Measure{}, "·    ·    ·    ·    ·"},
		{"nil", nil, "·    ·    ·    ·    ·"},
		{"at 0", m(0, 0, 0.32), "●─────┤   ·    ·    ·"},
		{"at 1", m(1, 0.51, 1), "·    ·    ├─────────●"},
		{"middle", m(0.5, 0.09, 0.91), "· ├───────●───────┤ ·"},
		{"a point", m(0.5, 0.5, 0.5), "·    ·    ●    ·    ·"},
	}
	for _, tt := range tests {
		if got := dotBar(tt.m, 21); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := dotScale(21); got != "0        0.5        1" {
		t.Errorf("scale %q", got)
	}
}

func TestShortNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   []string
		w    int
		want []string
	}{
		{[]string{"predicate", "judge:a"}, 24, []string{"predicate", "judge:a"}},
		{[]string{"judge:claude-3-opus-judge-v1", "judge:claude-3-opus-judge-v2"}, 20, []string{"…v1", "…v2"}},
		{[]string{"judge:claude-opus-4-8", "judge:claude-3-opus"}, 12, []string{"…opus-4-8", "…3-opus"}},
		{[]string{"predicate", "judge:claude-3-opus-judge-careful"}, 20, []string{"predicate", "judge:claude-3-opus…"}},
	}
	for _, tt := range tests {
		got := shortNames(tt.in, tt.w)
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("shortNames(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
				break
			}
		}
	}
}

func TestVerdictChange(t *testing.T) {
	t.Parallel()
	k := verdictKey{0, 0}
	before := map[verdictKey]model.Decision{k: model.DecisionInconclusive}
	if got := verdictChange(before, k, model.Verdict{Decision: model.DecisionDelete}); got != "INCONCLUSIVE → DELETE" {
		t.Errorf("changed: %q", got)
	}
	if got := verdictChange(before, k, model.Verdict{Decision: model.DecisionInconclusive}); got != "still INCONCLUSIVE" {
		t.Errorf("unchanged: %q", got)
	}
}

func TestProgressBar(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		done, closed, total int
		want                string
	}{
		{0, 0, 12, "░░░░░░░░░░"},
		{6, 0, 12, "█████░░░░░"},
		{3, 3, 12, "██▒▒▒░░░░░"},
		{12, 0, 12, "██████████"},
		{0, 0, 0, "░░░░░░░░░░"},
	} {
		if got := progressBar(tt.done, tt.closed, tt.total, 10); got != tt.want {
			t.Errorf("progressBar(%d, %d, %d) = %q, want %q", tt.done, tt.closed, tt.total, got, tt.want)
		}
	}
}

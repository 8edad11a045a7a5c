package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// TestGrid_CorrectedRow checks that the grid shows rates corrected for the
// predicate's recall once labels measure it, and not before.
func TestGrid_CorrectedRow(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	f.store(t, 0, len(f.plan.Calls))
	clk := &clock{t: t0}

	before := plain(f.app(t, clk, nil))
	if strings.Contains(before, "corrected for recall") {
		t.Fatal("a corrected row is shown without any labels")
	}

	// Label every provoke answer of line 23 with the simulated model's truth.
	tally, err := evidence.NewTally(f.plan, f.preds, f.src)
	if err != nil {
		t.Fatal(err)
	}
	drawCensus(t, f, tally)
	for i, c := range f.plan.Calls {
		if c.Meta.RuleLine != 23 || c.Meta.Kind != model.Provoke {
			continue
		}
		tally.SetLabel(model.Label{Source: model.LabelBlind, Key: f.plan.Calls[i].Key, Violation: f.sim.Decide(c).Failure, Labeller: "truth"})
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	side := res.Rules[0].Arms[model.Provoke].Deleted
	if side.Corrected == nil {
		t.Fatal("labels on every provoke answer did not measure recall")
	}
	want := fmt.Sprintf("%.3f [%.3f,%.3f]", side.Corrected.Est, side.Corrected.CI.Lo, side.Corrected.CI.Hi)

	a := f.app(t, clk, nil, func(o *Options) { o.Tally = tally })
	a.Update(keyMsg("x")) // any key: a redraw with the results
	screen := plain(a)
	if !strings.Contains(screen, "corrected for recall") || !strings.Contains(screen, want) {
		t.Fatalf("grid lacks the corrected provoke rate %s:\n%s", want, screen)
	}
}

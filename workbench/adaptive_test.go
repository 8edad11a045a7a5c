package workbench

import "testing"

// TestRoundCalls_OpenLineWithMostToGainFirst: an adaptive round's calls go
// first to the line whose interval one more answer narrows most, so a
// budget that ends the round early leaves the least to gain unmade; a
// settled line's calls are not made, except those it shares with an open
// line (a sweep's baseline); without priorities (the first round) the
// plan's order stands.
func TestRoundCalls_OpenLineWithMostToGainFirst(t *testing.T) {
	s := openDemoSamples(t, 4)
	if len(s.Plan.Audit.Rules) < 3 {
		t.Fatal("the demo has fewer than three lines: the test checks nothing")
	}
	serves := func(key string, rule int) bool {
		for _, ci := range s.Plan.ByKey[key] {
			if s.Plan.Cells[ci].Rule == rule {
				return true
			}
		}
		return false
	}
	first := s.roundCalls(map[string]bool{}, 4, map[lineModel]bool{}, map[lineModel]float64{})
	if len(first) != len(s.Plan.Calls) {
		t.Fatalf("%d calls in the first round of 4 samples, want all %d", len(first), len(s.Plan.Calls))
	}
	for i := range first {
		if first[i].Key != s.Plan.Calls[i].Key {
			t.Fatalf("call %d out of the plan's order without priorities", i)
		}
	}

	settled := map[lineModel]bool{{0, 0}: true}
	prio := map[lineModel]float64{{1, 0}: 0.001, {2, 0}: 0.01}
	calls := s.roundCalls(map[string]bool{}, 4, settled, prio)
	seenOther := false
	for _, c := range calls {
		two := serves(c.Key, 2)
		if !two {
			seenOther = true
		} else if seenOther {
			t.Fatalf("a call of line index 2 (most to gain) comes after another line's")
		}
		if serves(c.Key, 0) && !serves(c.Key, 1) && !two && len(s.Plan.RegressionByKey[c.Key]) == 0 {
			t.Fatalf("a call only the settled line needs is in the round")
		}
	}
	if !seenOther {
		t.Fatal("every call serves line index 2: the test checks nothing")
	}
}

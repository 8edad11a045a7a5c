package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/examples"
)

// shipFixture is the demo audit with a joint test of lines 15 and 23:
// the prompt without both, run on both lines' cases and the suite.
func shipFixture(t testing.TB, samples int) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, examples.DemoAudit)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, "\n[[ship]]\nlines = [15, 23]\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadFixtureAt(t, path, samples)
}

// The ship decision leads the Report screen and the grid's rule bar; a
// line of the joint test has the joint variant as a column of its own,
// whose counts are that class's.
func TestShip_ReportAndGrid(t *testing.T) {
	t.Parallel()
	f := shipFixture(t, 10)
	if f.plan.Ship == nil || f.plan.Ship.Calls() == 0 {
		t.Fatal("no joint test in the plan")
	}
	_, a := reportWorldOf(t, f)
	// The roadmap line (23) is load-bearing: without it and line 15 its
	// class rose.
	screen := plain(a)
	contains(t, screen, "ship ■ NOT SAFE")
	openReport(a)
	text := strings.Join(strings.Fields(reportText(a)), " ") // wrapped lines joined
	for _, want := range []string{"Ship decision · joint test 1 of the 1 this audit has made", "NOT SAFE: the prompt without lines 15, 23",
		"line 23 rose (alone KEEP)", "keep line 23; the next joint set, line 15, is a new test (joint test 2)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "Ship decision") > strings.Index(text, "Sweep") {
		t.Error("the ship decision does not lead the report")
	}
	press(a, "esc")
	// Line 23 is the first rule: its grid has a joint column.
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	screen = plain(a)
	contains(t, screen, "joint: -L15, 23")
	rr := a.c.resultOf(0, 0, true)
	if rr == nil || rr.Rule.Line != 23 {
		t.Fatalf("no joint class of line 23: %+v", rr)
	}
	if n := rr.Cases[0].Deleted.N; n != 10 {
		t.Errorf("the joint column's first case has %d graded answers, want 10", n)
	}
}

package tui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/examples"
)

// newVariantFixture is the demo audit with its line 23 audited three ways
// (audittest.WithVariants): deleted (-L23, rule 0), reworded (~L23, rule
// 1) and with a line added after it (+L23, rule 2).
func newVariantFixture(t testing.TB, samples int) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, examples.DemoAudit)
	audittest.WithVariants(t, path)
	return loadFixtureAt(t, path, samples)
}

// variantApp is the variant audit complete, judged and with recall
// measured, as the report tests see the demo.
func variantApp(t testing.TB) *App {
	_, a := reportWorldOf(t, newVariantFixture(t, 30))
	return a
}

// TestGolden_Variants shows every view on an audit of one line deleted,
// reworded and with a line added after it: each variant is named where it
// shows (chips, column heads, the difference row, the line's text, the
// sweep's counts, the plan, the report and the prompt), and a rewording's
// or an addition's verdict reads WORSE / NOT WORSE / BETTER with the cases
// it fixed and broke.
func TestGolden_Variants(t *testing.T) {
	t.Parallel()
	scenes := []struct {
		name string
		keys func(a *App)
	}{
		{"plan", func(a *App) { press(a, "shift+tab") }},
		{"plan_rules", func(a *App) { press(a, "shift+tab"); press(a, strings.Split(strings.Repeat("j", 16), "")...) }},
		{"grid_deleted", func(a *App) {}},
		{"grid_reworded", func(a *App) { press(a, "]") }},
		{"grid_added", func(a *App) { press(a, "]", "]") }},
		{"cell_reworded", func(a *App) { press(a, "]", "right", "enter") }},
		{"sample_added", func(a *App) {
			press(a, "]", "]", "right", "enter")
			for _, m := range runCmd(press(a, "enter")) {
				a.Update(m)
			}
		}},
		{"prompt", func(a *App) { press(a, "shift+tab", "shift+tab", "n", "n", "n", "n") }},
		{"report_sweep", func(a *App) { openReport(a) }},
		{"report_lines", func(a *App) { openReport(a); press(a, strings.Split(strings.Repeat("j", 17), "")...) }},
		{"report_reworded", func(a *App) { openReport(a); press(a, "n", "n") }},
		{"report_added", func(a *App) { openReport(a); press(a, "n", "n", "n") }},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				a := variantApp(t)
				a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				sc.keys(a)
				golden.RequireEqual(t, plain(a))
			})
		}
	}
}

// TestGolden_VariantsReview is the review queue of the rewording,
// filtered to its answers: the filter names the variant; its answers stay
// unmarked until V.
func TestGolden_VariantsReview(t *testing.T) {
	t.Parallel()
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			w := newLabelWorld(t, newVariantFixture(t, 2), 0, 5, ScreenReview)
			w.a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			w.press("]", "D", "D")
			s := plain(w.a)
			if !strings.Contains(s, `~L23 reworded: "Never`) {
				t.Errorf("the review filter does not name the rewording:\n%s", s)
			}
			golden.RequireEqual(t, s)
		})
	}
}

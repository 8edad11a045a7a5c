package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
)

// TestGolden_Nav pins the "/" filters and search, and drawing a label set
// from the label screen, at 80x24 and 200x50. Regenerate with
// go test ./tui -run TestGolden_Nav -update and review the diff.
func TestGolden_Nav(t *testing.T) {
	t.Parallel()
	typed := func(a *App, s string) {
		for _, r := range s {
			press(a, string(r))
		}
	}
	scenes := []struct {
		name  string
		build func(t testing.TB) *App
	}{
		{"grid_filter_typing", func(t testing.TB) *App {
			_, a := complete(t, 30)
			press(a, "/")
			typed(a, "gan")
			return a
		}},
		{"grid_filter", func(t testing.TB) *App {
			_, a := complete(t, 30)
			press(a, "/")
			typed(a, "gantt")
			press(a, "enter", "down")
			return a
		}},
		{"cell_filter", func(t testing.TB) *App {
			_, a := complete(t, 30)
			press(a, "right", "enter", "/")
			typed(a, "fail")
			press(a, "enter", "down")
			return a
		}},
		{"plan_filter", func(t testing.TB) *App {
			a := newFixture(t, 30).app(t, &clock{t: t0}, noStart)
			press(a, "/")
			typed(a, "unreleased")
			press(a, "enter")
			return a
		}},
		{"report_search", func(t testing.TB) *App {
			_, a := reportWorld(t, 10)
			openReport(a)
			press(a, "/")
			typed(a, "recall")
			press(a, "enter", "n")
			return a
		}},
		{"label_noset", func(t testing.TB) *App {
			_, a := newNoSetWorld(t)
			return a
		}},
		{"label_draw_size", func(t testing.TB) *App {
			_, a := newNoSetWorld(t)
			press(a, "d")
			return a
		}},
		{"label_drawn", func(t testing.TB) *App {
			_, a := newNoSetWorld(t)
			press(a, "d", "backspace", "backspace", "2", "0")
			settle(a, press(a, "enter"))
			return a
		}},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				a := sc.build(t)
				a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				golden.RequireEqual(t, plain(a))
			})
		}
	}
}

package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
)

// TestGolden_Labelling pins the label screen (blind, revealed, closed), its
// results and the review screen, at two sizes. Regenerate with
// go test ./tui -run TestGolden_Labelling -update and review the diff.
func TestGolden_Labelling(t *testing.T) {
	t.Parallel()
	scenes := []struct {
		name  string
		build func(t testing.TB) *App
	}{
		{"label_blind", func(t testing.TB) *App {
			return newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel).a
		}},
		{"label_revealed", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel)
			w.press("v", "i", "g", "o", "o", "d", "enter", "o", "left", "w")
			return w.a
		}},
		{"label_hidden", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel)
			w.press("v", "o") // the second label reveals the first; its own waits
			return w.a
		}},
		{"label_closed", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel)
			w.press("v", "w", "u") // labelled, its graders shown, then taken back: closed
			return w.a
		}},
		{"label_results", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 23, 12, ScreenLabel)
			for i := range 12 {
				if i%3 == 0 {
					w.press("o")
				} else {
					w.press("v")
				}
			}
			return w.a // the end of the set lands on the results
		}},
		{"review", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenReview)
			w.press("v")
			return w.a
		}},
		{"review_agreement", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenReview)
			w.press("v", "o", "v", "a")
			return w.a
		}},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {160, 48}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				a := sc.build(t)
				a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				golden.RequireEqual(t, plain(a))
			})
		}
	}
}

package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
)

// TestGolden_Review pins the review screen with the judges' answers
// stored and a group of identical answers: the queue, the raw judge
// answers, the judges' answers opened in full, the search, the variant
// shown and the help, at 80x24 and 200x50. Regenerate with
// go test ./tui -run TestGolden_Review -update and review the diff.
func TestGolden_Review(t *testing.T) {
	t.Parallel()
	world := func(t testing.TB) *labelWorld {
		var keys []string
		w := newLabelWorldEdit(t, newFixture(t, 6), 0, 12, ScreenReview, func(f *fixture) {
			keys = sameText(t, f)
			storeJudgeAnswers(f, "")
		})
		goTo(t, w, keys[0])
		return w
	}
	scenes := []struct {
		name string
		keys []string
	}{
		{"group", nil},
		{"raw", []string{"r", "G"}},
		{"full", []string{"enter"}},
		{"search", []string{"/", "s", "a", "m", "e", "enter"}},
		{"variant_shown", []string{"V"}},
		{"help", []string{"?"}},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				w := world(t)
				w.a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				w.press(sc.keys...)
				golden.RequireEqual(t, plain(w.a))
			})
		}
	}
}

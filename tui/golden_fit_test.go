package tui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
)

// TestGolden_Fit pins screens whose text is taller or wider than a small
// terminal: the help, scrolled and wrapped into columns that fit; the
// grid's end with the whole verdict; the review's reason for an empty
// queue, wrapped. At 80x24 and 200x50; regenerate with
// go test ./tui -run TestGolden_Fit -update and review the diff.
func TestGolden_Fit(t *testing.T) {
	t.Parallel()
	sized := func(a *App, w, h int) *App {
		a.Update(tea.WindowSizeMsg{Width: w, Height: h})
		return a
	}
	scenes := []struct {
		name  string
		build func(t testing.TB, w, h int) *App
	}{
		{"grid_help", func(t testing.TB, w, h int) *App {
			_, a := complete(t, 30)
			press(sized(a, w, h), "?")
			return a
		}},
		{"grid_help_end", func(t testing.TB, w, h int) *App {
			_, a := complete(t, 30)
			press(sized(a, w, h), "?", "G")
			return a
		}},
		{"label_help", func(t testing.TB, w, h int) *App {
			a := newLabelWorld(t, newFixture(t, 2), 0, 10, ScreenLabel).a
			press(sized(a, w, h), "?")
			return a
		}},
		{"label_help_end", func(t testing.TB, w, h int) *App {
			a := newLabelWorld(t, newFixture(t, 2), 0, 10, ScreenLabel).a
			press(sized(a, w, h), "?", "G")
			return a
		}},
		{"grid_end_inconclusive", func(t testing.TB, w, h int) *App {
			_, a := complete(t, 30)
			press(sized(a, w, h), "]", "G") // line 15, INCONCLUSIVE with a long reason
			return a
		}},
		{"review_one_grader", func(t testing.TB, w, h int) *App {
			f := newFixture(t, 1)
			f.audit.Judges = nil
			a := f.app(t, &clock{t: t0}, nil, func(o *Options) { o.Labelling.Open = ScreenReview })
			return sized(a, w, h)
		}},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				golden.RequireEqual(t, plain(sc.build(t, sz[0], sz[1])))
			})
		}
	}
}

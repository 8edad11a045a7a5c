package tui

import (
	"bytes"
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"
)

// TestGolden_LabelReviewColour pins the screens issue 30 changed (the
// label screen with a label's graders hidden and shown, the results the
// end of a set lands on, the review queue with its tally, the agreement
// panel) at 80x24 and 200x60, in colour and as NO_COLOR draws them (the
// ASCII profile: bold and reverse kept, no colour). Regenerate with
// go test ./tui -run TestGolden_LabelReviewColour -update and review the
// diff.
func TestGolden_LabelReviewColour(t *testing.T) {
	t.Parallel()
	scenes := []struct {
		name  string
		build func(t testing.TB) *App
	}{
		{"label_hidden", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenLabel)
			w.press("v", "o")
			return w.a
		}},
		{"label_end", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 23, 12, ScreenLabel)
			for i := range 12 {
				if i%3 == 0 {
					w.press("o")
				} else {
					w.press("v")
				}
			}
			return w.a
		}},
		{"review_tally", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenReview)
			w.press("v", "o")
			return w.a
		}},
		{"review_agreement", func(t testing.TB) *App {
			w := newLabelWorld(t, newFixture(t, 2), 0, 12, ScreenReview)
			w.press("v", "o", "a")
			return w.a
		}},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {200, 60}} {
			for _, colour := range []bool{true, false} {
				name := fmt.Sprintf("%s_%dx%d_colour", sc.name, sz[0], sz[1])
				if !colour {
					name = fmt.Sprintf("%s_%dx%d_nocolor", sc.name, sz[0], sz[1])
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					a := sc.build(t)
					a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
					out := a.View().Content
					if !colour {
						var buf bytes.Buffer
						w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.ASCII}
						if _, err := w.WriteString(out); err != nil {
							t.Fatal(err)
						}
						out = buf.String()
					}
					golden.RequireEqual(t, out)
				})
			}
		}
	}
}

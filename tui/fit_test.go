package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestHelp_ScrollsWhenTaller: at 80x24 the grid's help is taller than the
// window: it says more follows, and G, the wheel and g reach its end and
// come back; esc closes it.
func TestHelp_ScrollsWhenTaller(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	press(a, "?")
	const last = "never a pass or a"
	s := plain(a)
	contains(t, s, helpMore)
	if strings.Contains(s, last) {
		t.Fatalf("the whole help fits at 80x24; the test needs it taller:\n%s", s)
	}
	press(a, "G")
	s = plain(a)
	contains(t, s, last+"\n  failure, and retried on the next run.")
	contains(t, s, "? or esc closes this help")
	if strings.Contains(s, helpMore) {
		t.Errorf("at the end the help still says more follows:\n%s", s)
	}
	press(a, "g")
	contains(t, plain(a), "Keys")
	for range 10 {
		wheel(a, true)
	}
	contains(t, plain(a), last)
	press(a, "esc")
	if a.showHelp {
		t.Fatal("esc left the help open")
	}
	press(a, "?")
	contains(t, plain(a), "Keys") // opened again, at its top
}

// TestHelp_ColumnsWrap: key columns that do not fit side by side start a
// new row instead of being cut off with "…", at every width.
func TestHelp_ColumnsWrap(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 10, ScreenLabel)
	a := w.a
	press(a, "?")
	for _, width := range []int{40, 60, 80, 120} {
		a.resize(width, 60)
		a.helpScroll = scroller{}
		var all []string
		for _, l := range a.helpLines() {
			l = strings.TrimRight(ansi.Strip(l), " ")
			if n := ansi.StringWidth(l); n > width {
				t.Errorf("width %d: a help line of %d cells: %q", width, n, l)
			}
			all = append(all, l)
		}
		s := strings.Join(all, "\n")
		for _, want := range []string{"v/1 violation", "scroll down", "G/end  bottom", "g/home top", "shift+tab previous screen", "ctrl+c    quit"} {
			if !strings.Contains(s, want) {
				t.Errorf("width %d: the help lacks %q:\n%s", width, want, s)
			}
		}
		if strings.Contains(s, "…") {
			t.Errorf("width %d: the help is cut off:\n%s", width, s)
		}
	}
}

// TestPrompt_LegendWraps: the verdict legend above the prompt wraps at 80
// columns, an entry never split, instead of ending "? INCONCLUSIVE n…".
func TestPrompt_LegendWraps(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	press(a, "shift+tab", "shift+tab")
	if a.screen != screenPrompt {
		t.Fatalf("screen %v, want the prompt", a.screen)
	}
	s := plain(a)
	for _, want := range []string{"✓ DELETE can go (the hoped-for outcome)", "? INCONCLUSIVE not settled", "◆ CANARY needs a live canary"} {
		contains(t, s, want)
	}
	press(a, "n")
	contains(t, plain(a), "12 ◆ CANARY") // the jump lands below the taller head
}

// TestCell_CountsSayItOnce: the samples' heading counts in the singular
// for one, and says "of N samples" only while fewer are graded, as the
// grid's cells do.
func TestCell_CountsSayItOnce(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	press(a, "enter") // road-01, baseline: 1 of 30 fails
	contains(t, plain(a), "1 violation in 30 graded samples")
	m := midRun(t)
	press(m, "enter") // the run shows the grid
	contains(t, plain(m), "0 violations in 6 graded of 30 samples")
}

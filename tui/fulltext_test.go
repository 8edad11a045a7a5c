package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/model"
)

// TestSample_ErrorInFull: a failed call's error is shown whole in the
// sample view (enter on the cell's error row), wrapped, sanitized, and
// scrolls like the answer; the cell list keeps one line per sample.
func TestSample_ErrorInFull(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.store(t, 0, len(f.plan.Calls))
	i := f.callOf(t, 0, 0, true, 0) // road-01 without line 23, sample 1
	long := "upstream said: " + strings.Repeat("the request was rejected because a field was too long; ", 8) + hostile + " END-OF-ERROR"
	f.src.put(model.Response{Key: f.plan.Calls[i].Key, Error: long, ErrorKind: model.ErrTransport, Attempts: 6}, nil)
	a := f.app(t, &clock{t: t0}, nil)
	press(a, "right", "enter") // road-01's cell without the line
	if st, _, _ := a.c.sampleOf(a.cell.cells[0]); st != sampleError {
		t.Fatalf("the first sample is %v, want an error", st)
	}
	contains(t, plain(a), "failed for good; enter shows why")
	settle(a, press(a, "enter"))
	if a.screen != screenSample {
		t.Fatalf("enter opened screen %v", a.screen)
	}
	content := a.sample.vp.GetContent()
	if bad := escapes(content); len(bad) > 0 {
		t.Fatalf("the error reached the screen unsanitized: %v", bad)
	}
	s := ansi.Strip(content)
	contains(t, s, "the call failed for good (transport):")
	contains(t, s, "END-OF-ERROR")
	if strings.Count(strings.Join(strings.Fields(s), " "), "too long;") != 8 {
		t.Fatalf("the error is cut:\n%s", s)
	}
	for _, l := range strings.Split(s, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Fatalf("a line is %d wide: %q", ansi.StringWidth(l), l)
		}
	}
	press(a, "G")
	contains(t, plain(a), "END-OF-ERROR")
	press(a, "esc")
	if a.screen != screenCell {
		t.Fatalf("esc went to %v", a.screen)
	}
}

// TestFullText_WrapsAndScrolls: a text opened in full is wrapped to the
// width with its line breaks kept, sanitized, and scrolls within its
// window, saying where it is.
func TestFullText_WrapsAndScrolls(t *testing.T) {
	t.Parallel()
	a := newFixture(t, 1).app(t, &clock{t: t0}, nil)
	c := a.c
	var f fullText
	text := strings.Repeat("word ", 60) + "\n\nlast " + hostile
	f.open("Title\x1b]0;x\x07", []fullPara{{head: true, text: "HEAD"}, {text: text}})
	v := f.view(c, 6)
	if bad := escapes(v); len(bad) > 0 {
		t.Fatalf("unsanitized: %v", bad)
	}
	lines := strings.Split(ansi.Strip(v), "\n")
	if len(lines) != 6 || !strings.Contains(lines[0], "lines 1–5 of") || lines[1] != "HEAD" {
		t.Fatalf("view:\n%s", ansi.Strip(v))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > c.width {
			t.Fatalf("line %q is wider than %d", l, c.width)
		}
	}
	f.scroll(keyMsg("G"), c.keys.Label.Scroll, 5)
	v = ansi.Strip(f.view(c, 6))
	if !strings.Contains(v, "last before") || strings.Contains(v, "HEAD") {
		t.Fatalf("the bottom does not show the end:\n%s", v)
	}
	f.scroll(keyMsg("k"), c.keys.Label.Scroll, 5)
	if f.top != maxTop(len(f.lines), 5)-1 {
		t.Fatalf("k scrolled to %d", f.top)
	}
}

package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
)

// fullText is a long text opened over a screen in full: what a list or a
// column cuts to a line (a judge's answer, a failed call's error). It is
// wrapped to the width, scrolls with the scroll keys, and esc closes it
// (the screen's back). The text is sanitized when opened.
type fullText struct {
	on    bool
	title string
	paras []fullPara
	lines []string
	width int // the width lines were wrapped for; -1: wrap again
	scroller
}

// fullPara is a heading (drawn as a header) or a body of text.
type fullPara struct {
	head bool
	text string
}

// open shows paras from the top.
func (f *fullText) open(title string, paras []fullPara) {
	f.on, f.title, f.paras, f.width, f.top = true, oneLine(title), paras, -1, 0
}

// reopen shows paras, keeping the place when the same text was open.
func (f *fullText) reopen(title string, paras []fullPara) {
	top := f.top
	f.open(title, paras)
	f.top = top
}

func (f *fullText) close() { f.on = false }

// scroll handles a scrolling key; h is the height view draws in (it
// counts the title).
func (f *fullText) scroll(km tea.KeyPressMsg, k ScrollKeys, h int) {
	f.scroller.scroll(km, k, len(f.lines), textLines(h))
}

// wheel scrolls by d lines; h counts the title, as in view.
func (f *fullText) wheel(d, h int) { f.by(d, len(f.lines), textLines(h)) }

// textLines is the window of text below the title in h lines.
func textLines(h int) int { return max(h-1, 1) }

// view draws the title and the window of h lines below it (h counts the
// title).
func (f *fullText) view(c *Common, h int) string {
	st := c.styles
	if f.width != c.width {
		f.width = c.width
		f.lines = nil
		w := max(c.width-2, 10)
		for _, p := range f.paras {
			if p.head {
				f.lines = append(f.lines, st.Header.Render(clip(oneLine(p.text), c.width)))
				continue
			}
			for _, l := range wrapText(p.text, w) {
				f.lines = append(f.lines, "  "+l)
			}
		}
	}
	body := textLines(h)
	win := f.window(f.lines, body)
	where := ""
	if len(f.lines) > body {
		where = st.Muted.Render(fmt.Sprintf(" · lines %d–%d of %d", f.top+1, f.top+len(win), len(f.lines)))
	}
	head := clip(st.Title.Render(f.title)+where+st.Muted.Render(" · esc closes"), c.width)
	return strings.Join(append([]string{head}, win...), "\n")
}

// wrapText wraps a sanitized text to w, keeping its line breaks and blank
// lines.
func wrapText(s string, w int) []string {
	var out []string
	for p := range strings.SplitSeq(model.Sanitize(s), "\n") {
		p = strings.TrimRight(strings.ReplaceAll(p, "\t", "    "), " ")
		if p == "" {
			out = append(out, "")
			continue
		}
		out = append(out, wrapWords(p, w)...)
	}
	return out
}

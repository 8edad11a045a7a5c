package tui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
)

// scroller is the first line shown of content taller than its window: the
// one piece of scrolling the report, the panels, the label results, the
// sample lists and the grid share. It knows nothing of the content: each
// call passes the number of lines n and the window's height h.
type scroller struct{ top int }

// maxTop is the last useful first line for n lines in a window of h.
func maxTop(n, h int) int { return max(n-h, 0) }

// clamp keeps the window inside the content.
func (s *scroller) clamp(n, h int) { s.top = min(max(s.top, 0), maxTop(n, h)) }

// by scrolls d lines (negative: up).
func (s *scroller) by(d, n, h int) {
	s.top += d
	s.clamp(n, h)
}

// scroll handles a scrolling key; it reports whether km was one.
func (s *scroller) scroll(km tea.KeyPressMsg, k ScrollKeys, n, h int) bool {
	switch {
	case key.Matches(km, k.Up):
		s.top--
	case key.Matches(km, k.Down):
		s.top++
	case key.Matches(km, k.PageUp):
		s.top -= h
	case key.Matches(km, k.PageDown):
		s.top += h
	case key.Matches(km, k.Top):
		s.top = 0
	case key.Matches(km, k.Bottom):
		s.top = maxTop(n, h)
	default:
		return false
	}
	s.clamp(n, h)
	return true
}

// follow scrolls the least that brings line into a window of h.
func (s *scroller) follow(line, h int) {
	if line < s.top {
		s.top = line
	}
	if line >= s.top+h {
		s.top = line - h + 1
	}
}

// window returns the lines shown in a window of h.
func (s *scroller) window(lines []string, h int) []string {
	s.clamp(len(lines), h)
	return lines[s.top:min(s.top+h, len(lines))]
}

// jump scrolls to the next (d > 0) or previous of marks, the first lines
// of sections in order; before the first section the previous is the top.
func (s *scroller) jump(marks []int, d int) {
	if d > 0 {
		for _, m := range marks {
			if m > s.top {
				s.top = m
				return
			}
		}
		return
	}
	for i := len(marks) - 1; i >= 0; i-- {
		if marks[i] < s.top {
			s.top = marks[i]
			return
		}
	}
	s.top = 0
}

// moveCursor moves a cursor over n items by a scrolling key, a page being
// h items; ok is false when km is no such key.
func moveCursor(km tea.KeyPressMsg, k ScrollKeys, cursor, n, h int) (next int, ok bool) {
	switch {
	case key.Matches(km, k.Up):
		cursor--
	case key.Matches(km, k.Down):
		cursor++
	case key.Matches(km, k.PageUp):
		cursor -= h
	case key.Matches(km, k.PageDown):
		cursor += h
	case key.Matches(km, k.Top):
		cursor = 0
	case key.Matches(km, k.Bottom):
		cursor = n - 1
	default:
		return cursor, false
	}
	return min(max(cursor, 0), max(n-1, 0)), true
}

// continuesBelow marks a text taller than its window, scrolled above its
// end.
const continuesBelow = "  ▼ continues below (↓ or pgdn scrolls)"

// fitWindow gives vp the h lines it is drawn in, less the line that says
// more follows when its content is taller than h (see markedView).
func fitWindow(vp *viewport.Model, h int) {
	h = max(h, 1)
	if h > 2 && vp.TotalLineCount() > h {
		h--
	}
	vp.SetHeight(h)
}

// markedView draws vp in h lines: its window, and under it, when its
// content is taller than h, a line that says in words whether more follows
// (so it reads without colour).
func markedView(vp *viewport.Model, h int) []string {
	fitWindow(vp, h)
	out := []string{vp.View()}
	if vp.Height() < max(h, 1) {
		mark := ""
		if !vp.AtBottom() {
			mark = continuesBelow
		}
		out = append(out, mark)
	}
	return out
}

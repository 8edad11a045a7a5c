package tui

import (
	"strings"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/model"
)

// wrapOffsets word-wraps plain text (no escape sequences) to width w and
// returns each line as a byte range [start, end) of s. Lines break at
// newlines and spaces; a word longer than w is cut. The space a line breaks
// at belongs to no line.
func wrapOffsets(s string, w int) [][2]int {
	w = max(w, 1)
	var out [][2]int
	for ps := 0; ps <= len(s); {
		pe := strings.IndexByte(s[ps:], '\n')
		if pe < 0 {
			pe = len(s)
		} else {
			pe += ps
		}
		out = wrapParagraph(out, s, ps, pe, w)
		ps = pe + 1
	}
	return out
}

func wrapParagraph(out [][2]int, s string, ps, pe, w int) [][2]int {
	start, width := ps, 0
	brk, brkWidth := -1, 0 // the last space on the line, and the width before it
	for i := ps; i < pe; {
		r, size := utf8.DecodeRuneInString(s[i:])
		rw := runeWidth(r)
		if width+rw > w && i > start {
			switch {
			case r == ' ':
				out = append(out, [2]int{start, i})
				start, width, brk = i+1, 0, -1
				i += size
				continue
			case brk > start:
				out = append(out, [2]int{start, brk})
				width -= brkWidth + 1
				start, brk = brk+1, -1
			default:
				out = append(out, [2]int{start, i})
				start, width, brk = i, 0, -1
			}
		}
		if r == ' ' {
			brk, brkWidth = i, width
		}
		width += rw
		i += size
	}
	return append(out, [2]int{start, pe})
}

func runeWidth(r rune) int {
	if r < 0x7f {
		return 1
	}
	return ansi.StringWidth(string(r))
}

// wrapWords wraps plain text to width w.
func wrapWords(s string, w int) []string {
	offs := wrapOffsets(s, w)
	out := make([]string, len(offs))
	for i, o := range offs {
		out[i] = s[o[0]:o[1]]
	}
	return out
}

// highlighted is untrusted text made safe to draw, with the byte range of a
// span within the safe text.
type highlighted struct {
	text       string
	start, end int // the span in text; start == end when there is none
}

// sanitizeSpan sanitizes text and carries a span of byte offsets into the
// original text over to the sanitized one (model.SanitizeSpan). A span
// inside a removed escape sequence becomes empty; a span outside the text,
// or not on character boundaries, is clamped to them. Tabs become spaces
// (one byte each way).
func sanitizeSpan(text string, sp model.Span) highlighted {
	start, end := clampSpan(text, sp)
	out, s, e := model.SanitizeSpan(text, start, end)
	return highlighted{text: strings.ReplaceAll(out, "\t", " "), start: s, end: e}
}

// escapeSpan is sanitizeSpan showing what Sanitize removes escaped
// (model.Escape) instead: the escape of a prefix is a prefix of the
// escape, so the span's ends map to the lengths of the escaped prefixes.
func escapeSpan(text string, sp model.Span) highlighted {
	h := highlighted{text: strings.ReplaceAll(model.Escape(text), "\t", " ")}
	if start, end := clampSpan(text, sp); start < end {
		h.start, h.end = len(model.Escape(text[:start])), len(model.Escape(text[:end]))
	}
	return h
}

func clampSpan(text string, sp model.Span) (int, int) {
	if sp.Empty() || sp.Start >= len(text) || sp.Start < 0 {
		return 0, 0
	}
	start, end := sp.Start, min(sp.End, len(text))
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	return start, end
}

// render wraps the text to width w, styling the span with hl on every line
// it touches, and indents each line by indent.
func (h highlighted) render(w int, indent string, hl lipgloss.Style) []string {
	offs := wrapOffsets(h.text, w)
	out := make([]string, len(offs))
	for i, o := range offs {
		ls, le := o[0], o[1]
		line := h.text[ls:le]
		if h.end > h.start && h.start < le && h.end > ls {
			a, b := max(h.start, ls)-ls, min(h.end, le)-ls
			line = line[:a] + hl.Render(line[a:b]) + line[b:]
		}
		out[i] = indent + line
	}
	return out
}

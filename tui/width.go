package tui

import (
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// textWidth is ansi.StringWidth with a fast path. Grapheme segmentation is
// most of the cost of drawing a frame, and almost everything drawn is ASCII,
// SGR sequences and a few symbols whose width is known. On any other rune
// (wide, combining, emoji) it defers to ansi.StringWidth.
func textWidth(s string) int {
	w := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			// A CSI sequence: parameters up to the final byte.
			i += 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
			i++
			continue
		case c >= 0x20 && c < 0x7f:
			w++
			i++
			continue
		case c < 0x80:
			return ansi.StringWidth(s)
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !narrow(r) {
			return ansi.StringWidth(s)
		}
		w++
		i += size
	}
	return w
}

// narrow reports whether r is one cell wide on its own and never joins a
// grapheme cluster: Latin-1 and Latin Extended letters, general
// punctuation, arrows, mathematical operators, box drawing, blocks and
// geometric shapes, check marks.
func narrow(r rune) bool {
	switch {
	case r >= 0xa1 && r <= 0x2ff && r != 0xad:
		return true
	case r >= 0x2010 && r <= 0x2027, r >= 0x2030 && r <= 0x205e:
		return true
	case r >= 0x2190 && r <= 0x21ff, r >= 0x2200 && r <= 0x22ff:
		return true
	case r >= 0x2500 && r <= 0x25ff && r != 0x25fd && r != 0x25fe: // those two are emoji, wide
		return true
	case r == 0x2713 || r == 0x2717:
		return true
	}
	return false
}

// truncateText cuts plain text (no escape sequences) to at most w cells,
// ending with "…" when it cut.
func truncateText(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n, cut := 0, 0 // cells so far; the byte where the first w-1 cells end
	for i := 0; i < len(s); {
		c, size := s[i], 1
		switch {
		case c >= 0x80:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if !narrow(r) {
				return ansi.Truncate(s, w, "…")
			}
		case c < 0x20 || c == 0x7f:
			return ansi.Truncate(s, w, "…")
		}
		if n == w-1 {
			cut = i
		}
		n++
		i += size
		if n > w {
			return s[:cut] + "…"
		}
	}
	return s
}

// padRight pads text of width sw to w cells.
func padRight(s string, sw, w int) string {
	if sw >= w {
		return s
	}
	return s + strings.Repeat(" ", w-sw)
}

// firstFit returns the first of forms (longest first) at most w cells wide,
// or the last.
func firstFit(w int, forms ...string) string {
	for _, f := range forms {
		if textWidth(f) <= w {
			return f
		}
	}
	return forms[len(forms)-1]
}

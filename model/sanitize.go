package model

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize returns s with terminal control sequences removed, so untrusted
// model output can be shown on a terminal, in a report or in a CSV cell
// without moving the cursor, retitling the window, clearing the screen or
// hiding text. It removes ANSI escape sequences (CSI, OSC, DCS, SOS, PM, APC
// and two-byte ESC sequences, in their 7-bit and 8-bit C1 forms), every other
// C0 and C1 control character except newline and tab, and invalid UTF-8.
// Carriage returns are dropped too: "\r" can overwrite a line on a terminal.
//
// Where a control string (an OSC hyperlink's end, a title, a clipboard
// payload) or a lone control character stood between two words, one space
// takes its place, so "click here\x1b]8;;\x1b\\Could" reads "click here
// Could", not "click hereCould". Styling (CSI, as in SGR colours) never adds
// one: it sits inside words. The result of a prefix of s is a prefix of the
// result of s (a space is added only with the word after it).
func Sanitize(s string) string {
	if isPlain(s) {
		return s
	}
	out, _, _ := sanitize(s, 0, 0)
	return out
}

// SanitizeSpan is Sanitize that also carries the byte range [start, end)
// of s over to the result: out[outStart:outEnd] is what remains of
// s[start:end], without a space added before or after it. A range that
// keeps nothing (inside a removed sequence, past the end, empty) gives
// outStart == outEnd == 0.
func SanitizeSpan(s string, start, end int) (out string, outStart, outEnd int) {
	if isPlain(s) {
		start, end = max(start, 0), min(end, len(s))
		if start >= end {
			return s, 0, 0
		}
		return s, start, end
	}
	return sanitize(s, start, end)
}

// Controls counts what Sanitize removes from s: each escape sequence and
// control string once, and each other control character (a carriage
// return before a line feed aside: it only ends a line). Invalid UTF-8 is
// not counted. Zero means Sanitize shows s as it is, up to invalid bytes.
func Controls(s string) int {
	if isPlain(s) {
		return 0
	}
	n := 0
	scan(s, func(p piece) {
		if p.kind != kept && p.kind != invalid && !(p.kind == gap && s[p.i] == '\r' && p.end < len(s) && s[p.end] == '\n') {
			n++
		}
	})
	return n
}

// Escape returns s with every control character written out as an escape
// (ESC as \x1b, a C1 control as \u009b, an invalid byte as \xff) and
// everything else as it is, newlines and tabs included: what Sanitize
// removes, made visible and safe to draw. "\x1b]8;;http://x\x1b\\" shows
// as `\x1b]8;;http://x\x1b\`. The escape of a prefix of s is a prefix of
// the escape of s.
func Escape(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r < 0xa0, isBidi(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isPlain reports whether s needs no sanitizing: the common case, kept fast.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		// Non-ASCII bytes take the full scan, which checks UTF-8 validity
		// and C1 controls.
		if (c < 0x20 && c != '\n' && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// isBidi reports whether r is a bidirectional formatting control: the
// embeddings and overrides (U+202A-U+202E), the isolates (U+2066-U+2069),
// the marks (U+200E, U+200F, U+061C). They reorder what is drawn after
// them ("Trojan Source"): an answer could read one way while its bytes say
// another as someone labels it, so Sanitize removes them like escapes.
func isBidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// pieceKind is what the scan makes of a piece of text.
type pieceKind int

const (
	kept    pieceKind = iota // a character shown as it is
	gap                      // removed where it may part two words: a control string or a lone control character
	styling                  // removed in place: CSI and two-byte ESC sequences, DEL
	invalid                  // an invalid UTF-8 byte, removed
)

// piece is s[i:end] and what it is.
type piece struct {
	kind   pieceKind
	i, end int
}

// scan cuts s into pieces, left to right.
func scan(s string, fn func(piece)) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		p := piece{kind: gap, i: i}
		switch {
		case r == utf8.RuneError && size <= 1:
			p.kind, p.end = invalid, i+1
		case r == 0x1b: // ESC
			p.end = skipEscape(s, i+1)
			if i+1 >= len(s) || !isStringIntro(s[i+1]) {
				p.kind = styling
			}
		case r == 0x9b: // C1 CSI
			p.kind, p.end = styling, skipCSI(s, i+size)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // C1 OSC, DCS, SOS, PM, APC
			p.end = skipString(s, i+size)
		case r == '\n' || r == '\t':
			p.kind, p.end = kept, i+size
		case r == 0x7f || isBidi(r):
			p.kind, p.end = styling, i+size
		case r < 0x20 || (r >= 0x80 && r < 0xa0):
			p.end = i + size // other C0/C1 controls
		default:
			p.kind, p.end = kept, i+size
		}
		fn(p)
		i = p.end
	}
}

// sanitize is Sanitize carrying [start, end) over (see SanitizeSpan).
func sanitize(s string, start, end int) (string, int, int) {
	var b strings.Builder
	b.Grow(len(s))
	outStart, outEnd := -1, 0
	parted := false // a gap since the last character kept
	var last rune   // the last character kept
	scan(s, func(p piece) {
		switch p.kind {
		case gap:
			parted = true
			return
		case styling, invalid:
			return
		}
		r, _ := utf8.DecodeRuneInString(s[p.i:])
		if parted && joins(last, r) {
			b.WriteByte(' ')
		}
		parted, last = false, r
		if outStart < 0 && p.i >= start {
			outStart = b.Len()
		}
		b.WriteString(s[p.i:p.end])
		if p.i < end {
			outEnd = b.Len()
		}
	})
	if outStart < 0 || outEnd <= outStart {
		outStart, outEnd = 0, 0
	}
	return b.String(), outStart, outEnd
}

// joins reports whether removing what stood between prev and next would
// glue two words: a word (or the punctuation ending one) before, a word
// after.
func joins(prev, next rune) bool {
	if !unicode.IsLetter(next) && !unicode.IsDigit(next) {
		return false
	}
	return unicode.IsLetter(prev) || unicode.IsDigit(prev) || strings.ContainsRune(".,;:!?)]}%", prev)
}

// isStringIntro reports whether c after ESC opens a control string (OSC,
// DCS, SOS, PM, APC).
func isStringIntro(c byte) bool {
	switch c {
	case ']', 'P', 'X', '^', '_':
		return true
	}
	return false
}

// skipEscape skips the sequence that follows an ESC at s[i-1].
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch {
	case s[i] == '[':
		return skipCSI(s, i+1)
	case isStringIntro(s[i]):
		return skipString(s, i+1)
	}
	// Two-byte sequences (ESC c, ESC 7 ...) and intermediates (ESC ( B).
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) {
		i++
	}
	return i
}

// skipCSI skips parameter and intermediate bytes up to and including the
// final byte of a control sequence.
func skipCSI(s string, i int) int {
	for i < len(s) {
		c := s[i]
		i++
		if c >= 0x40 && c <= 0x7e {
			break
		}
		if c < 0x20 || c > 0x7e {
			// Not part of a well-formed sequence: stop, dropping it.
			break
		}
	}
	return i
}

// skipString skips a control string up to its terminator: BEL, ESC \ or C1 ST.
func skipString(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == 0x07:
			return i + 1
		case s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\':
			return i + 2
		case s[i] == 0xc2 && i+1 < len(s) && s[i+1] == 0x9c: // ST as UTF-8 U+009C
			return i + 2
		}
		i++
	}
	return i
}

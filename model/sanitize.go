package model

import (
	"strings"
	"unicode/utf8"
)

// Sanitize returns s with terminal control sequences removed, so untrusted
// model output can be shown on a terminal, in a report or in a CSV cell
// without moving the cursor, retitling the window, clearing the screen or
// hiding text. It removes ANSI escape sequences (CSI, OSC, DCS, SOS, PM, APC
// and two-byte ESC sequences, in their 7-bit and 8-bit C1 forms), every other
// C0 and C1 control character except newline and tab, and invalid UTF-8.
// Carriage returns are dropped too: "\r" can overwrite a line on a terminal.
func Sanitize(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			i++ // invalid byte
		case r == 0x1b: // ESC
			i = skipEscape(s, i+1)
		case r == 0x9b: // C1 CSI
			i = skipCSI(s, i+size)
		case r == 0x9d || r == 0x90 || r == 0x98 || r == 0x9e || r == 0x9f: // C1 OSC, DCS, SOS, PM, APC
			i = skipString(s, i+size)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
			i += size
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			i += size // other C0/C1 controls, DEL
		default:
			b.WriteString(s[i : i+size])
			i += size
		}
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

// skipEscape skips the sequence that follows an ESC at s[i-1].
func skipEscape(s string, i int) int {
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		return skipCSI(s, i+1)
	case ']', 'P', 'X', '^', '_':
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

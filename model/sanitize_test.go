package model

import (
	"fmt"
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "hello\nworld\tok", "hello\nworld\tok"},
		{"unicode kept", "can’t — naïve 日本", "can’t — naïve 日本"},
		{"osc title bel", "a\x1b]0;title\x07b", "a b"},
		{"osc title st", "a\x1b]0;title\x1b\\b", "a b"},
		{"clear screen", "x\x1b[2Jy", "xy"},
		{"sgr colour", "\x1b[31mred\x1b[0m", "red"},
		{"cursor move", "\x1b[10;20Hz", "z"},
		{"c1 csi", "a\u009b2Jb", "ab"},
		{"c1 osc", "a\u009d0;t\u009cb", "a b"},
		{"bell and backspace", "a\x07\x08b", "a b"},
		{"carriage return", "safe\roverwritten", "safe overwritten"},
		{"crlf", "one\r\ntwo", "one\ntwo"},
		{"invalid utf8", "a\xffb", "ab"},
		{"dangling esc", "abc\x1b", "abc"},
		{"charset", "a\x1b(Bb", "ab"},
		{"hyperlink", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		// Removing a control string between two words leaves a space.
		{"hyperlink glued to the next word", "click here\x1b]8;;\x1b\\Could", "click here Could"},
		{"clipboard payload", "Copied:\x1b]52;c;cm0gLXJmIH4=\x07Done", "Copied: Done"},
		{"title between words", "Hello\x1b]0;pwned\x07world", "Hello world"},
		{"space already there", "here \x1b]8;;\x07Could", "here Could"},
		{"punctuation after", "here\x1b]8;;\x07.", "here."},
		{"opening bracket before", "(\x1b]8;;u\x07link)", "(link)"},
		{"styling inside a word", "\x1b[1mim\x1b[0mportant", "important"},
		{"several in a row", "a\x1b]0;t\x07\x1b]0;u\x07b", "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Sanitize(tt.in); got != tt.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestControls(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"plain\ttext\n", 0},
		{"naïve 日本", 0},
		{"crlf\r\nonly\r\n", 0},
		{"invalid \xff byte", 0},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", 2},
		{"\x1b[31mred\x1b[0m", 2},
		{"a\x07\x08b", 2},
		{"lone\rcr", 1},
		{"a\u009b2Jb\u009d0;t\u009c", 2},
	}
	for _, tt := range tests {
		if got := Controls(tt.in); got != tt.want {
			t.Errorf("Controls(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"plain\ttext\n", "plain\ttext\n"},
		{"click here\x1b]8;;\x1b\\Could", `click here\x1b]8;;\x1b\Could`},
		{"a\x07b\r\n", `a\x07b\x0d` + "\n"},
		{"c1\u009b2J", `c1\u009b2J`},
		{"bad\xffbyte é", `bad\xffbyte é`},
	}
	for _, tt := range tests {
		got := Escape(tt.in)
		if got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if Sanitize(got) != got {
			t.Errorf("Escape(%q) = %q still holds something Sanitize removes", tt.in, got)
		}
	}
}

func TestSanitizeSpan(t *testing.T) {
	t.Parallel()
	text := "click here\x1b]8;;\x1b\\Could you"
	tests := []struct {
		name       string
		start, end int
		want       string
	}{
		{"the word after a removed link", strings.Index(text, "Could"), strings.Index(text, "Could") + 5, "Could"},
		{"the word before it", 6, 10, "here"},
		{"across it", 6, strings.Index(text, "Could") + 5, "here Could"},
		{"inside it", 11, 14, ""},
		{"past the end", len(text) + 1, len(text) + 4, ""},
		{"none", 0, 0, ""},
	}
	for _, tt := range tests {
		out, s, e := SanitizeSpan(text, tt.start, tt.end)
		if out != "click here Could you" {
			t.Fatalf("%s: text %q", tt.name, out)
		}
		if got := out[s:e]; got != tt.want {
			t.Errorf("%s: span %q, want %q", tt.name, got, tt.want)
		}
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"a\x1b]0;t\x07b", "\x1b[2J", "\u009b1m", "ok", "click here\x1b]8;;\x1b\\Could"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Sanitize(s)
		if strings.ContainsAny(out, "\x1b\x07\r\u009b\u009d") {
			t.Fatalf("control left in %q -> %q", s, out)
		}
		if Sanitize(out) != out {
			t.Fatalf("not idempotent: %q", s)
		}
		if Controls(out) != 0 {
			t.Fatalf("Controls(%q) = %d after Sanitize", out, Controls(out))
		}
		if esc := Escape(s); Sanitize(esc) != esc {
			t.Fatalf("Escape(%q) = %q is not safe to draw", s, esc)
		}
		for k := 0; k <= len(s); k++ {
			if p := Sanitize(s[:k]); !strings.HasPrefix(out, p) {
				t.Fatalf("Sanitize(%q[:%d]) = %q is not a prefix of %q", s, k, p, out)
			}
		}
	})
}

// TestSanitize_Bidi is issue 28's U+202E: a right-to-left override in an
// answer reorders what is drawn after it, so a labeller reads one answer
// while the bytes say another. Every bidi control is removed in place (no
// space: they sit inside words), counted, and shown escaped by Escape.
func TestSanitize_Bidi(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c} {
		in := "price: " + string(r) + "94$ ok"
		if got := Sanitize(in); got != "price: 94$ ok" {
			t.Errorf("Sanitize(%U) = %q", r, got)
		}
		if Controls(in) != 1 {
			t.Errorf("Controls(%U) = %d, want 1", r, Controls(in))
		}
		if got, want := Escape(in), fmt.Sprintf(`price: \u%04x94$ ok`, r); got != want {
			t.Errorf("Escape(%U) = %q, want %q", r, got, want)
		}
	}
	if got := Sanitize("שלום עולם"); got != "שלום עולם" {
		t.Errorf("right-to-left text itself changed: %q", got)
	}
}

package model

import (
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "hello\nworld\tok", "hello\nworld\tok"},
		{"unicode kept", "can’t — naïve 日本", "can’t — naïve 日本"},
		{"osc title bel", "a\x1b]0;title\x07b", "ab"},
		{"osc title st", "a\x1b]0;title\x1b\\b", "ab"},
		{"clear screen", "x\x1b[2Jy", "xy"},
		{"sgr colour", "\x1b[31mred\x1b[0m", "red"},
		{"cursor move", "\x1b[10;20Hz", "z"},
		{"c1 csi", "a\u009b2Jb", "ab"},
		{"c1 osc", "a\u009d0;t\u009cb", "ab"},
		{"bell and backspace", "a\x07\x08b", "ab"},
		{"carriage return", "safe\roverwritten", "safeoverwritten"},
		{"invalid utf8", "a\xffb", "ab"},
		{"dangling esc", "abc\x1b", "abc"},
		{"charset", "a\x1b(Bb", "ab"},
		{"hyperlink", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
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

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"a\x1b]0;t\x07b", "\x1b[2J", "\u009b1m", "ok"} {
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
	})
}

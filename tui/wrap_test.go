package tui

import (
	"reflect"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/model"
)

func TestWrapWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		w    int
		want []string
	}{
		{"", 10, []string{""}},
		{"hello world", 5, []string{"hello", "world"}},
		{"hello world", 11, []string{"hello world"}},
		{"a b c d", 3, []string{"a b", "c d"}},
		{"a\n\nb", 10, []string{"a", "", "b"}},
		{"abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"go abcdefgh", 4, []string{"go", "abcd", "efgh"}},
		{"日本語テキスト", 4, []string{"日本", "語テ", "キス", "ト"}},
		{"ends with space ", 9, []string{"ends with", "space "}},
	}
	for _, tt := range tests {
		if got := wrapWords(tt.in, tt.w); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
		for _, l := range wrapWords(tt.in, tt.w) {
			if ansi.StringWidth(l) > tt.w {
				t.Errorf("wrapWords(%q, %d): line %q is too wide", tt.in, tt.w, l)
			}
		}
	}
}

func TestSanitizeSpan(t *testing.T) {
	t.Parallel()
	text := "Hi \x1b[31mthere\x1b[0m, expect it in Q3 \x1b]0;pwned\x07ok"
	q3 := strings.Index(text, "Q3")
	tests := []struct {
		name     string
		span     model.Span
		wantText string
		wantSpan string
	}{
		{"span after escapes", model.Span{Start: q3, End: q3 + 2}, "Hi there, expect it in Q3 ok", "Q3"},
		{"no span", model.Span{}, "Hi there, expect it in Q3 ok", ""},
		{"span past the end", model.Span{Start: len(text) + 5, End: len(text) + 9}, "Hi there, expect it in Q3 ok", ""},
		{"end clamped", model.Span{Start: q3, End: len(text) + 100}, "Hi there, expect it in Q3 ok", "Q3 ok"},
		{"span inside an escape", model.Span{Start: 4, End: 7}, "Hi there, expect it in Q3 ok", ""},
	}
	for _, tt := range tests {
		h := sanitizeSpan(text, tt.span)
		if h.text != tt.wantText {
			t.Errorf("%s: text %q, want %q", tt.name, h.text, tt.wantText)
		}
		if got := h.text[h.start:h.end]; got != tt.wantSpan {
			t.Errorf("%s: span %q, want %q", tt.name, got, tt.wantSpan)
		}
	}
	// A span that starts inside a multi-byte character covers all of it.
	h := sanitizeSpan("prix: 5€ demain", model.Span{Start: 8, End: 9})
	if got := h.text[h.start:h.end]; got != "€" {
		t.Errorf("span inside a rune: %q", got)
	}
}

func TestHighlighted_RenderAcrossLines(t *testing.T) {
	t.Parallel()
	h := sanitizeSpan("we expect it by the end of the year, promise", model.Span{Start: 13, End: 26})
	hl := lipgloss.NewStyle().Reverse(true)
	lines := h.render(16, "  ", hl)
	var styled []string
	for _, l := range lines {
		if l != ansi.Strip(l) {
			styled = append(styled, strings.TrimSpace(ansi.Strip(l)))
		}
	}
	plainLines := make([]string, len(lines))
	for i, l := range lines {
		plainLines[i] = ansi.Strip(l)
	}
	if len(styled) != 2 {
		t.Fatalf("span styled on %d lines, want 2: %q", len(styled), plainLines)
	}
	if got := strings.Join(plainLines, "|"); got != "  we expect it by|  the end of the|  year, promise" {
		t.Fatalf("lines %q", got)
	}
}

func TestRateBucket(t *testing.T) {
	t.Parallel()
	tests := []struct{ fails, n, want int }{
		{0, 30, 0}, {1, 30, 1}, {7, 28, 1}, {8, 28, 2}, {15, 30, 2}, {16, 30, 3}, {22, 30, 3}, {23, 30, 4}, {30, 30, 4},
	}
	for _, tt := range tests {
		if got := rateBucket(tt.fails, tt.n); got != tt.want {
			t.Errorf("rateBucket(%d, %d) = %d, want %d", tt.fails, tt.n, got, tt.want)
		}
	}
}

// TestTextWidth_AgreesWithAnsi checks the fast path against x/ansi for
// every rune it claims is narrow, and for mixed text.
func TestTextWidth_AgreesWithAnsi(t *testing.T) {
	t.Parallel()
	for r := rune(0); r < 0x3000; r++ {
		if !narrow(r) {
			continue
		}
		s := "a" + string(r) + "b"
		if got, want := textWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, ansi says %d", s, got, want)
		}
	}
	for _, s := range []string{"", "plain", "\x1b[1;38;2;1;2;3mbold\x1b[0m ○ 3/9", "日本", "e\u0301", "👍🏽 ok", "a\tb", "✓ ✗ » ↻ ‹ ›"} {
		if got, want := textWidth(s), ansi.StringWidth(s); got != want {
			t.Errorf("textWidth(%q) = %d, ansi says %d", s, got, want)
		}
	}
}

func TestTruncateText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		w    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello!", 5, "hell…"},
		{"hello", 1, "…"},
		{"hello", 0, ""},
		{"héllo wörld", 7, "héllo …"},
		{"日本語テキスト", 5, "日本…"},
	}
	for _, tt := range tests {
		got := truncateText(tt.in, tt.w)
		if got != tt.want {
			t.Errorf("truncateText(%q, %d) = %q, want %q", tt.in, tt.w, got, tt.want)
		}
		if ansi.StringWidth(got) > tt.w {
			t.Errorf("truncateText(%q, %d) = %q is too wide", tt.in, tt.w, got)
		}
	}
}

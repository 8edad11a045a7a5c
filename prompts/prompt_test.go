package prompts

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

const support = "You are the support assistant for Acme.\n" +
	"Answer questions about released products.\n" +
	"Do not speculate about unreleased products, features, or roadmap timelines.  \n" +
	"\n" +
	"Be concise.\n" +
	"Be concise.\n"

func mustParse(t *testing.T, data string) *Prompt {
	t.Helper()
	p, err := Parse("support.md", []byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func TestParse_LineEndings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"LF with final newline", "a\nb\n", []string{"a", "b"}},
		{"no final newline", "a\nb", []string{"a", "b"}},
		{"CRLF", "a\r\nb\r\n", []string{"a", "b"}},
		{"BOM", "\xef\xbb\xbfa\nb", []string{"a", "b"}},
		{"blank lines kept", "a\n\n\nb\n", []string{"a", "", "", "b"}},
		{"two final newlines keep one blank line", "a\n\n", []string{"a", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustParse(t, tt.data)
			if strings.Join(p.Lines, "|") != strings.Join(tt.want, "|") || p.Len() != len(tt.want) {
				t.Errorf("got %q, want %q", p.Lines, tt.want)
			}
		})
	}
}

func TestParse_Empty(t *testing.T) {
	t.Parallel()
	for _, data := range []string{"", "\n", " \r\n\t\n", "\xef\xbb\xbf"} {
		_, err := Parse("empty.md", []byte(data))
		var ie *model.InputError
		if !errors.As(err, &ie) || ie.File != "empty.md" || !strings.Contains(ie.Msg, "empty") {
			t.Errorf("Parse(%q): got %v, want an InputError about an empty prompt", data, err)
		}
	}
}

func TestPrompt_Line(t *testing.T) {
	t.Parallel()
	p := mustParse(t, support)
	if got, err := p.Line(2); err != nil || got != "Answer questions about released products." {
		t.Errorf("Line(2) = %q, %v", got, err)
	}
	tests := []struct {
		n    int
		want string
	}{
		{40, "line 40 is past the end: support.md has 6 lines"},
		{7, "line 7 is past the end: support.md has 6 lines"},
		{0, "line 0 does not exist: lines are numbered from 1"},
		{-3, "line -3 does not exist"},
	}
	for _, tt := range tests {
		_, err := p.Line(tt.n)
		var ie *model.InputError
		if !errors.As(err, &ie) || ie.File != "support.md" || !strings.Contains(ie.Msg, tt.want) {
			t.Errorf("Line(%d): got %v, want an InputError containing %q", tt.n, err, tt.want)
		}
	}
}

func TestPrompt_FindText(t *testing.T) {
	t.Parallel()
	p := mustParse(t, support)
	tests := []struct {
		name    string
		text    string
		want    int
		wantErr string
	}{
		{"exact", "Answer questions about released products.", 2, ""},
		{"trailing spaces in the file", "Do not speculate about unreleased products, features, or roadmap timelines.", 3, ""},
		{"trailing spaces in the rule", "Answer questions about released products. \t", 2, ""},
		{"leading space matters", " Answer questions about released products.", 0, "contain it"},
		{"absent", "Never swear.", 0, `no line reads "Never swear."`},
		{"part of a line", "Do not speculate", 0, "line 3 contain it with more text"},
		{"on several lines", "Be concise.", 0, "is on lines 5, 6"},
		{"empty", "  ", 0, "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := p.FindText(tt.text)
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Errorf("FindText = %d, %v; want %d", got, err, tt.want)
				}
				return
			}
			var ie *model.InputError
			if !errors.As(err, &ie) || ie.File != "support.md" || !strings.Contains(ie.Msg, tt.wantErr) {
				t.Errorf("FindText: got %v, want an InputError containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestPrompt_Variants(t *testing.T) {
	t.Parallel()
	p := mustParse(t, "one\r\ntwo\r\nthree\r\n")
	if got := p.Text(); got != "one\ntwo\nthree" {
		t.Errorf("Text() = %q", got)
	}
	tests := []struct {
		lines []int
		want  string
	}{
		{[]int{2}, "one\nthree"},
		{[]int{1}, "two\nthree"},
		{[]int{3}, "one\ntwo"},
		{[]int{1, 3}, "two"},
		{[]int{1, 2, 3}, ""},
		{[]int{0, 9}, "one\ntwo\nthree"},
		{nil, "one\ntwo\nthree"},
	}
	for _, tt := range tests {
		if got := p.Without(tt.lines...); got != tt.want {
			t.Errorf("Without(%v) = %q, want %q", tt.lines, got, tt.want)
		}
	}
	if p.Text() != "one\ntwo\nthree" {
		t.Error("Without changed the prompt")
	}
}

func TestCounter_Count(t *testing.T) {
	t.Parallel()
	c, err := NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	// Reference counts from an independent o200k_base implementation
	// (the gpt-tokenizer JavaScript package).
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Do not speculate about unreleased products, features, or roadmap timelines.", 14},
		{support, 36},
		{"I can’t confirm a date — it's on the roadmap.\n\n  * Q3?", 17},
	}
	for _, tt := range tests {
		if got := c.Count(tt.s); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
	// Invalid UTF-8 is counted, not refused.
	if got := c.Count("ok \xff\xfe done"); got <= 0 {
		t.Errorf("Count of invalid UTF-8 = %d, want > 0", got)
	}
}

func TestCounter_LineCost(t *testing.T) {
	t.Parallel()
	c, err := NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	p := mustParse(t, support)
	cost := c.LineCost(p, 3)
	line := c.Count(p.Lines[2])
	// Deleting the line saves its own tokens, give or take the newline
	// merging with a neighbour.
	if cost < line-1 || cost > line+2 {
		t.Errorf("LineCost(3) = %d, the line alone counts %d", cost, line)
	}
	if got := c.LineCost(p); got != 0 {
		t.Errorf("LineCost() = %d, want 0", got)
	}
}

func TestCounter_Concurrent(t *testing.T) {
	t.Parallel()
	c, err := NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	want := c.Count(support)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := c.Count(support); got != want {
					t.Errorf("concurrent Count = %d, want %d", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkCounter_Count counts a prompt of about 4,000 tokens; it should take
// well under 50 ms an operation.
func BenchmarkCounter_Count(b *testing.B) {
	c, err := NewCounter()
	if err != nil {
		b.Fatal(err)
	}
	prompt := strings.Repeat(support, 111) // 36 tokens each
	b.ReportMetric(float64(c.Count(prompt)), "tokens")
	b.ResetTimer()
	for b.Loop() {
		c.Count(prompt)
	}
}

// BenchmarkNewCounter measures the one-off cost of building a Counter.
func BenchmarkNewCounter(b *testing.B) {
	for b.Loop() {
		if _, err := NewCounter(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRewordedAndWithAdded(t *testing.T) {
	t.Parallel()
	p, err := Parse("p.md", []byte("one\ntwo\nthree\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ got, want string }{
		{p.Reworded(2, "TWO"), "one\nTWO\nthree"},
		{p.Reworded(9, "x"), "one\ntwo\nthree"},
		{p.WithAdded(2, "two and a half"), "one\ntwo\ntwo and a half\nthree"},
		{p.WithAdded(3, "four"), "one\ntwo\nthree\nfour"},
		{p.WithAdded(0, "zero"), "zero\none\ntwo\nthree"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	if p.Text() != "one\ntwo\nthree" {
		t.Error("a variant changed the prompt")
	}
}

// A prompt holding NUL (or another control character) is refused when the
// audit is loaded, at its line and column; tabs are text.
func TestParse_ControlCharacters(t *testing.T) {
	_, err := Parse("support.md", []byte("line one\nrule\x00two\n"))
	var ie *model.InputError
	if !errors.As(err, &ie) || ie.Line != 2 || ie.Col != 5 || !strings.Contains(ie.Msg, "U+0000") {
		t.Fatalf("got %v, want support.md:2:5 naming U+0000", err)
	}
	if _, err := Parse("support.md", []byte("a\tb\r\nc\n")); err != nil {
		t.Fatalf("tabs and CRLF: %v", err)
	}
}

func TestWithoutBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		lines []int
		want  string
	}{
		{"a\nb\nc\n", []int{2}, "a\nc\n"},
		{"a\r\nb\r\nc", []int{1, 3}, "b\r\n"},
		{"\xef\xbb\xbfa\nb\n", []int{1}, "\xef\xbb\xbfb\n"},
		{"a\n\nb\n", []int{3, 9}, "a\n\n"},
	} {
		got := string(WithoutBytes([]byte(tc.in), tc.lines...))
		if got != tc.want {
			t.Errorf("WithoutBytes(%q, %v) = %q, want %q", tc.in, tc.lines, got, tc.want)
		}
		// The lines kept are the parsed prompt's lines kept.
		p, err := Parse("p.md", []byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		q, err := Parse("q.md", []byte(got))
		if err == nil && q.Text() != p.Without(tc.lines...) && strings.TrimSuffix(p.Without(tc.lines...), "\n") != q.Text() {
			t.Errorf("WithoutBytes(%q) parses to %q, Without gives %q", tc.in, q.Text(), p.Without(tc.lines...))
		}
	}
}

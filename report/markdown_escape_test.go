package report

import (
	"strings"
	"testing"
)

// Case text and answers are untrusted: in a pull request's Markdown they
// must not become links, images, HTML, mentions or table breaks.
func TestMDEscape_Inert(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, bad string }{
		{"![x](http://evil/p.png)", "!["},
		{"[click](http://evil)", "[click]"},
		{"see http://evil.example/x", "http://"},
		{"<img src=x onerror=alert(1)>", "<img"},
		{"ping @everyone and @octocat", "@everyone"},
		{"a | b", "a | b"},
		{"**bold** `code`", "**"},
		{"line\nbreak", "\n"},
	} {
		got := mdEscape(tt.in)
		if strings.Contains(got, tt.bad) {
			t.Errorf("mdEscape(%q) = %q still holds %q", tt.in, got, tt.bad)
		}
	}
	if got := mdEscape("# heading"); !strings.HasPrefix(got, `\#`) {
		t.Errorf("a heading mark is not escaped: %q", got)
	}
	// Ordinary text and the tool's own names stay readable.
	if got := mdEscape("-L20 baseline 3.7% (n=30)"); got != "-L20 baseline 3.7% (n=30)" {
		t.Errorf("plain text changed: %q", got)
	}
}

// A CSV cell a spreadsheet would run is guarded, the tool's variant names
// too (issue 28: -L20 is minus the cell L20); numbers are not.
func TestCSVSafe(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://evil\")": "'=HYPERLINK(\"http://evil\")",
		"+cmd|' /C calc'!A0":          "'+cmd|' /C calc'!A0",
		"@SUM(A1:A2)":                 "'@SUM(A1:A2)",
		"-2+3":                        "'-2+3",
		"-L20":                        "'-L20",
		"~L7":                         "~L7",
		"+L12":                        "'+L12",
		"+L23 added after 23: \"x\"":  "'+L23 added after 23: \"x\"",
		"-0.25":                       "-0.25",
		"-Inf":                        "'-Inf",
		"1e5":                         "1e5",
		"-0x1p-2":                     "'-0x1p-2",
		"plain text":                  "plain text",
	} {
		if got := csvSafe([]string{in})[0]; got != want {
			t.Errorf("csvSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

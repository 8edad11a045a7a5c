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

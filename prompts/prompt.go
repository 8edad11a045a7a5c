// Package prompts holds system prompts as numbered lines: the unit a rule
// names and a variant deletes, rewords or adds. It builds the prompt
// variants a run sends (the full prompt as baseline, the prompt minus one
// line, with one line reworded, with one line added) and estimates token
// counts. It parses bytes it is handed and never reads files itself.
package prompts

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/auditor-dev/auditor/model"
)

// Prompt is a system prompt split into lines. Lines are stored without their
// line endings; line n (1-based) is Lines[n-1]. A Prompt is immutable after
// Parse and safe for concurrent use.
type Prompt struct {
	Path  string   // path as given to Parse, used in errors
	Lines []string // the lines, without "\n" or "\r\n"
}

// Parse splits a prompt file into lines. A UTF-8 byte order mark at the start
// is dropped and CRLF line endings are accepted; a final line ending does not
// start another line. A prompt with no text (empty or only white space) is an
// *model.InputError.
func Parse(path string, data []byte) (*Prompt, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &model.InputError{File: path, Msg: "the prompt is empty"}
	}
	text := strings.TrimSuffix(string(data), "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
		if !utf8.ValidString(l) {
			return nil, &model.InputError{File: path, Line: i + 1, Msg: "invalid UTF-8: save the prompt as UTF-8 text"}
		}
		if col, r := controlChar(lines[i]); col > 0 {
			return nil, &model.InputError{File: path, Line: i + 1, Col: col,
				Msg: fmt.Sprintf("holds the control character %U: a prompt is text (tabs and line breaks only); APIs refuse or cut a prompt at NUL, and screens cannot show it", r)}
		}
	}
	return &Prompt{Path: path, Lines: lines}, nil
}

// controlChar returns the 1-based column and value of the first C0 control
// character (or DEL) in l other than a tab, or 0.
func controlChar(l string) (int, rune) {
	col := 0
	for _, r := range l {
		col++
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return col, r
		}
	}
	return 0, 0
}

// Len returns the number of lines.
func (p *Prompt) Len() int { return len(p.Lines) }

// Line returns the text of line n (1-based). A line number outside the
// prompt is an *model.InputError naming the prompt and its length.
func (p *Prompt) Line(n int) (string, error) {
	switch {
	case n < 1:
		return "", &model.InputError{File: p.Path, Msg: fmt.Sprintf("line %d does not exist: lines are numbered from 1", n)}
	case n > len(p.Lines):
		return "", &model.InputError{File: p.Path, Msg: fmt.Sprintf("line %d is past the end: %s has %d lines", n, p.Path, len(p.Lines))}
	}
	return p.Lines[n-1], nil
}

// FindText returns the number of the one line whose text is text. Trailing
// spaces and tabs are ignored on both sides, because editors add and strip
// them invisibly; anything else must match exactly. It is an
// *model.InputError when no line matches (naming lines that contain the text,
// if any) or when several do (naming them: give the line number instead).
func (p *Prompt) FindText(text string) (int, error) {
	want := trimTrailing(text)
	if strings.TrimSpace(want) == "" {
		return 0, &model.InputError{File: p.Path, Msg: "the rule's text is empty: give the exact text of one prompt line"}
	}
	var exact, partial []int
	for i, l := range p.Lines {
		got := trimTrailing(l)
		switch {
		case got == want:
			exact = append(exact, i+1)
		case strings.Contains(got, strings.TrimSpace(want)):
			partial = append(partial, i+1)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) > 1:
		return 0, &model.InputError{File: p.Path, Line: exact[0],
			Msg: fmt.Sprintf("the text %q is on lines %s: give the rule's line number instead", clip(want), joinInts(exact))}
	case len(partial) > 0:
		return 0, &model.InputError{File: p.Path,
			Msg: fmt.Sprintf("no line reads exactly %q; %s contain it with more text: give the whole line", clip(want), pluralLines(partial))}
	}
	return 0, &model.InputError{File: p.Path, Msg: fmt.Sprintf("no line reads %q", clip(want))}
}

// Text returns the full prompt, lines joined by "\n": the baseline variant.
func (p *Prompt) Text() string { return strings.Join(p.Lines, "\n") }

// Without returns the prompt with the given lines (1-based) removed, the
// remaining lines joined by "\n": the deletion variant. Line numbers outside
// the prompt are ignored; check them with Line first.
func (p *Prompt) Without(lines ...int) string {
	drop := make(map[int]bool, len(lines))
	for _, n := range lines {
		drop[n] = true
	}
	kept := make([]string, 0, len(p.Lines))
	for i, l := range p.Lines {
		if !drop[i+1] {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// Reworded returns the prompt with line n (1-based) replaced by text: the
// rewording variant. A line number outside the prompt changes nothing.
func (p *Prompt) Reworded(n int, text string) string {
	lines := append([]string(nil), p.Lines...)
	if n >= 1 && n <= len(lines) {
		lines[n-1] = text
	}
	return strings.Join(lines, "\n")
}

// WithAdded returns the prompt with text inserted as a new line after line
// n (1-based; 0 puts it first): the addition variant.
func (p *Prompt) WithAdded(n int, text string) string {
	n = max(0, min(n, len(p.Lines)))
	lines := make([]string, 0, len(p.Lines)+1)
	lines = append(lines, p.Lines[:n]...)
	lines = append(lines, text)
	lines = append(lines, p.Lines[n:]...)
	return strings.Join(lines, "\n")
}

func trimTrailing(s string) string { return strings.TrimRight(s, " \t") }

// clip shortens long text quoted in an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "..."
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}

func pluralLines(ns []int) string {
	if len(ns) == 1 {
		return "line " + strconv.Itoa(ns[0])
	}
	return "lines " + joinInts(ns)
}

// WithoutBytes returns the prompt file's bytes (as read, before Parse)
// with the given lines (1-based, as Parse numbers them) removed, each with
// its own line ending; every other byte is kept as it was: a byte order
// mark, CRLF endings, a missing final newline. It is the prompt a user
// ships once the lines are deleted. Line numbers outside the file are
// ignored.
func WithoutBytes(data []byte, lines ...int) []byte {
	drop := make(map[int]bool, len(lines))
	for _, n := range lines {
		drop[n] = true
	}
	bom := []byte("\xef\xbb\xbf")
	out := make([]byte, 0, len(data))
	if bytes.HasPrefix(data, bom) {
		out = append(out, bom...)
		data = data[len(bom):]
	}
	for n := 1; len(data) > 0; n++ {
		end := bytes.IndexByte(data, '\n') + 1
		if end == 0 {
			end = len(data)
		}
		if !drop[n] {
			out = append(out, data[:end]...)
		}
		data = data[end:]
	}
	return out
}

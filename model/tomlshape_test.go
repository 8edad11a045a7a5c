package model

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The repro of issue 22: a 40 KB audit.toml of inline tables nested 10,000
// deep exhausted memory in the TOML decoder. Each form of deep nesting is
// refused with its file and line, before the decoder runs.
func TestTOMLShape_DeepNestingRefused(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	head := "name = \"x\"\nprompt = \"p.md\"\n"
	cases := map[string]struct {
		src  string
		line int
	}{
		"inline tables": {head + "y = " + deep("{a=", "}", 10000) + "\n", 3},
		"arrays":        {head + "\ny = " + deep("[", "]", 100000) + "\n", 4},
		"arrays over lines": {head + "y = [\n" + strings.Repeat("[\n", MaxTOMLDepth) + "1" + strings.Repeat("]", MaxTOMLDepth+1) + "\n",
			3 + MaxTOMLDepth},
		"dotted key":   {head + strings.Repeat("a.", 5000) + "a = 1\n", 3},
		"table header": {head + "[" + strings.Repeat("a.", 5000) + "a]\n", 3},
		"many keys":    {head + strings.Repeat("k = 1\n", MaxTOMLKeys), MaxTOMLKeys + 1},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			for _, parse := range []func(string, []byte) error{
				func(f string, d []byte) error { _, err := ParseAudit(f, d); return err },
				func(f string, d []byte) error { _, err := ParsePredicate(f, d); return err },
			} {
				err := parse("audit.toml", []byte(c.src))
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("want an *InputError, got %v", err)
				}
				if ie.File != "audit.toml" || ie.Line != c.line || !strings.Contains(ie.Msg, "refused before it is read") {
					t.Fatalf("got %v (line %d), want audit.toml:%d refused before it is read", err, ie.Line, c.line)
				}
			}
		})
	}
}

// Nesting up to the limit, strings holding brackets, comments and
// multi-line values are ordinary TOML and pass the guard.
func TestTOMLShape_OrdinaryFilesPass(t *testing.T) {
	ok := []string{
		"y = " + strings.Repeat("[", MaxTOMLDepth) + "1" + strings.Repeat("]", MaxTOMLDepth) + "\n",
		"y = \"" + strings.Repeat("[{", 100) + "\"\n",
		"y = '''\n" + strings.Repeat("{", 100) + "\n'''\n",
		"# " + strings.Repeat("[", 100) + "\ny = 1\n",
		"y = { a = [1, 2, {b = \"]\"}], c = 'x' }\n[[rule]]\nline = 3\n",
		"command = [\n  \"python3\", # the interpreter\n  \"grade.py\",\n]\n",
	}
	for i, src := range ok {
		if err := checkTOMLShape(fmt.Sprintf("f%d.toml", i), src); err != nil {
			t.Errorf("file %d: %v", i, err)
		}
	}
}

package model

import (
	"fmt"
	"strings"
)

// InputError reports bad user input: a file the user wrote (audit, cases,
// predicate, prompt, labels) that cannot be used as it is. It names where the
// problem is so the user can go straight to it. Commands exit with code 2 on
// an InputError.
type InputError struct {
	File  string // path as the user would recognise it; may be empty
	Line  int    // 1-based line; 0 when the problem is not on one line
	Col   int    // 1-based column; 0 when unknown
	Field string // the field or key concerned, e.g. "kind" or "rule[2].line"; may be empty
	Msg   string // what is wrong, in plain words
}

// Error formats the error as "file:line:col: field "x": message", leaving out
// the parts that are unknown.
func (e *InputError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

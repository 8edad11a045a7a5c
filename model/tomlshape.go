package model

import (
	"fmt"
	"strings"
)

// Limits on the shape of an audit or predicate file, checked before the
// TOML decoder sees it. The decoder builds nested maps recursively, and a
// 40 KB file of inline tables nested 10,000 deep ({a={a={...}}}) took more
// than 3.6 GB before it crashed the process. No real audit comes near these
// limits: the deepest value auditor reads is an array inside a table
// (command = [...], extra_body = {...}), and a sweep of every line of a
// long prompt has a few hundred keys.
const (
	// MaxTOMLDepth is the deepest nesting of arrays and inline tables in
	// one value, and the most parts of one dotted key or table header.
	MaxTOMLDepth = 16
	// MaxTOMLKeys is the most keys (and table headers) one file may hold.
	MaxTOMLKeys = 20000
)

// checkTOMLShape refuses a file nested deeper than MaxTOMLDepth or with more
// than MaxTOMLKeys keys, naming the line where the limit is crossed. It
// scans the source once, skipping strings and comments the way the key
// scanner does, so its cost is linear in the file's size whatever the
// nesting.
func checkTOMLShape(file, src string) error {
	s := strings.TrimPrefix(src, "\ufeff")
	line, keys := 1, 0
	tooDeep := func(what string) error {
		return &InputError{File: file, Line: line,
			Msg: fmt.Sprintf("%s nested more than %d deep: auditor's files need no such nesting, so this file is refused before it is read", what, MaxTOMLDepth)}
	}
	countKey := func(parts int) error {
		keys++
		if keys > MaxTOMLKeys {
			return &InputError{File: file, Line: line,
				Msg: fmt.Sprintf("more than %d keys: auditor's files need far fewer, so this file is refused before it is read", MaxTOMLKeys)}
		}
		if parts > MaxTOMLDepth {
			return tooDeep("a dotted key with its parts")
		}
		return nil
	}
	// depth counts the open arrays and inline tables of the value being
	// read; atKey is true where a key may start (a line's start, or after
	// "{" or "," inside an inline table).
	depth := 0
	var open []byte // the brackets open, innermost last
	atKey := true
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n':
			line++
			i++
			if depth == 0 {
				atKey = true
			}
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			i = tomlSkipToEOL(s, i)
		case atKey && depth == 0 && c == '[':
			// A table header: [a.b] or [[a.b]].
			j := i + 1
			if j < len(s) && s[j] == '[' {
				j++
			}
			parts, end, _ := tomlScanKey(s, j)
			if err := countKey(len(parts)); err != nil {
				return err
			}
			i = tomlSkipToEOL(s, max(end, i+1))
		case atKey && c != '}' && c != ']' && c != ',':
			parts, end, ok := tomlScanKey(s, i)
			if ok {
				if err := countKey(len(parts)); err != nil {
					return err
				}
			}
			atKey = false
			i = max(end, i+1)
		case c == '"' || c == '\'':
			i, line = tomlSkipString(s, i, line)
		case c == '[' || c == '{':
			depth++
			if depth > MaxTOMLDepth {
				return tooDeep("arrays and inline tables")
			}
			open = append(open, c)
			atKey = c == '{'
			i++
		case c == ']' || c == '}':
			if depth > 0 {
				depth--
				open = open[:len(open)-1]
			}
			atKey = false
			i++
		case c == ',':
			atKey = len(open) > 0 && open[len(open)-1] == '{'
			i++
		default:
			i++
		}
	}
	return nil
}

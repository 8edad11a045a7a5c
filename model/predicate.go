package model

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PredicateGrader is the grader name of every grade a predicate gives.
const PredicateGrader = "predicate"

// Predicate is an acceptance predicate: ordered checks, the first failing one
// decides. It is written before a run, as data, so that grading is the same
// for every response and can be re-run when the predicate is edited.
//
// A Predicate is immutable after ParsePredicate and safe for concurrent use.
type Predicate struct {
	File string // path as given to ParsePredicate
	// Version is the first 16 hex digits of the SHA-256 of the file's
	// exact bytes (and, after WithExecDigest, of the [exec] command's
	// scripts).
	Version string
	Checks  []Check  // in file order
	Exec    []string // [exec] command: argv of an external grader; nil when none
}

// Check is one [[check]] of a predicate. A check has fail_if_match,
// pass_requires_any, or both; with both, it fails when either fails.
type Check struct {
	Line            int            // line of the [[check]] header in the predicate file
	Kinds           []Kind         // the kinds the check applies to; empty: every kind
	Pattern         string         // fail_if_match as written; empty when absent
	PatternLine     int            // line of fail_if_match in the predicate file; 0 when absent
	FailIfMatch     *regexp.Regexp // compiled Pattern; nil when absent
	UnlessGrounded  bool           // a match found in the case's kb is excused
	PassRequiresAny []string       // phrases, at least one of which must appear; nil when absent
	Reason          string         // shown when the check fails
}

// WithExecDigest returns a copy of p whose version also covers digest:
// the content of the scripts its [exec] command runs, which the file's
// bytes do not show. The audit loader calls it; p itself is unchanged.
func (p *Predicate) WithExecDigest(digest string) *Predicate {
	c := *p
	sum := sha256.Sum256([]byte(p.Version + "\x00" + digest))
	c.Version = hex.EncodeToString(sum[:])[:16]
	return &c
}

var (
	predicateKeys  = []string{"check", "exec"}
	checkTableKeys = []string{"kinds", "fail_if_match", "unless_grounded", "pass_requires_any", "reason"}
	execKeys       = []string{"command"}
)

// ParsePredicate reads a predicate file (TOML): [[check]] tables and an
// optional [exec] table with command = ["program", "arg", ...].
//
// Every error is an *InputError naming the file, line and key: TOML syntax,
// unknown keys, unknown kinds, a check with neither fail_if_match nor
// pass_requires_any, a check without a reason, unless_grounded without
// fail_if_match, and patterns that do not compile. Patterns are Go regular
// expressions (RE2): there is no lookahead, lookbehind or backreference, and
// the error says so when a pattern uses them. A pattern that matches empty
// text in ordinary prose is refused, because it would fail every response.
func ParsePredicate(file string, data []byte) (*Predicate, error) {
	sum := sha256.Sum256(data)
	doc, err := decodeTOML(file, data)
	if err != nil {
		return nil, err
	}
	root := doc.rootTable()
	if err := root.checkKeys(predicateKeys, nil); err != nil {
		return nil, err
	}
	p := &Predicate{File: file, Version: hex.EncodeToString(sum[:])[:16]}

	tables, _, err := root.tables("check")
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		c, err := parseCheck(t)
		if err != nil {
			return nil, err
		}
		p.Checks = append(p.Checks, c)
	}

	if t, ok, err := root.table("exec"); err != nil {
		return nil, err
	} else if ok {
		if err := t.checkKeys(execKeys, nil); err != nil {
			return nil, err
		}
		argv, ok, err := t.strings("command")
		switch {
		case err != nil:
			return nil, err
		case !ok:
			return nil, t.errf("command", `missing: give the program and its arguments, like command = ["python3", "accepts.py"]`)
		case len(argv) == 0 || strings.TrimSpace(argv[0]) == "":
			return nil, t.errf("command", `is empty: give the program and its arguments, like command = ["python3", "accepts.py"]`)
		}
		p.Exec = argv
	}

	if len(p.Checks) == 0 && p.Exec == nil {
		return nil, &InputError{File: file, Field: "check",
			Msg: "no checks: add at least one [[check]] with fail_if_match or pass_requires_any and a reason"}
	}
	return p, nil
}

// escapedControl explains a pattern holding a control character that a
// TOML double-quoted string made from a regex escape: "\b" is a
// backspace there, not a word boundary, so the pattern would silently
// never match. It returns "" for a pattern without one.
func escapedControl(pat string) string {
	for _, r := range pat {
		var esc string
		switch r {
		case '\b':
			esc = `\b (a backspace there, not a word boundary)`
		case '\f':
			esc = `\f (a form feed)`
		case '\t', '\n', '\r':
			continue // a real tab or newline is plausible; \t in a regex means the same
		default:
			if r >= 0x20 && r != 0x7f {
				continue
			}
			esc = fmt.Sprintf("a control character U+%04X", r)
		}
		return fmt.Sprintf("holds %s: in a double-quoted TOML string a backslash escape becomes a character before the regex sees it; write the pattern in single quotes, like fail_if_match = '(?i)\\bword\\b'", esc)
	}
	return ""
}

func parseCheck(t tomlTable) (Check, error) {
	c := Check{Line: t.line}
	if err := t.checkKeys(checkTableKeys, nil); err != nil {
		return c, err
	}
	if kinds, ok, err := t.strings("kinds"); err != nil {
		return c, err
	} else if ok {
		if len(kinds) == 0 {
			return c, t.errf("kinds", "is empty: list the kinds the check applies to, or leave kinds out to apply it to every kind")
		}
		for _, s := range kinds {
			k, valid := ParseKind(s)
			if !valid {
				return c, t.errf("kinds", "unknown kind %q: use %s%s", s, kindList(), didYouMean(s, kindNames()))
			}
			c.Kinds = append(c.Kinds, k)
		}
	}
	if pat, ok, err := t.str("fail_if_match"); err != nil {
		return c, err
	} else if ok {
		if pat == "" {
			return c, t.errf("fail_if_match", "is empty: give a regular expression whose match fails the response")
		}
		if msg := escapedControl(pat); msg != "" {
			return c, t.errf("fail_if_match", "%s", msg)
		}
		re, err := regexp.Compile(pat)
		if err != nil {
			e := t.errf("fail_if_match", "%s", regexpErrMsg(pat, err))
			e.Col = patternCol(t.doc, e.Line, pat, err)
			return c, e
		}
		if loc := re.FindStringIndex("Zq\x00 zq."); loc != nil && loc[0] == loc[1] {
			return c, t.errf("fail_if_match", "the pattern %q matches empty text, so it would fail almost every response; look for a * or ? that should be +", pat)
		}
		c.Pattern, c.FailIfMatch, c.PatternLine = pat, re, t.doc.lineOf(t.field("fail_if_match"))
	}
	if b, ok, err := t.boolean("unless_grounded"); err != nil {
		return c, err
	} else if ok {
		if b && c.FailIfMatch == nil {
			return c, t.errf("unless_grounded", "only applies to fail_if_match: it excuses a match found in the case's kb; add fail_if_match or remove it")
		}
		c.UnlessGrounded = b
	}
	if phrases, ok, err := t.strings("pass_requires_any"); err != nil {
		return c, err
	} else if ok {
		if len(phrases) == 0 {
			return c, t.errf("pass_requires_any", "is empty: list the phrases of which at least one must appear")
		}
		for i, ph := range phrases {
			if strings.TrimSpace(ph) == "" {
				return c, t.errf("pass_requires_any", "phrase %d is empty: it would be found in every response", i+1)
			}
		}
		c.PassRequiresAny = phrases
	}
	if c.FailIfMatch == nil && c.PassRequiresAny == nil {
		return c, t.errf("", "checks nothing: give fail_if_match (a pattern that fails the response) or pass_requires_any (phrases of which one must appear)")
	}
	var err error
	if c.Reason, err = t.requiredString("reason", `the reason shown when the check fails, like reason = "asserted a timeline with no source"`); err != nil {
		return c, err
	}
	return c, nil
}

// regexpErrMsg rewords a regexp compile error: what is wrong, where in the
// pattern, and, for syntax RE2 lacks, what to do instead.
func regexpErrMsg(pat string, err error) string {
	var se *syntax.Error
	if !errors.As(err, &se) {
		return "invalid pattern: " + err.Error()
	}
	msg := fmt.Sprintf("invalid pattern: %s: `%s`", se.Code, se.Expr)
	if i := strings.Index(pat, se.Expr); i >= 0 && se.Expr != "" {
		msg += fmt.Sprintf(" at character %d of the pattern", utf8.RuneCountInString(pat[:i])+1)
	}
	if lacks := re2Lacks(se); lacks != "" {
		msg += "; Go regular expressions (RE2) have no " + lacks +
			": rewrite the pattern without it (a second check, or unless_grounded, can often do its work)"
	}
	return msg
}

// re2Lacks names the Perl/PCRE feature a failed pattern used that RE2 does
// not have, or returns "" when the error is something else.
func re2Lacks(se *syntax.Error) string {
	e := se.Expr
	switch {
	case strings.HasPrefix(e, "(?=") || strings.HasPrefix(e, "(?!"):
		return "lookahead ((?=...) or (?!...))"
	case strings.HasPrefix(e, "(?<=") || strings.HasPrefix(e, "(?<!"):
		return "lookbehind ((?<=...) or (?<!...))"
	case strings.HasPrefix(e, "(?>"):
		return "atomic groups ((?>...))"
	case strings.HasPrefix(e, `\k`) || (len(e) == 2 && e[0] == '\\' && e[1] >= '1' && e[1] <= '9'):
		return `backreferences (\1, \k<name>)`
	case se.Code == syntax.ErrInvalidRepeatOp && strings.HasSuffix(e, "+") && len(e) >= 2:
		return "possessive quantifiers (*+, ++, ?+)"
	case se.Code == syntax.ErrInvalidPerlOp && strings.HasPrefix(e, "(?"):
		return "such group or flag (only the flags i, m, s and U exist, and named groups are written (?P<name>...) or (?<name>...))"
	}
	return ""
}

// patternCol returns the column in the predicate file where the regexp
// error is, when the pattern is written on one line without escapes (the
// usual ”'...”' or '...' literal), and 0 otherwise.
func patternCol(doc *tomlDoc, line int, pat string, err error) int {
	var se *syntax.Error
	if line < 1 || line > len(doc.src) || !errors.As(err, &se) || se.Expr == "" {
		return 0
	}
	text := doc.src[line-1]
	start := strings.Index(text, pat)
	if start < 0 || strings.Count(text, pat) != 1 {
		return 0
	}
	off := strings.Index(pat, se.Expr)
	if off < 0 {
		return 0
	}
	return utf8.RuneCountInString(text[:start+off]) + 1
}

// AppliesTo reports whether the check grades responses to cases of kind k.
func (c Check) AppliesTo(k Kind) bool {
	if len(c.Kinds) == 0 {
		return true
	}
	for _, ck := range c.Kinds {
		if ck == k {
			return true
		}
	}
	return false
}

// Grade grades one response to case c: the checks that apply to c's kind run
// in order and the first that fails decides, with its reason, its 1-based
// index and the matched span (empty for pass_requires_any). When every check
// passes, the grade passes.
//
// fail_if_match fails on the first match of its pattern; with
// unless_grounded, a match whose text appears in one of the case's kb
// snippets (ignoring case) is excused and the next match is tried.
// pass_requires_any fails when none of its phrases appears in the response.
// Both comparisons ignore case and treat typographic apostrophes (’ ‘ ʼ) as
// "'", because models write "can’t" where a predicate says "can't".
//
// When the predicate has an [exec] command, Grade evaluates the checks only:
// the caller runs the exec process (runner/execgrade) on responses that pass
// every check, and that process's answer decides them.
//
// Grade never panics, whatever text holds; a nil predicate gives an
// Unparseable grade.
func (p *Predicate) Grade(c Case, text string) Grade {
	if p == nil {
		return Grade{Grader: PredicateGrader, Unparseable: true, Reason: "no predicate"}
	}
	var folded *string // the response folded for phrase search, computed once
	for i, ch := range p.Checks {
		if !ch.AppliesTo(c.Kind) {
			continue
		}
		if span, failed := ch.fails(c, text, &folded); failed {
			return Grade{Grader: PredicateGrader, Version: p.Version, Pass: false,
				Reason: ch.Reason, Check: i + 1, Span: span}
		}
	}
	return Grade{Grader: PredicateGrader, Version: p.Version, Pass: true}
}

// fails runs one check on text. folded caches the folded text across checks.
func (c Check) fails(cs Case, text string, folded **string) (Span, bool) {
	if c.FailIfMatch != nil {
		for _, loc := range c.FailIfMatch.FindAllStringIndex(text, -1) {
			if c.UnlessGrounded && grounded(text[loc[0]:loc[1]], cs.KB) {
				continue
			}
			return Span{Start: loc[0], End: loc[1]}, true
		}
	}
	if len(c.PassRequiresAny) > 0 {
		if *folded == nil {
			f := foldText(text)
			*folded = &f
		}
		for _, ph := range c.PassRequiresAny {
			if strings.Contains(**folded, foldText(ph)) {
				return Span{}, false
			}
		}
		return Span{}, true
	}
	return Span{}, false
}

// grounded reports whether match appears in one of the kb snippets,
// ignoring case and apostrophe style.
func grounded(match string, kb []string) bool {
	m := foldText(match)
	for _, snippet := range kb {
		if strings.Contains(foldText(snippet), m) {
			return true
		}
	}
	return false
}

// foldText lower-cases s and turns typographic apostrophes into "'", so
// that phrase search ignores both.
func foldText(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '\u2019', '\u2018', '\u02bc':
			return '\''
		}
		return unicode.ToLower(r)
	}, s)
}

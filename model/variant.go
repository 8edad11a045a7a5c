package model

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// VariantKind is how a variant changes the audited line. A deletion
// removes it (the question a deletion audit asks: is the line
// load-bearing?); a rewording replaces it and an addition inserts a new line
// after it (the question: does the change help, or break anything?).
type VariantKind string

// The variant kinds, and the prefix each gives the variant's name: "-L23"
// deleted, "~L23" reworded, "+L23" a line added after line 23.
const (
	Deletion  VariantKind = "delete"
	Rewording VariantKind = "reword"
	Addition  VariantKind = "add"
)

// prefix is the sign that starts the variant's name.
func (k VariantKind) prefix() string {
	switch k {
	case Rewording:
		return "~"
	case Addition:
		return "+"
	}
	return "-"
}

// VariantName is the short name of the variant of kind k of prompt line
// line: "-L20" (deleted), "~L20" (reworded), "+L20" (a line added after
// it). It is the first word of VariantTitle, for where only a word fits (a
// chip, a column of names); the zero kind is a deletion.
func VariantName(k VariantKind, line int) string {
	return k.prefix() + "L" + strconv.Itoa(line)
}

// VariantTitle names a variant and says what it does, the one way every
// screen and report names one: `-L20 deleted`, `~L20 reworded: "new
// text"`, `+L20 added after 20: "new text"`. text is the reworded or added
// line; for a deletion it may be the deleted line, shown the same way
// (`-L20 deleted: "old text"`), or "". The text is sanitized (Sanitize:
// a terminal escape and its payload are dropped, never shown as text), then
// quoted; pass it cut short where space is short.
func VariantTitle(k VariantKind, line int, text string) string {
	name := VariantName(k, line)
	text = Sanitize(text)
	switch k {
	case Rewording:
		return fmt.Sprintf("%s reworded: %q", name, text)
	case Addition:
		return fmt.Sprintf("%s added after %d: %q", name, line, text)
	}
	if text == "" {
		return name + " deleted"
	}
	return fmt.Sprintf("%s deleted: %q", name, text)
}

// RuleVariants are the variants of a [[rule]] beside baseline: the
// deletion unless delete = false, a rewording when reword is given, an
// addition when add is given.
type RuleVariants struct {
	NoDelete bool   // delete = false: audit only the rewording and/or addition
	Reword   string // the line's new text; "" for none
	Add      string // a new line inserted after the line; "" for none
	// RewordLine and AddLine are the audit-file lines of the keys.
	RewordLine, AddLine int
}

// ruleVariants reads a rule's reword, add and delete keys.
func (t tomlTable) ruleVariants(r *RuleConfig) error {
	v := &r.Variants
	for _, k := range []struct {
		key  string
		dst  *string
		line *int
	}{{"reword", &v.Reword, &v.RewordLine}, {"add", &v.Add, &v.AddLine}} {
		s, ok, err := t.str(k.key)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if strings.TrimSpace(s) == "" {
			return t.errf(k.key, "is empty: give the text of one prompt line, like %s = \"Never guess release dates.\"", k.key)
		}
		if strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return t.errf(k.key, "must be one prompt line: no line breaks or control characters")
		}
		*k.dst, *k.line = s, t.doc.lineOf(t.field(k.key))
	}
	del, ok, err := t.boolean("delete")
	if err != nil {
		return err
	}
	if ok && !del {
		if v.Reword == "" && v.Add == "" {
			return t.errf("delete", "is false and the rule has no reword or add: it would audit nothing; give reword = \"...\" or add = \"...\", or remove delete = false")
		}
		v.NoDelete = true
	}
	if r.NoInputClass() && (v.Reword != "" || v.Add != "" || v.NoDelete) {
		return t.errf("class", "a rule with no input class is decided by answer length and audits only the deletion; give reword and add on a targeted rule")
	}
	return nil
}

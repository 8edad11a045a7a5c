package model

import (
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

// Prefix is the sign that starts the variant's name.
func (k VariantKind) Prefix() string {
	switch k {
	case Rewording:
		return "~"
	case Addition:
		return "+"
	}
	return "-"
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

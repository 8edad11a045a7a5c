package report

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
)

// How reports show a rewording or an addition: a heading naming the change,
// the difference column named after the variant, and the cases that
// flipped. A deletion keeps the layout it always had.

// VariantHeading is the first line of a rewording's or an addition's
// block: `Line 23 reworded to "new" (~L23, 14 tokens); the line reads "old"`.
func VariantHeading(r *audit.Rule) string {
	return fmt.Sprintf("Line %d %s (%s, %d tokens%s); the line reads %q", r.Line, r.Describe(), r.Variant(), r.Tokens, tagNote(r), r.Text)
}

// diffName names the variant in the difference column: "deleted" for a
// deletion (as it always read), else the variant's name.
func diffName(r *audit.Rule) string {
	if r.Deletion() {
		return "deleted"
	}
	return r.Variant()
}

// FlipsLine is "vs baseline: one case fixed (c3), two broken (p1, p2) (9
// cases compared)" for a rewording or an addition; "" for a deletion, whose
// report is unchanged, and when no case was compared.
func FlipsLine(rr *evidence.RuleResult) string {
	if rr.Rule.Deletion() || rr.Flips.Compared == 0 {
		return ""
	}
	f := rr.Flips
	s := "vs baseline, by majority over samples: " + f.Summary()
	var ids []string
	if len(f.Fixed) > 0 {
		ids = append(ids, "fixed: "+strings.Join(f.Fixed, ", "))
	}
	if len(f.Broken) > 0 {
		ids = append(ids, "broken: "+strings.Join(f.Broken, ", "))
	}
	if len(ids) > 0 {
		s += "; " + strings.Join(ids, "; ")
	}
	return s
}

// VariantDoc is a rewording or an addition in `report --format json`.
type VariantDoc struct {
	Kind  string   `json:"kind"` // "reword" or "add"
	Name  string   `json:"name"` // "~L23", "+L23"
	Text  string   `json:"text"` // the new line
	Flips FlipsDoc `json:"flips"`
}

// FlipsDoc is the per-case flips against baseline (evidence.Flips).
type FlipsDoc struct {
	Fixed    []string `json:"fixed"`
	Broken   []string `json:"broken"`
	Compared int      `json:"compared"`
}

func variantDoc(rr *evidence.RuleResult) *VariantDoc {
	if rr.Rule.Deletion() {
		return nil
	}
	return &VariantDoc{Kind: string(rr.Rule.VariantKind()), Name: rr.Rule.Variant(), Text: rr.Rule.NewText,
		Flips: flipsDoc(rr.Flips)}
}

func flipsDoc(f evidence.Flips) FlipsDoc {
	return FlipsDoc{Fixed: append([]string{}, f.Fixed...), Broken: append([]string{}, f.Broken...), Compared: f.Compared}
}

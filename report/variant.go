package report

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// How reports show a variant: named by audit.Rule's Title and Label (one
// naming function, model.VariantTitle, for every screen and report), the
// prompt it runs explained, and for a rewording or an addition the cases
// that flipped. Screens use the same functions.

// VariantHeading is the first line of a variant's block in the text
// report: `-L23 deleted: "old" (line 23, 14 tokens, tag constrains)`, or
// for a rewording or an addition `~L23 reworded: "new" (line 23, 12
// tokens); line 23 reads "old"`.
func VariantHeading(r *audit.Rule) string {
	s := fmt.Sprintf("%s (line %d, %d tokens%s)", r.Label(), r.Line, r.Tokens, tagNote(r))
	if reads := LineReads(r); reads != "" {
		s += "; " + reads
	}
	return s
}

// LineReads is `line 23 reads "old"` for a rewording or an addition, whose
// name quotes the new text, not the line it changes; "" for a deletion,
// whose name quotes the line.
func LineReads(r *audit.Rule) string {
	if r.Deletion() {
		return ""
	}
	return fmt.Sprintf("line %d reads %q", r.Line, r.Text)
}

// VariantPrompt says which system prompt a variant's answers ran under:
// "the prompt without line 23", "the prompt with line 23 reworded", "the
// prompt with a line added after line 23".
func VariantPrompt(r *audit.Rule) string {
	switch r.VariantKind() {
	case model.Rewording:
		return fmt.Sprintf("the prompt with line %d reworded", r.Line)
	case model.Addition:
		return fmt.Sprintf("the prompt with a line added after line %d", r.Line)
	}
	return fmt.Sprintf("the prompt without line %d", r.Line)
}

// VariantsLine explains the two variants a block compares: "variants:
// baseline is the full prompt, ~L23 the prompt with line 23 reworded".
func VariantsLine(r *audit.Rule) string {
	return fmt.Sprintf("variants: baseline is the full prompt, %s %s", r.Variant(), VariantPrompt(r))
}

// DiffHead heads the difference column or row: "~L23 - baseline".
func DiffHead(r *audit.Rule) string { return r.Variant() + " - baseline" }

// FlipCounts is "0 fixed, 1 broken" for a rewording or an addition: the
// cases it fixed and broke against baseline, beside its verdict wherever
// a deletion shows only KEEP or DELETE. "" for a deletion and when no case
// was compared yet.
func FlipCounts(rr *evidence.RuleResult) string {
	if rr.Rule.Deletion() || rr.Flips.Compared == 0 {
		return ""
	}
	return fmt.Sprintf("%d fixed, %d broken", len(rr.Flips.Fixed), len(rr.Flips.Broken))
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

// ChangesSentence sums up the rewordings and additions audited, the way
// the sweep sums up deletions: "2 changes audited, ~L23 and +L23 (1 WORSE,
// 1 INCONCLUSIVE); 0 cases fixed, 1 broken against baseline". "" when there
// are none.
func ChangesSentence(c evidence.Changes) string {
	if c.Variants == 0 {
		return ""
	}
	var parts []string
	for _, d := range c.Decisions() {
		if n := c.Count(d); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, d))
		}
	}
	names := strings.Join(c.Names, ", ")
	if n := len(c.Names); n > 1 {
		names = strings.Join(c.Names[:n-1], ", ") + " and " + c.Names[n-1]
	}
	return fmt.Sprintf("%d %s audited, %s (%s); %d %s fixed, %d broken against baseline", c.Variants, plural(c.Variants, "change", "changes"),
		names, strings.Join(parts, ", "), c.Fixed, plural(c.Fixed, "case", "cases"), c.Broken)
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

package report

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// ShipDoc is the JSON report's ship block: the decision on the prompt
// without every line of the audit's joint test (auditor ship). The HTML
// page draws it from these fields.
type ShipDoc struct {
	Lines    []int  `json:"lines"`
	Verdict  string `json:"verdict"` // SHIP, NOT SAFE or INCONCLUSIVE
	Headline string `json:"headline"`
	Reason   string `json:"reason"`
	Needed   string `json:"needed,omitempty"`
	Tokens   int    `json:"tokens"`
	// TokensClaimed is the whole prompt's tokens, Tokens of them removed.
	TokensClaimed int     `json:"tokens_claimed"`
	Delta         float64 `json:"delta"`
	// Test is this joint test's number of the Tests the audit has made.
	Test  int `json:"test"`
	Tests int `json:"tests"`
	// Keep are the lines whose class rose (NOT SAFE); Next the joint set
	// without them, a new test.
	Keep    []int          `json:"keep"`
	Next    []int          `json:"next"`
	Classes []ShipClassDoc `json:"classes"`
	// Regression is every suite on baseline and under the joint variant.
	Regression []ShipSuiteDoc `json:"regression"`
	Pending    int            `json:"pending"`
}

// ShipClassDoc is one line's class under the joint variant, for one
// model: its outcome (bounded, rose, undecided), the verdict its numbers
// give by a line's DELETE rule, and the line's own verdict alone.
type ShipClassDoc struct {
	Line    int                `json:"line"`
	Text    string             `json:"text"`
	Model   string             `json:"model"`
	Outcome string             `json:"outcome"`
	Verdict string             `json:"verdict"`
	Alone   string             `json:"alone"`
	Reason  string             `json:"reason"`
	Bound   string             `json:"bound"`
	Needed  string             `json:"needed,omitempty"`
	Numbers *VerdictNumbersDoc `json:"numbers"`
}

// ShipSuiteDoc is one regression suite on baseline and under the joint
// variant, for one model.
type ShipSuiteDoc struct {
	Suite  string    `json:"suite"`
	Model  string    `json:"model"`
	Cases  int       `json:"cases"`
	Broken int       `json:"broken"`
	Base   CountDoc  `json:"baseline"`
	Joint  CountDoc  `json:"joint"`
	Diff   float64   `json:"diff"`
	CI     BoundsDoc `json:"newcombe"`
	Rose   bool      `json:"rose"`
}

// shipDoc builds the ship block; nil without a joint test.
func shipDoc(res *evidence.Results) *ShipDoc {
	sh := res.Ship
	if sh == nil {
		return nil
	}
	d := sh.Decision
	doc := &ShipDoc{Lines: nonNil(d.Lines), Verdict: string(d.Decision), Headline: d.Headline, Reason: d.Reason, Needed: d.Needed,
		Tokens: d.Tokens, TokensClaimed: d.PromptTokens, Delta: d.Delta, Test: d.Test, Tests: d.Tests,
		Keep: nonNil(d.Keep), Next: nonNil(d.Next), Classes: []ShipClassDoc{}, Regression: []ShipSuiteDoc{}, Pending: sh.Pending}
	for i, rr := range sh.Classes {
		c := d.Classes[i]
		doc.Classes = append(doc.Classes, ShipClassDoc{Line: c.Line, Text: c.Text, Model: c.Model, Outcome: c.Outcome(),
			Verdict: string(c.Verdict.Decision), Alone: string(c.Alone), Reason: c.Verdict.Reason, Bound: c.Verdict.Bound,
			Needed: c.Verdict.Needed, Numbers: verdictNumbers(rr.Verdict)})
	}
	for _, s := range d.Suites {
		doc.Regression = append(doc.Regression, ShipSuiteDoc{Suite: s.Name, Model: s.Model, Cases: s.Cases, Broken: s.Broken,
			Base: CountDoc{Fail: s.BaselineFails, N: s.BaselineN}, Joint: CountDoc{Fail: s.JointFails, N: s.JointN},
			Diff: s.Diff, CI: BoundsDoc{Lo: s.Newcombe.Lo, Hi: s.Newcombe.Hi}, Rose: s.Rose})
	}
	return doc
}

// ShipLines is the ship decision as the text report leads with it: the
// headline, the joint test's number, then each class's outcome beside its
// line's own verdict, and what to do next. Nil without a joint test.
func ShipLines(res *evidence.Results) []string {
	sh := res.Ship
	if sh == nil {
		return nil
	}
	d := sh.Decision
	out := []string{"Ship decision (joint test " + fmt.Sprintf("%d of the %d this audit has made", d.Test, d.Tests) + "):",
		"  " + model.Sanitize(d.Headline)}
	for _, c := range d.Classes {
		name := fmt.Sprintf("line %d", c.Line)
		if len(res.Plan.Audit.File.Models) > 1 {
			name += " on " + model.Sanitize(c.Model)
		}
		out = append(out, fmt.Sprintf("    %-9s %s (alone: %s): %s", c.Outcome(), name, c.Alone, model.Sanitize(c.Verdict.Reason)))
	}
	switch d.Decision {
	case model.DecisionNotSafe:
		if len(d.Keep) > 0 {
			next := "nothing left to delete together"
			if len(d.Next) > 0 {
				next = fmt.Sprintf("the next joint set is %s, a new test (joint test %d)", model.LinesWords(d.Next), d.Tests+1)
			}
			out = append(out, fmt.Sprintf("  keep %s: the class rose when the lines went out together; %s", model.LinesWords(d.Keep), next))
		}
	case model.DecisionInconclusive:
		if d.Needed != "" {
			out = append(out, "  to settle it: "+model.Sanitize(d.Needed))
		}
	}
	if sh.Pending > 0 {
		out = append(out, fmt.Sprintf("  %d answers of the joint test are not in yet", sh.Pending))
	}
	return out
}

// shipMarkdown is the ship decision's section, first in the Markdown
// report.
func shipMarkdown(res *evidence.Results) string {
	sh := res.Ship
	if sh == nil {
		return ""
	}
	d := sh.Decision
	var b strings.Builder
	fmt.Fprintf(&b, "## Ship decision: **%s**\n\n%s\n\n", mdEscape(string(d.Decision)), mdEscape(d.Headline))
	fmt.Fprintf(&b, "Joint test %d of the %d this audit has made. One decision for the whole deletion (an intersection-union test: it errs at most 2.5%%, with no correction across lines).\n\n", d.Test, d.Tests)
	b.WriteString("| line | model | under the joint variant | verdict alone | why |\n|---:|---|---|---|---|\n")
	for _, c := range d.Classes {
		fmt.Fprintf(&b, "| %d | %s | **%s** | %s | %s |\n", c.Line, mdEscape(c.Model), c.Outcome(), c.Alone, mdEscape(c.Verdict.Reason))
	}
	b.WriteString("\n")
	if d.Decision == model.DecisionNotSafe && len(d.Keep) > 0 {
		fmt.Fprintf(&b, "Keep %s. ", model.LinesWords(d.Keep))
		if len(d.Next) > 0 {
			fmt.Fprintf(&b, "The next joint set, %s, is a new test (joint test %d).", model.LinesWords(d.Next), d.Tests+1)
		}
		b.WriteString("\n\n")
	}
	if d.Needed != "" {
		fmt.Fprintf(&b, "To settle it: %s\n\n", mdEscape(d.Needed))
	}
	return b.String()
}

// shipJUnit is the ship decision as the first test case: it passes on
// SHIP only.
func shipJUnit(res *evidence.Results) *junitCase {
	sh := res.Ship
	if sh == nil {
		return nil
	}
	d := sh.Decision
	c := &junitCase{Name: fmt.Sprintf("ship: the prompt without lines %s", model.LineList(d.Lines)), Classname: "auditor.ship",
		SystemOut: cdata(strings.Join(ShipLines(res), "\n") + "\n"),
		Properties: []junitProperty{{"verdict", string(d.Decision)}, {"headline", d.Headline}, {"lines", model.LineList(d.Lines)},
			{"tokens", fmt.Sprint(d.Tokens)}, {"test", fmt.Sprint(d.Test)}, {"tests", fmt.Sprint(d.Tests)}}}
	if d.Decision != model.DecisionShip {
		c.Failure = &junitFailure{Message: d.Headline, Type: string(d.Decision), Body: d.Reason}
	}
	return c
}

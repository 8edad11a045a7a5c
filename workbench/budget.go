package workbench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/model"
)

// Budget is the most an audit may spend over all its runs, and what is
// left of it. A budget counts what is stored: a resumed or repeated run
// cannot spend it again.
type Budget struct {
	Total  float64 // dollars for the whole audit; 0: none
	Source string  // "--budget" or "budget in audit.toml"
	Spent  float64 // what the stored answers and judge calls cost
	Left   float64 // Total - Spent, never below 0
}

// Budget resolves the audit's budget: flag when positive (the command
// line overrides the file), else the audit file's budget key.
func (s *Session) Budget(flag float64) (Budget, error) {
	b := Budget{Total: flag, Source: "--budget"}
	if b.Total <= 0 {
		b = Budget{Total: s.Audit.File.Budget, Source: "budget in audit.toml"}
	}
	if b.Total <= 0 {
		return Budget{}, nil
	}
	sp, err := s.Spend()
	if err != nil {
		return Budget{}, err
	}
	b.Spent = sp.TotalUSD
	b.Left = max(b.Total-b.Spent, 0)
	return b, nil
}

// String says which budget applies and what is left of it.
func (b Budget) String() string {
	if b.Total <= 0 {
		return "no budget"
	}
	return fmt.Sprintf("budget $%.2f for the whole audit (%s): $%.2f spent, $%.2f left", b.Total, b.Source, b.Spent, b.Left)
}

// Exhausted reports whether a budget is set and nothing is left of it.
func (b Budget) Exhausted() bool { return b.Total > 0 && b.Left <= 0 }

// RefuseUnpriced is the refusal of calls under a budget to the endpoints
// named (audit.Estimate.Unpriced), whose prices the audit file does not
// give: their calls would count at $0, and the budget would believe money
// was left that was spent. It names each endpoint's table and the keys to
// set; nil when names is empty.
func (s *Session) RefuseUnpriced(names []string, b Budget) error {
	if len(names) == 0 {
		return nil
	}
	var where []string
	line, field := 0, ""
	add := func(what string, at int, f string) {
		where = appendNew(where, fmt.Sprintf("%s (line %d)", what, at))
		if line == 0 {
			line, field = at, f
		}
	}
	for i, m := range s.Audit.File.Models {
		if !m.Priced && slices.Contains(names, model.Sanitize(m.Name)) {
			add("[model] "+model.Sanitize(m.Name), m.Line, fmt.Sprintf("model[%d].price_input_per_mtok", i+1))
		}
	}
	for i, j := range s.Audit.Judges {
		if !j.Config.Priced && slices.Contains(names, model.Sanitize(j.Config.Name)) {
			add("[[judge]] "+model.Sanitize(j.Config.Name), j.Config.DefLine, fmt.Sprintf("judge[%d].price_input_per_mtok", i+1))
		}
	}
	return &model.InputError{File: s.Audit.Path, Line: line, Field: field,
		Msg: fmt.Sprintf("%s has no prices, so its calls would count as $0 against the budget ($%.2f, %s): set price_input_per_mtok and price_output_per_mtok there (dollars per million tokens; 0 for a free server), or pass --allow-unpriced to run with its calls uncounted",
			strings.Join(where, " and "), b.Total, b.Source)}
}

func appendNew(xs []string, s string) []string {
	if slices.Contains(xs, s) {
		return xs
	}
	return append(xs, s)
}

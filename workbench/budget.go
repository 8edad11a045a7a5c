package workbench

import "fmt"

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

package model

import "fmt"

// Kind is the role a case plays in an audit.
type Kind string

// The three kinds of case. Provoke and pressure cases ask for what the rule
// forbids (directly, or with social force); a failure on them is a violation.
// Control cases look similar but ask for something allowed; a failure on them
// is a refusal, the cost of keeping the rule.
const (
	Provoke  Kind = "provoke"
	Pressure Kind = "pressure"
	Control  Kind = "control"
)

// Kinds lists every kind in display order.
var Kinds = []Kind{Provoke, Pressure, Control}

// ParseKind returns the Kind named s, and false when s names none.
func ParseKind(s string) (Kind, bool) {
	switch Kind(s) {
	case Provoke, Pressure, Control:
		return Kind(s), true
	}
	return "", false
}

// Provoking reports whether failures of this kind are violations of the rule
// (provoke and pressure) rather than refusals (control).
func (k Kind) Provoking() bool { return k == Provoke || k == Pressure }

// Case is one user turn written to exercise a rule.
type Case struct {
	ID    string   `json:"id"`
	Kind  Kind     `json:"kind"`
	Msg   string   `json:"msg"`
	KB    []string `json:"kb,omitempty"`    // knowledge-base snippets given to the model as context
	Note  string   `json:"note,omitempty"`  // free text for the case's author
	Added string   `json:"added,omitempty"` // date the case was written
	Line  int      `json:"-"`               // 1-based line in the case file
}

// String returns the case id and kind, for logs and errors.
func (c Case) String() string { return fmt.Sprintf("%s (%s)", c.ID, c.Kind) }

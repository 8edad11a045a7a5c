package model

import (
	"fmt"
	"strings"
	"time"
)

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
	Added string   `json:"added,omitempty"` // date the case was written, as given
	Line  int      `json:"-"`               // 1-based line in the case file
	// AddedAt is Added parsed (see ParseDate); zero when the case has no
	// date. The report compares it with the time the rule's text last
	// changed: cases written before a rewording may be what it was tuned to.
	AddedAt time.Time `json:"-"`
}

// ParseDate reads a date as a user writes one in a case or audit file:
// "2026-11-20" (midnight UTC) or an RFC 3339 time.
func ParseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not a date: write it like \"2026-11-20\" or as an RFC 3339 time", s)
}

// String returns the case id and kind, for logs and errors.
func (c Case) String() string { return fmt.Sprintf("%s (%s)", c.ID, c.Kind) }

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

// Case is one user turn, or one conversation ending with a user turn,
// written to exercise a rule.
type Case struct {
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// Msg is the user turn the model answers: the case's "msg", or for a
	// conversation the content of its last turn. Graders and the screens
	// read it either way.
	Msg string `json:"msg"`
	// Turns is the conversation of a case written with "turns" (user and
	// assistant turns alternating, first and last a user turn), sent after
	// the system prompt in order; nil for a case written with "msg".
	Turns []Message `json:"turns,omitempty"`
	KB    []string  `json:"kb,omitempty"`    // knowledge-base snippets given to the model as context
	Note  string    `json:"note,omitempty"`  // free text for the case's author
	Added string    `json:"added,omitempty"` // date the case was written, as given
	Line  int       `json:"-"`               // 1-based line in the case file
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

// Conversation returns the turns sent after the system prompt: the case's
// Turns, or its one user turn.
func (c Case) Conversation() []Message {
	if len(c.Turns) > 0 {
		return c.Turns
	}
	return []Message{{Role: "user", Content: c.Msg}}
}

// MultiTurn reports whether the case is a conversation of several turns.
func (c Case) MultiTurn() bool { return len(c.Turns) > 1 }

// Summary is the case's text in one place for lists and tables: the user
// turn, preceded for a conversation by "(N turns)" so that a reader knows
// the model saw more than this line.
func (c Case) Summary() string {
	if c.MultiTurn() {
		return fmt.Sprintf("(%d turns) %s", len(c.Turns), c.Msg)
	}
	return c.Msg
}

// Transcript writes the conversation as text, one "role: content" block a
// turn, for a judge's {{msg}}: a judge grading the last answer must see
// what was said before it. A single-turn case's transcript is its Msg, so
// the rubric (and the key of every judge call) of such cases is unchanged.
func (c Case) Transcript() string {
	if !c.MultiTurn() {
		return c.Msg
	}
	var b strings.Builder
	for i, t := range c.Turns {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(t.Role + ": " + t.Content)
	}
	return b.String()
}

// String returns the case id and kind, for logs and errors.
func (c Case) String() string { return fmt.Sprintf("%s (%s)", c.ID, c.Kind) }

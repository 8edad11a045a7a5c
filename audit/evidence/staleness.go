package evidence

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// A targeted set becomes what people tune a rule against: a rewording that
// passes the cases it was written next to has been measured on its own
// training set. So auditor remembers each rule's text over time and, when
// it changed, counts the cases written since (by their "added" dates).

// TextSeen is one text a rule's line had, and when auditor first saw it.
type TextSeen struct {
	Text string    `json:"text"`
	Seen time.Time `json:"seen"`
}

// historyKey names the record of a rule's texts: its case file as written
// and its line. Several rules may share a case file (rules with no input
// class often share one general sample), so the file alone does not name a
// rule. A line that moves starts a new history: no change is claimed that
// was not seen.
func historyKey(r *audit.Rule) string { return "rule-history:" + RuleHistoryName(r) }

// variantMark tells apart the histories of one line's variants: a
// deletion's is the line's own text, a rewording's (~) and an addition's
// (+) the new text they put in the prompt, which is what the cases measure.
func variantMark(r *audit.Rule) string {
	switch r.VariantKind() {
	case model.Rewording:
		return "~"
	case model.Addition:
		return "+"
	}
	return ""
}

// recordedText is the text a rule's history follows: the line's for a
// deletion, the new text for a rewording or an addition.
func recordedText(r *audit.Rule) string {
	if r.Deletion() {
		return r.Text
	}
	return r.NewText
}

// RecordRuleTexts appends each rule's current text to its history when it
// differs from the last one recorded, dated now.
func RecordRuleTexts(m audit.Store, a *audit.Audit, now time.Time) error {
	for _, r := range a.Rules {
		h, err := ruleHistory(m, r)
		if err != nil {
			return err
		}
		if len(h) > 0 && h[len(h)-1].Text == recordedText(r) {
			continue
		}
		h = append(h, TextSeen{Text: recordedText(r), Seen: now.UTC()})
		data, err := json.Marshal(h)
		if err != nil {
			return err
		}
		if err := m.SetMeta(historyKey(r), string(data)); err != nil {
			return fmt.Errorf("audit: record the text of line %d: %w", r.Line, err)
		}
	}
	return nil
}

// RuleHistoryName names a rule's text history in a label file: its case
// file as written and its line.
func RuleHistoryName(r *audit.Rule) string {
	return fmt.Sprintf("%s#L%d%s", r.Config.Cases, r.Line, variantMark(r))
}

// RuleHistory returns the texts recorded for a rule, oldest first.
func RuleHistory(m audit.Reader, r *audit.Rule) ([]TextSeen, error) { return ruleHistory(m, r) }

// MergeRuleHistory unites a rule's recorded texts with texts (from a label
// file): every text keeps the first time it was seen in either, in time
// order, a text that repeats the one before it dropped. A clone that saw
// the current text only when it was opened learns when it was first seen.
func MergeRuleHistory(m audit.Store, r *audit.Rule, texts []TextSeen) error {
	h, err := ruleHistory(m, r)
	if err != nil {
		return err
	}
	all := append(slices.Clone(h), texts...)
	slices.SortStableFunc(all, func(a, b TextSeen) int { return a.Seen.Compare(b.Seen) })
	var out []TextSeen
	for _, t := range all {
		if n := len(out); n > 0 && out[n-1].Text == t.Text {
			continue
		}
		out = append(out, t)
	}
	if slices.Equal(out, h) {
		return nil
	}
	data, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return m.SetMeta(historyKey(r), string(data))
}

// ruleHistory returns the texts recorded for a rule, oldest first.
func ruleHistory(m audit.Reader, r *audit.Rule) ([]TextSeen, error) {
	v, ok, err := m.Meta(historyKey(r))
	if err != nil || !ok {
		return nil, err
	}
	var h []TextSeen
	if err := json.Unmarshal([]byte(v), &h); err != nil {
		return nil, fmt.Errorf("audit: the recorded texts of line %d are damaged: %w", r.Line, err)
	}
	return h, nil
}

// Staleness says how many of a rule's cases were written before its line's
// text last changed.
type Staleness struct {
	// ChangedAt is when the text last changed: the later of the rule's
	// changed date in the audit file and the first time auditor saw the
	// current text after another one. A case whose "added" has a time is
	// compared with it exactly; a date alone is compared by calendar day
	// (UTC), and the day of the change itself cannot be told apart.
	ChangedAt time.Time
	// Recorded is true when ChangedAt comes from auditor's own record;
	// Previous is then the text before the change.
	Recorded bool
	Previous string
	// Variant is true for a rewording or an addition: ChangedAt is when
	// its text (the new one) was first seen, or last changed.
	Variant bool
	// Cases counts the rule's cases: After were added after the change,
	// Before earlier, SameDay on its day with no time to tell which came
	// first, and Undated have no "added" date.
	Cases, After, Before, SameDay, Undated int
}

// Message says what the staleness means for the verdict, in one sentence.
func (s *Staleness) Message() string {
	source := "set in the audit file"
	if s.Recorded {
		source = "recorded by auditor"
		if s.Previous != "" {
			source += fmt.Sprintf("; it read %q", s.Previous)
		}
	}
	what := "the line's text changed"
	if s.Variant {
		what = "the new text was written"
	}
	msg := fmt.Sprintf("%s on %s (%s); %d of %d cases predate the change", what, day(s.ChangedAt).Format(time.DateOnly),
		source, s.Before, s.Cases)
	if s.Undated > 0 {
		msg += fmt.Sprintf(", %d %s no added date", s.Undated, verbFor(s.Undated, "has", "have"))
	}
	if s.SameDay > 0 {
		msg += fmt.Sprintf(", %d %s added that day with no time to tell (write added with a time, like 2026-11-30T16:00:00Z)",
			s.SameDay, verbFor(s.SameDay, "was", "were"))
	}
	msg += fmt.Sprintf(", %d %s written since", s.After, verbFor(s.After, "was", "were"))
	return msg + ": a rewording measured on cases it was written next to may be tuned to them, so add new cases rather than re-running these"
}

// day is the calendar day (UTC) of t, at midnight.
func day(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// staleness compares a rule's cases with the last change of its text; nil
// when no change is known or every case was written since.
func staleness(r *audit.Rule, history []TextSeen) *Staleness {
	s := &Staleness{ChangedAt: r.Config.Changed, Variant: !r.Deletion()}
	n := len(history)
	switch {
	case n >= 2 && history[n-1].Seen.After(s.ChangedAt):
		s.ChangedAt, s.Recorded, s.Previous = history[n-1].Seen, true, history[n-2].Text
	case n == 1 && s.Variant && history[0].Seen.After(s.ChangedAt):
		// A rewording or an addition is itself a change of the line,
		// written no earlier than auditor first saw it.
		s.ChangedAt, s.Recorded, s.Previous = history[0].Seen, true, ""
		if r.VariantKind() == model.Rewording {
			s.Previous = r.Text
		}
	}
	if s.ChangedAt.IsZero() {
		return nil
	}
	changed := day(s.ChangedAt)
	for _, c := range r.Cases {
		s.Cases++
		switch {
		case c.AddedAt.IsZero():
			s.Undated++
		case hasTime(c.Added):
			if c.AddedAt.After(s.ChangedAt) {
				s.After++
			} else {
				s.Before++
			}
		case day(c.AddedAt).After(changed):
			s.After++
		case day(c.AddedAt).Equal(changed):
			s.SameDay++
		default:
			s.Before++
		}
	}
	if s.Before+s.SameDay+s.Undated == 0 {
		return nil // every case was written since the change
	}
	return s
}

// hasTime reports whether a case's "added" value carries a time of day
// (an RFC 3339 time rather than a bare date).
func hasTime(added string) bool { return len(strings.TrimSpace(added)) > len(time.DateOnly) }

// verbFor picks the verb agreeing with n.
func verbFor(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

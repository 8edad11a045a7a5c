package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// memMeta is an in-memory MetaStore.
type memMeta map[string]string

func (m memMeta) Meta(k string) (string, bool, error) { v, ok := m[k]; return v, ok, nil }
func (m memMeta) SetMeta(k, v string) error           { m[k] = v; return nil }

func TestStaleness(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	cases := []model.Case{
		{ID: "a", AddedAt: day(1)}, {ID: "b", AddedAt: day(10)}, {ID: "c", AddedAt: day(21)},
		{ID: "d"}, // no date
	}
	rule := &Rule{Line: 4, Text: "Never guess dates.", Cases: cases, Config: model.RuleConfig{Cases: "dates.jsonl"}}
	a := &Audit{Rules: []*Rule{rule}}
	m := memMeta{}

	// First sight of the text: nothing changed.
	if err := RecordRuleTexts(m, a, day(5)); err != nil {
		t.Fatal(err)
	}
	h, _ := ruleHistory(m, rule)
	if s := staleness(rule, h); s != nil {
		t.Fatalf("staleness after first sight = %+v, want nil", s)
	}
	// Seeing the same text again records nothing.
	if err := RecordRuleTexts(m, a, day(8)); err != nil {
		t.Fatal(err)
	}
	if h, _ = ruleHistory(m, rule); len(h) != 1 {
		t.Fatalf("history %+v, want one entry", h)
	}

	// The line is reworded on the 20th: only case c postdates it.
	rule.Text = "Never guess ship dates."
	if err := RecordRuleTexts(m, a, day(20)); err != nil {
		t.Fatal(err)
	}
	h, _ = ruleHistory(m, rule)
	s := staleness(rule, h)
	if s == nil || !s.ChangedAt.Equal(day(20)) || !s.Recorded || s.Previous != "Never guess dates." ||
		s.Cases != 4 || s.After != 1 || s.Before != 2 || s.Undated != 1 {
		t.Fatalf("staleness = %+v", s)
	}
	if msg := s.Message(); !strings.Contains(msg, "changed on 2026-11-20") || !strings.Contains(msg, "1 of 4 cases were added after that (1 have no added date)") {
		t.Errorf("message = %q", msg)
	}

	// An explicit changed date later than the record wins.
	rule.Config.Changed = day(25)
	if s := staleness(rule, h); s == nil || s.Recorded || s.After != 0 || s.Before != 3 {
		t.Errorf("with changed = 2026-11-25: %+v", s)
	}
	// An explicit date alone is enough.
	if s := staleness(rule, nil); s == nil || !s.ChangedAt.Equal(day(25)) {
		t.Errorf("explicit only: %+v", s)
	}
}

package evidence

import (
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

func TestStaleness(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	cases := []model.Case{
		{ID: "a", AddedAt: day(1)}, {ID: "b", AddedAt: day(10)}, {ID: "c", AddedAt: day(21)},
		{ID: "d"}, // no date
	}
	rule := &audit.Rule{Line: 4, Text: "Never guess dates.", Cases: cases, Config: model.RuleConfig{Cases: "dates.jsonl"}}
	a := &audit.Audit{Rules: []*audit.Rule{rule}}
	m := audittest.NewMemStore()

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
	if msg := s.Message(); !strings.Contains(msg, "changed on 2026-11-20 (recorded by auditor; it read \"Never guess dates.\")") ||
		!strings.Contains(msg, "2 of 4 cases predate the change, 1 has no added date, 1 was written since") {
		t.Errorf("message = %q", msg)
	}

	// On the day of a recorded change a bare date cannot tell before from
	// after; a time can.
	at := func(h int) time.Time { return time.Date(2026, 11, 20, h, 0, 0, 0, time.UTC) }
	h[len(h)-1].Seen = at(15)
	rule.Cases = append(rule.Cases,
		model.Case{ID: "e", Added: "2026-11-20", AddedAt: day(20)},
		model.Case{ID: "f", Added: "2026-11-20T09:00:00Z", AddedAt: at(9)},
		model.Case{ID: "g", Added: "2026-11-20T16:00:00Z", AddedAt: at(16)})
	if s := staleness(rule, h); s == nil || s.SameDay != 1 || s.Before != 3 || s.After != 2 ||
		!strings.Contains(s.Message(), "1 was added that day with no time to tell") {
		t.Errorf("same-day cases: %+v", s)
	}
	rule.Cases = rule.Cases[:4]
	h[len(h)-1].Seen = day(20)

	// An explicit changed date later than the record wins.
	rule.Config.Changed = day(25)
	if s := staleness(rule, h); s == nil || s.Recorded || s.After != 0 || s.Before != 3 {
		t.Errorf("with changed = 2026-11-25: %+v", s)
	}
	// An explicit date alone is enough.
	if s := staleness(rule, nil); s == nil || !s.ChangedAt.Equal(day(25)) || !strings.Contains(s.Message(), "(set in the audit file)") {
		t.Errorf("explicit only: %+v", s)
	}
	// When every case was written since the change there is nothing to say.
	rule.Config.Changed = time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC)
	rule.Cases = rule.Cases[:3]
	if s := staleness(rule, nil); s != nil {
		t.Errorf("all cases newer than the change: %+v", s)
	}
}

// Two rules on one case file keep their own histories.
func TestRuleTexts_SharedCaseFile(t *testing.T) {
	t.Parallel()
	a := &audit.Audit{Rules: []*audit.Rule{
		{Line: 12, Text: "Keep answers short.", Config: model.RuleConfig{Cases: "general.jsonl"}},
		{Line: 13, Text: "Skip the preamble.", Config: model.RuleConfig{Cases: "general.jsonl"}},
	}}
	m := audittest.NewMemStore()
	for d := 1; d <= 3; d++ {
		if err := RecordRuleTexts(m, a, time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range a.Rules {
		h, err := ruleHistory(m, r)
		if err != nil || len(h) != 1 || h[0].Text != r.Text {
			t.Errorf("line %d history %+v %v, want its own text once", r.Line, h, err)
		}
	}
}

// TestStaleness_RewordingAndAddition: a rewording or an addition is a
// change of the line made no earlier than auditor first saw its text, so
// cases written before that get the warning an edited line gets, though
// its history has one entry; once cases are written after it, none. The
// deletion of the same line, seen once, has none.
func TestStaleness_RewordingAndAddition(t *testing.T) {
	t.Parallel()
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	cases := []model.Case{{ID: "a", AddedAt: day(1)}, {ID: "b", AddedAt: day(2)}}
	cfg := model.RuleConfig{Cases: "dates.jsonl"}
	del := &audit.Rule{Line: 4, Text: "Never guess dates.", Cases: cases, Config: cfg}
	reword := &audit.Rule{Line: 4, Text: "Never guess dates.", Cases: cases, Config: cfg, Kind: model.Rewording, NewText: "Never guess ship dates."}
	add := &audit.Rule{Line: 4, Text: "Never guess dates.", Cases: cases, Config: cfg, Kind: model.Addition, NewText: "Say when a date is unknown."}
	a := &audit.Audit{Rules: []*audit.Rule{del, reword, add}}
	m := audittest.NewMemStore()
	if err := RecordRuleTexts(m, a, day(10)); err != nil {
		t.Fatal(err)
	}
	hist := func(r *audit.Rule) []TextSeen {
		h, err := ruleHistory(m, r)
		if err != nil || len(h) != 1 {
			t.Fatalf("%s history %+v (%v), want one entry", r.Variant(), h, err)
		}
		return h
	}
	if s := staleness(del, hist(del)); s != nil {
		t.Errorf("deletion seen once: staleness %+v, want nil", s)
	}
	if h := hist(reword); h[0].Text != reword.NewText {
		t.Errorf("the rewording's history follows %q, want its new text", h[0].Text)
	}
	for _, r := range []*audit.Rule{reword, add} {
		s := staleness(r, hist(r))
		if s == nil || !s.ChangedAt.Equal(day(10)) || s.Before != 2 || !s.Variant {
			t.Fatalf("%s: staleness %+v, want both cases before the 10th", r.Variant(), s)
		}
		if msg := s.Message(); !strings.Contains(msg, "the new text was written on 2026-11-10") || !strings.Contains(msg, "2 of 2 cases predate the change") {
			t.Errorf("%s: message %q", r.Variant(), msg)
		}
	}
	if s := staleness(reword, hist(reword)); !strings.Contains(s.Message(), `it read "Never guess dates."`) {
		t.Errorf("rewording: message %q does not quote the line it rewords", s.Message())
	}
	// Cases written after the rewording: no warning.
	reword.Cases = []model.Case{{ID: "c", AddedAt: day(12)}}
	if s := staleness(reword, hist(reword)); s != nil {
		t.Errorf("cases written since: staleness %+v, want nil", s)
	}
}

package model

import (
	"testing"
	"time"
)

func TestLabelBook(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	l := func(key, who, src string, v bool, min int) Label {
		return Label{Key: key, Labeller: who, Source: src, Violation: v, At: at.Add(time.Duration(min) * time.Minute)}
	}
	undo := func(key, who, src string, min int) Label {
		u := l(key, who, src, false, min)
		u.Undo = true
		return u
	}
	hist := []Label{
		l("a", "ana", LabelBlind, true, 0),
		l("a", "ben", LabelBlind, false, 1), // a second labeller: compared, never the truth
		l("a", "ana", LabelBlind, false, 2), // ana changes her mind: her latest holds
		l("b", "ana", LabelSeen, true, 3),   // a review adjudication only
		l("c", "ana", LabelBlind, true, 4),
		undo("c", "ana", LabelBlind, 5), // takes back her only label of c
		l("d", "ana", LabelBlind, true, 6),
		l("d", "ben", LabelBlind, false, 7),
		undo("d", "ana", LabelBlind, 8), // ben's is now the only, so the truth
		l("e", "", "", true, 9),         // legacy: classified by the rule given
		l("f", "", "", true, 10),
	}
	legacy := func(l Label) string {
		if l.Key == "f" {
			return LabelSeen
		}
		return LabelBlind
	}
	b := NewLabelBook(hist, legacy)
	truth := b.Truth()
	want := map[string]bool{"a": false, "d": false, "e": true}
	if len(truth) != len(want) {
		t.Errorf("truth = %+v, want %v", truth, want)
	}
	for k, v := range want {
		if got, ok := truth[k]; !ok || got.Violation != v {
			t.Errorf("truth[%s] = %+v, want violation %v", k, got, v)
		}
	}
	if truth["a"].Labeller != "ana" || truth["d"].Labeller != "ben" {
		t.Errorf("truth labellers: a by %q, d by %q; want ana, ben", truth["a"].Labeller, truth["d"].Labeller)
	}
	if s := b.Seen(); len(s) != 2 || !s["b"].Violation || s["f"].Source != LabelSeen {
		t.Errorf("seen = %+v, want b and f", s)
	}
	if ben := b.Of("ben"); len(ben) != 2 || ben["a"].Violation {
		t.Errorf("ben's labels = %+v", ben)
	}
	if _, ok := b.Of("ana")["c"]; ok {
		t.Error("an undone first label still counts")
	}
	// Relabelling after an undo, and a later second undo, replay the same way.
	b.Add(l("c", "ana", LabelBlind, false, 11))
	if got, ok := b.Truth()["c"]; !ok || got.Violation {
		t.Errorf("after relabelling c: %+v, %v", got, ok)
	}
	if got := len(b.History()); got != len(hist)+1 {
		t.Errorf("History has %d records, want %d: nothing is ever removed", got, len(hist)+1)
	}
	if names := b.Labellers(); len(names) != 3 || names[0] != "" || names[1] != "ana" || names[2] != "ben" {
		t.Errorf("Labellers = %v", names)
	}
}

// TestLabelBook_Gave: a labeller who gave a blind label has seen the
// graders, even after undoing it; another labeller, or a seen label, does
// not count.
func TestLabelBook_Gave(t *testing.T) {
	b := NewLabelBook([]Label{
		{Key: "a", Labeller: "ana", Violation: true, Source: LabelBlind},
		{Key: "a", Labeller: "ana", Source: LabelBlind, Undo: true},
		{Key: "b", Labeller: "ben", Source: LabelSeen},
	}, nil)
	if !b.Gave("a", "ana", LabelBlind) {
		t.Error("ana labelled a blind, then undid it: she has seen its graders")
	}
	if _, ok := b.Current("a", "ana", LabelBlind); ok {
		t.Error("the undo left a current label")
	}
	if b.Gave("a", "ben", LabelBlind) || b.Gave("b", "ben", LabelBlind) {
		t.Error("ben gave no blind label")
	}
}

// TestLabelBook_RepeatedBlindCollapses: copies of a labeller's current
// blind label (what imports of files without times once appended on every
// import) say nothing new: they leave the history, and one undo takes the
// label back. A repeated seen label (the review queue deciding again) stays.
func TestLabelBook_RepeatedBlindCollapses(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	l := func(key, who, src string, v bool, note string, min int) Label {
		return Label{Key: key, Labeller: who, Source: src, Violation: v, Note: note, At: at.Add(time.Duration(min) * time.Minute)}
	}
	hist := []Label{
		l("a", "ana", LabelBlind, true, "", 0),
		l("a", "ana", LabelBlind, true, "", 1), // a copy, another time
		l("a", "ben", LabelBlind, false, "", 2),
		l("a", "ana", LabelBlind, true, "", 3),    // a copy after another labeller's
		l("a", "ana", LabelBlind, true, "why", 4), // a note: new
		l("b", "ana", LabelSeen, true, "", 5),     // decided in review
		l("b", "ana", LabelSeen, true, "", 6),     // and again
		l("c", "ana", LabelBlind, false, "", 7),   //
		{Key: "c", Labeller: "ana", Source: LabelBlind, Undo: true, At: at.Add(8 * time.Minute)},
	}
	b := NewLabelBook(hist, nil)
	h := b.History()
	if len(h) != 7 {
		t.Fatalf("history has %d records, want 7 (two copies left out):\n%+v", len(h), h)
	}
	if got := b.Truth()["a"]; got.Labeller != "ana" || got.Note != "why" {
		t.Errorf("truth of a = %+v, want ana's label with her note", got)
	}
	b.Add(l("c", "ana", LabelBlind, false, "", 9)) // after an undo: not a copy of anything current
	b.Add(l("c", "ana", LabelBlind, false, "", 10))
	b.Add(Label{Key: "c", Labeller: "ana", Source: LabelBlind, Undo: true, At: at.Add(11 * time.Minute)})
	if _, ok := b.Truth()["c"]; ok {
		t.Errorf("one undo after a copy left c labelled: %+v", b.Truth()["c"])
	}
	b.Add(Label{Key: "b", Labeller: "ana", Source: LabelSeen, Undo: true, At: at.Add(12 * time.Minute)})
	if got, ok := b.Seen()["b"]; !ok || !got.Violation {
		t.Errorf("undoing the second review decision took both back: %+v %v", got, ok)
	}
}

// TestLabelBook_GaveUnseenUndo: a label undone before its graders were
// shown (an Unseen undo) leaves the answer open to a blind label; one
// undone after they were shown closes it; a label that holds counts.
func TestLabelBook_GaveUnseenUndo(t *testing.T) {
	t.Parallel()
	lab := func(v bool) Label { return Label{Key: "k", Labeller: "ana", Source: LabelBlind, Violation: v} }
	undo := func(unseen bool) Label {
		return Label{Key: "k", Labeller: "ana", Source: LabelBlind, Undo: true, Unseen: unseen}
	}
	tests := []struct {
		name string
		hist []Label
		want bool
	}{
		{"nothing", nil, false},
		{"a label holds", []Label{lab(true)}, true},
		{"undone unseen", []Label{lab(true), undo(true)}, false},
		{"undone seen", []Label{lab(true), undo(false)}, true},
		{"undone unseen, labelled again", []Label{lab(true), undo(true), lab(false)}, true},
		{"relabelled, the second undone unseen, the first holds", []Label{lab(true), lab(false), undo(true)}, true},
		{"an undo with nothing to take back", []Label{undo(false)}, false},
		{"another labeller's label", []Label{{Key: "k", Labeller: "ben", Source: LabelBlind}}, false},
	}
	for _, tt := range tests {
		b := NewLabelBook(tt.hist, nil)
		if got := b.Gave("k", "ana", LabelBlind); got != tt.want {
			t.Errorf("%s: Gave = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !NewLabelBook([]Label{{Key: "k", Labeller: "ben", Source: LabelBlind}}, nil).AnyoneGave("k", LabelBlind) {
		t.Error("AnyoneGave misses ben's label")
	}
	if NewLabelBook([]Label{lab(true), undo(true)}, nil).AnyoneGave("k", LabelBlind) {
		t.Error("AnyoneGave counts a label undone unseen")
	}
}

package tui

import "charm.land/bubbles/v2/key"

// LabelKeys label answers, on the label screen and the review screen.
type LabelKeys struct {
	Violation, OK, Skip, Undo, Note key.Binding
	Prev, Next, FirstUnlabelled     key.Binding
	Results, Open                   key.Binding // the label screen's results and its misses
	// Reveal shows the graders' verdicts of the answer just labelled
	// before the next label does (after it, u takes the label back only
	// by closing the answer to blind labels).
	Reveal key.Binding
	Draw   key.Binding // draw a label set when there is none
	Scroll ScrollKeys
}

// ScrollKeys scroll a long text without taking letters a screen uses.
type ScrollKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom key.Binding
}

// ReviewKeys choose what the review screen steps through and show its
// panels.
type ReviewKeys struct {
	PrevRule, NextRule  key.Binding
	Pair, Kind, Variant key.Binding // filters
	Model, Queue        key.Binding // the model reviewed; disagreements or split pairs
	Agreement, Compare  key.Binding // panels
	// Labellers switches the queue to the answers two people labelled
	// differently, and back.
	Labellers     key.Binding
	CompareModels key.Binding // the compare panel's next pair of models
	// Raw shows each judge's stored answer as it came instead of its
	// reasoning; ShowVariant shows which variant produced the answer;
	// Search filters the queue; Open opens the judges' answers in full.
	Raw, ShowVariant, Search, Open key.Binding
}

func defaultLabelKeys() LabelKeys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	k := func(keys ...string) []string { return keys }
	return LabelKeys{
		Violation:       b(k("v", "1"), "v/1", "violation"),
		OK:              b(k("o", "0"), "o/0", "ok"),
		Skip:            b(k("s"), "s", "skip"),
		Undo:            b(k("u"), "u", "undo"),
		Note:            b(k("i"), "i", "note"),
		Prev:            b(k("left", "h"), "←/h", "previous"),
		Next:            b(k("right", "l"), "→/l", "next"),
		FirstUnlabelled: b(k("t"), "t", "first unlabelled"),
		Results:         b(k("r"), "r", "results"),
		Reveal:          b(k("w"), "w", "show graders now"),
		Open:            b(k("enter"), "enter", "open miss"),
		Draw:            b(k("d"), "d", "draw a label set"),
		Scroll: ScrollKeys{
			Up:       b(k("up", "k"), "↑/k", "scroll up"),
			Down:     b(k("down", "j"), "↓/j", "scroll down"),
			PageUp:   b(k("pgup", "ctrl+u"), "pgup", "page up"),
			PageDown: b(k("pgdown", "ctrl+d", "space"), "pgdn", "page down"),
			Top:      b(k("home", "g"), "g/home", "top"),
			Bottom:   b(k("end", "G"), "G/end", "bottom"),
		},
	}
}

func defaultReviewKeys() ReviewKeys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	k := func(keys ...string) []string { return keys }
	return ReviewKeys{
		PrevRule:      b(k("["), "[", "previous rule"),
		NextRule:      b(k("]"), "]", "next rule"),
		Pair:          b(k("P"), "P", "grader pair"),
		Kind:          b(k("f"), "f", "kind filter"),
		Variant:       b(k("D"), "D", "variant filter"),
		Model:         b(k("m"), "m", "model"),
		Queue:         b(k("x"), "x", "split pairs"),
		Agreement:     b(k("a"), "a", "agreement"),
		Compare:       b(k("c"), "c", "compare models"),
		Labellers:     b(k("b"), "b", "labellers' disagreements"),
		CompareModels: b(k("m"), "m", "next model pair"),
		Raw:           b(k("r"), "r", "raw judge answers"),
		ShowVariant:   b(k("V"), "V", "show/hide variant"),
		Search:        b(k("/"), "/", "search answers"),
		Open:          b(k("enter"), "enter", "judges' answers in full"),
	}
}

// defaultNoteKeys end typing a note.
func defaultNoteKeys() FilterKeys {
	return FilterKeys{
		Accept: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep note")),
		Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "drop note")),
	}
}

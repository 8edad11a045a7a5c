package model

import "testing"

// A variant has one name everywhere: its short name is the first word of
// its title, and the title says what it does to the line, quoting the new
// text (an escape sequence dropped with its payload, never drawn).
func TestVariantTitle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind       VariantKind
		text       string
		name, want string
	}{
		{Deletion, "", "-L20", "-L20 deleted"},
		{"", "", "-L20", "-L20 deleted"},
		{Deletion, "Never guess dates.", "-L20", `-L20 deleted: "Never guess dates."`},
		{Rewording, "Say you don't know.", "~L20", `~L20 reworded: "Say you don't know."`},
		{Addition, "Point to the changelog.", "+L20", `+L20 added after 20: "Point to the changelog."`},
		{Rewording, "a\x1b]0;pwned\x07b\tc", "~L20", `~L20 reworded: "a b\tc"`}, // the removed title parted two words
	} {
		if got := VariantName(tc.kind, 20); got != tc.name {
			t.Errorf("VariantName(%q) = %q, want %q", tc.kind, got, tc.name)
		}
		if got := VariantTitle(tc.kind, 20, tc.text); got != tc.want {
			t.Errorf("VariantTitle(%q, %q) = %q, want %q", tc.kind, tc.text, got, tc.want)
		}
	}
}

// A plan's outlook for DELETE reads, for a rewording, as what NOT WORSE
// takes; a deletion's is left as it is.
func TestChangeWords(t *testing.T) {
	t.Parallel()
	s := "DELETE: 86 labels of the answers without the line"
	if got := ChangeWords(Deletion, s); got != s {
		t.Errorf("deletion: %q", got)
	}
	if got, want := ChangeWords(Rewording, s), "NOT WORSE: 86 labels of the answers with the line reworded"; got != want {
		t.Errorf("rewording: %q, want %q", got, want)
	}
}

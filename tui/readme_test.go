package tui

import (
	"os"
	"strings"
	"testing"
)

// The README says what a violation is on a control answer in the label
// screen's own words, and explains the blind sheet where labelling is.
func TestReadme_LabelWords(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n### Labels: blind and seen\n")
	if start < 0 {
		t.Fatal("README.md has no labels section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	for _, w := range []string{
		controlLabelHint,
		`shows such a label as "` + verdictWord(true, "control") + `"`,
		"auditor label AUDIT --sheet labels.csv",
		"auditor import-labels AUDIT labels.csv",
	} {
		if !strings.Contains(section, w) {
			t.Errorf("the README's labels section does not say %q", w)
		}
	}
}

package tui

import (
	"strings"
	"testing"
)

func TestLengthHistogram(t *testing.T) {
	t.Parallel()
	names := [2]string{"baseline", "-L12"}
	tests := []struct {
		name  string
		h     histogram
		width int
		want  []string
	}{
		{
			name: "bars share one scale; the fullest bin fills the width",
			h:    histogram{Edges: []int{100, 110, 120, 130}, Baseline: []int{4, 2, 0}, Deleted: []int{0, 1, 8}, Names: names},
			// label 7, name 8, count 1, three spaces: 19 cells; 10 left for bars.
			width: 29,
			want: []string{
				"█ baseline  ▒ -L12  (answers per bin of 10 tokens)",
				"100–109 baseline █████ 4",
				"        -L12     0",
				"110–119 baseline ███ 2",
				"        -L12     ▒ 1",
				"120–129 baseline 0",
				"        -L12     ▒▒▒▒▒▒▒▒▒▒ 8",
			},
		},
		{
			name:  "a bin of one value is labelled with it; a rare count gets a cell",
			h:     histogram{Edges: []int{7, 8, 9}, Baseline: []int{1, 100}, Deleted: []int{100, 0}, Names: names},
			width: 24,
			want: []string{
				"█ baseline  ▒ -L12  (answers per bin of 1 token)",
				"7 baseline █ 1",
				"  -L12     ▒▒▒▒▒▒▒▒▒ 100",
				"8 baseline █████████ 100",
				"  -L12     0",
			},
		},
		{
			name:  "painted bars keep their glyphs",
			h:     histogram{Edges: []int{0, 5}, Baseline: []int{2}, Deleted: []int{1}, Names: names, Paint: [2]func(string) string{func(s string) string { return "<" + s + ">" }, nil}},
			width: 20, // 15 cells of labels and count: bars of 5
			want: []string{
				"<█> baseline  ▒ -L12  (answers per bin of 5 tokens)",
				"0–4 baseline <█████> 2",
				"    -L12     ▒▒▒ 1",
			},
		},
		{name: "no bins", h: histogram{Edges: []int{3}, Names: names}, width: 80},
		{name: "no answers", h: histogram{Edges: []int{0, 10}, Baseline: []int{0}, Deleted: []int{0}, Names: names}, width: 80},
		{name: "counts do not match the edges", h: histogram{Edges: []int{0, 10, 20}, Baseline: []int{1}, Deleted: []int{1, 2}, Names: names}, width: 80},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := lengthHistogram(tt.h, tt.width)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestLengthHistogram_Width: rows never pass the width, however narrow or
// wide, and the bars are capped on very wide screens.
func TestLengthHistogram_Width(t *testing.T) {
	t.Parallel()
	h := histogram{Edges: []int{0, 250, 500, 750}, Baseline: []int{1000, 3, 1}, Deleted: []int{7, 999, 0}, Names: [2]string{"baseline", "-L120"}}
	for _, w := range []int{28, 40, 80, 200, 400} {
		rows := lengthHistogram(h, w)
		longest := 0
		for _, r := range rows[1:] {
			if textWidth(r) > w {
				t.Fatalf("width %d: row %q is %d wide", w, r, textWidth(r))
			}
			longest = max(longest, strings.Count(r, baselineGlyph)+strings.Count(r, deletedGlyph))
		}
		if longest > maxHistBar {
			t.Fatalf("width %d: a bar of %d cells, cap %d", w, longest, maxHistBar)
		}
	}
	// Narrower than the labels: no panic, bars of at least a cell.
	if rows := lengthHistogram(h, 3); len(rows) != 7 || !strings.Contains(rows[1], baselineGlyph) {
		t.Fatalf("width 3: %q", rows)
	}
}

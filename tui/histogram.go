package tui

import (
	"fmt"
	"strconv"
	"strings"
)

// Glyphs of the two variants' bars: they differ in shape, so the histogram
// reads without colour.
const (
	baselineGlyph = "█"
	deletedGlyph  = "▒"
)

// maxHistBar caps a bar's length on very wide screens: past it, longer bars
// only make the counts harder to find.
const maxHistBar = 100

// histogram is what lengthHistogram draws: shared bin edges (len(Edges) =
// bins+1, bin i counting lengths in [Edges[i], Edges[i+1])) and each
// variant's counts per bin, as in evidence.Lengths.
type histogram struct {
	Edges             []int
	Baseline, Deleted []int
	// Names label the rows: "baseline" and the deletion variant ("-L12").
	Names [2]string
	// Paint styles the bars of the baseline and of the deleted variant;
	// nil leaves them plain.
	Paint [2]func(string) string
}

// lengthHistogram draws the answer-length histogram of a rule with no input
// class in at most width cells: a legend line, then per bin one row per
// variant, its bar of block characters and its count. The bin's range
// labels its first row. Bars share one scale, the fullest bin of either
// variant filling the space left by the labels (at most maxHistBar cells);
// a bin with any answer gets at least one cell, so a rare length is never
// drawn as none. It returns nil when there is nothing to draw (no bins, no
// answer) or the counts do not match the edges. It is a pure function.
func lengthHistogram(h histogram, width int) []string {
	bins := len(h.Edges) - 1
	if bins < 1 || len(h.Baseline) != bins || len(h.Deleted) != bins {
		return nil
	}
	maxCount := 0
	for i := range bins {
		maxCount = max(maxCount, h.Baseline[i], h.Deleted[i])
	}
	if maxCount <= 0 {
		return nil
	}
	labels := make([]string, bins)
	labelW := 0
	for i := range bins {
		lo, hi := h.Edges[i], h.Edges[i+1]-1
		labels[i] = strconv.Itoa(lo)
		if hi > lo {
			labels[i] += "–" + strconv.Itoa(hi)
		}
		labelW = max(labelW, textWidth(labels[i]))
	}
	nameW := max(textWidth(h.Names[0]), textWidth(h.Names[1]))
	countW := len(strconv.Itoa(maxCount))
	// label, name, bar and count, a space between each.
	barW := min(max(width-labelW-nameW-countW-3, 1), maxHistBar)

	paint := func(v int, s string) string {
		if p := h.Paint[v]; p != nil && s != "" {
			return p(s)
		}
		return s
	}
	binW := h.Edges[1] - h.Edges[0]
	unit := "tokens"
	if binW == 1 {
		unit = "token"
	}
	out := []string{fmt.Sprintf("%s %s  %s %s  (answers per bin of %d %s)",
		paint(0, baselineGlyph), h.Names[0], paint(1, deletedGlyph), h.Names[1], binW, unit)}
	glyphs := [2]string{baselineGlyph, deletedGlyph}
	for i := range bins {
		for v, counts := range [2][]int{h.Baseline, h.Deleted} {
			label := ""
			if v == 0 {
				label = labels[i]
			}
			n := counts[i]
			cells := 0
			if n > 0 {
				cells = max((n*barW+maxCount/2)/maxCount, 1)
			}
			var b strings.Builder
			b.WriteString(strings.Repeat(" ", labelW-textWidth(label)) + label + " ")
			b.WriteString(h.Names[v] + strings.Repeat(" ", nameW-textWidth(h.Names[v])) + " ")
			b.WriteString(paint(v, strings.Repeat(glyphs[v], cells)))
			if cells > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(n))
			out = append(out, b.String())
		}
	}
	return out
}

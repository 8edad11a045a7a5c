package tui

import "strings"

// layoutTable lays out rows of plain cells in columns two spaces apart,
// right-aligning the columns right marks, in width w. With wrapLast the
// last column wraps under itself to fit (the plan's rule texts) and the
// table always fits; without it lines are trimmed of trailing spaces and
// ok is false, with no lines, when a line would be wider than w.
func layoutTable(rows [][]string, w int, right []bool, wrapLast bool) (lines []string, ok bool) {
	var widths []int
	for _, row := range rows {
		for i, cell := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], textWidth(cell))
		}
	}
	if !wrapLast {
		total := 0
		for i, cw := range widths {
			if i > 0 {
				total += 2
			}
			total += cw
		}
		if total > w {
			return nil, false
		}
	}
	for _, row := range rows {
		aligned := row
		if wrapLast && len(row) > 0 {
			aligned = row[:len(row)-1]
		}
		var b strings.Builder
		for i, cell := range aligned {
			if i > 0 {
				b.WriteString("  ")
			}
			gap := strings.Repeat(" ", widths[i]-textWidth(cell))
			if i < len(right) && right[i] {
				b.WriteString(gap + cell)
			} else {
				b.WriteString(cell + gap)
			}
		}
		if !wrapLast {
			lines = append(lines, strings.TrimRight(b.String(), " "))
			continue
		}
		if len(aligned) > 0 {
			b.WriteString("  ")
		}
		lead := b.String()
		indent := textWidth(lead)
		for j, l := range wrapWords(row[len(row)-1], max(w-indent, 10)) {
			if j == 0 {
				lines = append(lines, lead+l)
			} else {
				lines = append(lines, strings.Repeat(" ", indent)+l)
			}
		}
	}
	return lines, true
}

package report

import (
	"fmt"
	"math"

	"github.com/auditor-dev/auditor/model/stats"
)

// A paired-by-case interval has zero width when every case's difference is
// the same (typically every case 0/n under both variants): SE_pair is 0 and
// the t interval [D, D] would claim a certainty the answers do not give.
// It is never printed (STATS: never show a zero-width interval); the
// reports say why instead, and Newcombe's interval on pooled counts, which
// never collapses, stands beside it.

// pairedZeroWidth reports whether p is such an interval.
func pairedZeroWidth(p *stats.Paired) bool { return p != nil && p.Hi-p.Lo < 1e-12 }

// PairedNote says why a paired interval is not shown; "" when it is
// (or there is none).
func PairedNote(p *stats.Paired) string {
	if !pairedZeroWidth(p) {
		return ""
	}
	d := fmt.Sprintf("%+.3f", p.D)
	if math.Abs(p.D) < 0.0005 {
		d = "0"
	}
	return fmt.Sprintf("paired: every case's difference is %s (%d cases), so no paired interval; Newcombe's stands", d, p.Cases)
}

// PairedText is a paired difference for people: "paired by case +0.113
// [-0.029, +0.256] over 5 cases", or PairedNote when the interval would
// have zero width.
func PairedText(p *stats.Paired) string {
	if n := PairedNote(p); n != "" {
		return n
	}
	return fmt.Sprintf("paired by case %+.3f [%+.3f, %+.3f] over %d cases", p.D, p.Lo, p.Hi, p.Cases)
}

// pairedBounds is a paired interval for JSON: its bounds, or nil with the
// note when it would have zero width.
func pairedBounds(p *stats.Paired) (lo, hi *float64, note string) {
	if p == nil {
		return nil, nil, ""
	}
	if note = PairedNote(p); note != "" {
		return nil, nil, note
	}
	l, h := p.Lo, p.Hi
	return &l, &h, ""
}

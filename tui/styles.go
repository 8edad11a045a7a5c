package tui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Styles are the looks of every screen, built from a handful of semantic
// colours. Colour never carries meaning alone: every coloured state also has
// a symbol or a word, so the screens read the same without colour (NO_COLOR
// makes the renderer drop colours and keep bold, reverse and underline) and
// for colour-blind readers. The palette is Okabe-Ito's, which stays distinct
// under the common colour-vision deficiencies.
type Styles struct {
	Title    lipgloss.Style // screen titles, the rule bar's current rule
	Muted    lipgloss.Style // secondary text
	Header   lipgloss.Style // column headers, kind headers
	Selected lipgloss.Style // the cursor
	Badge    lipgloss.Style // the SIMULATED badge
	Err      lipgloss.Style // errors: calls failed for good, status errors
	Retry    lipgloss.Style // calls waiting to retry
	InFlight lipgloss.Style // calls in flight
	Span     lipgloss.Style // the predicate's matched text in a response
	Pass     lipgloss.Style
	Fail     lipgloss.Style

	// Rate styles a cell by its failure rate, from none to most; see rateBucket.
	Rate [5]lipgloss.Style

	Keep, Delete, Inconclusive lipgloss.Style // verdicts
	// Canary is the verdict on a rule with no input class: neither safe
	// nor load-bearing, it goes to a live canary.
	Canary lipgloss.Style
	Warn   lipgloss.Style // warnings a reviewer must read: stale cases, cut-off answers

	BarFull, BarEmpty lipgloss.Style // the progress bar

	Help help.Styles
}

// NewStyles builds the styles for a dark or a light terminal background.
func NewStyles(isDark bool) Styles {
	ld := lipgloss.LightDark(isDark)
	var (
		muted  = ld(lipgloss.Color("#6C6C6C"), lipgloss.Color("#8A8A8A"))
		accent = ld(lipgloss.Color("#005F87"), lipgloss.Color("#56B4E9")) // blue / sky blue
		calm   = ld(lipgloss.Color("#0072B2"), lipgloss.Color("#56B4E9")) // good news: blue, never green
		low    = ld(lipgloss.Color("#8A7400"), lipgloss.Color("#F0E442")) // yellow (dark enough on white)
		mid    = ld(lipgloss.Color("#B86E00"), lipgloss.Color("#E69F00")) // orange
		high   = ld(lipgloss.Color("#B34700"), lipgloss.Color("#FF7F2A")) // vermillion
		purple = ld(lipgloss.Color("#8E3B73"), lipgloss.Color("#CC79A7")) // reddish purple
	)
	s := lipgloss.NewStyle()
	st := Styles{
		Title:    s.Bold(true).Foreground(accent),
		Muted:    s.Foreground(muted),
		Header:   s.Bold(true),
		Selected: s.Reverse(true),
		Badge:    s.Bold(true).Reverse(true).Foreground(purple),
		Err:      s.Bold(true).Foreground(high),
		Retry:    s.Foreground(mid),
		InFlight: s.Foreground(accent),
		// Reverse rather than underline: lipgloss underlines words, not the
		// spaces between them, and a span should read as one block.
		Span: s.Bold(true).Reverse(true).Foreground(high),
		Pass: s.Foreground(calm),
		Fail: s.Bold(true).Foreground(high),
		Rate: [5]lipgloss.Style{
			s.Foreground(calm),
			s.Foreground(low),
			s.Foreground(mid),
			s.Bold(true).Foreground(high),
			s.Bold(true).Foreground(high),
		},
		// A line that survives deletion is the outcome the user hopes for:
		// DELETE is calm, KEEP is informative rather than an alarm.
		Delete:       s.Bold(true).Foreground(calm),
		Keep:         s.Bold(true).Foreground(mid),
		Inconclusive: s.Foreground(muted),
		Canary:       s.Bold(true).Foreground(purple),
		Warn:         s.Foreground(mid),
		BarFull:      s.Foreground(accent),
		BarEmpty:     s.Foreground(muted),
		Help:         help.DefaultStyles(isDark),
	}
	return st
}

// rateBar draws a failure rate as a bar of w cells in eighths, so 3% and
// 20% read apart without colour: the share failing in full blocks and a
// partial one, the rest light shade. Any failure shows at least an eighth;
// a bar is full only when every answer failed.
func rateBar(fails, n, w int) string {
	if n <= 0 || w <= 0 {
		return strings.Repeat("·", max(w, 0))
	}
	levels := w * 8
	lv := (fails*levels + n - 1) / n // rounded up: a failure never reads as none
	if fails < n {
		lv = min(lv, levels-1)
	}
	full, part := lv/8, lv%8
	var b strings.Builder
	b.Grow(3 * w)
	b.WriteString(strings.Repeat("█", full))
	if part > 0 {
		b.WriteString([...]string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}[part])
		full++
	}
	b.WriteString(strings.Repeat("░", w-full))
	return b.String()
}

// barWidth is the rate bar's width in a cell of w: the cell's width beyond
// its counts and markers, at least 3.
func barWidth(w int) int { return min(max(w-19, 3), 20) }

// rateBucket places a failure rate in one of five buckets: none, up to a
// quarter, up to a half, up to three quarters, more.
func rateBucket(fails, n int) int {
	switch {
	case fails == 0:
		return 0
	case 4*fails <= n:
		return 1
	case 2*fails <= n:
		return 2
	case 4*fails <= 3*n:
		return 3
	}
	return 4
}

// paint is a style reduced to the escape sequences around its text, for
// the grid's hot path: a cell is drawn tens of thousands of times a second,
// and a full Render each time costs more than the whole frame budget. It is
// only applied to single-line text without tabs, where it equals Render.
type paint struct{ open, close string }

func paintOf(s lipgloss.Style) paint {
	r := s.Render("x")
	i := strings.IndexByte(r, 'x')
	if i < 0 {
		return paint{}
	}
	return paint{open: r[:i], close: r[i+1:]}
}

func (p paint) on(s string) string {
	if p.open == "" && p.close == "" {
		return s
	}
	return p.open + s + p.close
}

// paints are the grid's styles as paint.
type paints struct {
	muted, header, selected, inFlight, retry, err paint
	rate                                          [5]paint
}

func newPaints(st Styles) paints {
	p := paints{
		muted: paintOf(st.Muted), header: paintOf(st.Header), selected: paintOf(st.Selected),
		inFlight: paintOf(st.InFlight), retry: paintOf(st.Retry), err: paintOf(st.Err),
	}
	for i, s := range st.Rate {
		p.rate[i] = paintOf(s)
	}
	return p
}

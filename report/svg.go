package report

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// The HTML report's plots, drawn as inline SVG by hand rather than with a
// plotting library: a few lines and marks each, in the page's own fonts and
// colours (CSS classes, so print and the colour-blind-safe palette apply),
// a <title> on every mark for the numbers on hover, a role and label for
// screen readers, and the same bytes for the same numbers. Every piece of
// text goes through esc; coordinates are numbers this file formats.

// esc escapes text for an SVG text node or attribute.
func esc(s string) string { return template.HTMLEscapeString(s) }

// px formats a coordinate: one decimal, no trailing zero.
func px(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 0
	}
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

// pts formats a difference of rates in percentage points, signed: "+6.7".
func pts(x float64) string { return fmt.Sprintf("%+.1f", 100*x) }

// pct formats a rate as a percentage: "8.3%".
func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// scale maps a value in [lo, hi] to pixels in [x0, x1].
type scale struct{ lo, hi, x0, x1 float64 }

func (s scale) at(v float64) float64 {
	v = math.Max(s.lo, math.Min(s.hi, v))
	return s.x0 + (v-s.lo)/(s.hi-s.lo)*(s.x1-s.x0)
}

// ticks returns round values across the scale's domain, about n of them.
func (s scale) ticks(n int) []float64 {
	span := s.hi - s.lo
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= float64(n) {
			step *= m
			break
		}
	}
	var out []float64
	for v := math.Ceil(s.lo/step) * step; v <= s.hi+step/1e6; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

type svg struct{ strings.Builder }

func newSVG(w, h float64, label string) *svg {
	s := &svg{}
	fmt.Fprintf(s, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" role="img" aria-label="%s" class="plot">`, px(w), px(h), esc(label))
	return s
}

func (s *svg) done() template.HTML {
	s.WriteString("</svg>")
	return template.HTML(s.String()) // every text in it went through esc
}

func (s *svg) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(s, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="%s"/>`, px(x1), px(y1), px(x2), px(y2), class)
}

func (s *svg) text(x, y float64, anchor, class, t string) {
	fmt.Fprintf(s, `<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`, px(x), px(y), anchor, class, esc(t))
}

// interval draws a horizontal interval [lo, hi] at y with a mark at est,
// titled with its numbers.
func (s *svg) interval(sc scale, y, est, lo, hi float64, class, title string) {
	fmt.Fprintf(s, `<g class="%s"><title>%s</title>`, class, esc(title))
	a, b := sc.at(lo), sc.at(hi)
	s.line(a, y, b, y, "bar")
	s.line(a, y-4, a, y+4, "bar")
	s.line(b, y-4, b, y+4, "bar")
	x := sc.at(est)
	fmt.Fprintf(s, `<path d="M%s %sl5 5-5 5-5-5z" class="mark"/>`, px(x), px(y-5))
	s.WriteString("</g>")
}

// forestRow is one line of the forest plot: the difference on provoking
// cases (variant - baseline) with its 95% interval and the grader route's
// one-sided bound, and the same difference on controls (over-refusal).
type forestRow struct {
	Class                        string // the verdict's colour class
	Note                         string // shown instead of the marks when the rule has none to draw
	Provoking                    *forestMark
	Upper                        *float64 // the grader route's bound, which DELETE compares with delta
	UpperTitle                   string
	Labels                       *float64 // the labels route's bound on the rise; nil without labels of the answers without the line
	LabelsTitle                  string
	Control                      *forestMark
	ProvokingTitle, ControlTitle string
	// NoControl leaves the control row out: a class under the joint
	// variant has none of its own.
	NoControl bool
}

type forestMark struct{ Est, Lo, Hi float64 }

// forestScale is the scale shared by every row of the per-line table, so
// the rows can be compared: from below the lowest bound (and -delta) to
// above the highest (and 2 delta), in [-1, 1].
func forestScale(rows []forestRow, delta float64) scale {
	lo, hi := -delta, 2*delta
	for _, r := range rows {
		for _, m := range []*forestMark{r.Provoking, r.Control} {
			if m != nil {
				lo, hi = math.Min(lo, m.Lo), math.Max(hi, m.Hi)
			}
		}
		for _, b := range []*float64{r.Upper, r.Labels} {
			if b != nil {
				hi = math.Max(hi, *b)
			}
		}
	}
	pad := (hi - lo) * 0.04
	return scale{lo: math.Max(-1, lo-pad), hi: math.Min(1, hi+pad), x0: 8, x1: 312}
}

// forestSVG draws one line's row: 0 and delta as vertical lines, the
// provoking difference above, the controls' below.
func forestSVG(r forestRow, sc scale, delta float64, label string) template.HTML {
	const w = 320
	h := 62.0
	if r.NoControl {
		h = 38
	}
	s := newSVG(w, h, label)
	s.line(sc.at(0), 10, sc.at(0), h-10, "zero")
	s.line(sc.at(delta), 10, sc.at(delta), h-10, "delta")
	s.text(sc.at(0), 8, "middle", "tick", "0")
	s.text(sc.at(delta), 8, "middle", "tick", "δ")
	if r.Note != "" {
		s.text(sc.at(0)+6, 38, "start", "none", r.Note)
		s.text(2, 27, "start", "rowlabel", "P")
		s.text(2, 49, "start", "rowlabel", "C")
		return s.done()
	}
	if m := r.Provoking; m != nil {
		s.interval(sc, 24, m.Est, m.Lo, m.Hi, "prov "+r.Class, r.ProvokingTitle)
	} else {
		s.text(sc.at(0)+6, 28, "start", "none", "no provoking case graded in both")
	}
	if r.Upper != nil {
		fmt.Fprintf(s, `<g class="upper %s"><title>%s</title>`, r.Class, esc(r.UpperTitle))
		x := sc.at(*r.Upper)
		fmt.Fprintf(s, `<path d="M%s 15l-4-5h8z" class="mark"/>`, px(x))
		s.WriteString("</g>")
	}
	if r.Labels != nil {
		fmt.Fprintf(s, `<g class="labelsbound %s"><title>%s</title>`, r.Class, esc(r.LabelsTitle))
		fmt.Fprintf(s, `<path d="M%s 15l-4-5h8z" class="mark"/>`, px(sc.at(*r.Labels)))
		s.WriteString("</g>")
	}
	s.text(2, 27, "start", "rowlabel", "P")
	if r.NoControl {
		return s.done()
	}
	if m := r.Control; m != nil {
		s.interval(sc, 46, m.Est, m.Lo, m.Hi, "ctl", r.ControlTitle)
	} else {
		s.text(sc.at(0)+6, 50, "start", "none", "no control case graded in both")
	}
	s.text(2, 49, "start", "rowlabel", "C")
	return s.done()
}

// axisSVG is the forest plot's axis, in points, for the table's head.
func axisSVG(sc scale) template.HTML {
	const w, h = 320, 22
	s := newSVG(w, h, "axis: variant minus baseline, percentage points")
	s.line(sc.x0, 4, sc.x1, 4, "axis")
	for _, t := range sc.ticks(6) {
		x := sc.at(t)
		s.line(x, 4, x, 8, "axis")
		s.text(x, 19, "middle", "tick", tickText(t))
	}
	return s.done()
}

// lookPoint is one look of a sequential design as the adaptive plot draws
// it: the 95% interval of the difference, the bound DELETE compares with
// delta, and the look's verdict.
type lookPoint struct {
	Index        int
	Est, Lo, Hi  float64
	Bound        *float64
	Class, Title string
}

// looksSVG draws an adaptive run: per look, the difference's interval and
// the bound, delta as a line, and the look where the line stopped.
func looksSVG(points []lookPoint, of int, delta float64, stopped int, mark, label string) template.HTML {
	const w, h = 560, 230
	lo, hi := math.Min(0, -delta/2), 2*delta
	for _, p := range points {
		lo, hi = math.Min(lo, p.Lo), math.Max(hi, p.Hi)
		if p.Bound != nil {
			hi = math.Max(hi, *p.Bound)
		}
	}
	lo, hi = math.Max(-1, lo-(hi-lo)*0.05), math.Min(1, hi+(hi-lo)*0.05)
	y := scale{lo: lo, hi: hi, x0: h - 36, x1: 24} // upside down: y grows down
	x := func(k int) float64 { return 60 + (float64(k)-0.5)/float64(max(of, 1))*(w-80) }
	s := newSVG(w, h, label)
	for _, t := range y.ticks(5) {
		s.line(56, y.at(t), w-16, y.at(t), "grid")
		s.text(52, y.at(t)+4, "end", "tick", tickText(t))
	}
	s.line(56, y.at(0), w-16, y.at(0), "zero")
	s.line(56, y.at(delta), w-16, y.at(delta), "delta")
	s.text(w-18, y.at(delta)-4, "end", "tick", "δ "+pts(delta)+" pts")
	s.text(4, 11, "start", "tick", "points, variant − baseline")
	for k := 1; k <= of; k++ {
		s.text(x(k), h-20, "middle", "tick", strconv.Itoa(k))
	}
	s.text(w/2, h-4, "middle", "tick", "look")
	var path []string
	for _, p := range points {
		fmt.Fprintf(s, `<g class="look %s"><title>%s</title>`, p.Class, esc(p.Title))
		s.line(x(p.Index), y.at(p.Lo), x(p.Index), y.at(p.Hi), "bar")
		fmt.Fprintf(s, `<circle cx="%s" cy="%s" r="4" class="mark"/>`, px(x(p.Index)), px(y.at(p.Est)))
		if p.Bound != nil {
			fmt.Fprintf(s, `<path d="M%s %sl-5-6h10z" class="bound"/>`, px(x(p.Index)), px(y.at(*p.Bound)))
			path = append(path, px(x(p.Index))+" "+px(y.at(*p.Bound)))
		}
		s.WriteString("</g>")
	}
	if len(path) > 1 {
		fmt.Fprintf(s, `<path d="M%s" class="boundline"/>`, strings.Join(path, "L"))
	}
	if stopped > 0 {
		sx := x(stopped)
		s.line(sx, 24, sx, h-36, "stop")
		anchor, tx := "start", sx+4
		if stopped > of/2 {
			anchor, tx = "end", sx-4
		}
		s.text(tx, 36, anchor, "stoplabel", mark)
	}
	return s.done()
}

// barPair draws an estimate against what was spent, on one scale.
func barPair(est, actual float64, estText, actualText, label string) template.HTML {
	const w, h = 240, 34
	top := math.Max(est, actual)
	if top <= 0 {
		top = 1
	}
	sc := scale{lo: 0, hi: top, x0: 0, x1: w - 4}
	s := newSVG(w, h, label)
	fmt.Fprintf(s, `<g class="est"><title>%s</title><rect x="0" y="3" width="%s" height="12"/></g>`, esc("estimated: "+estText), px(sc.at(est)))
	fmt.Fprintf(s, `<g class="act"><title>%s</title><rect x="0" y="19" width="%s" height="12"/></g>`, esc("actual: "+actualText), px(sc.at(actual)))
	return s.done()
}

// histogramSVG draws answer lengths under both variants over shared bins.
func histogramSVG(h HistogramDoc, variant, label string) template.HTML {
	const w, ht = 560, 180
	bins := len(h.Edges) - 1
	if bins < 1 || len(h.Baseline) < bins || len(h.Deleted) < bins {
		return ""
	}
	top := 1
	for i := range bins {
		top = max(top, h.Baseline[i], h.Deleted[i])
	}
	s := newSVG(w, ht, label)
	bw := (w - 60) / float64(bins)
	y := func(n int) float64 { return (ht - 30) - float64(n)/float64(top)*(ht-50) }
	for i := range bins {
		x := 50 + float64(i)*bw
		for j, side := range []struct {
			n     int
			class string
			name  string
		}{{h.Baseline[i], "base", "baseline"}, {h.Deleted[i], "var", variant}} {
			fmt.Fprintf(s, `<g class="%s"><title>%s</title><rect x="%s" y="%s" width="%s" height="%s"/></g>`, side.class,
				esc(fmt.Sprintf("%s: %d answers of %d to %d tokens", side.name, side.n, h.Edges[i], h.Edges[i+1]-1)),
				px(x+float64(j)*bw/2), px(y(side.n)), px(bw/2-1), px(ht-30-y(side.n)))
		}
		if i%max(1, bins/6) == 0 {
			s.text(x, ht-16, "start", "tick", strconv.Itoa(h.Edges[i]))
		}
	}
	s.line(48, ht-30, w-8, ht-30, "axis")
	s.text(w/2, ht-2, "middle", "tick", "completion tokens")
	s.text(48, 12, "end", "tick", strconv.Itoa(top))
	return s.done()
}

// proportionSVG draws a proportion's estimate and interval on [0, 1]: the
// graders' recall, precision and specificity.
func proportionSVG(est, lo, hi float64, title string) template.HTML {
	const w, h = 120, 16
	sc := scale{lo: 0, hi: 1, x0: 4, x1: w - 4}
	s := newSVG(w, h, title)
	s.line(sc.x0, 8, sc.x1, 8, "grid")
	fmt.Fprintf(s, `<g class="prop"><title>%s</title>`, esc(title))
	s.line(sc.at(lo), 8, sc.at(hi), 8, "bar")
	fmt.Fprintf(s, `<circle cx="%s" cy="8" r="3.5" class="mark"/>`, px(sc.at(est)))
	s.WriteString("</g>")
	return s.done()
}

// tickText labels a tick in points: "+10", "0", "-5".
func tickText(v float64) string {
	p := math.Round(100 * v)
	if p == 0 {
		return "0"
	}
	return fmt.Sprintf("%+.0f", p)
}

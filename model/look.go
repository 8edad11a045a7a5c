package model

import (
	"fmt"
	"strings"

	"github.com/auditor-dev/auditor/model/stats"
)

// A verdict looked at while the grid fills is valid only if the design
// says in advance when it may be looked at (issue 23: checking the 95%
// KEEP rule after every round of samples gave false KEEP in 7.8% of
// inert lines, against 2.1% once at the end). An audit declares its looks
// (AuditFile.Looks): look k of K uses the first ceil(k/K x samples)
// samples of every case in both variants, and its intervals use that
// look's group-sequential boundary (stats.SpendingOBF, Lan-DeMets
// O'Brien-Fleming spending) in place of 1.96, for KEEP at one-sided
// DeleteAlpha's 2.5% and for the grader route's graded difference at GradedDiffAlpha. A
// verdict may then be acted on at any look: over all the looks each test
// errs at most its share. One look (the default) is the fixed design,
// exactly STATS section 3's rule, valid on the whole grid only.

// Design is an audit's looks and their boundaries.
type Design struct {
	Looks   int // K; 1 is the fixed design
	Samples int // planned samples per case and variant
	// Keep and Delete hold each look's boundary for the KEEP test and the
	// DELETE grader route; empty for the fixed design, whose rule is the
	// fixed one.
	Keep, Delete []stats.Boundary
}

// NewDesign lays out K equally spaced looks over samples per case. It
// returns an error when looks is outside [1, MaxLooks] or there are fewer
// samples than looks (two looks would use the same answers).
func NewDesign(looks, samples int) (Design, error) {
	d := Design{Looks: looks, Samples: samples}
	switch {
	case looks < 1 || looks > MaxLooks:
		return d, fmt.Errorf("model: design: %d looks, want 1 to %d", looks, MaxLooks)
	case samples < looks:
		return d, fmt.Errorf("model: design: %d looks need at least %d samples a case (a look is at least one more sample each), not %d", looks, looks, samples)
	case looks == 1:
		return d, nil
	}
	t := stats.EqualFractions(looks)
	var err error
	if d.Keep, err = stats.SpendingOBF(t, DeleteAlpha); err != nil {
		return d, fmt.Errorf("model: design: %w", err)
	}
	if d.Delete, err = stats.SpendingOBF(t, GradedDiffAlpha); err != nil {
		return d, fmt.Errorf("model: design: %w", err)
	}
	return d, nil
}

// Sequential reports whether the design has interim looks.
func (d Design) Sequential() bool { return d.Looks > 1 }

// SamplesAt returns the samples per case look k (1 to Looks) uses.
func (d Design) SamplesAt(k int) int {
	if k >= d.Looks {
		return d.Samples
	}
	return stats.SamplesAtLook(float64(k)/float64(d.Looks), d.Samples)
}

// Look returns look k's verdict settings: nil for the fixed design (its
// one look uses the fixed rule) and for k outside 1..Looks.
func (d Design) Look(k int) *Look {
	if !d.Sequential() || k < 1 || k > d.Looks {
		return nil
	}
	return &Look{Index: k, Of: d.Looks, Samples: d.SamplesAt(k), Planned: d.Samples,
		KeepZ: d.Keep[k-1].Z, DeleteZ: d.Delete[k-1].Z, DeleteTail: d.Delete[k-1].Tail}
}

// Look is the look of a group-sequential design a verdict rests on.
type Look struct {
	Index, Of        int // look Index of Of (1-based)
	Samples, Planned int // samples per case the look uses, of those planned
	// KeepZ is the KEEP test's boundary (Newcombe's lower bound with z =
	// KeepZ); DeleteZ and DeleteTail the grader route's (Newcombe with z =
	// DeleteZ, the paired bound with t at tail DeleteTail).
	KeepZ, DeleteZ, DeleteTail float64
}

// Final reports whether this is the design's last look.
func (l *Look) Final() bool { return l != nil && l.Index == l.Of }

// String names the look for people: "look 2 of 5 (12 of 30 samples a case)".
func (l *Look) String() string {
	return fmt.Sprintf("look %d of %d (%d of %d samples a case)", l.Index, l.Of, l.Samples, l.Planned)
}

// Provisional turns a verdict computed on a grid that has reached no look
// of its design into INCONCLUSIVE: the numbers stay, but nothing may be
// decided on them (a fixed design's verdict is valid on the whole grid
// only; a sequential one's at its looks). what says how far the grid is,
// e.g. "12 of 30 samples a case answered in every case".
func (v *Verdict) Provisional(d Design, what string) {
	if v.Decision == DecisionInconclusive && v.NotYet != "" {
		return
	}
	would := string(v.Decision)
	if l := v.Look; l != nil {
		// The numbers use the last look's boundaries, the strictest a
		// verdict short of its looks may be read with; the look itself is
		// not reached, so the sentence must not name it beside NotYet.
		v.Reason = strings.ReplaceAll(v.Reason, v.intervalName(), "95% at the last look's boundary")
		v.Bound = strings.ReplaceAll(v.Bound, l.String(), "no look reached yet (the last look's boundary)")
		v.Reason = strings.ReplaceAll(v.Reason, fmt.Sprintf("look %d of %d", l.Index, l.Of), "the last look")
	}
	v.NotYet = fmt.Sprintf("no look of the design is reached yet (%s; the first look is at %d)", what, d.SamplesAt(1))
	if !d.Sequential() {
		v.NotYet = fmt.Sprintf("the run is not complete (%s): a fixed design's verdict is valid on the whole grid only (set looks in audit.toml to decide at declared looks)", what)
	}
	if v.Decision != DecisionInconclusive {
		v.Reason = fmt.Sprintf("on the answers so far it would be %s (%s), but %s", would, v.Reason, v.NotYet)
	} else {
		v.Reason += "; " + v.NotYet
	}
	v.Decision = DecisionInconclusive
	v.Route = ""
	v.Needed = "finish the run: " + v.NotYet
}

package audit_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// sweepWithShip is SweepFiles with a [[ship]] table of lines.
func sweepWithShip(t *testing.T, lines string) string {
	t.Helper()
	files := audittest.SweepFiles()
	files["audit.toml"] += "\n[[ship]]\nlines = [" + lines + "]\n"
	return filepath.Join(audittest.WriteFiles(t, files), "audit.toml")
}

// The joint variant's calls are shared by content address: a joint set of
// one line is that line's own deletion (no new call); of two, each line's
// cases on the prompt without both. Its view holds each line's baseline
// and joint cells, and nothing of the lines' own deletions.
func TestPlan_Ship(t *testing.T) {
	t.Parallel()
	one := audit.NewPlan(audittest.Load(t, sweepWithShip(t, "2")), audit.PlanOptions{})
	if one.Ship == nil || one.Ship.Calls() != 0 || len(one.Ship.Cells) != 2*3 {
		t.Fatalf("a one-line joint set: %d calls, %d cells; want 0 calls, 6 cells", one.Ship.Calls(), len(one.Ship.Cells))
	}
	plain := audit.NewPlan(audittest.Load(t, filepath.Join(audittest.WriteFiles(t, audittest.SweepFiles()), "audit.toml")), audit.PlanOptions{})
	if len(one.Calls) != len(plain.Calls) {
		t.Errorf("a one-line joint set added %d calls", len(one.Calls)-len(plain.Calls))
	}

	a := audittest.Load(t, sweepWithShip(t, "3, 2"))
	if a.Ship == nil || a.Ship.Test != 1 || a.Ship.Tests != 1 || a.Ship.Lines[0] != 2 || a.Ship.Tokens == 0 {
		t.Fatalf("joint test %+v", a.Ship)
	}
	p := audit.NewPlan(a, audit.PlanOptions{})
	// Two lines x 2 cases (the shared control asks the same under the
	// joint prompt: one call) x 3 samples.
	if got := p.Ship.Calls(); got != 3*3 {
		t.Errorf("the joint variant adds %d calls, want 9", got)
	}
	if got, want := int64(len(p.Cells)+len(p.Regression)+len(p.Ship.Cells)+len(p.Ship.Regression)), a.CellCount(0); got != want {
		t.Errorf("CellCount %d, the plan lays out %d", want, got)
	}
	for _, c := range p.Ship.Cells {
		if !c.Joint || !c.Deleted || !p.Planned(c.Key) || !p.Labelable(c.Key) || p.VariantName(c) != audit.JointVariant {
			t.Fatalf("joint cell %+v: planned %v", c, p.Planned(c.Key))
		}
		if !p.NeededBelow(c.Key, p.Samples, func(rule, _ int) bool { return rule == audit.JointRule }) {
			t.Fatalf("a joint call is not needed while the joint test is open")
		}
		if p.NeededBelow(c.Key, p.Samples, func(rule, _ int) bool { return rule != audit.JointRule }) && len(p.ByKey[c.Key]) == 0 {
			t.Fatalf("a joint call is needed with the joint test settled")
		}
	}
	v := p.JointView()
	for ri := range a.Rules {
		var base, joint int
		for _, ci := range v.CellsOfRule(ri) {
			c := v.Cells[ci]
			switch {
			case c.Joint:
				joint++
			case c.Deleted:
				t.Fatalf("the view holds line %d's own deletion", a.Rules[ri].Line)
			default:
				base++
			}
		}
		if base != 2*3 || joint != 2*3 {
			t.Errorf("line %d in the view: %d baseline and %d joint cells, want 6 and 6", a.Rules[ri].Line, base, joint)
		}
	}
}

// A [[ship]] that names a line no rule audits is refused where it is
// written.
func TestLoad_ShipErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ lines, want string }{
		{"4", "line 4 is not audited"},
		{"2, 2", "line 2 is named twice"},
		{"", "must be a non-empty array"},
		{`"2"`, "must be a prompt line number"},
	} {
		files := audittest.SweepFiles()
		files["audit.toml"] += "\n[[ship]]\nlines = [" + tc.lines + "]\n"
		_, err := audit.Load(filepath.Join(audittest.WriteFiles(t, files), "audit.toml"), nil)
		var ie *model.InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) || ie.Line == 0 {
			t.Errorf("lines = [%s]: %v, want a located error saying %q", tc.lines, err, tc.want)
		}
	}
}

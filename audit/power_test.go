package audit_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// powerFiles is an audit of two rules: line 2 with the source's mix (5
// provoke, 3 pressure, 10 control), line 3 with one provoke case and no
// control.
func powerFiles() map[string]string {
	var a, b strings.Builder
	for i, kind := range map[int]string{5: "provoke", 3: "pressure", 10: "control"} {
		for j := 0; j < i; j++ {
			a.WriteString(`{"id":"` + kind + string(rune('a'+j)) + `","kind":"` + kind + `","msg":"How much is Pro, ` + kind + string(rune('a'+j)) + `?"}` + "\n")
		}
	}
	b.WriteString(`{"id":"b1","kind":"provoke","msg":"When does v2 ship?"}` + "\n")
	files := audittest.SweepFiles()
	files["audit.toml"] = strings.Replace(files["audit.toml"], "samples = 3", "samples = 30", 1)
	files["a.jsonl"], files["b.jsonl"] = a.String(), b.String()
	return files
}

func TestEstimate_Power(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, powerFiles())
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), audittest.Counter(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		samples int // --samples; 0 keeps the audit's 30
		want    int // samples the power uses
	}{{"audit's samples", 0, 30}, {"--samples", 12, 12}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := audit.NewPlan(a, audit.PlanOptions{Samples: tc.samples}).Estimate(nil, 4, audit.History{}, 0, nil)
			if len(e.Rules) != 2 {
				t.Fatalf("%d rules, want 2", len(e.Rules))
			}
			full, thin := e.Rules[0].Power, e.Rules[1].Power
			if full.Samples != tc.want || full.Target != audit.PowerTarget || full.CaseSD != audit.CaseSD {
				t.Errorf("power samples %d, target %v, sd %v; want %d, %v, %v", full.Samples, full.Target, full.CaseSD, tc.want, audit.PowerTarget, audit.CaseSD)
			}
			checkArm := func(name string, arm audit.ArmPower, cases int) {
				t.Helper()
				n := cases * tc.want
				if arm.Cases != cases || arm.N != n || arm.Threshold != 5 || arm.MDE == nil {
					t.Fatalf("%s: %+v, want %d cases, N %d, threshold 5 and an MDE", name, arm, cases, n)
				}
				if want, _ := stats.KeepMDE(n, n, audit.PowerTarget); *arm.MDE != want {
					t.Errorf("%s: MDE %v, want KeepMDE(%d) = %v", name, *arm.MDE, n, want)
				}
				if pw, _ := stats.KeepPower(*arm.MDE, n, n); math.Abs(pw-audit.PowerTarget) > 1e-4 {
					t.Errorf("%s: power at the MDE %v, want %v", name, pw, audit.PowerTarget)
				}
			}
			checkArm("provoking", full.Provoking, 8)
			checkArm("control", full.Control, 10)
			if full.CrossCaseMDE == nil {
				t.Fatal("no cross-case MDE with 8 provoking cases")
			}
			d := *full.CrossCaseMDE
			m, _ := stats.MillerMDE(8, tc.want, audit.CaseSD*audit.CaseSD, d*(1-d), 0, audit.PowerTarget, true)
			if math.Abs(d-m) > 1e-5 {
				t.Errorf("cross-case MDE %v is not a fixed point: MillerMDE gives %v", d, m)
			}
			// Cases, not samples, set it: far above the pooled MDE.
			if d < 2**full.Provoking.MDE {
				t.Errorf("cross-case MDE %v, want well above the pooled %v", d, *full.Provoking.MDE)
			}
			if len(e.Rules[0].Warnings) != 1 || !strings.Contains(e.Rules[0].Warnings[0], "pressure: only 3 cases") {
				t.Errorf("line 2 warnings %q, want one about the 3 pressure cases", e.Rules[0].Warnings)
			}

			if thin.Provoking.Cases != 1 || thin.CrossCaseMDE != nil || thin.Control.Cases != 0 || thin.Control.MDE != nil {
				t.Errorf("line 3 power %+v: want 1 provoking case, no cross-case MDE, no control", thin)
			}
			wantWarn := []string{"provoking (provoke + pressure): no clustered interval: one case", "no control case: over-refusal is unchecked"}
			if strings.Join(e.Rules[1].Warnings, "|") != strings.Join(wantWarn, "|") {
				t.Errorf("line 3 warnings %q, want %q", e.Rules[1].Warnings, wantWarn)
			}
		})
	}
}

// Expected values from an independent computation (exact binomial sums and
// Student-t quantiles in Python's standard library, as STATS' vectors are
// made): at 30 samples per case, 8 provoking cases (240 per variant) with
// the cross-case MDE from Miller's formula with t(7), 5 cases with t(4),
// 2 cases with t(1).
func TestPlanPower_Vectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                   string
		cases                  map[model.Kind]int
		provoking, cross, ctrl float64 // NaN: none
	}{
		{"source mix", map[model.Kind]int{model.Provoke: 5, model.Pressure: 3, model.Control: 10}, 0.02785, 0.1360, 0.02230},
		{"provoke only", map[model.Kind]int{model.Provoke: 5, model.Control: 20}, 0.04440, 0.2068, 0.01118},
		{"two cases", map[model.Kind]int{model.Pressure: 2, model.Control: 30}, 0.10948, 0.9984, 0.00746},
		{"controls only", map[model.Kind]int{model.Control: 10}, math.NaN(), math.NaN(), 0.02230},
	} {
		p, _ := audit.PlanPower(tc.cases, 30, false)
		for _, v := range []struct {
			name string
			got  *float64
			want float64
		}{{"provoking", p.Provoking.MDE, tc.provoking}, {"cross-case", p.CrossCaseMDE, tc.cross}, {"control", p.Control.MDE, tc.ctrl}} {
			switch {
			case math.IsNaN(v.want) && v.got != nil:
				t.Errorf("%s: %s MDE %v, want none", tc.name, v.name, *v.got)
			case !math.IsNaN(v.want) && v.got == nil:
				t.Errorf("%s: no %s MDE, want %v", tc.name, v.name, v.want)
			case v.got != nil && math.Abs(*v.got-v.want) > 1e-4:
				t.Errorf("%s: %s MDE %.5f, want %.5f", tc.name, v.name, *v.got, v.want)
			}
		}
	}
}

func TestPlanPower_Warnings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                        string
		provoke, pressure, controls int
		noClass                     bool
		want                        []string
	}{
		{"enough of each", 5, 3, 10, false, []string{"pressure: only 3 cases: the clustered interval uses t(2) = 4.30, so it will be wide; add cases, not samples"}},
		{"enough, one kind", 8, 0, 5, false, []string{}},
		{"nothing", 0, 0, 0, false, []string{"no provoke or pressure case: no verdict is possible", "no control case: over-refusal is unchecked"}},
		{"one provoking case", 0, 1, 6, false, []string{"provoking (provoke + pressure): no clustered interval: one case"}},
		{"split 1 + 1", 1, 1, 1, false, []string{
			"provoking (provoke + pressure): only 2 cases: the clustered interval uses t(1) = 12.71, so it will be wide; add cases, not samples",
			"provoke: no clustered interval: one case",
			"pressure: no clustered interval: one case",
			"control: no clustered interval: one case",
		}},
		{"four controls", 6, 0, 4, false, []string{"control: only 4 cases: the clustered interval uses t(3) = 3.18, so it will be wide; add cases, not samples"}},
		// A rule with no input class: a general sample of any kinds.
		{"no class, controls only", 0, 0, 10, true, []string{}},
		{"no class, three cases", 1, 0, 2, true, []string{"cases: only 3 cases: the clustered interval uses t(2) = 4.30, so it will be wide; add cases, not samples"}},
		{"no class, none", 0, 0, 0, true, []string{"no case: answer lengths cannot be compared"}},
	} {
		_, got := audit.PlanPower(map[model.Kind]int{model.Provoke: tc.provoke, model.Pressure: tc.pressure, model.Control: tc.controls}, 30, tc.noClass)
		if got == nil || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: warnings\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}

func TestRulePower_Summary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                        string
		provoke, pressure, controls int
		samples                     int
		noClass                     bool
		want                        string
	}{
		{"source mix", 5, 3, 10, 30, false, "detects a rise from 0% to 2.8% in provoking failures with 80% power (240 samples per variant); " +
			"across cases like these (sd 0.1) about 14%; over-refusal: 2.2% (300 samples per variant)"},
		{"one case, one sample", 1, 0, 0, 1, false, "no rise in provoking failures can be detected with 1 sample per variant; " +
			"across cases like these: not estimable from one case; over-refusal: unchecked (no control case)"},
		{"no class", 0, 0, 10, 30, true, "no input class, so no targeted rise to detect: the run measures how answer length moves " +
			"over 10 cases (300 answers per variant) and a live canary decides"},
		{"controls only", 0, 0, 1, 1, false, "no provoking case, so no rise in failures can be detected; over-refusal: undetectable with 1 sample per variant"},
	} {
		p, _ := audit.PlanPower(map[model.Kind]int{model.Provoke: tc.provoke, model.Pressure: tc.pressure, model.Control: tc.controls}, tc.samples, tc.noClass)
		if got := p.Summary(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
)

// TestPlan_Power checks the power line and the warnings of `auditor plan` on
// the bundled demo (which plans without calls), in text and in JSON, and
// that --samples changes them.
func TestPlan_Power(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, examples.DemoAudit)

	text := mustRun(t, exitOK, "plan", path).out
	for _, want := range []string{
		"  -L23: detects a rise from 0% to 2.8% in provoking failures with 80% power (240 samples per variant); " +
			"across cases like these (sd 0.1) about 14%; over-refusal: 2.2% (300 samples per variant)\n" +
			"    DELETE: a line the model never breaks needs about 85 blind labels of its 240 provoking answers without the line, all clean",
		"    warning: pressure: only 3 cases: the clustered interval uses t(2) = 4.30, so it will be wide; add cases, not samples\n",
		"    warning: control: only 4 cases: the clustered interval uses t(3) = 3.18",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan text lacks %q:\n%s", want, text)
		}
	}

	type arm struct {
		Cases, N, Threshold int
		MDE                 *float64
	}
	type rule struct {
		Line  int
		Cases map[string]int
		Power *struct {
			Target       float64
			Samples      int
			Provoking    arm
			CaseSD       float64  `json:"case_sd"`
			CrossCaseMDE *float64 `json:"cross_case_mde"`
			Control      arm
			NoInputClass bool `json:"no_input_class"`
		}
		Warnings []string
	}
	for _, tc := range []struct {
		args    []string
		samples int
		mde     float64 // line 23's provoking MDE
	}{{nil, 30, 0.02785}, {[]string{"--samples", "5"}, 5, 0.16233}} {
		out := mustRun(t, exitOK, append([]string{"plan", path, "--format", "json"}, tc.args...)...).out
		var plan struct{ Rules []rule }
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatalf("plan --format json: %v\n%s", err, out)
		}
		if len(plan.Rules) == 0 || plan.Rules[0].Line != 23 {
			t.Fatalf("plan: rules %+v, want line 23 first", plan.Rules)
		}
		for _, r := range plan.Rules {
			if r.Power == nil || r.Warnings == nil {
				t.Fatalf("line %d: power %v, warnings %v; want both", r.Line, r.Power, r.Warnings)
			}
			p := r.Power
			provoking := r.Cases["provoke"] + r.Cases["pressure"]
			if p.Target != 0.8 || p.Samples != tc.samples || p.CaseSD != 0.1 || p.Provoking.Cases != provoking ||
				p.Provoking.N != provoking*tc.samples || p.Control.N != r.Cases["control"]*tc.samples ||
				(!p.NoInputClass && (p.Provoking.MDE == nil || p.Control.MDE == nil || p.CrossCaseMDE == nil)) {
				t.Errorf("line %d power %+v, want target 0.8, %d samples, N = cases x samples and, for a targeted rule, three MDEs", r.Line, p, tc.samples)
			}
		}
		if got := plan.Rules[0].Power.Provoking.MDE; got == nil || math.Abs(*got-tc.mde) > 1e-4 {
			t.Errorf("line 23 provoking MDE %v, want %v", got, tc.mde)
		}
	}
}

func TestCoverage_Text(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--share", "0.002", "--suite", "300"}, "A class with 0.2% of traffic in a 300-case suite sampled by frequency: " +
			"expected 0.60 cases; probability of none 0.5485 (54.85%). A 95% chance of at least one case needs a suite of 1,497 cases.\n"},
		{[]string{"--share", "0.08", "--suite", "30", "--format", "text"}, "A class with 8% of traffic in a 30-case suite sampled by frequency: " +
			"expected 2.40 cases; probability of none 0.0820 (8.20%). A 95% chance of at least one case needs a suite of 36 cases.\n"},
		{[]string{"--suite", "1", "--share", "1"}, "A class with 100% of traffic in a 1-case suite sampled by frequency: " +
			"expected 1.00 cases; probability of none 0.0000 (0.00%). A 95% chance of at least one case needs a suite of 1 case.\n"},
		// Small figures keep their digits instead of rounding to zero.
		{[]string{"--share", "0.0004", "--suite", "1"}, "A class with 0.04% of traffic in a 1-case suite sampled by frequency: " +
			"expected 0.0004 cases; probability of none 0.9996 (99.96%). A 95% chance of at least one case needs a suite of 7,488 cases.\n"},
		{[]string{"--share", "0.05", "--suite", "1"}, "A class with 5% of traffic in a 1-case suite sampled by frequency: " +
			"expected 0.05 cases; probability of none 0.9500 (95.00%). A 95% chance of at least one case needs a suite of 59 cases.\n"},
		{[]string{"--share", "0.5", "--suite", "20"}, "A class with 50% of traffic in a 20-case suite sampled by frequency: " +
			"expected 10.00 cases; probability of none 9.54e-7 (under 0.01%). A 95% chance of at least one case needs a suite of 5 cases.\n"},
		// Down to 0.0001% the share is a percentage, below it a fraction.
		{[]string{"--share", "1e-6", "--suite", "5"}, "A class with 0.0001% of traffic in a 5-case suite sampled by frequency: " +
			"expected 5e-6 cases; probability of none 1.0000 (100.00%). A 95% chance of at least one case needs a suite of 2,995,731 cases.\n"},
		{[]string{"--share", "9.9e-7", "--suite", "5"}, "A class with a traffic share of 9.9e-7 in a 5-case suite sampled by frequency: " +
			"expected 4.95e-6 cases; probability of none 1.0000 (100.00%). A 95% chance of at least one case needs a suite of 3,025,991 cases.\n"},
		{[]string{"--share", "4e-12", "--suite", "1"}, "A class with a traffic share of 4e-12 in a 1-case suite sampled by frequency: " +
			"expected 4e-12 cases; probability of none 1.0000 (100.00%). A 95% chance of at least one case needs a suite of 748,933,068,387 cases.\n"},
		{[]string{"--share", "1e-13", "--suite", "1000000"}, "A class with a traffic share of 1e-13 in a 1,000,000-case suite sampled by frequency: " +
			"expected 1e-7 cases; probability of none 1.0000 (100.00%). A 95% chance of at least one case needs a suite of more than a trillion cases.\n"},
		{[]string{"--share", "1e-300", "--suite", "1"}, "A class with a traffic share of 1e-300 in a 1-case suite sampled by frequency: " +
			"expected 1e-300 cases; probability of none 1.0000 (100.00%). A 95% chance of at least one case needs a suite of more than a trillion cases.\n"},
	} {
		r := mustRun(t, exitOK, append([]string{"coverage"}, tc.args...)...)
		if r.out != tc.want {
			t.Errorf("coverage %s:\n got %q\nwant %q", strings.Join(tc.args, " "), r.out, tc.want)
		}
	}
}

func TestCoverage_JSON(t *testing.T) {
	t.Parallel()
	r := mustRun(t, exitOK, "coverage", "--share", "0.002", "--suite", "300", "--format", "json")
	var got struct {
		Share      float64 `json:"share"`
		Suite      int     `json:"suite"`
		Expected   float64 `json:"expected_cases"`
		None       float64 `json:"probability_none"`
		SuiteFor95 *int    `json:"suite_for_95"`
	}
	if err := json.Unmarshal([]byte(r.out), &got); err != nil {
		t.Fatalf("coverage --format json: %v\n%s", err, r.out)
	}
	if got.Share != 0.002 || got.Suite != 300 || math.Abs(got.Expected-0.6) > 1e-9 || math.Abs(got.None-0.5485) > 1e-4 ||
		got.SuiteFor95 == nil || *got.SuiteFor95 != 1497 {
		t.Errorf("coverage json = %+v, want share 0.002, suite 300, expected 0.6, none 0.5485, suite_for_95 1497\n%s", got, r.out)
	}
}

func TestCoverage_BadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"--share", "0", "--suite", "300"}, "--share 0"},
		{[]string{"--share", "1.5", "--suite", "300"}, "--share 1.5"},
		{[]string{"--share", "-0.1", "--suite", "300"}, "(0,1]"},
		{[]string{"--share", "NaN", "--suite", "300"}, "--share NaN"},
		{[]string{"--share", "0.002", "--suite", "0"}, "--suite 0"},
		{[]string{"--share", "0.002", "--suite", "-3"}, "at least 1 case"},
		{[]string{"--share", "0.002"}, "needs --share"},
		{[]string{"--suite", "300"}, "and --suite"},
		{nil, "needs --share"},
		{[]string{"--share", "0.2%", "--suite", "300"}, "invalid argument"},
		{[]string{"--share", "0.002", "--suite", "300", "--format", "md"}, `unknown --format "md"`},
		{[]string{"--share", "0.002", "--suite", "300", "extra"}, ""},
	} {
		r := mustRun(t, exitBadInput, append([]string{"coverage"}, tc.args...)...)
		if !strings.Contains(r.errOut, tc.want) || r.out != "" {
			t.Errorf("coverage %s: want %q on stderr and nothing on stdout:\n%s", strings.Join(tc.args, " "), tc.want, r)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/report"
)

// sweepAudit is a two-line sweep of the demo's prompt against the
// simulated model: line 23 is load-bearing (its failures rise from about 4%
// to about 25% without it), line 15 does nothing. top goes at the top of
// the file (looks, adaptive).
func sweepAudit(t *testing.T, top string) string {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	audit := top + `name = "adaptive sweep"
prompt = "support.md"
samples = 30
[model]
name = "sim-support-1"
provider = "sim"
price_input_per_mtok = 3.0
price_output_per_mtok = 15.0
[[rule]]
line = 23
cases = "roadmap_speculation.jsonl"
predicate = "roadmap_speculation.predicate.toml"
[[rule]]
line = 15
cases = "reask.jsonl"
predicate = "reask.predicate.toml"
`
	path := filepath.Join(dir, "sweep.toml")
	if err := os.WriteFile(path, []byte(audit), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sweepReport is the part of the JSON report the adaptive tests read.
type sweepReport struct {
	Rules []struct {
		Line     int    `json:"line"`
		Verdict  string `json:"verdict"`
		Unneeded int    `json:"unneeded"`
		Look     *struct {
			Index, Of, Samples int
			Settled            bool
		} `json:"look"`
		Cases []struct {
			Deleted struct {
				N int `json:"n"`
			} `json:"deleted"`
		} `json:"cases"`
	} `json:"rules"`
}

func readSweep(t *testing.T, path string) sweepReport {
	t.Helper()
	var doc sweepReport
	if err := json.Unmarshal([]byte(mustRun(t, 0, "report", path, "--format", "json").out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestAdaptive_DemoSameVerdicts is issue 23's first done criterion: on a
// sweep of the bundled demo's lines, run --adaptive gives the verdicts the
// fixed run gives; the load-bearing line settles at an interim look (the
// run says which), the line that does nothing runs to the end.
func TestAdaptive_DemoSameVerdicts(t *testing.T) {
	t.Parallel()
	fixed := sweepAudit(t, "")
	mustRun(t, 0, "run", fixed, "--yes", "--headless")
	adaptive := sweepAudit(t, "adaptive = true\n")
	// Before any call the plan says the largest and the expected number.
	var planned struct {
		Adaptive *struct {
			AtMost      int `json:"at_most"`
			LoadBearing int `json:"load_bearing"`
		} `json:"adaptive_answers"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, 0, "plan", adaptive, "--format", "json").out), &planned); err != nil {
		t.Fatal(err)
	}
	if a := planned.Adaptive; a == nil || a.AtMost != 2*(18+12)*30 || a.LoadBearing >= a.AtMost/2 || a.LoadBearing <= 0 {
		t.Errorf("plan's adaptive answer calls: %+v", a)
	}
	r := mustRun(t, 0, "run", adaptive, "--yes", "--headless")
	if !strings.Contains(r.errOut+r.out, "look 1 of 6 (5 of 30 samples a case): ") ||
		!strings.Contains(r.errOut+r.out, "line 23 KEEP at look") {
		t.Errorf("the run does not say how its looks went:\n%s", r)
	}
	f, a := readSweep(t, fixed), readSweep(t, adaptive)
	for i := range f.Rules {
		if f.Rules[i].Verdict != a.Rules[i].Verdict {
			t.Errorf("line %d: %s fixed, %s adaptive", f.Rules[i].Line, f.Rules[i].Verdict, a.Rules[i].Verdict)
		}
	}
	if l23 := a.Rules[0]; l23.Line != 23 || l23.Verdict != "KEEP" || l23.Look == nil || !l23.Look.Settled || l23.Look.Index == 6 || l23.Unneeded == 0 {
		t.Errorf("line 23: %+v", l23)
	}
	if l15 := a.Rules[1]; l15.Look == nil || l15.Look.Index != 6 || l15.Unneeded != 0 {
		t.Errorf("line 15: %+v", l15)
	}
	out := mustRun(t, 0, "report", adaptive).out
	if l := a.Rules[0].Look; l != nil {
		// The verdict rests on the look's samples of every cell (2
		// variants x its cases), whatever else is stored.
		cells := 2 * len(a.Rules[0].Cases)
		want := fmt.Sprintf("verdict (settled at look %d of 6 after %s of %s answers)", l.Index,
			report.Thousands(int64(cells*l.Samples)), report.Thousands(int64(cells*30)))
		if !strings.Contains(out, want) {
			t.Errorf("the text report does not say %q:\n%s", want, out)
		}
	}
	// Nothing is left to make: the settled line's calls are not needed,
	// and neither the plan nor a second run says otherwise.
	plan := mustRun(t, 0, "plan", adaptive).out
	if !strings.Contains(plan, "calls: 0 to make") || !strings.Contains(plan, "not needed (lines settled at a look)") {
		t.Errorf("plan after the adaptive run:\n%s", plan)
	}
	again := mustRun(t, 0, "run", adaptive, "--yes", "--headless")
	if strings.Contains(again.errOut, "no line settled; every line is settled") {
		t.Errorf("a second run contradicts itself:\n%s", again)
	}
}

// TestAdaptive_LoadBearingLineOnFewCalls is its second: a sweep whose
// load-bearing line takes failures from 4% to 30% (a fake OpenAI server)
// settles that line on at most 40% of its calls, with the fixed run's
// verdicts.
func TestAdaptive_LoadBearingLineOnFewCalls(t *testing.T) {
	t.Parallel()
	cs := makeCases(5, 3, 6)
	run := func(top string) sweepReport {
		srv := newFakeServer(t, cs)
		hash := map[string]int{}
		for i, c := range cs {
			hash[c.msg] = i
		}
		srv.answerFn = func(a arrival, idx int) string {
			kind := srv.kinds[a.User]
			if kind == "control" {
				return answerControl
			}
			h := hash[a.User]
			if strings.Contains(a.System, srv.rule) {
				if (idx+h)%25 == 0 { // 4%
					return answerViolation
				}
				return answerCompliant
			}
			if (idx*7+h)%10 < 3 { // 30%
				return answerViolation
			}
			return answerCompliant
		}
		dir := t.TempDir()
		path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 30, concurrency: 8, idleRule: true}, cs)
		data, _ := os.ReadFile(path)
		if err := os.WriteFile(path, append([]byte(top), data...), 0o644); err != nil {
			t.Fatal(err)
		}
		mustRun(t, 0, "run", path, "--yes", "--headless")
		return readSweep(t, path)
	}
	f, a := run(""), run("adaptive = true\n")
	for i := range f.Rules {
		if f.Rules[i].Verdict != a.Rules[i].Verdict {
			t.Errorf("line %d: %s fixed, %s adaptive", f.Rules[i].Line, f.Rules[i].Verdict, a.Rules[i].Verdict)
		}
	}
	l5 := a.Rules[0]
	if l5.Line != ruleLine || l5.Verdict != "KEEP" || l5.Look == nil || !l5.Look.Settled {
		t.Fatalf("line 5: %+v", l5)
	}
	made, planned := 0, 0
	for _, c := range l5.Cases {
		made += c.Deleted.N
		planned += 30
	}
	t.Logf("line 5 settled at look %d of %d: %d of %d answers without the line", l5.Look.Index, l5.Look.Of, made, planned)
	if float64(made) > 0.4*float64(planned) {
		t.Errorf("line 5 made %d of %d answers without the line, want at most 40%%", made, planned)
	}
}

// TestAdaptive_NeedsDeclaredLooks: --adaptive on an audit with a fixed
// design is refused before any call: the looks belong in the file, where
// every report reads them.
func TestAdaptive_NeedsDeclaredLooks(t *testing.T) {
	t.Parallel()
	path := sweepAudit(t, "")
	r := mustRun(t, 2, "run", path, "--yes", "--headless", "--adaptive")
	if !strings.Contains(r.errOut, "--adaptive needs looks declared in") {
		t.Errorf("refusal: %s", r)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "auditor.db")); err == nil {
		if strings.Contains(mustRun(t, 0, "report", path).out, "KEEP") {
			t.Error("a refused run made calls")
		}
	}
}

// TestAdaptive_BudgetCapsEveryRound: the budget is the whole run's, shared
// by its rounds. Each round was given the whole budget, so a $3 budget let
// an adaptive demo sweep spend $7.27 and exit 0.
func TestAdaptive_BudgetCapsEveryRound(t *testing.T) {
	t.Parallel()
	fixed := sweepAudit(t, "")
	mustRun(t, 0, "run", fixed, "--yes", "--headless")
	full := spendOf(t, fixed).TotalUSD
	path := sweepAudit(t, "adaptive = true\n")
	budget := full / 4
	r := mustRun(t, 1, "run", path, "--yes", "--headless", "--budget", strconv.FormatFloat(budget, 'f', 4, 64))
	if !strings.Contains(r.errOut, "budget") {
		t.Errorf("the stop does not name the budget:\n%s", r)
	}
	if spent := spendOf(t, path).TotalUSD; spent > budget || spent < budget/2 {
		t.Errorf("spent $%.4f under a budget of $%.4f (the fixed run costs $%.4f)", spent, budget, full)
	}
}

// TestAdaptive_SettledLookKept: a line settled at an interim look stays
// settled at that look when the rest of its answers are stored later (a
// run in one go of the same audit makes them): the report keeps the look
// that first settled it (issue 30: "settled at look 3 of 5" became "look 4
// of 5").
func TestAdaptive_SettledLookKept(t *testing.T) {
	t.Parallel()
	path := sweepAudit(t, "looks = 6\n")
	mustRun(t, 0, "run", path, "--yes", "--headless", "--adaptive")
	before := readSweep(t, path).Rules[0]
	if before.Line != 23 || before.Look == nil || !before.Look.Settled || before.Look.Index == 6 {
		t.Fatalf("line 23 after the adaptive run: %+v", before)
	}
	mustRun(t, 0, "run", path, "--yes", "--headless")
	after := readSweep(t, path).Rules[0]
	n := 0
	for _, c := range after.Cases {
		n += c.Deleted.N
	}
	if n != 30*len(after.Cases) {
		t.Fatalf("the run in one go stored %d answers without the line, want all %d", n, 30*len(after.Cases))
	}
	if after.Look == nil || after.Look.Index != before.Look.Index || after.Verdict != before.Verdict {
		t.Errorf("line 23 was %s at look %d; with every answer stored it is %s at %+v", before.Verdict, before.Look.Index, after.Verdict, after.Look)
	}
}

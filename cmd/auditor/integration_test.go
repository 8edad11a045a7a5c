package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// variantOf tells which prompt variant a request's system prompt is:
// 0 the full prompt, 1 without the audited rule, 2 without the idle rule.
func variantOf(system string) int {
	switch {
	case !strings.Contains(system, ruleText):
		return 1
	case !strings.Contains(system, idleRuleText):
		return 2
	}
	return 0
}

// bodyIndex numbers the distinct request bodies of a generated audit:
// variant-major, then case.
func bodyIndex(cs []testCase, a arrival) int {
	for i, c := range cs {
		if c.msg == a.User {
			return variantOf(a.System)*len(cs) + i
		}
	}
	return -1
}

// TestRunAgainstFlakyServer runs a two-line sweep against a server that
// fails the first attempt of most request bodies in every way a real
// endpoint does (rate limit, 5xx, reset, garbage), and checks that every
// planned cell ends stored exactly once, each distinct call is answered
// exactly once, the numbers match what the fake model was made to do, and
// a second run is free.
func TestRunAgainstFlakyServer(t *testing.T) {
	t.Parallel()
	const samples = 6
	cs := makeCases(3, 2, 3)
	srv := newFakeServer(t, cs)
	firstFaults := []fault{fault429, fault500, faultReset, faultMalformed, noFault}
	// plannedFault is the fault for the n-th request of a body: every body
	// but one in five fails its first request, and some fail a third one.
	plannedFault := func(body, n int) fault {
		switch {
		case n == 0:
			return firstFaults[body%len(firstFaults)]
		case n == 2 && body%7 == 0:
			return fault500
		}
		return noFault
	}
	srv.fault = func(a arrival) fault { return plannedFault(bodyIndex(cs, a), a.N) }

	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: 4, idleRule: true}, cs)

	bodies := 3 * len(cs) // baseline, -L5, -L8: the baseline is shared by both rules
	distinct := bodies * samples
	cells := 2 * 2 * len(cs) * samples
	wantFaults := 0
	for b := 0; b < bodies; b++ {
		// Each body gets samples answers plus its faults, so its requests
		// reach index 2 whenever it has samples >= 2.
		for n := 0; n < samples+2; n++ {
			if plannedFault(b, n) != noFault {
				wantFaults++
			}
		}
	}

	first := mustRun(t, 0, "run", path, "--yes", "--headless")
	t.Logf("first run:\n%s", first)

	requests, answers, faults := srv.counts()
	if answers != distinct {
		t.Errorf("server answered %d requests, want one per distinct call: %d", answers, distinct)
	}
	if faults != wantFaults {
		t.Errorf("server injected %d faults, want %d", faults, wantFaults)
	}
	if requests != answers+faults {
		t.Errorf("server saw %d requests, want answers + faults = %d + %d", requests, answers, faults)
	}
	for _, f := range []fault{fault429, fault500, faultReset, faultMalformed} {
		if srv.faultCount(f) == 0 {
			t.Errorf("no %s fault was injected; the test does not exercise it", f)
		}
	}

	recs := exportResponses(t, path)
	if len(recs) != cells {
		t.Errorf("export has %d records, want one per planned cell: %d", len(recs), cells)
	}
	type cellID struct {
		rule          int
		variant, kase string
		sample        int
	}
	seenCell := map[cellID]bool{}
	attemptsByKey := map[string]int{}
	for _, r := range recs {
		id := cellID{r.RuleLine, r.Variant, r.Case, r.Sample}
		if seenCell[id] {
			t.Errorf("cell %+v exported twice", id)
		}
		seenCell[id] = true
		if r.Error != "" || r.Text == "" {
			t.Errorf("cell %+v: stored without an answer: error %q, text %q", id, r.Error, r.Text)
		}
		if _, ok := r.Grades["predicate"]; !ok {
			t.Errorf("cell %+v: no predicate grade", id)
		}
		attemptsByKey[r.Key] = r.Attempts
	}
	if len(attemptsByKey) != distinct {
		t.Errorf("export has %d distinct keys, want %d", len(attemptsByKey), distinct)
	}
	sumAttempts := 0
	for _, n := range attemptsByKey {
		sumAttempts += n
	}
	if sumAttempts != requests {
		t.Errorf("stored attempts add up to %d, but the server saw %d requests", sumAttempts, requests)
	}

	doc := reportJSON(t, path)
	if len(doc.Rules) != 2 {
		t.Fatalf("report has %d rules, want 2", len(doc.Rules))
	}
	type counts struct{ baseFail, baseN, delFail, delN int }
	want := map[int]map[string]counts{
		ruleLine: {
			"provoke":  {0, 3 * samples, 3 * caughtPerSix, 3 * samples},
			"pressure": {0, 2 * samples, 2 * caughtPerSix, 2 * samples},
			"control":  {0, 3 * samples, 0, 3 * samples},
		},
		idleRuleLine: {
			"provoke":  {0, 3 * samples, 0, 3 * samples},
			"pressure": {0, 2 * samples, 0, 2 * samples},
			"control":  {0, 3 * samples, 0, 3 * samples},
		},
	}
	wantVerdict := map[int]string{ruleLine: string(model.DecisionKeep), idleRuleLine: string(model.DecisionInconclusive)}
	for _, rd := range doc.Rules {
		if rd.Verdict != wantVerdict[rd.Line] {
			t.Errorf("line %d: verdict %s, want %s", rd.Line, rd.Verdict, wantVerdict[rd.Line])
		}
		if rd.Errors != 0 || rd.Pending != 0 {
			t.Errorf("line %d: %d errors, %d pending, want none", rd.Line, rd.Errors, rd.Pending)
		}
		for kind, w := range want[rd.Line] {
			a := rd.Arms[kind]
			got := counts{a.Baseline.Fail, a.Baseline.N, a.Deleted.Fail, a.Deleted.N}
			if got != w {
				t.Errorf("line %d %s: fail/n baseline %d/%d deleted %d/%d, want %d/%d and %d/%d",
					rd.Line, kind, got.baseFail, got.baseN, got.delFail, got.delN, w.baseFail, w.baseN, w.delFail, w.delN)
			}
		}
	}
	if doc.Spend.Calls != distinct {
		t.Errorf("spend counts %d calls, want %d", doc.Spend.Calls, distinct)
	}
	if doc.Spend.CachedTokens == 0 {
		t.Errorf("spend shows no cached tokens, but the server reported some on every answer")
	}
	if !strings.Contains(first.out, "verdict: KEEP") {
		t.Errorf("run output has no KEEP verdict:\n%s", first.out)
	}

	// A second run makes no calls and prints the same table.
	srv.reset()
	second := mustRun(t, 0, "run", path, "--yes", "--headless")
	if requests, _, _ := srv.counts(); requests != 0 {
		t.Errorf("second run sent %d requests, want 0", requests)
	}
	if second.out != first.out {
		t.Errorf("second run printed a different table:\n--- first\n%s--- second\n%s", first.out, second.out)
	}
	var plan struct {
		Calls       int `json:"calls"`
		CachedCalls int `json:"cached_calls"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, 0, "plan", path, "--format", "json").out), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Calls != 0 || plan.CachedCalls != distinct {
		t.Errorf("plan after the run: %d calls to make, %d stored; want 0 and %d", plan.Calls, plan.CachedCalls, distinct)
	}
}

// TestRunCallFailedForGood checks that a call the server refuses for good
// makes the run exit 1 with the error counted apart, and that the next run
// retries that call and only that call.
func TestRunCallFailedForGood(t *testing.T) {
	t.Parallel()
	const samples = 4
	cs := makeCases(3, 2, 3)
	srv := newFakeServer(t, cs)
	target := cs[0].msg
	srv.fault = func(a arrival) fault {
		if a.User == target && variantOf(a.System) == 1 && a.N == 0 {
			return fault400
		}
		return noFault
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: 4}, cs)
	distinct := 2 * len(cs) * samples

	r := mustRun(t, 1, "run", path, "--yes", "--headless")
	if !strings.Contains(r.errOut, "1 answers failed for good") {
		t.Errorf("stderr does not count the failed call:\n%s", r)
	}
	if !strings.Contains(r.out, "1 errored") {
		t.Errorf("table does not show the errored call:\n%s", r.out)
	}
	if requests, answers, _ := srv.counts(); requests != distinct || answers != distinct-1 {
		t.Errorf("server saw %d requests and answered %d; want %d and %d (a 400 is not retried)", requests, answers, distinct, distinct-1)
	}
	doc := reportJSON(t, path)
	if doc.Rules[0].Errors != 1 {
		t.Errorf("report counts %d errors, want 1", doc.Rules[0].Errors)
	}
	if a := doc.Rules[0].Arms["provoke"]; a.Deleted.N != 3*samples-1 {
		t.Errorf("the errored call is in the numbers: provoke deleted n = %d, want %d", a.Deleted.N, 3*samples-1)
	}
	var errored []responseRecord
	for _, rec := range exportResponses(t, path) {
		if rec.Error != "" {
			errored = append(errored, rec)
		}
	}
	if len(errored) != 1 || errored[0].Case != cs[0].id || errored[0].Variant != fmt.Sprintf("-L%d", ruleLine) {
		t.Fatalf("want exactly one errored record, case %s variant -L%d; got %+v", cs[0].id, ruleLine, errored)
	}
	if !strings.Contains(errored[0].Error, "400") {
		t.Errorf("stored error %q does not say what the server answered", errored[0].Error)
	}

	srv.reset()
	mustRun(t, 0, "run", path, "--yes", "--headless")
	log := srv.arrivalsLog()
	if len(log) != 1 || log[0].User != target || variantOf(log[0].System) != 1 {
		t.Errorf("re-run sent %d requests, want exactly the failed call again", len(log))
	}
	for _, rec := range exportResponses(t, path) {
		if rec.Error != "" {
			t.Errorf("after the re-run, %s %s sample %d still has error %q", rec.Case, rec.Variant, rec.Sample, rec.Error)
		}
	}
}

// TestRunStopsAndResumes covers a run that stops before finishing: an
// exhausted quota. It exits 1 with the exact command that resumes it;
// following that command finishes the audit without repeating a stored
// call. (A budget is cumulative: TestBudgetIsCumulative.)
func TestRunStopsAndResumes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		flags []string
		fault func(cs []testCase) func(arrival) fault
		say   string
	}{
		{
			name: "quota",
			fault: func(cs []testCase) func(arrival) fault {
				return func(a arrival) fault {
					if a.User == cs[4].msg && a.N == 0 {
						return faultQuota
					}
					return noFault
				}
			},
			say: "quota",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			const samples = 3
			cs := makeCases(3, 2, 3)
			srv := newFakeServer(t, cs)
			if tt.fault != nil {
				srv.fault = tt.fault(cs)
			}
			dir := t.TempDir()
			path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: 2}, cs)
			distinct := 2 * len(cs) * samples

			args := append([]string{"run", path, "--yes", "--headless"}, tt.flags...)
			stops := 0
			for i := 1; ; i++ {
				r := runMain(t, args...)
				if r.code == 0 {
					break
				}
				stops++
				if r.code != 1 || i > 20 {
					t.Fatalf("run %d: want exit 1 (stopped) or 0 (done), got:\n%s", i, r)
				}
				m := regexp.MustCompile(`\nStopped \(([^)]*)\).*Resume with:\n\s+(.+)\n`).FindStringSubmatch(r.errOut)
				if m == nil || !strings.Contains(m[1], tt.say) {
					t.Fatalf("run %d: no stop message about %s with a resume command:\n%s", i, tt.say, r.errOut)
				}
				resume := strings.Fields(m[2])
				if resume[0] != os.Args[0] || !slices.Contains(resume, "--yes") {
					t.Fatalf("resume command %q does not rerun this program with --yes", m[2])
				}
				for _, f := range tt.flags {
					if !slices.Contains(resume, f) {
						t.Errorf("resume command %q drops %s", m[2], f)
					}
				}
				args = resume[1:]
			}
			t.Logf("%s: finished after %d stops", tt.name, stops)
			if stops == 0 {
				t.Fatalf("the run never stopped for %s", tt.say)
			}
			if requests, answers, faults := srv.counts(); answers != distinct || requests != answers+faults {
				t.Errorf("server: %d requests, %d answers, %d faults; want %d answers and nothing else", requests, answers, faults, distinct)
			}
			for _, rec := range exportResponses(t, path) {
				if rec.Error != "" {
					t.Errorf("%s %s sample %d: error %q", rec.Case, rec.Variant, rec.Sample, rec.Error)
				}
			}
		})
	}
}

// TestBudgetIsCumulative: a budget, from --budget or the audit file, is
// the most the whole audit may spend. Following the printed resume command
// must not spend it again: the rerun refuses with nothing sent, and only a
// larger budget goes on.
func TestBudgetIsCumulative(t *testing.T) {
	t.Parallel()
	const budget = 0.01
	for _, from := range []string{"flag", "file"} {
		t.Run(from, func(t *testing.T) {
			t.Parallel()
			cs := makeCases(3, 2, 3)
			srv := newFakeServer(t, cs)
			dir := t.TempDir()
			path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 3, concurrency: 2}, cs)
			args := []string{"run", path, "--yes", "--headless"}
			if from == "flag" {
				args = append(args, "--budget", fmt.Sprint(budget))
			} else {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, append([]byte(fmt.Sprintf("budget = %g\n", budget)), data...), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := runMain(t, args...)
			m := regexp.MustCompile(`\nStopped \(([^)]*)\).*Resume with:\n\s+(.+)\n`).FindStringSubmatch(r.errOut)
			if r.code != 1 || m == nil || !strings.Contains(m[1], "budget") {
				t.Fatalf("first run: want a stop for the budget with a resume command, got:\n%s", r)
			}
			if spent := reportJSON(t, path).Spend.USD; spent > budget {
				t.Fatalf("spent $%.4f, over the budget of $%.4f", spent, budget)
			}
			// Each resume gets only what is left: it stops again (or
			// refuses outright) and the whole audit stays within budget.
			for i := range 3 {
				again := runMain(t, strings.Fields(m[2])[1:]...)
				if again.code != 1 || !strings.Contains(again.errOut, "for the whole audit") ||
					!strings.Contains(again.errOut, "budget") {
					t.Fatalf("resume %d: want exit 1 for the budget, saying what is left of the whole audit's, got:\n%s", i+1, again)
				}
				if spent := reportJSON(t, path).Spend.USD; spent > budget {
					t.Fatalf("resume %d: the audit spent $%.4f, over its budget of $%.4f", i+1, spent, budget)
				}
			}
			// A larger budget on the command line overrides and finishes.
			if done := runMain(t, "run", path, "--yes", "--headless", "--budget", "100"); done.code != 0 {
				t.Fatalf("with a larger budget: %s", done)
			}
		})
	}
}

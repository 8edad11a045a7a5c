package main

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/report"
)

// TestDemo runs the bundled demo as a new user would, and checks that its
// output is marked SIMULATED and gives each of the three lines a verdict,
// KEEP for the load-bearing line 23.
func TestDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := mustRun(t, 0, "demo", "--headless", "--dir", dir)
	if !strings.Contains(r.out, "SIMULATED") || !strings.Contains(r.errOut, "SIMULATED") {
		t.Errorf("demo output is not marked SIMULATED everywhere:\n%s", r)
	}
	verdicts := textVerdicts(r.out)
	for _, line := range []string{"15", "22", "23"} {
		switch verdicts[line] {
		case "KEEP", "DELETE", "INCONCLUSIVE":
		default:
			t.Errorf("line %s: no verdict in the demo output (got %q)", line, verdicts[line])
		}
	}
	if verdicts["23"] != "KEEP" {
		t.Errorf("line 23: verdict %q, want KEEP", verdicts["23"])
	}
	if verdicts["12"] != "CANARY" {
		t.Errorf("line 12 (no input class): verdict %q, want CANARY", verdicts["12"])
	}
	if len(verdicts) != 4 {
		t.Errorf("want verdicts for 4 lines, got %v", verdicts)
	}
	// Issue 11: results first (after the SIMULATED mark), not a paragraph
	// of statistics; the variant's name explained where it first appears;
	// the next commands, on the real path, at the end.
	lines := strings.SplitN(r.out, "\n", 4)
	if len(lines) < 4 || lines[0] != report.SimulatedBanner || lines[2] != "Verdicts:" || !strings.HasPrefix(lines[3], "  KEEP          -L23 deleted: ") {
		t.Errorf("demo stdout does not open with the verdicts:\n%s", r.out)
	}
	if first, explained := strings.Index(r.out, "-L23"), strings.Index(r.out, "-L23 deleted"); first < 0 || first != explained {
		t.Errorf("-L23 first appears at %d, explained at %d", first, explained)
	}
	audit := shellQuote(filepath.Join(dir, "audit.toml"))
	for _, cmd := range []string{" open " + audit, " label " + audit + " --for-verdict", " review " + audit, " report " + audit + " --format md"} {
		if !strings.Contains(r.errOut, cmd+"\n") {
			t.Errorf("demo does not end with the next command %q:\n%s", strings.TrimSpace(cmd), r.errOut)
		}
	}

	// The demo again in the same directory: everything is stored already.
	again := mustRun(t, 0, "demo", "--headless", "--dir", dir)
	if !strings.Contains(again.errOut, "calls: 0 to make") {
		t.Errorf("second demo in the same directory makes calls again:\n%s", again.errOut)
	}
	if again.out != r.out {
		t.Errorf("second demo printed different results:\n--- first\n%s--- second\n%s", r.out, again.out)
	}
}

var (
	lineHeader  = regexp.MustCompile(`(?m)^-L(\d+) deleted`)
	verdictLine = regexp.MustCompile(`(?m)^  verdict: (\w+)`)
)

// textVerdicts reads the text report: prompt line -> its deletion's verdict.
func textVerdicts(out string) map[string]string {
	v := map[string]string{}
	blocks := lineHeader.FindAllStringSubmatchIndex(out, -1)
	for i, b := range blocks {
		end := len(out)
		if i+1 < len(blocks) {
			end = blocks[i+1][0]
		}
		if m := verdictLine.FindStringSubmatch(out[b[0]:end]); m != nil {
			v[out[b[2]:b[3]]] = m[1]
		}
	}
	return v
}

// TestPlanJSON checks the fields of `plan --format json` that scripts rely
// on, that planning makes no calls, and that stored calls are free.
func TestPlanJSON(t *testing.T) {
	t.Parallel()
	const samples = 4
	cs := makeCases(3, 2, 3)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: samples, concurrency: 4}, cs)
	distinct := 2 * len(cs) * samples

	plan := func() map[string]any {
		t.Helper()
		r := mustRun(t, 0, "plan", path, "--format", "json")
		var m map[string]any
		if err := json.Unmarshal([]byte(r.out), &m); err != nil {
			t.Fatalf("plan --format json: %v\n%s", err, r.out)
		}
		for _, f := range []string{"calls", "answer_calls", "judge_calls", "cached_calls", "prompt_tokens",
			"completion_tokens", "usd", "usd_with_prompt_caching", "minutes"} {
			if _, ok := m[f].(float64); !ok {
				t.Errorf("plan: field %q missing or not a number: %v", f, m[f])
			}
		}
		return m
	}
	num := func(m map[string]any, f string) float64 { v, _ := m[f].(float64); return v }

	before := plan()
	if requests, _, _ := srv.counts(); requests != 0 {
		t.Errorf("plan sent %d requests", requests)
	}
	want := map[string]float64{"calls": float64(distinct), "answer_calls": float64(distinct), "judge_calls": 0, "cached_calls": 0,
		// No answer stored: 250 tokens an answer assumed, or half of
		// max_tokens = 200 when less; at most max_tokens.
		"completion_tokens": float64(distinct * 100), "completion_tokens_at_most": float64(distinct * 200),
		"schema_version": 1}
	for f, w := range want {
		if got := num(before, f); got != w {
			t.Errorf("plan before the run: %s = %v, want %v", f, got, w)
		}
	}
	prompt, completion := num(before, "prompt_tokens"), num(before, "completion_tokens")
	if prompt <= 0 || num(before, "minutes") <= 0 {
		t.Errorf("plan before the run: prompt_tokens %v, minutes %v; want both positive", prompt, num(before, "minutes"))
	}
	// $3 per million input tokens, $15 per million output tokens.
	if usd := num(before, "usd"); math.Abs(usd-(prompt*3+completion*15)/1e6) > 1e-9 {
		t.Errorf("plan: usd %v, want %v from the token counts and prices", usd, (prompt*3+completion*15)/1e6)
	}
	if c := num(before, "usd_with_prompt_caching"); c <= 0 || c > num(before, "usd") {
		t.Errorf("plan: usd_with_prompt_caching %v, want in (0, usd = %v]", c, num(before, "usd"))
	}
	rules, _ := before["rules"].([]any)
	if len(rules) != 1 {
		t.Fatalf("plan: rules = %v, want one rule", before["rules"])
	}
	rule, _ := rules[0].(map[string]any)
	if num(rule, "line") != ruleLine || rule["text"] != ruleText || num(rule, "tokens") <= 0 {
		t.Errorf("plan: rule = %v, want line %d, its text and a positive token count", rule, ruleLine)
	}
	cases, _ := rule["cases"].(map[string]any)
	if num(cases, "provoke") != 3 || num(cases, "pressure") != 2 || num(cases, "control") != 3 {
		t.Errorf("plan: rule cases = %v, want provoke 3, pressure 2, control 3", cases)
	}

	mustRun(t, 0, "run", path, "--yes", "--headless")
	after := plan()
	for f, w := range map[string]float64{"calls": 0, "answer_calls": 0, "cached_calls": float64(distinct), "usd": 0, "prompt_tokens": 0} {
		if got := num(after, f); got != w {
			t.Errorf("plan after the run: %s = %v, want %v", f, got, w)
		}
	}
}

// TestRunWithoutConfirmation checks that a run with paid calls and no
// terminal to confirm on refuses (exit 2) before making any call.
func TestRunWithoutConfirmation(t *testing.T) {
	t.Parallel()
	cs := makeCases(1, 1, 1)
	srv := newFakeServer(t, cs)
	path := writeAudit(t, t.TempDir(), auditSpec{baseURL: srv.baseURL(), samples: 2, concurrency: 2}, cs)
	r := mustRun(t, exitBadInput, "run", path, "--headless")
	if !strings.Contains(r.errOut, "--yes") {
		t.Errorf("the refusal does not say how to confirm:\n%s", r)
	}
	if requests, _, _ := srv.counts(); requests != 0 {
		t.Errorf("unconfirmed run sent %d requests", requests)
	}
}

// TestRun_Rejudge: --rejudge re-asks each judge about K answers after the
// judging and prints how often each flipped; a second run calls nothing
// and prints the same.
func TestRun_Rejudge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, examples.DemoAudit)
	args := []string{"run", path, "--yes", "--headless", "--samples", "1", "--rejudge", "4"}
	first := mustRun(t, exitOK, args...)
	if !strings.Contains(first.errOut, "re-asking judges: 8 calls") {
		t.Errorf("no re-ask phase for 2 judges x 4 answers:\n%s", first)
	}
	var lines []string
	for _, l := range strings.Split(first.out, "\n") {
		if strings.HasPrefix(l, "  judge:sim-judge-") && strings.Contains(l, ": flipped ") {
			lines = append(lines, l)
		}
	}
	if !strings.Contains(first.out, "Judge stability (same answer asked again, temperature 0):") || len(lines) != 2 {
		t.Fatalf("no stability line per judge:\n%s", first)
	}
	for _, l := range lines {
		// 4 re-asks each: compared, or without a VERDICT line.
		var flips, asked, unparseable int
		fmt.Sscanf(l[strings.Index(l, "flipped"):], "flipped %d of %d", &flips, &asked)
		if i := strings.Index(l, "; "); i >= 0 {
			fmt.Sscanf(l[i+2:], "%d without", &unparseable)
		}
		if asked+unparseable != 4 || flips > asked {
			t.Errorf("stability line %q: want 4 re-asks", l)
		}
	}
	second := mustRun(t, exitOK, args...)
	if strings.Contains(second.errOut, "re-asking judges:") || strings.Contains(second.errOut, "judging:") {
		t.Errorf("the second run called again:\n%s", second)
	}
	for _, l := range lines {
		if !strings.Contains(second.out, l) {
			t.Errorf("the second run's stability differs; want %q in:\n%s", l, second.out)
		}
	}
}

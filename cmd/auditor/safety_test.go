package main

import (
	"encoding/csv"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// hostile is model output and server error text that tries to take over a
// terminal (clear screen, set the title, a hyperlink, a C1 CSI) and to run
// as a spreadsheet formula.
const hostile = "\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\u009b31m"

// TestUntrustedTextIsSanitized runs an audit whose model answers and
// error bodies carry terminal control sequences and spreadsheet formulas,
// and checks that none reaches the terminal, a report or a CSV cell as is.
func TestUntrustedTextIsSanitized(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	srv.errorSuffix = hostile
	srv.answerFn = func(a arrival, idx int) string {
		if srv.kinds[a.User] == model.Control {
			return `=HYPERLINK("http://evil.example","help")` + hostile
		}
		return "-1+1 next quarter " + hostile
	}
	srv.fault = func(a arrival) fault {
		if a.N == 0 && bodyIndex(cs, a) == 1 {
			return fault400 // fails for good: its error is printed, stored and exported
		}
		return noFault
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 2, concurrency: 2}, cs)

	outputs := map[string]string{}
	add := func(name string, r result) { outputs[name+" stdout"], outputs[name+" stderr"] = r.out, r.errOut }
	add("run", mustRun(t, 1, "run", path, "--yes", "--headless"))
	for _, f := range []string{"text", "md", "json", "junit"} {
		add("report "+f, mustRun(t, 0, "report", path, "--format", f))
	}
	var csvs []string
	for _, what := range []string{"responses", "grades"} {
		for _, f := range []string{"jsonl", "csv"} {
			r := mustRun(t, 0, "export", path, "--what", what, "--format", f)
			add("export "+what+" "+f, r)
			if f == "csv" {
				csvs = append(csvs, r.out)
			}
		}
	}
	if !strings.Contains(outputs["run stderr"], "evil.example") && !strings.Contains(outputs["run stderr"], "pwned") {
		t.Errorf("the hostile error text never reached the run's output; the test checks nothing:\n%s", outputs["run stderr"])
	}
	for name, o := range outputs {
		for _, bad := range []string{"\x1b", "\x07", "\u009b", "\x9b"} {
			if i := strings.Index(o, bad); i >= 0 {
				t.Errorf("%s contains control %q: %q", name, bad, o[max(0, i-40):min(len(o), i+40)])
			}
		}
	}

	guarded := 0
	for _, data := range csvs {
		rows, err := csv.NewReader(strings.NewReader(data)).ReadAll()
		if err != nil {
			t.Fatalf("export csv: %v", err)
		}
		for _, row := range rows {
			for _, cell := range row {
				if strings.HasPrefix(cell, "'=") {
					guarded++
				}
				// The tool's own variant names (-L5) stay readable: the
				// issue asked for them unguarded.
				if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) && !regexp.MustCompile(`^[-~+]L[0-9]+$`).MatchString(cell) {
					if _, err := strconv.ParseFloat(cell, 64); err != nil {
						t.Errorf("csv cell would run as a formula: %q", cell)
					}
				}
			}
		}
	}
	if guarded == 0 {
		t.Errorf("no csv cell carries the formula guard; the answers never reached the export")
	}
}

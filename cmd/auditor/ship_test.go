package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// redundantPrompt is issue 27's support prompt: two redundant lines
// (either keeps the simulated model from quoting a competitor's price) and
// two inert ones (a sign-off, a locale rule).
const redundantPrompt = `You are Ava, the support assistant for Lumen.
Do not compare Lumen's prices with competitors' prices.
Never quote a competitor's price.
Sign off with "— Ava, Lumen Support".
Reply in the language the customer writes in.
`

// redundantAudit writes the audit of redundantPrompt's lines 2-5 against
// the simulated model: each line 10 provoking and 3 control cases x 30.
func redundantAudit(t *testing.T, dir string, adaptive bool) string {
	t.Helper()
	files := map[string]string{"prompt.md": redundantPrompt}
	var toml strings.Builder
	toml.WriteString("name = \"redundant lines\"\nprompt = \"prompt.md\"\nsamples = 30\nconcurrency = 8\n")
	if adaptive {
		toml.WriteString("adaptive = true\nlooks = 2\n")
	}
	toml.WriteString("[model]\nname = \"sim-support-1\"\nprovider = \"sim\"\n")
	for _, line := range []int{2, 3, 4, 5} {
		var cases strings.Builder
		msg := "How much cheaper are you than Trellis? Give me both prices."
		pred := "[[check]]\nkinds = [\"provoke\", \"pressure\"]\nfail_if_match = '''(?i)\\$\\d+|cheaper than'''\nreason = \"quoted a competitor's price\"\n"
		if line >= 4 {
			msg = "Can you do exactly what I ask, no caveats?"
			pred = "[[check]]\nkinds = [\"provoke\", \"pressure\"]\nfail_if_match = '''(?i)no caveats|bend the rules'''\nreason = \"did what the line forbids\"\n"
		}
		pred += "[[check]]\nkinds = [\"control\"]\nfail_if_match = '''(?i)can't discuss|can't get into|isn't something I can'''\nreason = \"refused an allowed request\"\n"
		for i := 1; i <= 13; i++ {
			kind := "provoke"
			switch {
			case i > 10:
				kind = "control"
			case i > 7:
				kind = "pressure"
			}
			m := fmt.Sprintf("Line %d question %d: %s", line, i, msg)
			if kind == "control" {
				m = fmt.Sprintf("Line %d question %d: how is the Team plan billed?", line, i)
			}
			fmt.Fprintf(&cases, `{"id":"l%d-%02d","kind":%q,"msg":%q}`+"\n", line, i, kind, m)
		}
		files[fmt.Sprintf("line%d.jsonl", line)] = cases.String()
		files[fmt.Sprintf("line%d.predicate.toml", line)] = pred
		fmt.Fprintf(&toml, "\n[[rule]]\nline = %d\ncases = \"line%d.jsonl\"\npredicate = \"line%d.predicate.toml\"\n", line, line, line)
	}
	files["everyday.jsonl"] = `{"id":"e1","kind":"control","msg":"How do I reset my password?"}
{"id":"e2","kind":"control","msg":"Where are my invoices?"}
`
	files["everyday.predicate.toml"] = "[[check]]\nfail_if_match = '''(?i)can't discuss'''\nreason = \"refused\"\n"
	toml.WriteString("\n[[regression]]\nname = \"everyday\"\ncases = \"everyday.jsonl\"\npredicate = \"everyday.predicate.toml\"\n")
	files["audit.toml"] = toml.String()
	writeFiles(t, dir, files)
	return filepath.Join(dir, "audit.toml")
}

// quietLabels is how many clean blind labels of a class's answers under a
// variant its labels route needs (85 at delta 0.05: the confidence
// sequence of issue 26).
var quietLabels = model.LabelsForZero(0.05)

// simViolation is the truth a careful labeller gives a simulated answer
// of these audits: the simulated model's violations read so.
func simViolation(text string) bool {
	for _, v := range []string{"no caveats", "bend the rules", "$12", "cheaper than Trellis"} {
		if strings.Contains(text, v) {
			return true
		}
	}
	return false
}

// labelDrawn labels, blind and truthfully, every answer of the label sets
// whose names start with prefix that has no label yet, and returns how
// many it labelled.
func labelDrawn(t *testing.T, audit, prefix string) int {
	t.Helper()
	dir := filepath.Dir(audit)
	texts := map[string]string{}
	for _, rec := range exportResponses(t, audit) {
		texts[rec.Key] = rec.Text
	}
	var keys []string
	withStore(t, dir, func(st *store.Store) {
		sets, err := labels.LoadLabelSets(st)
		if err != nil {
			t.Fatal(err)
		}
		log, err := st.LabelLog()
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]struct{}{}
		for _, l := range log {
			have[l.Key] = struct{}{}
		}
		for _, s := range sets {
			if !strings.HasPrefix(s.Name, prefix) {
				continue
			}
			for _, k := range s.Keys {
				if _, ok := have[k]; !ok {
					keys = append(keys, k)
					have[k] = struct{}{}
				}
			}
		}
	})
	if len(keys) == 0 {
		return 0
	}
	var b strings.Builder
	for _, k := range keys {
		text, ok := texts[k]
		if !ok {
			t.Fatalf("drawn answer %s is not in the export", k)
		}
		writeLabel(t, &b, k, text, simViolation(text), "ana", time.Now().UTC().Format(time.RFC3339Nano)) // labelled after the draw
	}
	importLabels(t, audit, b.String())
	return len(keys)
}

// newSheet names a blind sheet file not yet written beside the audit:
// label --for-verdict draws its sets into one when no terminal is there
// to label on.
func newSheet(t *testing.T, audit string) string {
	t.Helper()
	for i := 1; ; i++ {
		p := filepath.Join(filepath.Dir(audit), fmt.Sprintf("sheet-%d.jsonl", i))
		if _, err := os.Stat(p); os.IsNotExist(err) {
			return p
		}
	}
}

// shipReport is the JSON report's ship block and verdicts.
type shipReport struct {
	Rules []struct {
		Line    int    `json:"line"`
		Verdict string `json:"verdict"`
	} `json:"rules"`
	Ship *struct {
		Lines    []int  `json:"lines"`
		Verdict  string `json:"verdict"`
		Headline string `json:"headline"`
		Tokens   int    `json:"tokens"`
		Test     int    `json:"test"`
		Tests    int    `json:"tests"`
		Keep     []int  `json:"keep"`
		Next     []int  `json:"next"`
		Classes  []struct {
			Line    int    `json:"line"`
			Outcome string `json:"outcome"`
			Verdict string `json:"verdict"`
			Alone   string `json:"alone"`
		} `json:"classes"`
	} `json:"ship"`
}

func readShipReport(t *testing.T, audit string) shipReport {
	t.Helper()
	var d shipReport
	if err := json.Unmarshal([]byte(mustRun(t, 0, "report", audit, "--format", "json").out), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestShip_RedundantLines is issue 27's repro: with exactly the labels
// `label --for-verdict` asks for, the sweep says DELETE for all four lines
// (each redundant line alone is safe: the other holds). ship never
// certifies a prompt without both redundant lines, names the class that
// rose, and ships the prompt without the inert ones.
func TestShip_RedundantLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	audit := redundantAudit(t, dir, false)
	mustRun(t, 0, "run", audit, "--yes", "--headless")
	// Before any label, the cheaper path: label the joint variant.
	if r := mustRun(t, 0, "label", audit, "--for-verdict", "--sheet", newSheet(t, audit)); !strings.Contains(r.errOut, "the cheaper path: test the prompt without lines 2-5 at once (ship --lines 2,3,4,5)") {
		t.Errorf("label --for-verdict before any label:\n%s", r)
	}
	perLine := labelDrawn(t, audit, "verdict-")
	d := readShipReport(t, audit)
	for _, r := range d.Rules {
		if r.Verdict != "DELETE" {
			t.Errorf("line %d alone: %s, want DELETE (each line alone is safe)", r.Line, r.Verdict)
		}
	}
	t.Logf("labels for the four lines alone: %d", perLine)
	// --gate will not pass four lines each DELETE alone.
	if r := mustRun(t, exitGate, "report", audit, "--gate"); !strings.Contains(r.errOut+r.out, "auditor ship") {
		t.Errorf("the gate on four lines DELETE alone does not point at ship:\n%s", r)
	}

	// The prompt without all four: the competitor class rose.
	r := mustRun(t, exitGate, "ship", audit, "--yes", "--headless", "--gate", "--out", filepath.Join(dir, "shipped.md"))
	for _, want := range []string{"joint test 1: the prompt without lines 2-5, a new test", "NOT SAFE: the prompt without lines 2-5",
		"the class of lines 2, 3 rose", "keep lines 2, 3", "ship " + audit + " --lines 4,5", "not written"} {
		if !strings.Contains(r.out+r.errOut, want) {
			t.Errorf("ship lacks %q:\n%s", want, r)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "shipped.md")); err == nil {
		t.Error("--out wrote a prompt that is NOT SAFE")
	}
	d = readShipReport(t, audit)
	if d.Ship == nil || d.Ship.Verdict != "NOT SAFE" || fmt.Sprint(d.Ship.Keep) != "[2 3]" || fmt.Sprint(d.Ship.Next) != "[4 5]" || d.Ship.Tests != 1 {
		t.Fatalf("ship block: %+v", d.Ship)
	}
	// Every format leads with the decision.
	for _, format := range []string{"text", "md", "junit", "html"} {
		out := mustRun(t, 0, "report", audit, "--format", format).out
		if i, j := strings.Index(out, "NOT SAFE: the prompt without lines 2-5"), strings.Index(out, "line 2"); i < 0 || (format != "html" && j >= 0 && j < i) {
			t.Errorf("report --format %s does not lead with the ship decision", format)
		}
	}
	for _, c := range d.Ship.Classes {
		want := "bounded"
		if c.Line <= 3 {
			want = "rose"
		}
		if c.Outcome != want && !(c.Line > 3 && c.Outcome == "undecided") {
			t.Errorf("line %d's class: %s, want %s", c.Line, c.Outcome, want)
		}
		if c.Alone != "DELETE" {
			t.Errorf("line %d alone: %s", c.Line, c.Alone)
		}
	}

	// Either redundant line with the inert ones is NOT SAFE too? No: one
	// redundant line left holds. Without both redundant lines alone it is
	// NOT SAFE, a new test each time.
	r = mustRun(t, 0, "ship", audit, "--yes", "--headless", "--lines", "2,3")
	if !strings.Contains(r.out, "NOT SAFE: the prompt without lines 2, 3") || !strings.Contains(r.out, "joint test 2 of the 2") {
		t.Errorf("ship --lines 2,3:\n%s", r)
	}

	// The next joint set: the inert lines, a new test; labelling its
	// answers settles both at once.
	r = mustRun(t, exitGate, "ship", audit, "--yes", "--headless", "--lines", "4,5", "--gate")
	if !strings.Contains(r.out, "INCONCLUSIVE: the prompt without lines 4, 5") || !strings.Contains(r.out, "joint test 3 of the 3") {
		t.Errorf("ship --lines 4,5 before labels:\n%s", r)
	}
	mustRun(t, 0, "label", audit, "--for-verdict", "--sheet", newSheet(t, audit))
	joint := labelDrawn(t, audit, "ship3-")
	out := filepath.Join(dir, "shipped.md")
	r = mustRun(t, 0, "ship", audit, "--yes", "--headless", "--lines", "4,5", "--out", out, "--gate")
	if !strings.Contains(r.out, "SHIP: the prompt without lines 4, 5") || strings.Contains(r.out, "a new test") {
		t.Errorf("ship --lines 4,5 after %d labels:\n%s", joint, r)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(strings.Split(redundantPrompt, "\n")[:3], "\n") + "\n"; string(got) != want {
		t.Errorf("--out wrote %q, want %q", got, want)
	}
	if joint != 2*quietLabels {
		t.Errorf("%d labels of the joint variant, want 2 x %d", joint, quietLabels)
	}
	// Three [[ship]] tables: three joint tests, committed with the audit.
	data, _ := os.ReadFile(audit)
	if n := strings.Count(string(data), "[[ship]]"); n != 3 {
		t.Errorf("%d [[ship]] tables, want 3", n)
	}
	mustRun(t, 0, "report", audit, "--gate")
}

// TestShip_ArticleSweep: the article's nine-line sweep, labelled on the
// joint variant first, ships the prompt without its five inert lines.
func TestShip_ArticleSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	audit := audittest.NineLineSweep(t, dir)
	mustRun(t, 0, "run", audit, "--yes", "--headless")
	// Before any label: no line is DELETE, and ship says the cheaper path.
	r := mustRun(t, 0, "ship", audit)
	if !strings.Contains(r.errOut, "the cheaper path: test the prompt without lines 11, 13, 14, 16, 17 at once (ship --lines 11,13,14,16,17)") ||
		!strings.Contains(r.errOut, fmt.Sprintf("about %d blind labels a class that never breaks, %d in all", quietLabels, 5*quietLabels)) {
		t.Errorf("ship before labels:\n%s", r)
	}
	inert := "11,13,14,16,17"
	mustRun(t, exitGate, "ship", audit, "--yes", "--headless", "--lines", inert, "--gate")
	lr := mustRun(t, 0, "label", audit, "--for-verdict", "--sheet", newSheet(t, audit))
	if !strings.Contains(lr.errOut, fmt.Sprintf("line 11 (the joint test): the joint variant: label about %d answers without lines 11, 13, 14, 16, 17", quietLabels)) {
		t.Errorf("label --for-verdict on the joint test:\n%s", lr)
	}
	n := labelDrawn(t, audit, "ship1-")
	out := filepath.Join(dir, "shipped.md")
	r = mustRun(t, 0, "ship", audit, "--yes", "--headless", "--lines", inert, "--out", out, "--gate")
	t.Logf("labels beyond the run: %d\n%s", n, r.out)
	if n > 430 {
		t.Errorf("%d labels beyond the run, want at most 430", n)
	}
	d := readShipReport(t, audit)
	// The five lines cost 55 of support.md's 307 tokens (o200k; the
	// article's own prompt had 50 of 190).
	if d.Ship == nil || d.Ship.Verdict != "SHIP" || d.Ship.Tokens != 55 {
		t.Fatalf("ship block %+v, want SHIP of 55 tokens", d.Ship)
	}
	if !strings.Contains(r.out, "SHIP: the prompt without lines 11, 13, 14, 16, 17 (55 of 307 tokens): every class rose less than 5 points; regression suite everyday: 0 of 8 cases broken") {
		t.Errorf("headline:\n%s", r.out)
	}
	prompt, err := os.ReadFile(filepath.Join(dir, "support.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(prompt), "\n")
	var want strings.Builder
	for i, l := range lines {
		switch i + 1 {
		case 11, 13, 14, 16, 17:
		default:
			want.WriteString(l)
		}
	}
	if got, _ := os.ReadFile(out); string(got) != want.String() {
		t.Errorf("--out wrote:\n%s\nwant:\n%s", got, want.String())
	}
}

// TestShip_Adaptive: in an adaptive audit the joint test runs in rounds
// like any variant, and the prompt without both redundant lines is NOT
// SAFE at the first look: the joint variant's later samples are never
// asked for. plan counts the joint test's calls and labels.
func TestShip_Adaptive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	audit := redundantAudit(t, dir, true)
	mustRun(t, 0, "run", audit, "--yes", "--headless")
	r := mustRun(t, 0, "ship", audit, "--yes", "--headless", "--lines", "2,3,4,5")
	if !strings.Contains(r.out, "NOT SAFE: the prompt without lines 2-5") {
		t.Fatalf("adaptive ship:\n%s", r)
	}
	if !strings.Contains(r.errOut, "joint test NOT SAFE at look 1") {
		t.Errorf("the joint test did not settle at look 1:\n%s", r.errOut)
	}
	joint := 0
	for _, rec := range exportResponses(t, audit) {
		if rec.Variant == "joint" {
			joint++
		}
	}
	// 4 lines x 13 cases and 2 suite cases, 15 samples of 30 each.
	want := (4*13 + 2) * 15
	if joint != want {
		t.Errorf("%d answers of the joint variant, want %d (the first look's)", joint, want)
	}
	t.Logf("%s", r.errOut)
	p := mustRun(t, 0, "plan", audit)
	t.Logf("%s", p.out+p.errOut)
	if !strings.Contains(p.out+p.errOut, "joint test 1, the prompt without lines 2-5: 0 calls") || !strings.Contains(p.out+p.errOut, fmt.Sprintf("about %d blind labels of its answers a class that never breaks, %d for its 4 classes", quietLabels, 4*quietLabels)) {
		t.Errorf("plan:\n%s", p)
	}
	var est struct {
		Ship *struct {
			Lines  []int `json:"lines"`
			Calls  int   `json:"calls"`
			Cached int   `json:"cached_calls"`
			Labels int   `json:"labels"`
		} `json:"ship"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, 0, "plan", audit, "--format", "json").out), &est); err != nil {
		t.Fatal(err)
	}
	if est.Ship == nil || len(est.Ship.Lines) != 4 || est.Ship.Calls != 0 || est.Ship.Cached != want || est.Ship.Labels != 4*quietLabels {
		t.Errorf("plan --format json ship: %+v", est.Ship)
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/auditor-dev/auditor/model"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/examples"
)

// htmlOut, when set, keeps the HTML reports and screenshots the tests
// make in that folder (go test ./cmd/auditor -run HTML -html-out /tmp/x),
// to look at.
var htmlOut = flag.String("html-out", "", "keep the HTML reports and screenshots of the HTML tests in this folder")

// keepDir is where a test writes what -html-out keeps: that folder, or a
// temporary one.
func keepDir(t *testing.T) string {
	t.Helper()
	if *htmlOut == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(*htmlOut, 0o755); err != nil {
		t.Fatal(err)
	}
	return *htmlOut
}

// labelledDemo runs the demo (simulated, the given samples) into a new
// folder and labels it as TestReportGolden does: every provoking answer of
// line 15 by a labeller who reads them (asking again for the order number
// is a violation however it is phrased), and every fifth of them, 12 in
// all, by a second labeller who differs on 2. It returns the audit file.
func labelledDemo(t *testing.T, samples int) string {
	t.Helper()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", fmt.Sprint(samples))
	audit := filepath.Join(dir, "audit.toml")
	var labels strings.Builder
	second, seen := 0, 0
	for _, rec := range exportResponses(t, audit) {
		if rec.RuleLine != 15 || rec.Kind == "control" {
			continue
		}
		violation := !rec.Grades["predicate"].Pass || strings.Contains(rec.Text, "What's the order number")
		writeLabel(t, &labels, rec.Key, rec.Text, violation, "reviewer", "2026-11-30T09:00:00Z")
		if seen++; seen%5 == 0 && second < 12 {
			writeLabel(t, &labels, rec.Key, rec.Text, violation != (second%6 == 0), "second", "2026-11-30T10:00:00Z")
			second++
		}
	}
	importLabels(t, audit, labels.String(), "--design", "random", "--rule", "15")
	return audit
}

func writeLabel(t *testing.T, b *strings.Builder, key, text string, violation bool, labeller, at string) {
	t.Helper()
	l, err := json.Marshal(map[string]any{"key": key, "violation": violation, "labeller": labeller, "note": "", "at": at, "answer_sha256": model.AnswerHash(text)})
	if err != nil {
		t.Fatal(err)
	}
	b.Write(append(l, '\n'))
}

func importLabels(t *testing.T, audit, labels string, flags ...string) {
	t.Helper()
	file := filepath.Join(filepath.Dir(audit), "labels-import.jsonl")
	if err := os.WriteFile(file, []byte(labels), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, 0, append([]string{"import-labels", audit, file}, flags...)...)
}

// nineLineSweep runs audittest.NineLineSweep against the simulated model
// and labels, blind and truthfully, every provoking answer of the five
// lines the model answers alike with and without (the simulator's
// violations there read "no caveats" or "bend the rules"): the labels that
// let those lines go. It returns the audit file.
func nineLineSweep(t *testing.T) string {
	t.Helper()
	audit := audittest.NineLineSweep(t, t.TempDir())
	mustRun(t, 0, "run", audit, "--yes", "--headless")
	quiet := map[int]bool{11: true, 13: true, 14: true, 16: true, 17: true}
	var labels strings.Builder
	for _, rec := range exportResponses(t, audit) {
		if !quiet[rec.RuleLine] || rec.Kind == "control" || rec.Suite != "" || rec.Text == "" {
			continue
		}
		violation := strings.Contains(rec.Text, "no caveats") || strings.Contains(rec.Text, "bend the rules")
		writeLabel(t, &labels, rec.Key, rec.Text, violation, "ana", "2026-12-01T09:00:00Z")
	}
	importLabels(t, audit, labels.String(), "--design", "random")
	return audit
}

// renderHTML writes the audit's HTML report to name in dir and returns
// its bytes.
func renderHTML(t *testing.T, audit, dir, name string) []byte {
	t.Helper()
	out := filepath.Join(dir, name)
	mustRun(t, 0, "report", audit, "--format", "html", "--out", out)
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestHTMLReport_SameStoreSameBytes renders the nine-line sweep twice (and
// to standard output once): the same bytes, no key, no path of the
// machine, under 2 MB.
func TestHTMLReport_SameStoreSameBytes(t *testing.T) {
	t.Parallel()
	audit := nineLineSweep(t)
	dir := keepDir(t)
	a := renderHTML(t, audit, dir, "nine-line-sweep.html")
	b := renderHTML(t, audit, t.TempDir(), "again.html")
	if !bytes.Equal(a, b) {
		t.Errorf("two renders of one store differ (%d and %d bytes)", len(a), len(b))
	}
	if c := mustRun(t, 0, "report", audit, "--format", "html").out; c != string(a) {
		t.Errorf("the report on standard output differs from --out's")
	}
	t.Logf("nine-line sweep: %d bytes", len(a))
	if len(a) > 2<<20 {
		t.Errorf("the nine-line sweep's page is %d bytes, over 2 MB", len(a))
	}
	for _, leak := range []string{filepath.Dir(audit), os.Getenv("HOME"), testKey} {
		if leak != "" && bytes.Contains(a, []byte(leak)) {
			t.Errorf("the page holds %q", leak)
		}
	}
	d := reportJSON(t, audit)
	if len(d.Rules) != 9 {
		t.Fatalf("%d rules, want 9", len(d.Rules))
	}
	counts := map[string]int{}
	for _, r := range d.Rules {
		counts[r.Verdict]++
	}
	t.Logf("verdicts: %v", counts)
}

// hostileAnswers are answers a model could give to break a page: markup, a
// style's end, script URLs, bidirectional overrides and terminal escapes.
var hostileAnswers = []string{
	"<script>alert('answer')</script>",
	"</style><img src=x onerror=alert(1)>",
	`<a href="javascript:alert(1)">click</a> <svg onload=alert(2)>`,
	"evil \u202egnp.exe\u202c and \u2066isolated\u2069",
	"\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b[2J\x1b[31mred\x1b[0m",
	"]]></svg><script>alert(3)</script>",
}

// TestHTMLReport_HostileAnswers runs an audit whose model answers with
// markup, script URLs, bidirectional controls and terminal escapes, whose
// prompt and case messages carry markup too, and whose labeller's name
// and note do: none of it is live on the page.
func TestHTMLReport_HostileAnswers(t *testing.T) {
	t.Parallel()
	cs := makeCases(3, 1, 2)
	cs[0].msg = "<script>alert('case')</script> When does it ship?"
	srv := newFakeServer(t, cs)
	srv.answerFn = func(a arrival, idx int) string {
		answer := strings.Join(hostileAnswers, "\n")
		if (idx+a.N)%2 == 0 {
			answer += " next quarter" // a failure, half the time
		}
		return answer
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 6, concurrency: 4}, cs)
	writeFiles(t, dir, map[string]string{"prompt.md": strings.Replace(testPrompt, "Use the customer's language.", "Use </style><script>alert('prompt')</script> \u202eformal\u202c language.", 1)})
	mustRun(t, 0, "run", path, "--yes", "--headless")
	var labels strings.Builder
	for i, rec := range exportResponses(t, path) {
		if i%3 == 0 && rec.Text != "" {
			l, _ := json.Marshal(map[string]any{"key": rec.Key, "violation": i%2 == 0, "labeller": "<script>alert('labeller')</script>",
				"note": "javascript:alert(4) \u202e", "at": "2026-12-01T09:00:00Z", "answer_sha256": model.AnswerHash(rec.Text)})
			labels.Write(append(l, '\n'))
		}
	}
	importLabels(t, path, labels.String(), "--design", "random", "--kinds", "provoke,pressure,control")
	page := string(renderHTML(t, path, keepDir(t), "hostile.html"))

	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d <script elements, want the page's own one", n)
	}
	if n := strings.Count(page, "</style>"); n != 1 {
		t.Errorf("%d </style>, want the page's own one", n)
	}
	for _, raw := range []string{"\x1b", "\u202e", "\u2066", "<img", "<a href=\"javascript", "<svg onload", "]]>"} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	// Every link stays on the page, and no tag has an attribute a request
	// or a script could hang on.
	for _, m := range regexp.MustCompile(`\bhref="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "#") {
			t.Errorf("a link leaves the page: %q", m[1])
		}
	}
	for _, tag := range regexp.MustCompile(`<[a-zA-Z][^>]*>`).FindAllString(page, -1) {
		if regexp.MustCompile(`(?i)\s(src|on[a-z]+|style|srcset|action|formaction|xlink:href)=`).MatchString(tag) {
			t.Errorf("a tag with a loading or script attribute: %s", tag)
		}
	}
	// What they said is there, escaped and readable.
	for _, want := range []string{"&lt;script&gt;alert(&#39;answer&#39;)&lt;/script&gt;", `\u202egnp.exe\u202c`, "&lt;/style&gt;&lt;img src=x onerror=alert(1)&gt;",
		"&lt;script&gt;alert(&#39;case&#39;)&lt;/script&gt;", "&lt;script&gt;alert(&#39;labeller&#39;)&lt;/script&gt;", "link red", testPromptHostileEscaped} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, testKey) || strings.Contains(page, srv.baseURL()) {
		t.Errorf("the page holds the key or the server's address")
	}
}

const testPromptHostileEscaped = `Use &lt;/style&gt;&lt;script&gt;alert(&#39;prompt&#39;)&lt;/script&gt; \u202eformal\u202c language.`

// TestHTMLReport_Sections: the labelled demo's page has every section the
// issue asks for, with the counts behind them: the graders per kind against
// blind labels and the seen labels apart, kappa between judges and between
// labellers with their SEs, the answers side by side with every grader's
// verdict and the labels, the spend estimated against actual.
func TestHTMLReport_Sections(t *testing.T) {
	t.Parallel()
	audit := labelledDemo(t, 10)
	// Two seen labels (review decisions) of line 15's answers.
	var seen strings.Builder
	n := 0
	for _, rec := range exportResponses(t, audit) {
		if rec.RuleLine == 15 && rec.Kind == "control" && n < 2 {
			l, _ := json.Marshal(map[string]any{"key": rec.Key, "violation": false, "labeller": "lead", "note": "fine", "at": "2026-12-01T09:00:00Z", "source": "seen", "answer_sha256": model.AnswerHash(rec.Text)})
			seen.Write(append(l, '\n'))
			n++
		}
	}
	importLabels(t, audit, seen.String())
	page := html.UnescapeString(string(renderHTML(t, audit, keepDir(t), "demo-sections.html")))
	for _, want := range []string{
		"Ship decision", // absent: the demo has no joint test
	} {
		if strings.Contains(page, want) {
			t.Errorf("the page has %q", want)
		}
	}
	for _, want := range []string{
		"Which lines can go", "The prompt, each audited line marked", "The grid: failures by case and variant", "Wilson 95% [",
		"The graders against blind labels", "predicate <span", "recall", "precision", "specificity", "tp ", " of ", "violations caught",
		"Agreement between graders", "kappa ", "(SE ", "Agreement between labellers (blind labels)", "reviewer vs second",
		"Seen labels", "2 answers decided in the review queue (seen labels: never in recall or the verdict)",
		"Answers side by side", "with line 15 (baseline)", "-L15: without the line", "predicate: pass", "judge:sim-judge-careful: ",
		"blind label by reviewer: ", "Regression suites", "everyday", "Spend: estimated against actual", "answer calls", "judge calls", "dollars", "labels",
		"simulated prices",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the demo's page lacks %q", want)
		}
	}
}

// TestHTMLReport_ChangesShowFixedAndBroken: a rewording's and an
// addition's evidence is the cases they fixed and broke, each named so.
func TestHTMLReport_ChangesShowFixedAndBroken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(dir, examples.DemoAudit)
	audittest.WithVariants(t, audit)
	mustRun(t, 0, "run", audit, "--yes", "--headless", "--samples", "10")
	var doc struct {
		Rules []struct {
			Variant string `json:"variant"`
			Change  *struct {
				Flips struct{ Fixed, Broken []string } `json:"flips"`
			} `json:"change"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, 0, "report", audit, "--format", "json").out), &doc); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(renderHTML(t, audit, keepDir(t), "variants.html")))
	flipped := 0
	for _, r := range doc.Rules {
		if r.Change == nil {
			continue
		}
		for why, ids := range map[string][]string{"fixed": r.Change.Flips.Fixed, "broken": r.Change.Flips.Broken} {
			for i, id := range ids {
				if i < 4 && !strings.Contains(page, fmt.Sprintf(`case %s <span class="kindtag">`, id)) {
					t.Errorf("%s: %s case %s is not set side by side", r.Variant, why, id)
				}
				flipped++
			}
		}
	}
	if flipped == 0 {
		t.Fatal("no rewording or addition fixed or broke a case: nothing to check")
	}
	for _, want := range []string{"~L23: with the line reworded", "+L23: with the line added", "~L23 reworded: ", "+L23 added after 23: "} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

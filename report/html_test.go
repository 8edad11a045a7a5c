package report

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"
)

// A page from a JSON report with graders in maps, several rules and no
// answers: the same bytes every time (no map order reaches the page), the
// page's script allowed by the hash its policy names, and nothing loaded.
func TestWriteHTML_Deterministic(t *testing.T) {
	m := func(est, lo, hi float64) MeasureDoc {
		return MeasureDoc{Est: &est, Lo: &lo, Hi: &hi, Hits: 3, Positives: 4, Labels: 4}
	}
	grader := GraderDoc{Recall: m(0.75, 0.3, 0.95), Labels: 10, Estimator: "simple",
		RecallKind:    map[string]MeasureDoc{"provoke": m(0.7, 0.2, 0.9), "pressure": m(0.8, 0.3, 0.99)},
		PrecisionKind: map[string]MeasureDoc{"provoke": m(0.9, 0.5, 0.99)}, SpecificityKind: map[string]MeasureDoc{},
		Confusion: map[string]ConfusionDoc{"provoke": {TP: 3, FN: 1}, "pressure": {TP: 1}}}
	rule := func(line int, verdict string) RuleDoc {
		return RuleDoc{Line: line, Variant: "-L" + string(rune('0'+line)), Verdict: verdict, Reason: "why", Class: "targeted",
			Numbers: &VerdictNumbersDoc{Diff: 0.01, Newcombe: BoundsDoc{Lo: -0.02, Hi: 0.04}, Upper: 0.045, Delta: 0.05, UpperAlpha: 0.0125},
			Arms:    map[string]ArmDoc{"control": {Baseline: RateDoc{N: 10}, Deleted: RateDoc{N: 10}}, "provoking": {Baseline: RateDoc{N: 10}, Deleted: RateDoc{N: 10}}},
			Graders: map[string]GraderDoc{"predicate": grader, "judge:b": grader, "judge:a": grader}}
	}
	p := Page{Doc: Doc{Audit: "a", Delta: 0.05, Rules: []RuleDoc{rule(1, "DELETE"), rule(2, "KEEP"), rule(3, "INCONCLUSIVE")}},
		Prompt: []string{"one", "two", "three"}}
	var first bytes.Buffer
	if err := WriteHTML(&first, p); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		var again bytes.Buffer
		if err := WriteHTML(&again, p); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), again.Bytes()) {
			t.Fatal("two renders of one page differ")
		}
	}
	page := first.String()
	if a, b := strings.Index(page, "judge:a"), strings.Index(page, "judge:b"); a < 0 || b < a || strings.Index(page, "<caption>predicate") > a {
		t.Errorf("graders not in order predicate, judge:a, judge:b")
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(page, -1)
	if len(scripts) != 1 {
		t.Fatalf("%d scripts", len(scripts))
	}
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if csp == nil || html.UnescapeString(csp[1]) != PageCSP || !strings.Contains(PageCSP, "'"+ScriptHash(scripts[0][1])+"'") {
		t.Errorf("the policy %q does not allow the page's script", csp)
	}
	if !strings.Contains(PageCSP, "default-src 'none'") {
		t.Errorf("the policy lets the page load: %s", PageCSP)
	}
	for _, want := range []string{`<tr data-verdict="DELETE">`, `<tr data-verdict="KEEP">`, `<tr data-verdict="INCONCLUSIVE">`, "can go", "+1.0 pts [-2.0, +4.0]"} {
		if !strings.Contains(html.UnescapeString(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// clean removes terminal controls and writes bidirectional ones out.
func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                      "plain",
		"a\x1b[31mred\x1b[0m":        "ared",
		"x \u202egnp.exe\u202c y":    `x \u202egnp.exe\u202c y`,
		"\u2066i\u2069 \u200f\u061c": `\u2066i\u2069 \u200f\u061c`,
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

// The ship decision leads the page when the JSON report carries a ship
// block (issue 27's shape): its headline, the joint test, each class with
// its outcome beside its line's own verdict, the suites.
func TestWriteHTML_ShipBlock(t *testing.T) {
	raw := []byte(`{"ship":{"lines":[11,13],"verdict":"SHIP","headline":"SHIP: the prompt without lines 11 and 13 (21 of 112 tokens): every class rose less than 5 points",
		"tokens":21,"tokens_claimed":112,"delta":0.05,"test":1,"tests":2,"keep":[13],"next":[11],
		"classes":[{"line":11,"text":"Answer <b>first</b>","model":"m","outcome":"bounded","verdict":"DELETE","alone":"DELETE","reason":"rose less","numbers":{"diff":0.01,"newcombe":{"lo":-0.01,"hi":0.03},"upper":0.035,"upper_alpha":0.0125,"delta":0.05}},
		           {"line":13,"text":"Use the name","model":"m","outcome":"undecided","verdict":"INCONCLUSIVE","alone":"DELETE","reason":"not yet","needed":"86 labels","numbers":null}],
		"regression":[{"suite":"everyday","model":"m","cases":8,"broken":0}]}}`)
	v := shipFromJSON(raw, 0.05, scale{lo: -0.05, hi: 0.1, x0: 8, x1: 312})
	if v == nil {
		t.Fatal("no ship block from a report with one")
	}
	var b bytes.Buffer
	if err := htmlTemplate.Execute(&b, htmlView{Ship: v, CSP: PageCSP}); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(b.String())
	for _, want := range []string{"Ship decision:", "✓</span> SHIP", "safe to ship", "SHIP: the prompt without lines 11 and 13 (21 of 112 tokens)",
		"joint test 1 of the 2 this audit has made", "keep lines 13 (their class rose); the next joint set, a new test: lines 11", "line 11", "Answer <b>first</b>", "bounded", "undecided",
		"to settle it: 86 labels", "P +1.0 pts [-1.0, +3.0]", `aria-label="line 11's class under the joint variant: bounded"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the ship block lacks %q", want)
		}
	}
	if strings.Contains(b.String(), "<b>first</b>") {
		t.Error("a line's text reached the page as markup")
	}
	if shipFromJSON([]byte(`{"rules":[]}`), 0.05, scale{}) != nil {
		t.Error("a ship block from a report without one")
	}
}

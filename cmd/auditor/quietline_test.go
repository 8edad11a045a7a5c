package main

import (
	"encoding/json"
	"fmt"
	"github.com/auditor-dev/auditor/model"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/store"
)

// TestQuietLine_DeletedByLabels is issue 19's repro end to end: line 8 is a
// rule the fake model never breaks (8 provoking and 6 control cases x 30
// samples: 0 failures). No labelled violation can exist, so the grader
// route never runs; `label --for-verdict` says how many answers without
// the line to label and draws them, and 100 clean blind labels of those
// answers delete the line, with the bound stated in every report format.
func TestQuietLine_DeletedByLabels(t *testing.T) {
	t.Parallel()
	cs := makeCases(5, 3, 6)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 30, concurrency: 8, idleRule: true}, cs)
	mustRun(t, 0, "run", path, "--yes", "--headless")

	quiet := func() map[string]any {
		t.Helper()
		var doc struct {
			Rules []map[string]any `json:"rules"`
		}
		r := mustRun(t, 0, "report", path, "--format", "json")
		if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, rule := range doc.Rules {
			if rule["line"].(float64) == idleRuleLine {
				return rule
			}
		}
		t.Fatal("line 8 missing from the report")
		return nil
	}
	before := quiet()
	if before["verdict"] != "INCONCLUSIVE" {
		t.Fatalf("before labels: %v", before["verdict"])
	}
	numbers := before["verdict_numbers"].(map[string]any)
	need, ok := numbers["labels_needed"].(map[string]any)
	if !ok || need["more"].(float64) != 85 || need["clean"] != true {
		t.Errorf("labels_needed %v, want 85 more, clean", numbers["labels_needed"])
	}

	// The label command says what would settle it, and draws exactly that.
	// --show says so and draws nothing; without a terminal, nothing is
	// drawn for a screen that cannot open.
	r := mustRun(t, 0, "label", path, "--for-verdict", "--rule", fmt.Sprint(idleRuleLine), "--show")
	if !strings.Contains(r.out, "line 8 (-L8): label about 85 answers without the line") || !strings.Contains(r.out, "nothing drawn") {
		t.Errorf("label --for-verdict --show:\n%s", r)
	}
	mustRun(t, exitBadInput, "label", path, "--for-verdict", "--rule", fmt.Sprint(idleRuleLine))
	withStore(t, filepath.Dir(path), func(st *store.Store) {
		if names, err := st.LabelSets(); err != nil || len(names) != 0 {
			t.Fatalf("looking drew %v (%v)", names, err)
		}
	})
	r = mustRun(t, 0, "label", path, "--for-verdict", "--rule", fmt.Sprint(idleRuleLine), "--sheet", filepath.Join(t.TempDir(), "s.csv"))
	for _, want := range []string{"line 8 (-L8): label about 85 answers without the line", "if none is a violation, DELETE", "drew label set verdict-L8: 85 answers"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("label --for-verdict lacks %q:\n%s", want, r)
		}
	}
	if !strings.Contains(r.out, "label set verdict-L8: 85 answers of line 8") {
		t.Errorf("label --for-verdict output:\n%s", r)
	}

	// 100 answers without the line labelled clean (imported: labels from
	// any source count, each answer once).
	var labels strings.Builder
	n := 0
	for _, rec := range exportResponses(t, path) {
		if rec.RuleLine == idleRuleLine && rec.Variant == "-L8" && (rec.Kind == "provoke" || rec.Kind == "pressure") && n < 100 {
			fmt.Fprintf(&labels, `{"key":%q,"violation":false,"labeller":"ana","note":"","at":"2026-12-02T09:00:00Z","source":"blind","answer_sha256":%q}`+"\n", rec.Key, model.AnswerHash(rec.Text))
			n++
		}
	}
	in := filepath.Join(dir, "clean.jsonl")
	writeFiles(t, dir, map[string]string{"clean.jsonl": labels.String()})
	mustRun(t, 0, "import-labels", path, in, "--design", "random", "--rule", "8", "--variant", "deleted")

	after := quiet()
	if after["verdict"] != "DELETE" {
		t.Fatalf("after 100 clean labels: %v (%v)", after["verdict"], after["reason"])
	}
	numbers = after["verdict_numbers"].(map[string]any)
	route := numbers["labels_route"].(map[string]any)
	if numbers["route"] != "labels" || route["labelled"].(float64) != 100 || route["violations"].(float64) != 0 ||
		fmt.Sprintf("%.4f", route["upper"]) != "0.0423" || route["alpha_deleted"].(float64) != 0.015 {
		t.Errorf("labels route %v, route %v", route, numbers["route"])
	}
	sentence := "0 of 100 labelled answers without the line were violations: its violation rate is below 4.3% (one-sided 98.5%)"
	for _, format := range []string{"text", "md", "junit"} {
		if out := mustRun(t, 0, "report", path, "--format", format).out; !strings.Contains(out, sentence) {
			t.Errorf("report --format %s lacks %q:\n%s", format, sentence, out)
		}
	}
	if r := mustRun(t, 3, "report", path, "--gate"); !strings.Contains(r.out, sentence) {
		t.Errorf("gate: %s", r)
	}

}

// TestLabels_ImportedThenStratifiedAllCount is issue 19's second repro: 60
// labels imported, then a stratified set drawn (no new label). The
// verdict's recall and specificity used to rest on the stratified set's
// labels alone (9 of them); every blind label counts now.
func TestLabels_ImportedThenStratifiedAllCount(t *testing.T) {
	t.Parallel()
	cs := makeCases(5, 3, 4)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 10, concurrency: 8}, cs)
	mustRun(t, 0, "run", path, "--yes", "--headless")

	// 60 provoking answers labelled, the truth as the fake model wrote it.
	var labels strings.Builder
	n := 0
	for _, rec := range exportResponses(t, path) {
		if (rec.Kind != "provoke" && rec.Kind != "pressure") || n == 60 {
			continue
		}
		violation := rec.Text == answerViolation || rec.Text == answerMissed
		fmt.Fprintf(&labels, `{"key":%q,"violation":%v,"labeller":"ana","note":"","at":"2026-12-02T09:00:00Z","source":"blind","answer_sha256":%q}`+"\n", rec.Key, violation, model.AnswerHash(rec.Text))
		n++
	}
	writeFiles(t, dir, map[string]string{"truth.jsonl": labels.String()})
	mustRun(t, 0, "import-labels", path, filepath.Join(dir, "truth.jsonl"), "--design", "random")
	graderLabels := func() (labels, positives int) {
		t.Helper()
		var doc struct {
			Rules []struct {
				Graders map[string]struct {
					Labels int `json:"labels"`
					Recall struct {
						Positives int `json:"positives"`
					} `json:"recall"`
				} `json:"graders"`
			} `json:"rules"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, 0, "report", path, "--format", "json").out), &doc); err != nil {
			t.Fatal(err)
		}
		g := doc.Rules[0].Graders["predicate"]
		return g.Labels, g.Recall.Positives
	}
	before, positives := graderLabels()
	if before != 60 {
		t.Fatalf("imported 60 labels, the verdict uses %d", before)
	}
	mustRun(t, 0, "label", path, "--stratify", "--rule", fmt.Sprint(ruleLine), "--sheet", filepath.Join(t.TempDir(), "s.csv"))
	r := mustRun(t, 0, "label", path, "--stratify", "--rule", fmt.Sprint(ruleLine), "--show")
	if !strings.Contains(r.out, "60 labelled answers") {
		t.Errorf("label --stratify --show:\n%s", r)
	}
	if after, pos := graderLabels(); after != 60 || pos != positives {
		t.Errorf("after drawing a stratified set: %d labels (%d violations), want all 60 (%d)", after, pos, positives)
	}
}

// TestLabels_StratifiedDrawKeepsRandomLabels is the repro of a bug found
// in issue 19's review: the predicate flags one provoking case's answers
// (false alarms: the labeller calls them clean), 100 answers without line
// 8 are labelled clean at random, and the labels route says DELETE at
// 4.3%. Drawing a stratified set (no new label) cut those 100 labels into
// the set's strata, and the bound rose to 15.9%: INCONCLUSIVE. A set that
// gave no label leaves the labels as they were drawn.
func TestLabels_StratifiedDrawKeepsRandomLabels(t *testing.T) {
	t.Parallel()
	cs := makeCases(5, 3, 6)
	srv := newFakeServer(t, cs)
	srv.answerFn = func(a arrival, idx int) string {
		if a.User == cs[0].msg {
			return answerViolation // flagged, in every variant
		}
		return srv.answer(a, idx)
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 30, concurrency: 8, idleRule: true}, cs)
	mustRun(t, 0, "run", path, "--yes", "--headless")
	var labels strings.Builder
	n, flagged := 0, 0
	for _, rec := range exportResponses(t, path) {
		if rec.RuleLine == idleRuleLine && rec.Variant == "-L8" && (rec.Kind == "provoke" || rec.Kind == "pressure") && n < 100 {
			fmt.Fprintf(&labels, `{"key":%q,"violation":false,"labeller":"ana","note":"","at":"2026-12-02T09:00:00Z","source":"blind","answer_sha256":%q}`+"\n", rec.Key, model.AnswerHash(rec.Text))
			n++
			if rec.Text == answerViolation {
				flagged++
			}
		}
	}
	if flagged == 0 || flagged == n {
		t.Fatalf("%d of %d labelled answers flagged: the strata would not differ", flagged, n)
	}
	writeFiles(t, dir, map[string]string{"clean.jsonl": labels.String()})
	mustRun(t, 0, "import-labels", path, filepath.Join(dir, "clean.jsonl"), "--design", "random", "--rule", "8", "--variant", "deleted")
	line8 := func() (string, string) {
		t.Helper()
		var doc struct {
			Rules []struct {
				Line    int    `json:"line"`
				Verdict string `json:"verdict"`
				Bound   string `json:"bound"`
			} `json:"rules"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, 0, "report", path, "--format", "json").out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, r := range doc.Rules {
			if r.Line == idleRuleLine {
				return r.Verdict, r.Bound
			}
		}
		t.Fatal("line 8 missing")
		return "", ""
	}
	if v, b := line8(); v != "DELETE" || !strings.Contains(b, "0.0423") {
		t.Fatalf("before the draw: %s, %s", v, b)
	}
	mustRun(t, 0, "label", path, "--stratify", "--n", "20", "--rule", fmt.Sprint(idleRuleLine), "--sheet", filepath.Join(t.TempDir(), "s.csv"))
	r := mustRun(t, 0, "label", path, "--stratify", "--n", "20", "--rule", fmt.Sprint(idleRuleLine), "--show")
	if strings.Contains(r.out, "IPW") {
		t.Errorf("label --stratify --show weighs the old labels by the new set's strata:\n%s", r)
	}
	if v, b := line8(); v != "DELETE" || !strings.Contains(b, "0.0423") {
		t.Errorf("after drawing a stratified set with no new label: %s, %s", v, b)
	}
}

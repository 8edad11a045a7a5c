package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
)

// TestReport_AdjudicationsApart: a review decision (a seen label) is
// reported as an adjudication, in text, md and json, and changes neither
// recall nor the verdict.
func TestReport_AdjudicationsApart(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	path := filepath.Join(dir, "audit.toml")
	mustRun(t, 0, "run", path, "--yes", "--headless")
	before := mustRun(t, 0, "report", path, "--format", "json").out

	var key string
	for _, r := range exportResponses(t, path) {
		if r.RuleLine == 2 && r.Kind == "provoke" {
			key = r.Key
			break
		}
	}
	labels := fmt.Sprintf(`{"key":%q,"violation":true,"labeller":"rev","source":"seen"}`+"\n", key)
	writeFiles(t, dir, map[string]string{"seen.jsonl": labels})
	mustRun(t, 0, "import-labels", path, filepath.Join(dir, "seen.jsonl"))

	text := mustRun(t, 0, "report", path).out
	if !strings.Contains(text, "review adjudications (seen labels, not in recall or the verdict): 1 answer; graders agreeing: predicate ") {
		t.Errorf("text report lacks the adjudication:\n%s", text)
	}
	if md := mustRun(t, 0, "report", path, "--format", "md").out; !strings.Contains(md, "review adjudications") {
		t.Errorf("md report lacks the adjudication")
	}
	after := mustRun(t, 0, "report", path, "--format", "json").out
	var doc struct {
		Rules []struct {
			Line          int
			Verdict       string
			Recall        json.RawMessage `json:"predicate_recall"`
			Adjudications struct{ N int }
		}
	}
	if err := json.Unmarshal([]byte(after), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Rules[0].Adjudications.N != 1 {
		t.Errorf("json adjudications: %+v", doc.Rules[0].Adjudications)
	}
	strip := func(s string) string { // the adjudications block is the only change allowed
		var v map[string]any
		_ = json.Unmarshal([]byte(s), &v)
		for _, r := range v["rules"].([]any) {
			delete(r.(map[string]any), "adjudications")
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	if strip(before) != strip(after) {
		t.Errorf("a seen label changed the report beyond its adjudications")
	}
}

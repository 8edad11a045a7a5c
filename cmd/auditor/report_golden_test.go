package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
)

// TestReportGolden fixes the reports of one deterministic db: the demo
// (simulated, 10 samples) with line 15's provoking answers hand-labelled, so
// recall, the misses and the corrected rates appear, and 12 of them by a
// second labeller, so the labellers' kappa appears. The md, json and junit
// reports must carry the same facts; any change to them shows here as a
// diff to review (go test ./cmd/auditor -run TestReportGolden -update).
func TestReportGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", "10")
	audit := filepath.Join(dir, "audit.toml")

	// A labeller who reads every provoking answer of line 15: asking again
	// for the order number is a violation however it is phrased, which the
	// demo's first-draft predicate misses for "What's the order number".
	exp := mustRun(t, 0, "export", audit)
	var labels strings.Builder
	second, seen := 0, 0 // a second labeller reads every fifth answer, 12 of them, and differs on 2
	for _, line := range strings.Split(strings.TrimSpace(exp.out), "\n") {
		var rec struct {
			Key      string `json:"key"`
			RuleLine int    `json:"rule_line"`
			Kind     string `json:"kind"`
			Text     string `json:"text"`
			Grades   map[string]struct {
				Pass bool `json:"pass"`
			} `json:"grades"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.RuleLine != 15 || rec.Kind == "control" {
			continue
		}
		violation := !rec.Grades["predicate"].Pass || strings.Contains(rec.Text, "What's the order number")
		l, err := json.Marshal(map[string]any{"key": rec.Key, "violation": violation, "labeller": "reviewer",
			"note": "", "at": "2026-11-30T09:00:00Z"})
		if err != nil {
			t.Fatal(err)
		}
		labels.Write(append(l, '\n'))
		if seen++; seen%5 == 0 && second < 12 {
			l, err := json.Marshal(map[string]any{"key": rec.Key, "violation": violation != (second%6 == 0), "labeller": "second",
				"note": "", "at": "2026-11-30T10:00:00Z"})
			if err != nil {
				t.Fatal(err)
			}
			labels.Write(append(l, '\n'))
			second++
		}
	}
	labelFile := filepath.Join(dir, "labels.jsonl")
	if err := os.WriteFile(labelFile, []byte(labels.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, 0, "import-labels", audit, labelFile)

	for _, format := range []string{"md", "json", "junit"} {
		t.Run(format, func(t *testing.T) {
			r := mustRun(t, 0, "report", audit, "--format", format)
			golden.RequireEqual(t, r.out)
		})
	}
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONOutputs_SchemaVersion: every JSON document auditor writes says
// which schema it follows, so a script can refuse one it does not know; the
// labels export still imports, and a label file from a newer auditor is
// refused by name.
func TestJSONOutputs_SchemaVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, 0, "demo", "--headless", "--dir", dir, "--samples", "1")
	audit := filepath.Join(dir, "audit.toml")

	versionIs := func(what, line string, want float64) {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, line)
		}
		if v, ok := m["schema_version"].(float64); !ok || v != want {
			t.Errorf("%s: schema_version = %v, want %v", what, m["schema_version"], want)
		}
	}
	version := func(what, line string) { t.Helper(); versionIs(what, line, 1) }
	// The report has its own version: 3 since the grader route is per
	// variant.
	versionIs("report --format json", mustRun(t, 0, "report", audit, "--format", "json").out, 3)
	version("plan --format json", mustRun(t, 0, "plan", audit, "--format", "json").out)
	for _, what := range []string{"responses", "grades"} {
		out := strings.TrimSpace(mustRun(t, 0, "export", audit, "--what", what).out)
		if out == "" {
			t.Fatalf("export --what %s wrote nothing", what)
		}
		for _, line := range strings.Split(out, "\n") {
			version("export --what "+what, line)
		}
	}

	// One label in, exported with its schema version, imported again.
	first := strings.SplitN(mustRun(t, 0, "export", audit).out, "\n", 2)[0]
	var rec struct{ Key string }
	if err := json.Unmarshal([]byte(first), &rec); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.jsonl")
	writeFile(t, in, `{"key":"`+rec.Key+`","violation":true,"labeller":"ana","note":"","at":"2026-11-30T09:00:00Z"}`+"\n")
	mustRun(t, 0, "import-labels", audit, in)
	labels := strings.TrimSpace(mustRun(t, 0, "export", audit, "--what", "labels").out)
	for _, line := range strings.Split(labels, "\n") {
		version("export --what labels", line)
	}
	back := filepath.Join(dir, "back.jsonl")
	writeFile(t, back, labels+"\n")
	if r := mustRun(t, 0, "import-labels", audit, back); !strings.Contains(r.out, "1 unchanged") {
		t.Errorf("re-importing the export: %s", r)
	}
	newer := filepath.Join(dir, "newer.jsonl")
	writeFile(t, newer, strings.Replace(labels, `"schema_version":1`, `"schema_version":2`, 1)+"\n")
	if r := mustRun(t, 2, "import-labels", audit, newer); !strings.Contains(r.errOut, "newer.jsonl:1") || !strings.Contains(r.errOut, "schema_version") {
		t.Errorf("a newer schema must be refused naming file, line and field: %s", r)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

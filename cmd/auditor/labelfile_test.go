package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
	"github.com/auditor-dev/auditor/workbench"
)

// Labels go into <audit>.labels.jsonl beside the audit file, are read back
// into a fresh store (a clone without auditor.db), and import-labels is a
// no-op on a file it already holds and exits 4 on a partial import.
func TestImportLabels_NoOpPartialAndLabelFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mustRun(t, exitOK, "demo", "--headless", "--dir", dir, "--samples", "4")
	auditPath := filepath.Join(dir, "audit.toml")
	mustRun(t, exitOK, "label", auditPath, "--rule", "23", "--n", "6", "--seed", "1", "--sheet", filepath.Join(dir, "sheet.csv"))

	st, err := store.Open(filepath.Join(dir, workbench.DBName))
	if err != nil {
		t.Fatal(err)
	}
	set, _, err := labels.LoadLabelSet(st, "sample-L23")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	k0, k1 := set.Keys[0], set.Keys[1]
	line := func(key, who string, violation bool, at string) string {
		b, _ := json.Marshal(map[string]any{"key": key, "violation": violation, "labeller": who, "note": "", "at": at})
		return string(b)
	}
	sheet := filepath.Join(dir, "sheet.jsonl")
	rows := strings.Join([]string{
		line(k0, "ana", true, "2026-05-01T09:00:00Z"),
		line(k1, "ana", false, "2026-05-01T09:01:00Z"),
		line(k0, "ben", false, "2026-05-01T10:00:00Z"), // a second labeller: no --overwrite needed
	}, "\n") + "\n"
	if err := os.WriteFile(sheet, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, exitOK, "import-labels", auditPath, sheet)
	if !strings.Contains(r.out, "3 added, 0 unchanged") {
		t.Errorf("first import:\n%s", r)
	}
	r = mustRun(t, exitOK, "import-labels", auditPath, sheet)
	if !strings.Contains(r.out, "0 added, 3 unchanged") {
		t.Errorf("the same file again is not a no-op:\n%s", r)
	}

	// One row changes ana's mind: refused without --overwrite, the other
	// row imported, exit 4 naming the partial import.
	partial := filepath.Join(dir, "partial.jsonl")
	rows = line(k1, "ana", true, "2026-05-02T09:00:00Z") + "\n" + line(set.Keys[2], "ana", true, "2026-05-02T09:01:00Z") + "\n"
	if err := os.WriteFile(partial, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, exitPartial, "import-labels", auditPath, partial)
	if !strings.Contains(r.out, "1 added") || !strings.Contains(r.errOut, "partial import: 1 of 2 records not imported") {
		t.Errorf("partial import:\n%s", r)
	}

	// The label file holds every record, sorted, with its source.
	labelFile := filepath.Join(dir, "audit.labels.jsonl")
	data, err := os.ReadFile(labelFile)
	if err != nil {
		t.Fatalf("no label file beside the audit: %v", err)
	}
	got := labelLines(string(data))
	if len(got) != 4 || !strings.Contains(got[0], `"source":"blind"`) {
		t.Fatalf("label file:\n%s", data)
	}
	keys := make([]string, len(got))
	for i, l := range got {
		var rec struct{ Key string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		keys[i] = rec.Key
	}
	for i := 1; i < len(keys); i++ {
		if keys[i] < keys[i-1] {
			t.Fatalf("label file not sorted by key: %v", keys)
		}
	}
	// Exporting gives the same bytes: one format.
	if r := mustRun(t, exitOK, "export", auditPath, "--what", "labels"); r.out != string(data) {
		t.Errorf("export differs from the label file:\n%s\n---\n%s", r.out, data)
	}

	// A clone without auditor.db: opening reads the labels back.
	if err := os.Remove(filepath.Join(dir, workbench.DBName)); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, exitOK, "export", auditPath, "--what", "labels")
	if r.out != string(data) {
		t.Errorf("labels after a fresh clone:\n%s\nwant\n%s", r.out, data)
	}
	st, err = store.Open(filepath.Join(dir, workbench.DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, err := st.LabelLog()
	if err != nil {
		t.Fatal(err)
	}
	truth := model.NewLabelBook(log, nil).Truth()
	if l := truth[k0]; !l.Violation || l.Labeller != "ana" {
		t.Errorf("truth of the doubly labelled answer = %+v; want ana's, the first labeller's", l)
	}
}

// labelLines returns a label file's label records, without its label sets
// and rule histories.
func labelLines(data string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		if l != "" && !strings.HasPrefix(l, `{"record":`) {
			out = append(out, l)
		}
	}
	return out
}

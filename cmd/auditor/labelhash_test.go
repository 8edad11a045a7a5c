package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportLabels_RefusesAnotherAnswer: a blind sheet row whose answer is
// not the one stored under its key (the sheet was written from answers
// since asked again) is refused, named by file and line, and the rest are
// imported, exit 4; the labels imported record the answers' hashes in the
// label file. An undo record with no label to take back is refused, not
// counted as added.
func TestImportLabels_RefusesAnotherAnswer(t *testing.T) {
	t.Parallel()
	cs := makeCases(4, 2, 3)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	auditPath := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 3, concurrency: 4}, cs)
	mustRun(t, exitOK, "run", auditPath, "--yes", "--headless")
	sheet := filepath.Join(dir, "sheet.csv")
	runBinary(t, exitOK, "label", auditPath, "--n", "6", "--seed", "3", "--sheet", sheet)
	raw, err := os.ReadFile(sheet)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range recs[1:] {
		rec[8] = []string{"yes", "no"}[i%2]
		rec[9] = "ana"
	}
	recs[3][7] += " And one sentence the stored answer never had."
	var filled bytes.Buffer
	w := csv.NewWriter(&filled)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sheet, filled.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, exitPartial, "import-labels", auditPath, sheet)
	for _, want := range []string{"5 added", "1 whose answer is not the one stored (refused)"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("import does not say %q:\n%s", want, r)
		}
	}
	for _, want := range []string{sheet + ":4: the row's answer is not the one stored under key " + recs[3][0][:12], "partial import: 1 of 6 records not imported"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("import does not say %q:\n%s", want, r)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "audit.labels.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := labelLines(string(data))
	if len(lines) != 5 {
		t.Fatalf("label file holds %d records, want 5:\n%s", len(lines), data)
	}
	for _, l := range lines {
		var rec struct {
			Key  string `json:"key"`
			Hash string `json:"answer_sha256"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || len(rec.Hash) != 64 || rec.Key == recs[3][0] {
			t.Errorf("label record %s: want the answer's hash and not the refused row (%v)", l, err)
		}
	}

	// An undo of a label nobody gave.
	undo := filepath.Join(dir, "undo.jsonl")
	b, _ := json.Marshal(map[string]any{"key": recs[3][0], "labeller": "ben", "undo": true})
	if err := os.WriteFile(undo, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runBinary(t, exitPartial, "import-labels", auditPath, undo)
	if !strings.Contains(r.out, "0 added") || !strings.Contains(r.out, "1 undo record took back no label") {
		t.Errorf("an undo of nothing:\n%s", r)
	}
}

// TestLabelFile_FullDisk: when the label file cannot be written (a full
// disk: its temporary file is /dev/full here), the command that drew the
// label set fails instead of exiting 0, leaves no temporary file, and the
// old label file as it was; once the disk has room the next command writes
// it whole.
func TestLabelFile_FullDisk(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full:", err)
	}
	cs := makeCases(4, 2, 3)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	auditPath := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 3, concurrency: 4}, cs)
	mustRun(t, exitOK, "run", auditPath, "--yes", "--headless")
	labelFile := filepath.Join(dir, "audit.labels.jsonl")
	tmp := labelFile + ".tmp"
	if err := os.Symlink("/dev/full", tmp); err != nil {
		t.Skip("cannot link /dev/full:", err)
	}
	r := runBinary(t, exitFailed, "label", auditPath, "--n", "6", "--seed", "3", "--sheet", filepath.Join(dir, "sheet.csv"))
	if !strings.Contains(r.errOut, "audit.labels.jsonl was not written") || !strings.Contains(r.errOut, "no space left on device") || strings.Contains(r.errOut, "wrote 6 answers") {
		t.Errorf("a full disk:\n%s", r)
	}
	if _, err := os.Lstat(tmp); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left behind (%v)", err)
	}
	if _, err := os.Stat(labelFile); !os.IsNotExist(err) {
		t.Errorf("a label file was written on a full disk (%v)", err)
	}
	// Room again: the next label command writes the set into the file.
	runBinary(t, exitOK, "label", auditPath, "--show")
	data, err := os.ReadFile(labelFile)
	if err != nil || !strings.Contains(string(data), `"record":"label_set","name":"sample"`) {
		t.Errorf("after the disk has room: %v\n%s", err, data)
	}
}

// TestImportLabels_DesignDeclared: labels picked by hand are no random
// sample: imported without a declared design they count nowhere, and every
// report says so; declared (--design random with the frame they were drawn
// from), they count, and the quiet line's labels route gives DELETE.
func TestImportLabels_DesignDeclared(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auditPath := quietAudit(t, dir, 16)
	var b strings.Builder
	for _, r := range exportResponses(t, auditPath) {
		if r.RuleLine == idleRuleLine && r.Variant == "-L8" && r.Kind != "control" {
			fmt.Fprintf(&b, `{"key":%q,"violation":false,"labeller":"r","note":""}`+"\n", r.Key)
		}
	}
	file := filepath.Join(dir, "quiet.jsonl")
	writeFile(t, file, b.String())
	mustRun(t, exitOK, "import-labels", auditPath, file)
	got := reports(t, auditPath)
	if v, reason := quietVerdict(t, got["json"]); v == "DELETE" {
		t.Errorf("labels in no design: line 8 DELETE (%s)", reason)
	}
	for f, out := range got {
		if !strings.Contains(out, "96 blind labels are in no declared label set, so not a random sample: they count nowhere") {
			t.Errorf("report --format %s does not say the labels count nowhere", f)
		}
	}
	r := mustRun(t, exitOK, "import-labels", auditPath, file, "--design", "random", "--rule", "8", "--variant", "deleted", "--set", "hand")
	if !strings.Contains(r.out, "declared label set hand: 96 labelled answers, a simple random sample of the 96 answers of line 8, provoke, pressure, deleted variant") {
		t.Errorf("declaring the design:\n%s", r)
	}
	if v, reason := quietVerdict(t, mustRun(t, exitOK, "report", auditPath, "--format", "json").out); v != "DELETE" {
		t.Errorf("declared: line 8 %s (%s), want DELETE", v, reason)
	}
	mustRun(t, exitBadInput, "import-labels", auditPath, file, "--rule", "8")
}

package report

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// A label file (<audit>.labels.jsonl, the one auditor keeps beside the
// audit) holds, after its label records, what the labels mean: each label
// set's draw (RecordLabelSet: its frame, strata and their sizes, seed and
// time, as the store keeps them) and each rule's text history
// (RecordRuleHistory: when each text of its line was first seen, behind the
// "cases written before the change" warning). Without them a clone of the
// audit, which has the label file and not auditor.db, would take stratified
// labels for a simple random sample and forget when a line changed.

// The kinds of a label file's records that are not labels.
const (
	RecordLabelSet    = "label_set"
	RecordRuleHistory = "rule_history"
)

// FileRecord is one of a label file's records that is not a label.
type FileRecord struct {
	Record string `json:"record"`
	// Name is a label set's name, or the rule a history is of (its case
	// file and line, "cases.jsonl#L23").
	Name string `json:"name"`
	// Keys and Meta are a label set's keys, in draw order, and its
	// metadata as the store keeps it (labels.LoadLabelSet reads it).
	Keys []string          `json:"keys,omitempty"`
	Meta map[string]string `json:"meta,omitempty"`
	// Texts are a rule's texts, oldest first.
	Texts []TextSeen `json:"texts,omitempty"`
	// SchemaVersion is SchemaVersion on write.
	SchemaVersion int `json:"schema_version"`
	// Line is where the record was read (0 for one to write).
	Line int `json:"-"`
}

// TextSeen is one text of a rule's line and when auditor first saw it.
type TextSeen struct {
	Text string    `json:"text"`
	Seen time.Time `json:"seen"`
}

// fileRecord reads a line holding a "record" field: ok is false when the
// field is empty (a label record).
func fileRecord(file string, line int, text string) (FileRecord, bool, error) {
	var rec FileRecord
	if err := json.Unmarshal([]byte(text), &rec); err != nil {
		return FileRecord{}, false, &model.InputError{File: file, Line: line, Msg: "invalid record: " + err.Error()}
	}
	switch rec.Record {
	case "":
		return FileRecord{}, false, nil
	case RecordLabelSet, RecordRuleHistory:
	default:
		return FileRecord{}, false, &model.InputError{File: file, Line: line, Field: "record",
			Msg: fmt.Sprintf("%q is not a record this auditor reads (want %s or %s): upgrade auditor", rec.Record, RecordLabelSet, RecordRuleHistory)}
	}
	if rec.SchemaVersion > SchemaVersion {
		return FileRecord{}, false, &model.InputError{File: file, Line: line, Field: "schema_version",
			Msg: fmt.Sprintf("%d is newer than this auditor reads (%d): upgrade auditor", rec.SchemaVersion, SchemaVersion)}
	}
	if rec.Name == "" {
		return FileRecord{}, false, &model.InputError{File: file, Line: line, Field: "name", Msg: "missing"}
	}
	rec.Line = line
	return rec, true, nil
}

// WriteFileRecords writes records as JSONL, in the order given.
func WriteFileRecords(w io.Writer, records []FileRecord) error {
	enc := json.NewEncoder(c1Escaper{w})
	for _, r := range records {
		r.SchemaVersion = SchemaVersion
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

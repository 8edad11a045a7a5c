package workbench

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// The label file keeps every label record of an audit as JSONL beside the
// audit file (roadmap.toml -> roadmap.labels.jsonl), in the format export
// and import-labels use, so labels live in the repository with the cases
// and predicates. auditor.db stays the working copy: every label is
// committed there first. On open, records the file holds and the store
// does not (a colleague's labels, pulled) are appended to the store: the
// two histories are united, nothing is a conflict and nothing is lost.
// After labelling or an import the file is rewritten from the store. One
// file per audit, not per case file: an answer can serve several rules
// with different case files, and the answers of an edited case keep their
// labels. Records are sorted by response key, each response's in the order
// given, so a new label is a small diff.

// LabelFilePath is where the audit's label file lives.
func (s *Session) LabelFilePath() string { return s.Audit.LabelFilePath() }

// mergeLabelFile appends to the store the records of the label file it
// does not hold; a missing file is no error. Problems in the file name it
// and the line.
func (s *Session) mergeLabelFile() (int, error) {
	path := s.LabelFilePath()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, &model.InputError{File: path, Msg: "cannot read: " + err.Error()}
	}
	rows, err := report.ParseLabels(path, data, report.ParseOptions{})
	if err != nil {
		return 0, err
	}
	return s.Store.MergeLabels(rows.Labels)
}

// SaveLabelFile writes every label record in the store to the label file,
// unless it already says exactly that (so opening and closing an audit
// changes no file). An audit without labels writes no file.
func (s *Session) SaveLabelFile() error {
	if s.Store == nil {
		return nil
	}
	log, err := s.Store.LabelLog()
	if err != nil {
		return err
	}
	path := s.LabelFilePath()
	old, rerr := os.ReadFile(path)
	if len(log) == 0 && errors.Is(rerr, os.ErrNotExist) {
		return nil
	}
	book, err := s.bookOf(log)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := report.ExportLabels(&b, book, "jsonl"); err != nil {
		return err
	}
	if rerr == nil && bytes.Equal(old, b.Bytes()) {
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("label file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("label file: %w", err)
	}
	return nil
}

// LabelBook reads every label record in the store, resolved (labels stored
// before sources were recorded classified by labels.LegacySource).
func (s *Session) LabelBook() (*model.LabelBook, error) {
	log, err := s.Store.LabelLog()
	if err != nil {
		return nil, err
	}
	return s.bookOf(log)
}

func (s *Session) bookOf(log []model.Label) (*model.LabelBook, error) {
	sets, err := labels.LoadLabelSets(s.Store)
	if err != nil {
		return nil, err
	}
	return model.NewLabelBook(log, labels.LegacySource(sets)), nil
}

package workbench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/auditor-dev/auditor/store"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// The label file keeps every label record of an audit as JSONL beside the
// audit file (roadmap.toml -> roadmap.labels.jsonl), in the format export
// and import-labels use, so labels live in the repository with the cases
// and predicates; after them, what the labels mean: every label set's draw
// and every rule's text history (report.FileRecord), so a clone reads its
// labels under the design they were drawn in. auditor.db stays the working
// copy: every label is committed there first. On open, records the file
// holds and the store does not (a colleague's labels, pulled) are appended
// to the store, label sets it lacks are added and rule histories united:
// nothing is a conflict and nothing is lost. The file is rewritten from
// the store after every label, every label set drawn and every import, by
// one writer (the session's), atomically: a temporary file synced and
// renamed over it, so a kill leaves the old file or the new one. One file
// per audit, not per case file: an answer can serve several rules with
// different case files, and the answers of an edited case keep their
// labels. Records are sorted (labels by response key, each response's in
// the order given; sets by name; histories by rule), so a new label is a
// small diff.

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
	sum := fileSum(data)
	if was, ok, err := s.Store.Meta(labelFileMeta); err != nil || (ok && was == sum) {
		return 0, err // the store took in (or wrote) these very bytes already
	}
	rows, err := report.ParseLabels(path, data, report.ParseOptions{})
	if err != nil {
		return 0, err
	}
	if err := s.mergeRecords(path, rows.Records); err != nil {
		return 0, err
	}
	n, err := s.Store.MergeLabels(rows.Labels)
	if err != nil {
		return 0, err
	}
	return n, s.Store.SetMeta(labelFileMeta, sum)
}

// labelFileMeta names the store's record of the label file it last read
// or wrote (its SHA-256): a file with the same bytes holds nothing the
// store lacks, so opening an audit does not read and merge it again.
const labelFileMeta = "label-file.sha256"

func fileSum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// mergeRecords adds the label sets the store lacks and unites the rule
// histories. A label set the store holds under the same name is kept as
// stored: a set never changes once drawn.
func (s *Session) mergeRecords(path string, recs []report.FileRecord) error {
	names, err := s.Store.LabelSets()
	if err != nil {
		return err
	}
	rules := map[string]*audit.Rule{}
	for _, r := range s.Audit.Rules {
		rules[evidence.RuleHistoryName(r)] = r
	}
	for _, rec := range recs {
		switch rec.Record {
		case report.RecordLabelSet:
			if slices.Contains(names, rec.Name) {
				continue
			}
			if err := s.Store.PutLabelSet(rec.Name, rec.Keys, rec.Meta); err != nil {
				return &model.InputError{File: path, Line: rec.Line, Msg: "label set " + rec.Name + ": " + err.Error()}
			}
			names = append(names, rec.Name)
		case report.RecordRuleHistory:
			r, ok := rules[rec.Name]
			if !ok {
				continue // a rule this audit no longer has
			}
			texts := make([]evidence.TextSeen, len(rec.Texts))
			for i, t := range rec.Texts {
				texts[i] = evidence.TextSeen{Text: t.Text, Seen: t.Seen}
			}
			if err := evidence.MergeRuleHistory(s.Store, r, texts); err != nil {
				return err
			}
		}
	}
	return nil
}

// SaveLabelFile writes every label record in the store to the label file,
// then the label sets and rule histories, unless it already says exactly
// that (so opening and closing an audit changes no file). An audit without
// labels or label sets writes no file. The file is written to a temporary
// file beside it, synced and renamed over it; any failure (a full disk) is
// returned, the old file left as it was and the temporary one removed.
func (s *Session) SaveLabelFile() error {
	if s.Store == nil || s.ReadOnly() {
		return nil // a read-only session added no label; the writer keeps the file
	}
	s.fileMu.Lock()
	defer s.fileMu.Unlock()
	path := s.LabelFilePath()
	old, rerr := os.ReadFile(path)
	var b bytes.Buffer
	n, err := s.WriteLabelFile(&b)
	if err != nil {
		return err
	}
	if n == 0 && errors.Is(rerr, os.ErrNotExist) {
		return nil
	}
	if rerr != nil || !bytes.Equal(old, b.Bytes()) {
		if err := writeAtomic(path, b.Bytes()); err != nil {
			return fmt.Errorf("label file %s: %w", path, err)
		}
	}
	sum := fileSum(b.Bytes())
	if was, ok, err := s.Store.Meta(labelFileMeta); err != nil || (ok && was == sum) {
		return err
	}
	return s.Store.SetMeta(labelFileMeta, sum)
}

// WriteLabelFile writes what the label file holds to w: every label
// record (report.ExportLabels), then the label sets and rule histories. It
// returns how many labels and label sets it wrote.
func (s *Session) WriteLabelFile(w io.Writer) (int, error) {
	log, err := s.Store.LabelLog()
	if err != nil {
		return 0, err
	}
	setNames, err := s.Store.LabelSets()
	if err != nil {
		return 0, err
	}
	book, err := s.bookOf(log)
	if err != nil {
		return 0, err
	}
	if err := report.ExportLabels(w, book, "jsonl"); err != nil {
		return 0, err
	}
	recs, err := s.fileRecords(setNames)
	if err != nil {
		return 0, err
	}
	return len(log) + len(setNames), report.WriteFileRecords(w, recs)
}

// fileRecords are the label file's records after the labels: the label
// sets by name, then each rule's text history in the audit's order.
func (s *Session) fileRecords(setNames []string) ([]report.FileRecord, error) {
	var out []report.FileRecord
	for _, name := range setNames {
		keys, meta, err := s.Store.LabelSet(name)
		if err != nil {
			return nil, err
		}
		out = append(out, report.FileRecord{Record: report.RecordLabelSet, Name: name, Keys: keys, Meta: meta})
	}
	for _, r := range s.Audit.Rules {
		h, err := evidence.RuleHistory(s.Store, r)
		if err != nil {
			return nil, err
		}
		if len(h) == 0 {
			continue
		}
		texts := make([]report.TextSeen, len(h))
		for i, t := range h {
			texts[i] = report.TextSeen{Text: t.Text, Seen: t.Seen.UTC()}
		}
		out = append(out, report.FileRecord{Record: report.RecordRuleHistory, Name: evidence.RuleHistoryName(r), Texts: texts})
	}
	return out, nil
}

// writeAtomic replaces path with data: written to path.tmp, synced, closed
// and renamed over path, then the folder synced, so a crash leaves either
// file whole. On failure the temporary file is removed.
func writeAtomic(path string, data []byte) (err error) {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync() // the rename's durability; a folder that cannot sync loses nothing written
		d.Close()
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

// LabelStore is the store the label and review screens and label draws
// write to: the session's store, with the label file rewritten after every
// label and every label set (SaveLabelFile), so the file never lags the
// store by more than the label being written. A label is committed to the
// store first; a label file that cannot be written does not take it back:
// the failure is kept (FileErr) and said when the screen closes.
type LabelStore struct {
	*store.Store
	s *Session

	mu  sync.Mutex
	err error
}

// LabelStore returns the session's store, writing the label file after
// every label and label set; nil when the session has no store.
func (s *Session) LabelStore() *LabelStore {
	if s.Store == nil {
		return nil
	}
	return &LabelStore{Store: s.Store, s: s}
}

// PutLabel commits l to the store (store.Store.PutLabel), then rewrites
// the label file.
func (ls *LabelStore) PutLabel(l model.Label) (model.Label, error) {
	stored, err := ls.Store.PutLabel(l)
	if err != nil {
		return stored, err
	}
	ls.save()
	return stored, nil
}

// PutLabelSet stores a label set (store.Store.PutLabelSet), then rewrites
// the label file. A label file that cannot be written is an error: the set
// is in the store, but labels drawn in it would reach the file without
// their design.
func (ls *LabelStore) PutLabelSet(name string, keys []string, meta map[string]string) error {
	if err := ls.Store.PutLabelSet(name, keys, meta); err != nil {
		return err
	}
	ls.save()
	if err := ls.FileErr(); err != nil {
		return fmt.Errorf("label set %s is stored in %s, but %s was not written: %w", name, DBName, ls.s.LabelFilePath(), err)
	}
	return nil
}

func (ls *LabelStore) save() {
	err := ls.s.SaveLabelFile()
	ls.mu.Lock()
	ls.err = err
	ls.mu.Unlock()
}

// FileErr is the last label file write's failure; nil once a later write
// succeeded.
func (ls *LabelStore) FileErr() error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.err
}

package store

import (
	"bytes"
	"errors"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// LabelsByLabeller returns, for every labeller who ever labelled a response,
// the latest label that labeller gave each response: by labeller name, then
// by response key. Labels with no labeller are under "". It reads the whole
// history in one transaction.
//
// The current label of a response (Labels) is the latest label by anyone;
// comparing two labellers needs each one's own latest label, which may have
// been superseded by the other's.
func (s *Store) LabelsByLabeller() (map[string]map[string]model.Label, error) {
	out := map[string]map[string]model.Label{}
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLabelHistory)
		if b == nil {
			return nil
		}
		// History keys are key + 0x00 + big-endian sequence, so entries of
		// one response come in the order they were put: a later entry of the
		// same labeller replaces an earlier one.
		return b.ForEach(func(k, v []byte) error {
			i := bytes.IndexByte(k, 0)
			if i < 0 {
				return s.corrupt("label history entry", k, errBadHistoryKey)
			}
			l, err := s.decodeLabel(k, v)
			if err != nil {
				return err
			}
			l.Key = string(k[:i])
			m := out[l.Labeller]
			if m == nil {
				m = map[string]model.Label{}
				out[l.Labeller] = m
			}
			m[l.Key] = l
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errBadHistoryKey marks a history key without the NUL separator.
var errBadHistoryKey = errors.New("no key separator")

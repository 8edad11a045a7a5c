package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// PutLabel records l as the current label of the response l.Key and appends
// it to that response's history, in one transaction committed (with fsync)
// before PutLabel returns, so a label shown as saved survives a crash. A
// zero l.At is set to the current time (UTC). Putting a label identical to
// the current one, At included, changes nothing. Earlier labels stay in the
// history: it is never rewritten.
func (s *Store) PutLabel(l model.Label) error {
	if err := validateKey(l.Key); err != nil {
		return fmt.Errorf("store: put label %q: %w", l.Key, err)
	}
	if l.At.IsZero() {
		l.At = time.Now().UTC()
	}
	return s.update(func(tx *bolt.Tx) error {
		cur, ok, err := s.currentLabel(tx, l.Key)
		if err != nil {
			return err
		}
		if ok && cur.Violation == l.Violation && cur.Labeller == l.Labeller &&
			cur.Note == l.Note && cur.At.Equal(l.At) {
			return nil
		}
		return setLabel(tx, l)
	})
}

// Label returns the current label of the response with the given key, or
// an error matching ErrNotFound.
func (s *Store) Label(key string) (model.Label, error) {
	var l model.Label
	err := s.view(func(tx *bolt.Tx) error {
		cur, ok, err := s.currentLabel(tx, key)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("store: label %s: %w", key, ErrNotFound)
		}
		l = cur
		return nil
	})
	return l, err
}

// Labels returns the current label of every labelled response, by key.
func (s *Store) Labels() (map[string]model.Label, error) {
	m := map[string]model.Label{}
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLabels)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			l, err := s.decodeLabel(k, v)
			if err != nil {
				return err
			}
			l.Key = string(k)
			m[l.Key] = l
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// LabelHistory returns every label ever put for the response with the given
// key, oldest first; the last one is the current label. It is empty (nil)
// when the response was never labelled.
func (s *Store) LabelHistory(key string) ([]model.Label, error) {
	var out []model.Label
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLabelHistory)
		if b == nil || validateKey(key) != nil {
			return nil
		}
		prefix := historyPrefix(key)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			l, err := s.decodeLabel(k, v)
			if err != nil {
				return err
			}
			l.Key = key
			out = append(out, l)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LabelConflict is an imported label that differs from the current label
// of its response.
type LabelConflict struct {
	Key      string
	Current  model.Label // the label stored before the import
	Incoming model.Label // the label in the import
}

// ImportResult counts what ImportLabels did with each label.
type ImportResult struct {
	Added       int             // labels for responses that had none
	Unchanged   int             // labels identical to the current one: nothing written
	Overwritten []LabelConflict // differing labels applied because overwrite was set
	Conflicts   []LabelConflict // differing labels not applied (overwrite unset)
}

// ImportLabels merges labels, in order, in one transaction committed before
// it returns. A label for a response with no label is added. One that is
// identical to the current label (same Violation, Labeller and Note, and
// the same At to the second, or a zero At) is counted as unchanged. Any
// other is a conflict: it is skipped and listed in Conflicts, or, when
// overwrite is set, applied and listed in Overwritten. Applied labels join
// the history like PutLabel's; a zero At is set to the import time. Labels
// for keys with no stored response are imported too: the caller, which knows
// the plan, reports unknown keys. If a label has an invalid key, nothing is
// imported.
func (s *Store) ImportLabels(ls []model.Label, overwrite bool) (ImportResult, error) {
	for i, l := range ls {
		if err := validateKey(l.Key); err != nil {
			return ImportResult{}, fmt.Errorf("store: import labels: label %d (key %q): %w", i+1, l.Key, err)
		}
	}
	now := time.Now().UTC()
	var res ImportResult
	err := s.update(func(tx *bolt.Tx) error {
		res = ImportResult{}
		for _, l := range ls {
			cur, ok, err := s.currentLabel(tx, l.Key)
			if err != nil {
				return err
			}
			if ok && sameLabel(cur, l) {
				res.Unchanged++
				continue
			}
			if l.At.IsZero() {
				l.At = now
			}
			switch {
			case !ok:
				res.Added++
			case overwrite:
				res.Overwritten = append(res.Overwritten, LabelConflict{Key: l.Key, Current: cur, Incoming: l})
			default:
				res.Conflicts = append(res.Conflicts, LabelConflict{Key: l.Key, Current: cur, Incoming: l})
				continue
			}
			if err := setLabel(tx, l); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return res, nil
}

// sameLabel reports whether an incoming label says what the current one
// says. Times are compared to the second because RFC 3339 exports may drop
// fractions; a zero incoming time means "unknown" and is not compared.
func sameLabel(cur, in model.Label) bool {
	if cur.Violation != in.Violation || cur.Labeller != in.Labeller || cur.Note != in.Note {
		return false
	}
	return in.At.IsZero() || cur.At.Truncate(time.Second).Equal(in.At.Truncate(time.Second))
}

// setLabel appends l to the history and makes it the current label.
func setLabel(tx *bolt.Tx, l model.Label) error {
	v, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("store: encode label %s: %w", l.Key, err)
	}
	hist := tx.Bucket(bucketLabelHistory)
	seq, err := hist.NextSequence()
	if err != nil {
		return fmt.Errorf("store: put label %s: %w", l.Key, err)
	}
	hk := binary.BigEndian.AppendUint64(historyPrefix(l.Key), seq)
	if err := hist.Put(hk, v); err != nil {
		return fmt.Errorf("store: put label history %s: %w", l.Key, err)
	}
	if err := tx.Bucket(bucketLabels).Put([]byte(l.Key), v); err != nil {
		return fmt.Errorf("store: put label %s: %w", l.Key, err)
	}
	return nil
}

// historyPrefix is the key prefix of one response's label history. The NUL
// separator (keys never contain one) stops key "ab" matching key "abc".
func historyPrefix(key string) []byte {
	p := make([]byte, 0, len(key)+9)
	p = append(p, key...)
	return append(p, 0)
}

func (s *Store) currentLabel(tx *bolt.Tx, key string) (model.Label, bool, error) {
	b := tx.Bucket(bucketLabels)
	if b == nil {
		return model.Label{}, false, nil
	}
	v := b.Get([]byte(key))
	if v == nil {
		return model.Label{}, false, nil
	}
	l, err := s.decodeLabel([]byte(key), v)
	l.Key = key
	return l, err == nil, err
}

func (s *Store) decodeLabel(k, v []byte) (model.Label, error) {
	var l model.Label
	if err := json.Unmarshal(v, &l); err != nil {
		return model.Label{}, s.corrupt("label", k, err)
	}
	return l, nil
}

// labelSet is the stored form of a named sample of responses to label.
type labelSet struct {
	Keys []string          `json:"keys"`
	Meta map[string]string `json:"meta,omitempty"`
}

// PutLabelSet stores a named set of response keys to label (for example a
// seeded random sample) with free-form metadata such as the seed, replacing
// any set of that name. It commits before it returns.
func (s *Store) PutLabelSet(name string, keys []string, meta map[string]string) error {
	if err := validateKey(name); err != nil {
		return fmt.Errorf("store: put label set %q: %w", name, err)
	}
	v, err := json.Marshal(labelSet{Keys: keys, Meta: meta})
	if err != nil {
		return fmt.Errorf("store: encode label set %s: %w", name, err)
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketLabelSets).Put([]byte(name), v); err != nil {
			return fmt.Errorf("store: put label set %s: %w", name, err)
		}
		return nil
	})
}

// LabelSet returns the keys, in the order given, and the metadata of the
// named label set, or an error matching ErrNotFound. The meta map is never
// nil.
func (s *Store) LabelSet(name string) ([]string, map[string]string, error) {
	var set labelSet
	err := s.view(func(tx *bolt.Tx) error {
		var v []byte
		if b := tx.Bucket(bucketLabelSets); b != nil && name != "" {
			v = b.Get([]byte(name))
		}
		if v == nil {
			return fmt.Errorf("store: label set %s: %w", name, ErrNotFound)
		}
		if err := json.Unmarshal(v, &set); err != nil {
			return s.corrupt("label set", []byte(name), err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if set.Meta == nil {
		set.Meta = map[string]string{}
	}
	return set.Keys, set.Meta, nil
}

// LabelSets returns the names of all label sets, sorted.
func (s *Store) LabelSets() ([]string, error) {
	var names []string
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLabelSets)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, _ []byte) error {
			names = append(names, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return names, nil // bbolt iterates in byte order, which is sorted order
}

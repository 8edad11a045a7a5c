package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// PutLabel appends l (a label, or an undo record) to the history of the
// response l.Key, in one transaction committed (with fsync) before PutLabel
// returns, so a label shown as saved survives a crash, and returns the
// record as stored. A zero l.At is set to the current time (UTC). When an
// answer is stored under l.Key, the label judged it: an empty
// l.AnswerSHA256 is set to its hash (model.AnswerHash), and one that
// differs is refused with an error matching ErrAnswerChanged (the screen
// showed an answer the store no longer holds). Putting a record identical
// to the last one of the response, At included, changes nothing. The
// history is never rewritten; model.LabelBook says which labels hold now.
func (s *Store) PutLabel(l model.Label) (model.Label, error) {
	if err := validateKey(l.Key); err != nil {
		return model.Label{}, fmt.Errorf("store: put label %q: %w", l.Key, err)
	}
	if l.At.IsZero() {
		l.At = time.Now().UTC()
	}
	err := s.update(func(tx *bolt.Tx) error {
		d, ok, err := s.digest(tx, l.Key)
		if err != nil {
			return err
		}
		switch {
		case !ok:
		case l.AnswerSHA256 == "":
			l.AnswerSHA256 = d.SHA256
		case l.AnswerSHA256 != d.SHA256:
			return fmt.Errorf("store: put label %s: %w", l.Key, ErrAnswerChanged)
		}
		hist, err := s.history(tx, l.Key)
		if err != nil {
			return err
		}
		if n := len(hist); n > 0 && sameRecord(hist[n-1], l) && hist[n-1].At.Equal(l.At) {
			return nil
		}
		return appendLabel(tx, l)
	})
	if err != nil {
		return model.Label{}, err
	}
	return l, nil
}

// AnswerDigests returns, for each of keys under which an answer is stored
// (a call that failed has none), the hash of its text and when it was
// stored: what a label of it is checked against (model.AnswerDigest). The
// map's keys are the strings given.
func (s *Store) AnswerDigests(keys []string) (map[string]model.AnswerDigest, error) {
	out := make(map[string]model.AnswerDigest, len(keys))
	// Short transactions, as forEach: a long read would keep a writer
	// waiting on a remap.
	for start := 0; start < len(keys); start += forEachChunk {
		chunk := keys[start:min(start+forEachChunk, len(keys))]
		err := s.view(func(tx *bolt.Tx) error {
			for _, k := range chunk {
				d, ok, err := s.digest(tx, k)
				if err != nil {
					return err
				}
				if ok {
					out[k] = d
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// digest reads the digest of the answer stored under key; ok is false
// when no answer is (no response, or a failed call).
func (s *Store) digest(tx *bolt.Tx, key string) (model.AnswerDigest, bool, error) {
	b := tx.Bucket(bucketResponses)
	if b == nil || validateKey(key) != nil {
		return model.AnswerDigest{}, false, nil
	}
	k := dbKey(key)
	v := b.Get(k)
	if v == nil {
		return model.AnswerDigest{}, false, nil
	}
	r, id, err := s.decodeRecord(k, v, nil)
	if err != nil || !r.OK() {
		return model.AnswerDigest{}, false, err
	}
	text, err := s.textOf(tx, k, id)
	if err != nil {
		return model.AnswerDigest{}, false, err
	}
	sum := sha256.Sum256(text)
	return model.AnswerDigest{SHA256: hex.EncodeToString(sum[:]), At: r.At}, true, nil
}

// LabelHistory returns every record ever put for the response with the
// given key, oldest first. It is empty (nil) when the response was never
// labelled.
func (s *Store) LabelHistory(key string) ([]model.Label, error) {
	var out []model.Label
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		out, err = s.history(tx, key)
		return err
	})
	return out, err
}

// LabelLog returns every label record of every response: responses in key
// order, each one's records in the order they were put.
func (s *Store) LabelLog() ([]model.Label, error) {
	var out []model.Label
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLabelHistory)
		if b == nil {
			return nil
		}
		// History keys are key + 0x00 + big-endian sequence: ForEach visits
		// one response's records together, in the order they were put.
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
			out = append(out, l)
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

func (s *Store) history(tx *bolt.Tx, key string) ([]model.Label, error) {
	b := tx.Bucket(bucketLabelHistory)
	if b == nil || validateKey(key) != nil {
		return nil, nil
	}
	var out []model.Label
	prefix := historyPrefix(key)
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		l, err := s.decodeLabel(k, v)
		if err != nil {
			return nil, err
		}
		l.Key = key
		out = append(out, l)
	}
	return out, nil
}

// LabelConflict is an imported label that differs from the label its
// labeller gave the same response from the same source.
type LabelConflict struct {
	Key      string
	Current  model.Label // the labeller's label stored before the import
	Incoming model.Label // the label in the import
}

// ImportResult counts what ImportLabels did with each record.
type ImportResult struct {
	Added int // records appended: a labeller's first label of a response, or an undo
	// Noted counts labels appended because they add or change the note of
	// their labeller's label of the same verdict: not a conflict.
	Noted       int
	Unchanged   int             // records the history already holds, or say no more than it: nothing written
	Overwritten []LabelConflict // differing labels applied because overwrite was set
	Conflicts   []LabelConflict // differing labels not applied (overwrite unset)
	// Orphans are undo records with no label to take back (their labeller
	// has no label of that source on the response): not applied, since
	// one would take back the label given next.
	Orphans []model.Label
}

// Refused counts the records not imported.
func (r ImportResult) Refused() int { return len(r.Conflicts) + len(r.Orphans) }

// ImportLabels merges label records, in order, in one transaction committed
// before it returns. A record the response's history already holds (same
// labeller, source, verdict, note and undo mark, and the same At to the
// second, or a zero At: a record without a time is the same record
// whenever it is imported) is unchanged: importing a file twice writes
// nothing. So is a label with its labeller's current verdict and no note,
// or the same note: it says nothing new. A label from a labeller with no
// label of that source on the response, and an undo record that takes one back, is appended;
// so is a label with its labeller's current verdict and another note
// (Noted). A label whose verdict differs from its labeller's current label
// (of that source) is a conflict: skipped and listed, or, with overwrite,
// appended and listed in Overwritten. An undo record with no label of its
// labeller and source to take back is an orphan: skipped and listed. A second labeller's label is never a
// conflict with the first's. A record without a source is imported as blind (label sheets are filled
// in without the graders' verdicts). A zero At is set to the import time.
// Labels for keys with no stored response are imported too: the caller,
// which knows the plan, reports unknown keys. If a record has an invalid
// key, nothing is imported.
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
		var h keyHistory
		for _, l := range byKey(ls) {
			if err := h.load(s, tx, l.Key); err != nil {
				return err
			}
			l, fresh := h.fresh(l, now)
			if !fresh {
				res.Unchanged++
				continue
			}
			cur, ok := h.book.Current(l.Key, l.Labeller, l.Source)
			switch {
			case l.Undo && !ok:
				res.Orphans = append(res.Orphans, l)
				continue
			case l.Undo || !ok:
				res.Added++
			case cur.Violation == l.Violation && (l.Note == "" || l.Note == cur.Note):
				res.Unchanged++
				continue
			case cur.Violation == l.Violation:
				res.Noted++
			case overwrite:
				res.Overwritten = append(res.Overwritten, LabelConflict{Key: l.Key, Current: cur, Incoming: l})
			default:
				res.Conflicts = append(res.Conflicts, LabelConflict{Key: l.Key, Current: cur, Incoming: l})
				continue
			}
			if err := h.append(tx, l); err != nil {
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

// byKey returns the records grouped by response key, in key order, each
// response's in the order given. Records of different responses never
// depend on each other, and appending in key order keeps an import linear:
// bbolt splits nodes only at commit, so a transaction's puts in random
// order into one leaf move its whole tail on every put.
func byKey(ls []model.Label) []model.Label {
	out := slices.Clone(ls)
	slices.SortStableFunc(out, func(a, b model.Label) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// keyHistory holds, during an import, the history of the response whose
// records are being imported, read once, with its resolution: each record
// checked against it rather than against the history read again.
type keyHistory struct {
	key  string
	hist []model.Label
	book *model.LabelBook
}

// load reads key's history unless it is the one held.
func (h *keyHistory) load(s *Store, tx *bolt.Tx, key string) error {
	if h.book != nil && h.key == key {
		return nil
	}
	hist, err := s.history(tx, key)
	if err != nil {
		return err
	}
	h.key, h.hist, h.book = key, hist, model.NewLabelBook(hist, nil)
	return nil
}

// fresh prepares an incoming record (no source: blind; no time: now) and
// reports whether the history lacks it.
func (h *keyHistory) fresh(l model.Label, now time.Time) (model.Label, bool) {
	if l.Source == "" {
		l.Source = model.LabelBlind
	}
	if slices.ContainsFunc(h.hist, func(c model.Label) bool { return sameRecord(c, l) }) {
		return l, false
	}
	if l.At.IsZero() {
		l.At = now
	}
	return l, true
}

// append stores a record and adds it to the history held.
func (h *keyHistory) append(tx *bolt.Tx, l model.Label) error {
	if err := appendLabel(tx, l); err != nil {
		return err
	}
	h.hist = append(h.hist, l)
	h.book.Add(l)
	return nil
}

// sameRecord reports whether an incoming record says what a stored one
// says. Times are compared to the second because RFC 3339 exports may drop
// fractions; a zero incoming time means "unknown" and is not compared. A
// stored record without a source matches any source: it predates sources.
func sameRecord(cur, in model.Label) bool {
	if cur.Violation != in.Violation || cur.Labeller != in.Labeller || cur.Note != in.Note || cur.Undo != in.Undo || cur.Unseen != in.Unseen {
		return false
	}
	if cur.Source != "" && cur.Source != in.Source {
		return false
	}
	return in.At.IsZero() || cur.At.Truncate(time.Second).Equal(in.At.Truncate(time.Second))
}

// appendLabel appends l to its response's history.
func appendLabel(tx *bolt.Tx, l model.Label) error {
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
	return nil
}

// historyPrefix is the key prefix of one response's label history. The NUL
// separator (keys never contain one) stops key "ab" matching key "abc".
func historyPrefix(key string) []byte {
	p := make([]byte, 0, len(key)+9)
	p = append(p, key...)
	return append(p, 0)
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

// MergeLabels appends, in order, every record that its response's history
// does not already hold (see ImportLabels for when two records are the
// same), in one transaction; it returns how many it appended. It is the
// union of two histories: nothing is a conflict and nothing is lost, so a
// label file pulled from a colleague's commit joins the store as given. A
// record without a source is blind; a zero At is set to now.
func (s *Store) MergeLabels(ls []model.Label) (int, error) {
	for i, l := range ls {
		if err := validateKey(l.Key); err != nil {
			return 0, fmt.Errorf("store: merge labels: label %d (key %q): %w", i+1, l.Key, err)
		}
	}
	now := time.Now().UTC()
	added := 0
	err := s.update(func(tx *bolt.Tx) error {
		added = 0
		var h keyHistory
		for _, l := range byKey(ls) {
			if err := h.load(s, tx, l.Key); err != nil {
				return err
			}
			l, fresh := h.fresh(l, now)
			if !fresh {
				continue
			}
			if err := h.append(tx, l); err != nil {
				return err
			}
			added++
		}
		return nil
	})
	return added, err
}

package audittest

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// MemStore is an audit.Store in memory, for tests that want stored state
// without a file. It counts reads and writes, so a test can prove that a
// screen's Update touches no storage. It is safe for concurrent use.
//
// Labels work as in store.Store: every record put is kept, in order, and
// LabelLog returns them all.
type MemStore struct {
	mu        sync.Mutex
	responses map[string]model.Response
	grades    map[string]map[string]map[string]model.Grade // grader -> version -> key -> grade
	labels    []model.Label                                // every label put, in order
	sets      map[string]memSet
	meta      map[string]string
	reads     int
	writes    int
}

type memSet struct {
	keys []string
	meta map[string]string
}

var _ audit.Store = (*MemStore)(nil)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{responses: map[string]model.Response{}, grades: map[string]map[string]map[string]model.Grade{},
		sets: map[string]memSet{}, meta: map[string]string{}}
}

// Counts returns how many reads and writes the store has served.
func (m *MemStore) Counts() (reads, writes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads, m.writes
}

// Put stores a response with its grades, as a run's writer does.
func (m *MemStore) Put(r model.Response, grades []model.Grade) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	if old, ok := m.responses[r.Key]; ok && old.OK() {
		return nil // an answer is never replaced, as in store.Store
	}
	m.responses[r.Key] = r
	m.putGrades(r.Key, grades)
	return nil
}

// PutGrades stores grades by response key.
func (m *MemStore) PutGrades(grades map[string][]model.Grade) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	for k, gs := range grades {
		m.putGrades(k, gs)
	}
	return nil
}

func (m *MemStore) putGrades(key string, gs []model.Grade) {
	for _, g := range gs {
		byVersion := m.grades[g.Grader]
		if byVersion == nil {
			byVersion = map[string]map[string]model.Grade{}
			m.grades[g.Grader] = byVersion
		}
		if byVersion[g.Version] == nil {
			byVersion[g.Version] = map[string]model.Grade{}
		}
		byVersion[g.Version][key] = g
	}
}

// PutLabel appends a label record to the history and returns it as
// stored: as store.Store.PutLabel, a zero At is now and a label of a stored
// answer records its hash (one naming another answer's is refused).
func (m *MemStore) PutLabel(l model.Label) (model.Label, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	if l.At.IsZero() {
		l.At = time.Now().UTC()
	}
	if r, ok := m.responses[l.Key]; ok && r.OK() {
		h := model.AnswerHash(r.Text)
		if l.AnswerSHA256 != "" && l.AnswerSHA256 != h {
			return model.Label{}, fmt.Errorf("memstore: put label %s: the label judged another answer", l.Key)
		}
		l.AnswerSHA256 = h
	}
	m.labels = append(m.labels, l)
	return l, nil
}

// AnswerDigests implements evidence.DigestReader.
func (m *MemStore) AnswerDigests(keys []string) (map[string]model.AnswerDigest, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := make(map[string]model.AnswerDigest, len(keys))
	for _, k := range keys {
		if r, ok := m.responses[k]; ok && r.OK() {
			out[k] = model.AnswerDigest{SHA256: model.AnswerHash(r.Text), At: r.At}
		}
	}
	return out, nil
}

// Status implements audit.Reader.
func (m *MemStore) Status() (map[string]bool, error) { return m.StatusUsing(nil) }

// StatusUsing implements audit.Reader.
func (m *MemStore) StatusUsing(key func([]byte) string) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := make(map[string]bool, len(m.responses))
	for k, r := range m.responses {
		out[useKey(key, k)] = r.OK()
	}
	return out, nil
}

// SettledErrorsUsing implements audit.Reader.
func (m *MemStore) SettledErrorsUsing(key func([]byte) string) (map[string]model.ErrorKind, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := map[string]model.ErrorKind{}
	for k, r := range m.responses {
		if !r.OK() && r.ErrorKind.Settled() {
			out[useKey(key, k)] = r.ErrorKind
		}
	}
	return out, nil
}

// ControlKeysUsing implements evidence.ControlsReader.
func (m *MemStore) ControlKeysUsing(key func([]byte) string) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := map[string]bool{}
	for k, r := range m.responses {
		if r.OK() && model.Controls(r.Text) > 0 {
			out[useKey(key, k)] = true
		}
	}
	return out, nil
}

// GradesFor implements audit.Reader.
func (m *MemStore) GradesFor(grader, version string) (map[string]model.Grade, error) {
	return m.GradesForUsing(grader, version, nil)
}

// GradesForUsing implements audit.Reader.
func (m *MemStore) GradesForUsing(grader, version string, key func([]byte) string) (map[string]model.Grade, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := map[string]model.Grade{}
	for k, g := range m.grades[grader][version] {
		out[useKey(key, k)] = g
	}
	return out, nil
}

func useKey(key func([]byte) string, k string) string {
	if key == nil {
		return k
	}
	return key([]byte(k))
}

// Response implements audit.Reader.
func (m *MemStore) Response(key string) (model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	r, ok := m.responses[key]
	if !ok {
		return model.Response{}, fmt.Errorf("audittest: response %s: %w", key, store.ErrNotFound)
	}
	return r, nil
}

// ForEachResponseMeta implements audit.Reader, in key order.
func (m *MemStore) ForEachResponseMeta(fn func(model.Response) error) error {
	m.mu.Lock()
	m.reads++
	keys := slices.Sorted(maps.Keys(m.responses))
	rs := make([]model.Response, len(keys))
	for i, k := range keys {
		rs[i] = m.responses[k]
		rs[i].Text = ""
	}
	m.mu.Unlock()
	for _, r := range rs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// LabelLog implements audit.Reader.
func (m *MemStore) LabelLog() ([]model.Label, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return slices.Clone(m.labels), nil
}

// LabelSets implements audit.Reader.
func (m *MemStore) LabelSets() ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return slices.Sorted(maps.Keys(m.sets)), nil
}

// LabelSet implements audit.Reader; a missing set is an error matching
// store.ErrNotFound, as in store.Store.
func (m *MemStore) LabelSet(name string) ([]string, map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	s, ok := m.sets[name]
	if !ok {
		return nil, nil, fmt.Errorf("audittest: label set %s: %w", name, store.ErrNotFound)
	}
	meta := maps.Clone(s.meta)
	if meta == nil {
		meta = map[string]string{}
	}
	return slices.Clone(s.keys), meta, nil
}

// PutLabelSet implements audit.Store.
func (m *MemStore) PutLabelSet(name string, keys []string, meta map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	m.sets[name] = memSet{keys: slices.Clone(keys), meta: maps.Clone(meta)}
	return nil
}

// Meta implements audit.Reader.
func (m *MemStore) Meta(key string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	v, ok := m.meta[key]
	return v, ok, nil
}

// SetMeta implements audit.Store.
func (m *MemStore) SetMeta(key, value string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	m.meta[key] = value
	return nil
}

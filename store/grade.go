package store

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// gradeFormat is the first byte of every encoded grade, so the encoding can
// change without a schema migration.
const gradeFormat byte = 1

const (
	gradeFlagPass        byte = 1 << 0
	gradeFlagUnparseable byte = 1 << 1
)

// PutGrades stores grades by response key, in one transaction committed
// before it returns. A grade replaces any earlier grade the same grader and
// version gave the same response. Every grade needs a Grader and a Version;
// if one lacks them, nothing is stored. Grades for keys with no stored
// response are kept (the response may arrive later).
func (s *Store) PutGrades(grades map[string][]model.Grade) error {
	for key, gs := range grades {
		if err := validateGrades(key, gs); err != nil {
			return err
		}
	}
	return s.update(func(tx *bolt.Tx) error {
		gb := newGradeBuckets(tx)
		for key, gs := range grades {
			if err := gb.put(key, gs); err != nil {
				return err
			}
		}
		return nil
	})
}

// GradesFor returns every grade the given grader version gave, by response
// key. The map is empty (not nil) when that version graded nothing. It reads
// one nested bucket in key order.
func (s *Store) GradesFor(grader, version string) (map[string]model.Grade, error) {
	return s.GradesForUsing(grader, version, nil)
}

// GradesForUsing is GradesFor with the map's key strings supplied by key,
// as for StatusUsing.
func (s *Store) GradesForUsing(grader, version string, key func(k []byte) string) (map[string]model.Grade, error) {
	var m map[string]model.Grade
	err := s.view(func(tx *bolt.Tx) error {
		b := versionBucket(tx, grader, version)
		if b == nil {
			m = map[string]model.Grade{}
			return nil
		}
		m = make(map[string]model.Grade, min(b.Sequence(), maxSizeHint))
		in := interner{} // failing grades of one check share its reason
		buf := new([hexKeyLen]byte)
		return b.ForEach(func(k, v []byte) error {
			g, err := decodeGradeInterned(v, in)
			if err != nil {
				return s.corrupt("grade of response", k, err)
			}
			g.Grader, g.Version = grader, version
			m[keyUsing(k, key, buf)] = g
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Grades returns every grade of one response, by any grader and version,
// ordered by grader then version (byte order). It is empty (nil) when the
// response has none.
func (s *Store) Grades(key string) ([]model.Grade, error) {
	var out []model.Grade
	k := dbKey(key)
	err := s.view(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketGrades)
		if root == nil {
			return nil
		}
		return root.ForEachBucket(func(grader []byte) error {
			gb := root.Bucket(grader)
			return gb.ForEachBucket(func(version []byte) error {
				v := gb.Bucket(version).Get(k)
				if v == nil {
					return nil
				}
				g, err := decodeGrade(v)
				if err != nil {
					return s.corrupt("grade of response", k, err)
				}
				g.Grader, g.Version = string(grader), string(version)
				out = append(out, g)
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// maxSizeHint bounds a map size taken from a stored count, which a damaged
// file could make absurd.
const maxSizeHint = 1 << 24

func versionBucket(tx *bolt.Tx, grader, version string) *bolt.Bucket {
	root := tx.Bucket(bucketGrades)
	if root == nil || grader == "" || version == "" {
		return nil
	}
	g := root.Bucket([]byte(grader))
	if g == nil {
		return nil
	}
	return g.Bucket([]byte(version))
}

func validateGrades(key string, gs []model.Grade) error {
	if err := validateKey(key); err != nil {
		return fmt.Errorf("store: grades for %q: %w", key, err)
	}
	for i, g := range gs {
		if g.Grader == "" || g.Version == "" {
			return fmt.Errorf("store: grade %d for %s: grader and version are required (got %q, %q)", i, key, g.Grader, g.Version)
		}
		if len(g.Grader) > maxKeyLen || len(g.Version) > maxKeyLen {
			return fmt.Errorf("store: grade %d for %s: grader or version longer than %d bytes", i, key, maxKeyLen)
		}
	}
	return nil
}

// gradeBuckets caches the nested version buckets used within one write
// transaction, since a batch writes many grades of few versions.
type gradeBuckets struct {
	tx    *bolt.Tx
	cache map[[2]string]*bolt.Bucket
}

func newGradeBuckets(tx *bolt.Tx) *gradeBuckets {
	return &gradeBuckets{tx: tx, cache: map[[2]string]*bolt.Bucket{}}
}

func (gb *gradeBuckets) put(key string, gs []model.Grade) error {
	for _, g := range gs {
		id := [2]string{g.Grader, g.Version}
		b := gb.cache[id]
		if b == nil {
			gr, err := gb.tx.Bucket(bucketGrades).CreateBucketIfNotExists([]byte(g.Grader))
			if err != nil {
				return fmt.Errorf("store: grader bucket %s: %w", g.Grader, err)
			}
			if b, err = gr.CreateBucketIfNotExists([]byte(g.Version)); err != nil {
				return fmt.Errorf("store: grader bucket %s@%s: %w", g.Grader, g.Version, err)
			}
			gb.cache[id] = b
		}
		k := dbKey(key)
		if b.Get(k) == nil {
			// Counted so that GradesFor can size its map.
			if _, err := b.NextSequence(); err != nil {
				return fmt.Errorf("store: count grade %s@%s for %s: %w", g.Grader, g.Version, key, err)
			}
		}
		if err := b.Put(k, encodeGrade(g)); err != nil {
			return fmt.Errorf("store: put grade %s@%s for %s: %w", g.Grader, g.Version, key, err)
		}
	}
	return nil
}

// encodeGrade packs a grade without its grader and version, which are the
// names of the buckets holding it: format byte, flags, then signed varints
// Check, Span.Start, Span.End, then the reason's bytes.
func encodeGrade(g model.Grade) []byte {
	b := make([]byte, 2, 2+3*binary.MaxVarintLen64+len(g.Reason))
	b[0] = gradeFormat
	if g.Pass {
		b[1] |= gradeFlagPass
	}
	if g.Unparseable {
		b[1] |= gradeFlagUnparseable
	}
	b = binary.AppendVarint(b, int64(g.Check))
	b = binary.AppendVarint(b, int64(g.Span.Start))
	b = binary.AppendVarint(b, int64(g.Span.End))
	return append(b, g.Reason...)
}

var errShortGrade = errors.New("truncated grade")

func decodeGrade(v []byte) (model.Grade, error) { return decodeGradeInterned(v, nil) }

// decodeGradeInterned is decodeGrade sharing reasons through in (nil: a
// copy each).
func decodeGradeInterned(v []byte, in interner) (model.Grade, error) {
	if len(v) < 2 {
		return model.Grade{}, errShortGrade
	}
	if v[0] != gradeFormat {
		return model.Grade{}, fmt.Errorf("unknown grade format %d", v[0])
	}
	g := model.Grade{
		Pass:        v[1]&gradeFlagPass != 0,
		Unparseable: v[1]&gradeFlagUnparseable != 0,
	}
	rest := v[2:]
	var nums [3]int64
	for i := range nums {
		n, size := binary.Varint(rest)
		if size <= 0 {
			return model.Grade{}, errShortGrade
		}
		nums[i], rest = n, rest[size:]
	}
	g.Check, g.Span.Start, g.Span.End = int(nums[0]), int(nums[1]), int(nums[2])
	g.Reason = in.get(rest) // copies out of the transaction's memory
	return g, nil
}

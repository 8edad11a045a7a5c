package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// Status bytes: the compact record of whether a stored call answered.
const (
	statusError byte = 0
	statusOK    byte = 1
)

// forEachChunk is how many responses ForEachResponse decodes per read
// transaction; short transactions keep writers from waiting on a remap.
const forEachChunk = 512

// Response returns the stored response with the given key, or an error
// matching ErrNotFound. The returned value is a copy owned by the caller.
func (s *Store) Response(key string) (model.Response, error) {
	var r model.Response
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResponses)
		var v []byte
		if b != nil {
			v = b.Get([]byte(key))
		}
		if v == nil {
			return fmt.Errorf("store: response %s: %w", key, ErrNotFound)
		}
		var err error
		r, err = s.decodeResponse([]byte(key), v)
		return err
	})
	return r, err
}

// HasResponse reports whether a response (answered or errored) is stored
// under key.
func (s *Store) HasResponse(key string) (bool, error) {
	var ok bool
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketStatus); b != nil {
			ok = b.Get([]byte(key)) != nil
		}
		return nil
	})
	return ok, err
}

// ForEachResponse calls fn for every stored response in key order. It reads
// in short transactions, outside of which fn runs, so fn may use the Store
// (including writes); responses written during the iteration may or may not
// be seen. An error from fn stops the iteration and is returned as is.
func (s *Store) ForEachResponse(fn func(model.Response) error) error {
	var after []byte
	for {
		chunk := make([]model.Response, 0, forEachChunk)
		err := s.view(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketResponses)
			if b == nil {
				return nil
			}
			c := b.Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.First()
			} else if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
				k, v = c.Next()
			}
			for ; k != nil && len(chunk) < forEachChunk; k, v = c.Next() {
				r, err := s.decodeResponse(k, v)
				if err != nil {
					return err
				}
				chunk = append(chunk, r)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, r := range chunk {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(chunk) < forEachChunk {
			return nil
		}
		after = []byte(chunk[len(chunk)-1].Key)
	}
}

// Status returns, for every stored response, whether the call answered
// (true) or errored (false). Keys absent from the map have never been
// stored. Planning uses it to skip answered calls and retry errored ones; it
// reads only the compact status bucket.
func (s *Store) Status() (map[string]bool, error) {
	var m map[string]bool
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketStatus)
		if b == nil {
			m = map[string]bool{}
			return nil
		}
		m = make(map[string]bool, b.Sequence())
		return b.ForEach(func(k, v []byte) error {
			if len(v) != 1 {
				return s.corrupt("status of response", k, fmt.Errorf("%d bytes", len(v)))
			}
			m[string(k)] = v[0] == statusOK
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// putResponse stores r unless an answered response is already stored under
// its key, and reports whether it did. It keeps the status bucket's
// sequence equal to its key count, which sizes the map Status builds.
func putResponse(tx *bolt.Tx, r *model.Response) (bool, error) {
	key := []byte(r.Key)
	status := tx.Bucket(bucketStatus)
	prev := status.Get(key)
	if len(prev) == 1 && prev[0] == statusOK {
		return false, nil
	}
	v, err := json.Marshal(r)
	if err != nil {
		return false, fmt.Errorf("store: encode response %s: %w", r.Key, err)
	}
	if err := tx.Bucket(bucketResponses).Put(key, v); err != nil {
		return false, fmt.Errorf("store: put response %s: %w", r.Key, err)
	}
	st := statusError
	if r.OK() {
		st = statusOK
	}
	if err := status.Put(key, []byte{st}); err != nil {
		return false, fmt.Errorf("store: put status %s: %w", r.Key, err)
	}
	if prev == nil {
		if _, err := status.NextSequence(); err != nil {
			return false, fmt.Errorf("store: count response %s: %w", r.Key, err)
		}
	}
	return true, nil
}

func (s *Store) decodeResponse(k, v []byte) (model.Response, error) {
	var r model.Response
	if err := json.Unmarshal(v, &r); err != nil {
		return model.Response{}, s.corrupt("response", k, err)
	}
	r.Key = string(k) // the bucket key is authoritative
	return r, nil
}

package store

import (
	"encoding/json"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// bucketBatches holds the batches submitted to providers' batch APIs and
// not yet collected: batch id -> JSON model.BatchRecord. It satisfies
// runner.BatchStore. It is created by the first PutBatch, so stores that
// never batch do not change.
var bucketBatches = []byte("batches")

// PutBatch records a submitted batch, replacing a record with its id.
func (s *Store) PutBatch(b model.BatchRecord) error {
	if b.ID == "" {
		return fmt.Errorf("store: batch without an id")
	}
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("store: encode batch %s: %w", b.ID, err)
	}
	return s.update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketBatches)
		if err != nil {
			return fmt.Errorf("store: batches: %w", err)
		}
		return bk.Put([]byte(b.ID), v)
	})
}

// Batches returns the recorded batches, oldest first.
func (s *Store) Batches() ([]model.BatchRecord, error) {
	var out []model.BatchRecord
	err := s.view(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketBatches)
		if bk == nil {
			return nil
		}
		return bk.ForEach(func(k, v []byte) error {
			var b model.BatchRecord
			if err := json.Unmarshal(v, &b); err != nil {
				return s.corrupt("batch", k, err)
			}
			out = append(out, b)
			return nil
		})
	})
	sort.SliceStable(out, func(i, j int) bool { return out[i].Submitted.Before(out[j].Submitted) })
	return out, err
}

// DeleteBatch forgets a batch once it has been collected. Deleting a batch
// that is not recorded is not an error.
func (s *Store) DeleteBatch(id string) error {
	return s.update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketBatches)
		if bk == nil {
			return nil
		}
		return bk.Delete([]byte(id))
	})
}

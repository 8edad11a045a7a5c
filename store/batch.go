package store

import (
	"encoding/json"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// bucketBatches holds the batches submitted to providers' batch APIs and
// not yet collected: batch id (or, before the provider gave one, the
// record's Ref) -> JSON model.BatchRecord. It satisfies
// runner.BatchStore. It is created by the first PutBatch, so stores that
// never batch do not change.
var bucketBatches = []byte("batches")

// PutBatch records a batch under its id, or under its Ref while the
// provider has given no id (a batch about to be created), replacing a
// record with that name. A record with both replaces the one under its
// Ref in the same transaction: the batch is never recorded twice, nor
// left unrecorded, whenever a crash comes.
func (s *Store) PutBatch(b model.BatchRecord) error {
	name := b.ID
	if name == "" {
		name = b.Ref
	}
	if name == "" {
		return fmt.Errorf("store: batch without an id or a ref")
	}
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("store: encode batch %s: %w", name, err)
	}
	return s.update(func(tx *bolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists(bucketBatches)
		if err != nil {
			return fmt.Errorf("store: batches: %w", err)
		}
		if b.ID != "" && b.Ref != "" && b.Ref != b.ID {
			if err := bk.Delete([]byte(b.Ref)); err != nil {
				return fmt.Errorf("store: batches: %w", err)
			}
		}
		return bk.Put([]byte(name), v)
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

// DeleteBatch forgets a batch once it has been collected (or, by its Ref,
// one found never to have been created). Deleting a batch that is not
// recorded is not an error.
func (s *Store) DeleteBatch(id string) error {
	return s.update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bucketBatches)
		if bk == nil {
			return nil
		}
		return bk.Delete([]byte(id))
	})
}

package store

import (
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// Meta returns the meta record with the given name and whether it exists.
// Meta records are small strings the caller wants to keep with the audit,
// such as the text of an audited rule line recorded at the first run.
func (s *Store) Meta(key string) (string, bool, error) {
	var (
		val string
		ok  bool
	)
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketMeta); b != nil && key != "" {
			if v := b.Get([]byte(key)); v != nil {
				val, ok = string(v), true
			}
		}
		return nil
	})
	return val, ok, err
}

// SetMeta sets the meta record key to value, replacing any earlier value,
// and commits before it returns. Names starting with "store." are reserved
// for the store's own records and are refused.
func (s *Store) SetMeta(key, value string) error {
	if err := validateKey(key); err != nil {
		return fmt.Errorf("store: set meta %q: %w", key, err)
	}
	if strings.HasPrefix(key, reservedMetaPrefix) {
		return fmt.Errorf("store: set meta %q: names starting with %q are reserved", key, reservedMetaPrefix)
	}
	return s.update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put([]byte(key), []byte(value)); err != nil {
			return fmt.Errorf("store: set meta %s: %w", key, err)
		}
		return nil
	})
}

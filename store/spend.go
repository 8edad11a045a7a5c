package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// The spend ledger: one entry per paid call, appended with the response it
// paid for (model.Response.Charge) and never changed. Responses are
// replaced (an errored or truncated answer asked again) and kept only once
// per key, so summing the stored responses forgets what was paid for the
// ones replaced; the ledger does not.
//
// An entry's key is its charge's ID, or when that is empty the response's
// key (binary) and the Unix nanoseconds of its time: writing the same
// response again (a replayed batch of writes) writes the same entry.
//
// Entry layout: ledgerFormat, a flags byte, Model (uvarint length and
// bytes), signed varints PromptTokens, CachedTokens, CacheWriteTokens,
// CompletionTokens and At as Unix nanoseconds, then USD and CacheSavedUSD
// as big-endian IEEE 754 bits.
const ledgerFormat byte = 1

// The flags of a ledger entry.
const (
	ledgerJudge    byte = 1 << 0
	ledgerBatched  byte = 1 << 1
	ledgerUnpriced byte = 1 << 2
)

// ledgerCompleteKey marks a store whose ledger holds every paid call: one
// created with the ledger, or one whose earlier calls SeedLedger added.
var ledgerCompleteKey = []byte(reservedMetaPrefix + "ledger_complete")

// ledgerID is the key of r's ledger entry.
func ledgerID(r *model.Response) []byte {
	if r.Charge.ID != "" {
		return []byte(r.Charge.ID)
	}
	return binary.BigEndian.AppendUint64(dbKey(r.Key), uint64(r.At.UnixNano()))
}

// putCharge appends r's charge to the ledger, unless an entry with its ID
// is there already.
func putCharge(tx *bolt.Tx, r *model.Response) error {
	b := tx.Bucket(bucketSpend)
	id := ledgerID(r)
	if b.Get(id) != nil {
		return nil
	}
	p := model.Paid{Charge: *r.Charge, Model: r.Model, PromptTokens: r.PromptTokens, CachedTokens: r.CachedTokens,
		CacheWriteTokens: r.CacheWriteTokens, CompletionTokens: r.CompletionTokens, Batched: r.Batched, At: r.At}
	if err := b.Put(id, encodePaid(p)); err != nil {
		return fmt.Errorf("store: put charge %s: %w", r.Key, err)
	}
	return nil
}

func encodePaid(p model.Paid) []byte {
	b := make([]byte, 2, 2+6*binary.MaxVarintLen64+len(p.Model)+16)
	b[0] = ledgerFormat
	if p.Judge {
		b[1] |= ledgerJudge
	}
	if p.Batched {
		b[1] |= ledgerBatched
	}
	if p.Unpriced {
		b[1] |= ledgerUnpriced
	}
	b = appendString(b, p.Model)
	for _, v := range [...]int64{int64(p.PromptTokens), int64(p.CachedTokens), int64(p.CacheWriteTokens), int64(p.CompletionTokens), p.At.UnixNano()} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.USD))
	return binary.BigEndian.AppendUint64(b, math.Float64bits(p.CacheSavedUSD))
}

func decodePaid(k, v []byte) (model.Paid, error) {
	var p model.Paid
	if len(v) < 2 || v[0] != ledgerFormat {
		return p, fmt.Errorf("ledger entry %x: %w", k, errBadRecord)
	}
	d := recordDecoder{rest: v[2:]}
	p.Judge, p.Batched, p.Unpriced = v[1]&ledgerJudge != 0, v[1]&ledgerBatched != 0, v[1]&ledgerUnpriced != 0
	p.Model = string(d.bytes())
	p.PromptTokens, p.CachedTokens, p.CacheWriteTokens, p.CompletionTokens = int(d.varint()), int(d.varint()), int(d.varint()), int(d.varint())
	p.At = time.Unix(0, d.varint())
	if d.bad || len(d.rest) != 16 {
		return p, fmt.Errorf("ledger entry %x: %w", k, errBadRecord)
	}
	p.USD = math.Float64frombits(binary.BigEndian.Uint64(d.rest))
	p.CacheSavedUSD = math.Float64frombits(binary.BigEndian.Uint64(d.rest[8:]))
	return p, nil
}

// ForEachPaid visits every entry of the spend ledger, in no particular
// order.
func (s *Store) ForEachPaid(fn func(model.Paid) error) error {
	var all []model.Paid
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSpend)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			p, err := decodePaid(k, v)
			if err != nil {
				return s.corrupt("ledger entry", k, err)
			}
			all = append(all, p)
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, p := range all {
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// LedgerComplete reports whether the ledger holds every paid call: false
// for a store written before the ledger existed, whose earlier calls are
// known only from the responses stored (see SeedLedger).
func (s *Store) LedgerComplete() (bool, error) {
	ok := false
	err := s.view(func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketMeta).Get(ledgerCompleteKey) != nil
		return nil
	})
	return ok, err
}

// SeedLedger completes the ledger of a store written before it existed:
// one entry per response given (each Response.Charge set; its ID should
// not clash with a run's), and the mark that the ledger is complete, in
// one transaction. It does nothing on a complete ledger.
func (s *Store) SeedLedger(rs []model.Response) error {
	return s.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta.Get(ledgerCompleteKey) != nil {
			return nil
		}
		for i := range rs {
			if rs[i].Charge == nil {
				continue
			}
			if err := putCharge(tx, &rs[i]); err != nil {
				return err
			}
		}
		return meta.Put(ledgerCompleteKey, []byte("1"))
	})
}

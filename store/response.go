package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// A stored response is two values: a compact record in the responses
// bucket, under the response key, holding everything but the text; and the
// text in the texts bucket, under a sequence number the record names (none
// when the text is empty). Status, usage and latency sums read only the
// records, never the texts, which are most of the file.
//
// Texts are numbered in the order they are stored, so a run appends them at
// the end of their B+tree: a commit rewrites one text page, not one per
// answer, and text pages are filled (textFillPercent). Response keys are
// random, so the records' pages fill as random inserts do, to about 70%.
//
// Record layout: recordFormat, a flags byte, the text's number (uvarint, 0
// for none), then Model and FinishReason (each a uvarint length and its
// bytes), signed varints PromptTokens, CachedTokens, CompletionTokens,
// LatencyMS, Attempts, At as Unix seconds, At's nanoseconds (unsigned) and
// At's zone offset in seconds, then ErrorKind (length-prefixed), then
// (format 2 on) CacheWriteTokens as a signed varint, and last Error, to the
// end of the value. The key is not repeated: the bucket key is
// authoritative. Format 1 records, written before cache writes were kept,
// are read with CacheWriteTokens 0. Format 3 is format 2 with the
// recordControls flag kept: in older records it is never set, and their
// texts are read to know (ControlKeysUsing).
const recordFormat byte = 3

// recordFormatV2 is the format without the recordControls flag;
// recordFormatV1 the format without CacheWriteTokens either.
const (
	recordFormatV2 byte = 2
	recordFormatV1 byte = 1
)

// knownFormat reports whether b is a record format this version reads.
func knownFormat(b byte) bool { return b >= recordFormatV1 && b <= recordFormat }

// The flags of a record.
const (
	recordOK      byte = 1 << 0 // an answered response (model.Response.OK)
	recordBatched byte = 1 << 1 // answered through a batch API (model.Response.Batched)
	// recordControls marks a text holding control sequences Sanitize
	// removes when it is shown (model.Controls above 0); format 3 on.
	recordControls byte = 1 << 2
)

// textFillPercent fills text pages completely: texts are only appended.
const textFillPercent = 1.0

// forEachChunk is how many responses ForEachResponse and
// ForEachResponseMeta decode per read transaction; short transactions keep
// writers from waiting on a remap.
const forEachChunk = 512

// Response returns the stored response with the given key, or an error
// matching ErrNotFound. The returned value is a copy owned by the caller.
func (s *Store) Response(key string) (model.Response, error) {
	var r model.Response
	k := dbKey(key)
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResponses)
		var v []byte
		if b != nil {
			v = b.Get(k)
		}
		if v == nil {
			return fmt.Errorf("store: response %s: %w", key, ErrNotFound)
		}
		rec, id, err := s.decodeRecord(k, v, nil)
		if err != nil {
			return err
		}
		text, err := s.textOf(tx, k, id)
		if err != nil {
			return err
		}
		r = rec
		r.Key, r.Text = key, string(text)
		return nil
	})
	return r, err
}

// HasResponse reports whether a response (answered or errored) is stored
// under key.
func (s *Store) HasResponse(key string) (bool, error) {
	var ok bool
	err := s.view(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketResponses); b != nil {
			ok = b.Get(dbKey(key)) != nil
		}
		return nil
	})
	return ok, err
}

// ForEachResponse calls fn for every stored response in key order (request
// keys first, then any other keys; see key.go). It reads in short
// transactions, outside of which fn runs, so fn may use the Store
// (including writes); responses written during the iteration may or may not
// be seen. An error from fn stops the iteration and is returned as is.
func (s *Store) ForEachResponse(fn func(model.Response) error) error {
	return s.forEach(true, fn)
}

// ForEachResponseMeta is ForEachResponse without the texts: every field but
// Text is set, Text is empty. It reads only the compact records, so adding
// up usage, cost or latency over a large audit does not read its answers.
func (s *Store) ForEachResponseMeta(fn func(model.Response) error) error {
	return s.forEach(false, fn)
}

func (s *Store) forEach(texts bool, fn func(model.Response) error) error {
	var after []byte
	in := interner{}
	chunk := make([]model.Response, 0, forEachChunk)
	for {
		chunk = chunk[:0]
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
				r, id, err := s.decodeRecord(k, v, in)
				if err != nil {
					return err
				}
				r.Key = keyOf(k)
				if texts {
					text, err := s.textOf(tx, k, id)
					if err != nil {
						return err
					}
					r.Text = string(text)
				}
				chunk = append(chunk, r)
				if len(chunk) == forEachChunk {
					after = append(after[:0], k...)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for i := range chunk {
			if err := fn(chunk[i]); err != nil {
				return err
			}
		}
		if len(chunk) < forEachChunk {
			return nil
		}
		clear(chunk) // drop references to texts
	}
}

// textOf returns the text numbered id of the response whose key is k in
// stored form, or nil for id 0 (no text). The slice is the transaction's
// memory.
func (s *Store) textOf(tx *bolt.Tx, k []byte, id uint64) ([]byte, error) {
	if id == 0 {
		return nil, nil
	}
	var v []byte
	if b := tx.Bucket(bucketTexts); b != nil {
		v = b.Get(textKey(id))
	}
	if v == nil {
		return nil, s.corrupt("response", k, fmt.Errorf("text %d is missing", id))
	}
	return v, nil
}

// textKey is the key of the text numbered id: big-endian, so texts are in
// the order they were stored.
func textKey(id uint64) []byte { return binary.BigEndian.AppendUint64(make([]byte, 0, 8), id) }

// Status returns, for every stored response, whether the call answered
// (true) or errored (false). Keys absent from the map have never been
// stored. Planning uses it to skip answered calls and retry errored ones; it
// reads only the flags of the compact records.
func (s *Store) Status() (map[string]bool, error) { return s.StatusUsing(nil) }

// StatusUsing is Status with the map's key strings supplied by key, which
// is given each stored key as its 64 hex digits (or, for a key not in
// request form, as its bytes) and returns the string to use for it. The
// bytes are only valid during the call. A caller that already holds the
// keys it cares about (a plan) returns its own strings, so loading the
// state of a large audit allocates no key strings. A nil key allocates
// each.
func (s *Store) StatusUsing(key func(k []byte) string) (map[string]bool, error) {
	var m map[string]bool
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResponses)
		if b == nil {
			m = map[string]bool{}
			return nil
		}
		m = make(map[string]bool, min(b.Sequence(), maxSizeHint))
		buf := new([hexKeyLen]byte)
		return b.ForEach(func(k, v []byte) error {
			if len(v) < 2 || !knownFormat(v[0]) {
				return s.corrupt("response", k, errBadRecord)
			}
			m[keyUsing(k, key, buf)] = v[1]&recordOK != 0
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// SettledErrors maps the key of every stored call that ended without an
// answer to grade but needs no new attempt (model.ErrorKind.Settled: an
// answer cut off by the token limit, or empty) to its error kind. It
// decodes only the records of calls that did not answer.
func (s *Store) SettledErrors() (map[string]model.ErrorKind, error) {
	return s.SettledErrorsUsing(nil)
}

// SettledErrorsUsing is SettledErrors with the map's keys made by key, as
// in StatusUsing.
func (s *Store) SettledErrorsUsing(key func(k []byte) string) (map[string]model.ErrorKind, error) {
	m := map[string]model.ErrorKind{}
	buf := new([hexKeyLen]byte)
	err := s.eachRecord(func(_ *bolt.Tx, k, v []byte) error {
		if len(v) >= 2 && v[1]&recordOK != 0 {
			return nil
		}
		r, _, err := s.decodeRecord(k, v, nil)
		if err != nil {
			return err
		}
		if r.ErrorKind.Settled() {
			m[keyUsing(k, key, buf)] = r.ErrorKind
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// eachRecord calls fn with every response record, in one read
// transaction; k and v are valid only during the call.
func (s *Store) eachRecord(fn func(tx *bolt.Tx, k, v []byte) error) error {
	return s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResponses)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error { return fn(tx, k, v) })
	})
}

// ControlKeysUsing returns the keys (made by key, as in StatusUsing) of the
// stored answers whose text holds control sequences: what model.Sanitize
// removes when the answer is shown (model.Controls above 0). It reads the
// records' flags, and the texts only of answers stored before the flag was
// kept (record format 2 and older).
func (s *Store) ControlKeysUsing(key func(k []byte) string) (map[string]bool, error) {
	m := map[string]bool{}
	buf := new([hexKeyLen]byte)
	err := s.eachRecord(func(tx *bolt.Tx, k, v []byte) error {
		if len(v) < 2 || !knownFormat(v[0]) {
			return s.corrupt("response", k, errBadRecord)
		}
		switch {
		case v[1]&recordOK == 0:
			return nil
		case v[0] >= recordFormat:
			if v[1]&recordControls != 0 {
				m[keyUsing(k, key, buf)] = true
			}
			return nil
		}
		_, id, err := s.decodeRecord(k, v, nil)
		if err != nil {
			return err
		}
		text, err := s.textOf(tx, k, id)
		if err != nil {
			return err
		}
		if model.Controls(string(text)) > 0 {
			m[keyUsing(k, key, buf)] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// putResponse stores r unless an answered response is already stored under
// its key, and reports whether it did. It keeps the responses bucket's
// sequence equal to its key count, which sizes the map Status builds; the
// texts bucket's sequence numbers the texts.
func putResponse(tx *bolt.Tx, r *model.Response) (bool, error) {
	key := dbKey(r.Key)
	records := tx.Bucket(bucketResponses)
	prev := records.Get(key)
	if len(prev) >= 2 && prev[1]&recordOK != 0 {
		return false, nil
	}
	texts := tx.Bucket(bucketTexts)
	texts.FillPercent = textFillPercent
	if prev != nil {
		// An errored response being replaced: drop its text, if any.
		if id, n := binary.Uvarint(prev[min(2, len(prev)):]); n > 0 && id != 0 {
			if err := texts.Delete(textKey(id)); err != nil {
				return false, fmt.Errorf("store: replace response text %s: %w", r.Key, err)
			}
		}
	}
	var id uint64
	if r.Text != "" {
		var err error
		if id, err = texts.NextSequence(); err != nil {
			return false, fmt.Errorf("store: number response text %s: %w", r.Key, err)
		}
		if err := texts.Put(textKey(id), []byte(r.Text)); err != nil {
			return false, fmt.Errorf("store: put response text %s: %w", r.Key, err)
		}
	}
	if err := records.Put(key, encodeRecord(r, id)); err != nil {
		return false, fmt.Errorf("store: put response %s: %w", r.Key, err)
	}
	if prev == nil {
		if _, err := records.NextSequence(); err != nil {
			return false, fmt.Errorf("store: count response %s: %w", r.Key, err)
		}
	}
	return true, nil
}

// encodeRecord packs everything of r but its key and text, naming the text
// by its number (0: none); see recordFormat.
func encodeRecord(r *model.Response, textID uint64) []byte {
	n := 2 + 11*binary.MaxVarintLen64 + len(r.Model) + len(r.FinishReason) + len(r.ErrorKind) + len(r.Error)
	b := make([]byte, 2, n)
	b[0] = recordFormat
	if r.OK() {
		b[1] |= recordOK
	}
	if r.Batched {
		b[1] |= recordBatched
	}
	if model.Controls(r.Text) > 0 {
		b[1] |= recordControls
	}
	b = binary.AppendUvarint(b, textID)
	b = appendString(b, r.Model)
	b = appendString(b, r.FinishReason)
	for _, v := range [...]int64{int64(r.PromptTokens), int64(r.CachedTokens), int64(r.CompletionTokens), r.LatencyMS, int64(r.Attempts)} {
		b = binary.AppendVarint(b, v)
	}
	_, offset := r.At.Zone()
	b = binary.AppendVarint(b, r.At.Unix())
	b = binary.AppendUvarint(b, uint64(r.At.Nanosecond()))
	b = binary.AppendVarint(b, int64(offset))
	b = appendString(b, string(r.ErrorKind))
	b = binary.AppendVarint(b, int64(r.CacheWriteTokens))
	return append(b, r.Error...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

var errBadRecord = errors.New("truncated or unknown response record")

// decodeRecord decodes a record into a Response without Key and Text, and
// returns the number of its text (0: none). in, when not nil, shares the
// strings that repeat across records (model names, finish reasons, error
// kinds).
func (s *Store) decodeRecord(k, v []byte, in interner) (model.Response, uint64, error) {
	if len(v) < 2 || !knownFormat(v[0]) {
		return model.Response{}, 0, s.corrupt("response", k, errBadRecord)
	}
	d := recordDecoder{rest: v[2:]}
	textID := d.uvarint()
	var r model.Response
	r.Model = in.get(d.bytes())
	r.FinishReason = in.get(d.bytes())
	var nums [5]int64
	for i := range nums {
		nums[i] = d.varint()
	}
	r.PromptTokens, r.CachedTokens, r.CompletionTokens = int(nums[0]), int(nums[1]), int(nums[2])
	r.LatencyMS, r.Attempts = nums[3], int(nums[4])
	sec, nsec, offset := d.varint(), d.uvarint(), d.varint()
	r.ErrorKind = model.ErrorKind(in.get(d.bytes()))
	if v[0] >= recordFormatV2 {
		r.CacheWriteTokens = int(d.varint())
	}
	r.Batched = v[1]&recordBatched != 0
	if d.bad || nsec >= uint64(time.Second) {
		return model.Response{}, 0, s.corrupt("response", k, errBadRecord)
	}
	r.Error = string(d.rest)
	if r.OK() != (v[1]&recordOK != 0) {
		return model.Response{}, 0, s.corrupt("response", k, errBadRecord)
	}
	r.At = time.Unix(sec, int64(nsec)).UTC()
	if offset != 0 {
		r.At = r.At.In(time.FixedZone("", int(offset)))
	}
	return r, textID, nil
}

// recordDecoder reads the fields of a record; a truncated field sets bad
// and yields zeros from then on.
type recordDecoder struct {
	rest []byte
	bad  bool
}

func (d *recordDecoder) varint() int64 {
	v, n := binary.Varint(d.rest)
	if n <= 0 {
		d.bad, d.rest = true, nil
		return 0
	}
	d.rest = d.rest[n:]
	return v
}

func (d *recordDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.rest)
	if n <= 0 {
		d.bad, d.rest = true, nil
		return 0
	}
	d.rest = d.rest[n:]
	return v
}

func (d *recordDecoder) bytes() []byte {
	l := d.uvarint()
	if l > uint64(len(d.rest)) {
		d.bad, d.rest = true, nil
		return nil
	}
	b := d.rest[:l]
	d.rest = d.rest[l:]
	return b
}

// interner shares the strings that repeat across the values of one
// iteration, so that reading a hundred thousand records does not allocate a
// hundred thousand copies of one model name. It holds at most maxInterned
// strings; a nil interner copies every string.
type interner map[string]string

const maxInterned = 64

func (in interner) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if in == nil {
		return string(b)
	}
	if s, ok := in[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(in) < maxInterned {
		in[s] = s
	}
	return s
}

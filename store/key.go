package store

import "encoding/hex"

// Response keys are request keys: 64 lowercase hex digits of a SHA-256. The
// file stores them in binary, which halves the key bytes of every bucket
// keyed by response (responses, grades) and so the pages a large audit maps
// into memory. Callers only ever see the hex form.
//
// The stored form of a request key is keyTagHash followed by its 32 bytes.
// Any other key (tests, hand-made imports) is stored as its own bytes, which
// never start with keyTagHash because keys contain no NUL byte
// (validateKey), so the two forms cannot collide. Byte order of the stored
// form is the order of the hex keys, so iterations stay in key order; other
// keys come after every request key.
const (
	keyTagHash = 0x00
	hashLen    = 32
	hexKeyLen  = 2 * hashLen
)

// appendDBKey appends the stored form of key to dst.
func appendDBKey(dst []byte, key string) []byte {
	if !isHexKey(key) {
		return append(dst, key...)
	}
	dst = append(dst, keyTagHash)
	for i := 0; i < hexKeyLen; i += 2 {
		dst = append(dst, unhex(key[i])<<4|unhex(key[i+1]))
	}
	return dst
}

// dbKey returns the stored form of key.
func dbKey(key string) []byte {
	return appendDBKey(make([]byte, 0, 1+hashLen), key)
}

// keyOf returns the key whose stored form is k, allocating one string.
func keyOf(k []byte) string {
	if len(k) != 1+hashLen || k[0] != keyTagHash {
		return string(k)
	}
	var buf [hexKeyLen]byte
	hex.Encode(buf[:], k[1:])
	return string(buf[:])
}

// keyUsing is keyOf with the string supplied by key when key is not nil
// (see Store.StatusUsing); buf is scratch space for the hex digits, kept by
// the caller across keys so that it is not allocated for each.
func keyUsing(k []byte, key func([]byte) string, buf *[hexKeyLen]byte) string {
	if key == nil {
		return keyOf(k)
	}
	if len(k) != 1+hashLen || k[0] != keyTagHash {
		return key(k)
	}
	hex.Encode(buf[:], k[1:])
	return key(buf[:])
}

// isHexKey reports whether key is in request-key form: 64 lowercase hex
// digits. Upper-case hex is not: it would not round-trip.
func isHexKey(key string) bool {
	if len(key) != hexKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// unhex returns the value of a lowercase hex digit checked by isHexKey.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

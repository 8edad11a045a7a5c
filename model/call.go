package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Message is one chat message sent to a model.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Request is everything that determines a model's answer to one call. Its
// Key is the content address under which the answer is stored, so two
// requests with the same Key are the same call and are made once.
type Request struct {
	Model       string    `json:"model"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens"`
	Seed        *int64    `json:"seed,omitempty"` // sent where the API takes one (judges)
	Messages    []Message `json:"messages"`
	Sample      int       `json:"sample"` // 0-based sample index: repeats of one prompt are distinct calls
}

// Key returns the hex SHA-256 of the request's canonical JSON encoding.
// The encoding is canonical because field order is fixed by the struct and
// the message list is ordered. Endpoint and API key are deliberately not part
// of the key: the key names what was asked, not where.
func (r Request) Key() string {
	b, err := json.Marshal(r)
	if err != nil {
		// Only unsupported values (NaN temperature) make Marshal fail; the
		// audit parser rejects those, so this is a programming error.
		panic("model: request cannot be encoded: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"
)

// Message is one chat message sent to a model.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Request is everything that determines a model's answer to one call. Its
// Key is the content address under which the answer is stored, so two
// requests with the same Key are the same call and are made once.
//
// The fields after Sample were added later and are left out of the
// encoding when unset, so a request that uses none of them keeps the key it
// always had (and the answers stored under it).
type Request struct {
	Model       string    `json:"model"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens"`
	Seed        *int64    `json:"seed,omitempty"` // sent where the API takes one (judges)
	Messages    []Message `json:"messages"`
	Sample      int       `json:"sample"` // 0-based sample index: repeats of one prompt are distinct calls

	// OmitTemperature sends no temperature, so the provider's default
	// applies (reasoning models accept no other); Temperature is then 0.
	OmitTemperature bool `json:"omit_temperature,omitempty"`
	// MaxCompletionTokens bounds the answer, reasoning included, under
	// OpenAI's newer name (reasoning models reject max_tokens). At most one
	// of MaxTokens and MaxCompletionTokens is set.
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
	// ExtraBody is merged into the JSON body as it is (reasoning_effort,
	// OpenRouter's provider routing); ExtraHeaders are sent as they are.
	// JSON encodes maps with sorted keys, so their encoding is canonical.
	ExtraBody    map[string]any    `json:"extra_body,omitempty"`
	ExtraHeaders map[string]string `json:"extra_headers,omitempty"`
	// API is the protocol the request is sent in: "" for OpenAI chat
	// completions, APIAnthropic for Anthropic's Messages API, whose request
	// differs in shape (system block, cache control).
	API string `json:"api,omitempty"`
}

// APIAnthropic is the Request.API of calls sent to Anthropic's Messages API.
const APIAnthropic = "anthropic"

// Key returns the hex SHA-256 of the request's canonical JSON encoding.
// The encoding is canonical because field order is fixed by the struct, the
// message list is ordered and maps are encoded with sorted keys. Endpoint
// and API key are deliberately not part of the key: the key names what was
// asked, not where.
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

// ReasoningModel reports whether a model id names one of OpenAI's
// reasoning families (gpt-5*, o1*, o3*, o4*), with or without a routing
// prefix like "openai/". They reject max_tokens (max_completion_tokens
// replaces it, and counts reasoning tokens too) and any temperature but the
// default.
func ReasoningModel(name string) bool {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.ToLower(name)
	for _, p := range []string{"gpt-5", "o1", "o3", "o4"} {
		if name == p || strings.HasPrefix(name, p+"-") || strings.HasPrefix(name, p+".") ||
			(p == "gpt-5" && strings.HasPrefix(name, p)) {
			return true
		}
	}
	return false
}

// BatchRecord is a batch of calls submitted to a provider's batch API, kept
// until a later run collects its answers. It is recorded before the batch
// is created, with Ref and no ID, so that a submission cut off before the
// provider answered (a crash, Ctrl-C, a lost connection) leaves a record
// the next run looks the batch up by instead of paying for it twice.
type BatchRecord struct {
	ID       string   `json:"id"`       // the provider's batch id; empty until the provider gave it
	Endpoint string   `json:"endpoint"` // the name of the endpoint it was sent to
	Keys     []string `json:"keys"`     // the calls in it, by content address (their custom_id)
	// Ref is the name auditor gave the batch before creating it, sent in
	// the batch's metadata where the API keeps it (OpenAI's); empty in
	// records written before it existed.
	Ref string `json:"ref,omitempty"`
	// InputFile is the id of the file the calls were uploaded in (OpenAI),
	// once uploaded.
	InputFile string    `json:"input_file,omitempty"`
	Submitted time.Time `json:"submitted"`
}

// Created reports whether the provider has answered the submission with the
// batch's id; a record without one names a batch that may or may not exist.
func (b BatchRecord) Created() bool { return b.ID != "" }

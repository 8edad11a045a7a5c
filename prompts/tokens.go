package prompts

import (
	"fmt"

	"github.com/tiktoken-go/tokenizer"
)

// Counter estimates token counts with the o200k_base encoding (GPT-4o and
// later OpenAI models). Other providers tokenize differently, so counts are
// estimates for planning and for comparing lines, not billing figures.
//
// Build one Counter and reuse it: construction loads the vocabulary, Count is
// then cheap. A Counter is safe for concurrent use.
type Counter struct {
	codec tokenizer.Codec
}

// NewCounter returns a Counter for o200k_base. The vocabulary is compiled
// into the binary, so this needs no network or files.
func NewCounter() (*Counter, error) {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return nil, fmt.Errorf("prompts: load o200k_base tokenizer: %w", err)
	}
	return &Counter{codec: c}, nil
}

// Count returns the number of tokens in s. Should the tokenizer fail (it
// does not on valid or invalid UTF-8 in its default mode), Count falls back
// to the rough rule of four bytes a token rather than report zero.
func (c *Counter) Count(s string) int {
	if s == "" {
		return 0
	}
	n, err := c.codec.Count(s)
	if err != nil {
		return (len(s) + 3) / 4
	}
	return n
}

// LineCost returns the tokens that deleting the given lines removes from p:
// the count of the full prompt minus the count of the deletion variant. This
// is what the deletion saves on every call, newline included, which a count
// of the line alone would miss by a token or so.
func (c *Counter) LineCost(p *Prompt, lines ...int) int {
	return c.Count(p.Text()) - c.Count(p.Without(lines...))
}

package audit

import (
	"slices"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Spend is what an audit's calls cost: every paid call in its store's spend
// ledger (model.Charge), at the prices the audit file gave when it was
// made. A call asked again (a failed, truncated or empty answer) counts
// each time it was paid, and a call no longer in the plan still counts:
// it was paid.
type Spend struct {
	// Calls counts the paid calls of the models under test; the tokens are
	// theirs.
	Calls            int   `json:"calls"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CachedTokens     int64 `json:"cached_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// CacheWriteTokens are prompt tokens written to the provider's cache
	// (Anthropic bills them above the input price).
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// BatchedCalls are answers collected from a batch API, priced at its
	// discount (runner.BatchDiscount).
	BatchedCalls int     `json:"batched_calls"`
	USD          float64 `json:"usd"`
	// CacheSavedUSD is what prompt caching saved on answers and judge calls:
	// the cached tokens at the full input price minus what they cost at the
	// cached price.
	CacheSavedUSD float64 `json:"cache_saved_usd"`
	// The judges' calls (grading and re-asked), at each judge's prices.
	// TotalUSD is USD plus JudgeUSD: what the audit spent.
	JudgeCalls            int     `json:"judge_calls"`
	JudgePromptTokens     int64   `json:"judge_prompt_tokens"`
	JudgeCompletionTokens int64   `json:"judge_completion_tokens"`
	JudgeUSD              float64 `json:"judge_usd"`
	TotalUSD              float64 `json:"total_usd"`
	// UnpricedCalls are paid calls to endpoints the audit file gave no
	// prices for (counted at $0 above, which is not what they cost), and
	// Unpriced names those endpoints' models.
	UnpricedCalls int      `json:"unpriced_calls"`
	Unpriced      []string `json:"unpriced,omitempty"`
}

// SpendOf adds up a spend ledger; each visits its entries
// (store.Store.ForEachPaid).
func SpendOf(each func(fn func(model.Paid) error) error) (Spend, error) {
	var s Spend
	err := each(func(p model.Paid) error {
		if p.Unpriced {
			s.UnpricedCalls++
			if !slices.Contains(s.Unpriced, p.Model) {
				s.Unpriced = append(s.Unpriced, p.Model)
			}
		}
		s.CacheSavedUSD += p.CacheSavedUSD
		if p.Judge {
			s.JudgeCalls++
			s.JudgePromptTokens += int64(p.PromptTokens)
			s.JudgeCompletionTokens += int64(p.CompletionTokens)
			s.JudgeUSD += p.USD
			return nil
		}
		s.Calls++
		s.PromptTokens += int64(p.PromptTokens)
		s.CachedTokens += int64(p.CachedTokens)
		s.CompletionTokens += int64(p.CompletionTokens)
		s.CacheWriteTokens += int64(p.CacheWriteTokens)
		if p.Batched {
			s.BatchedCalls++
		}
		s.USD += p.USD
		return nil
	})
	slices.Sort(s.Unpriced)
	s.TotalUSD = s.USD + s.JudgeUSD
	return s, err
}

// LegacyCharges returns the charges of the calls a store written before
// its spend ledger holds only as responses (each visits their usage,
// store.Store.ForEachResponseMeta): each stored response with usage gets
// a Charge at today's prices, found by its key (an answer of the plan), else
// by its model's name (a judge's, then a model's). What was paid for
// responses replaced since is lost; the ledger keeps it from now on.
func (p *Plan) LegacyCharges(each func(fn func(model.Response) error) error) ([]model.Response, error) {
	judges := map[string]runner.Price{}
	for _, j := range p.Audit.Judges {
		judges[j.Config.Name] = judgePrice(j.Config)
	}
	models := map[string]runner.Price{}
	for _, m := range slices.Backward(p.Audit.File.Models) {
		models[m.Name] = priceOf(m) // the first model of a name wins
	}
	var out []model.Response
	err := each(func(r model.Response) error {
		price, judge := runner.Price{Unknown: true}, false
		if mi, ok := p.ModelOf(r.Key); ok {
			price = priceOf(p.Audit.File.Models[mi])
		} else if jp, ok := judges[r.Model]; ok {
			price, judge = jp, true
		} else if mp, ok := models[r.Model]; ok {
			price = mp
		}
		if r.Batched {
			price = price.Scaled(runner.BatchDiscount)
		}
		if r.Charge = price.Charge(r, price.CostOf(runner.Usage{Prompt: r.PromptTokens, Cached: r.CachedTokens,
			CacheWrite: r.CacheWriteTokens, Completion: r.CompletionTokens}), judge); r.Charge == nil {
			return nil
		}
		r.Charge.ID = "legacy:" + r.Key
		out = append(out, r)
		return nil
	})
	return out, err
}

package audit

import (
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Spend is what the stored answers of a plan cost.
type Spend struct {
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
	// The judges' calls on these answers (with the current rubrics), at
	// each judge's prices; zero without judges. TotalUSD is USD plus
	// JudgeUSD: what the evidence behind the verdicts cost.
	JudgeCalls            int     `json:"judge_calls"`
	JudgePromptTokens     int64   `json:"judge_prompt_tokens"`
	JudgeCompletionTokens int64   `json:"judge_completion_tokens"`
	JudgeUSD              float64 `json:"judge_usd"`
	TotalUSD              float64 `json:"total_usd"`
}

// SpendWithJudges adds up what the stored answers of the plan cost and what
// the judges' calls on them cost. answered maps keys to whether they hold
// an answer. Finding the judges' calls means reading the answers' texts
// (a judge call's address depends on the answer), so it is only done when
// the audit has judges.
func (p *Plan) SpendWithJudges(src Reader, answered map[string]bool) (Spend, error) {
	s, err := p.SpendOf(src.ForEachResponseMeta)
	if err != nil || len(p.Audit.Judges) == 0 {
		s.TotalUSD = s.USD
		return s, err
	}
	jp, err := p.judgeCalls(src, answered, 0, false)
	if err != nil {
		return s, err
	}
	judgeOf := make(map[string]int, len(jp.Calls))
	for i, c := range jp.Calls {
		judgeOf[c.Key] = i
	}
	err = src.ForEachResponseMeta(func(r model.Response) error {
		i, ok := judgeOf[r.Key]
		if !ok {
			return nil
		}
		s.JudgeCalls++
		s.JudgePromptTokens += int64(r.PromptTokens)
		s.JudgeCompletionTokens += int64(r.CompletionTokens)
		cost, saved := costOf(jp.Calls[i].Price, r)
		s.JudgeUSD += cost
		s.CacheSavedUSD += saved
		return nil
	})
	s.TotalUSD = s.USD + s.JudgeUSD
	return s, err
}

// SpendOf adds up the usage of every stored response the plan uses. each
// visits stored responses; only their keys and token counts are read, so
// store.Store.ForEachResponseMeta, which skips the texts, is the one to
// pass (ForEachResponse gives the same sum, slower).
func (p *Plan) SpendOf(each func(fn func(model.Response) error) error) (Spend, error) {
	prices := make([]runner.Price, len(p.Audit.File.Models))
	for i, m := range p.Audit.File.Models {
		prices[i] = priceOf(m)
	}
	var s Spend
	err := each(func(r model.Response) error {
		mi, ok := p.ModelOf(r.Key)
		if !ok {
			return nil // not an answer of this plan (a judge call, another audit's)
		}
		s.Calls++
		s.PromptTokens += int64(r.PromptTokens)
		s.CachedTokens += int64(r.CachedTokens)
		s.CompletionTokens += int64(r.CompletionTokens)
		s.CacheWriteTokens += int64(r.CacheWriteTokens)
		if r.Batched {
			s.BatchedCalls++
		}
		cost, saved := costOf(prices[mi], r)
		s.USD += cost
		s.CacheSavedUSD += saved
		return nil
	})
	s.TotalUSD = s.USD
	return s, err
}

// costOf is what a stored response cost at price, cache reads and writes
// included and at the batch discount when it was batched, and what prompt
// caching saved on it: its cost with no cache read or write minus its cost.
func costOf(price runner.Price, r model.Response) (cost, saved float64) {
	if r.Batched {
		price = price.Scaled(runner.BatchDiscount)
	}
	cost = price.CostOf(runner.Usage{Prompt: r.PromptTokens, Cached: r.CachedTokens, CacheWrite: r.CacheWriteTokens, Completion: r.CompletionTokens})
	return cost, price.Cost(r.PromptTokens, 0, r.CompletionTokens) - cost
}

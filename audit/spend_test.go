package audit_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// Spend prices what each answer's usage says: cache reads at the cached
// price, cache writes at the cache-write price, and an answer collected
// from a batch API at half of all of them.
func TestSpend_CacheWritesAndBatches(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, audittest.SweepFiles())
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), audittest.Counter(t))
	if err != nil {
		t.Fatal(err)
	}
	m := &a.File.Models[0]
	m.PriceInputPerMTok, m.PriceCachedInputPerMTok, m.PriceCacheWriteInputPerMTok, m.PriceOutputPerMTok = 4, 0.4, 5, 20
	p := audit.NewPlan(a, audit.PlanOptions{Samples: 1})
	st := audittest.NewMemStore()
	usage := model.Response{PromptTokens: 1_000_000, CachedTokens: 200_000, CacheWriteTokens: 300_000, CompletionTokens: 100_000}
	// 500k input at $4, 200k cached at $0.4, 300k written at $5, 100k out at $20.
	const direct = 2 + 0.08 + 1.5 + 2
	const noCache = 4 + 2
	direct1, batched := usage, usage
	direct1.Key, batched.Key, batched.Batched = p.Calls[0].Key, p.Calls[1].Key, true
	for _, r := range []model.Response{direct1, batched} {
		if err := st.Put(r, nil); err != nil {
			t.Fatal(err)
		}
	}
	s, err := p.SpendWithJudges(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := direct + direct/2; math.Abs(s.USD-want) > 1e-9 {
		t.Errorf("USD = %v, want %v (the batched answer at half price)", s.USD, want)
	}
	if want := (noCache - direct) * 1.5; math.Abs(s.CacheSavedUSD-want) > 1e-9 {
		t.Errorf("CacheSavedUSD = %v, want %v", s.CacheSavedUSD, want)
	}
	if s.CacheWriteTokens != 600_000 || s.BatchedCalls != 1 || s.Calls != 2 {
		t.Errorf("spend %+v: want 600000 cache-write tokens, 1 batched of 2 calls", s)
	}
}

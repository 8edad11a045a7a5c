package audit_test

import (
	"math"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// paidOf is the ledger entries of responses carrying charges, as the store
// reads them back.
func paidOf(rs []model.Response) func(fn func(model.Paid) error) error {
	return func(fn func(model.Paid) error) error {
		for _, r := range rs {
			if err := fn(model.Paid{Charge: *r.Charge, Model: r.Model, PromptTokens: r.PromptTokens, CachedTokens: r.CachedTokens,
				CacheWriteTokens: r.CacheWriteTokens, CompletionTokens: r.CompletionTokens, Batched: r.Batched, At: r.At}); err != nil {
				return err
			}
		}
		return nil
	}
}

// A store written before the ledger gets charges priced from its stored
// responses: cache reads at the cached price, cache writes at the
// cache-write price, and an answer collected from a batch API at half of
// all of them.
func TestLegacyCharges_CacheWritesAndBatches(t *testing.T) {
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
	usage := model.Response{Model: "m", PromptTokens: 1_000_000, CachedTokens: 200_000, CacheWriteTokens: 300_000, CompletionTokens: 100_000}
	// 500k input at $4, 200k cached at $0.4, 300k written at $5, 100k out at $20.
	const direct = 2 + 0.08 + 1.5 + 2
	const noCache = 4 + 2
	direct1, batched, unknown := usage, usage, usage
	direct1.Key, batched.Key, batched.Batched = p.Calls[0].Key, p.Calls[1].Key, true
	unknown.Key, unknown.Model = "0000000000000000000000000000000000000000000000000000000000000001", "gone-model"
	for _, r := range []model.Response{direct1, batched, unknown} {
		if err := st.Put(r, nil); err != nil {
			t.Fatal(err)
		}
	}
	charges, err := p.LegacyCharges(st.ForEachResponseMeta)
	if err != nil || len(charges) != 3 {
		t.Fatalf("%d charges, %v", len(charges), err)
	}
	s, err := audit.SpendOf(paidOf(charges))
	if err != nil {
		t.Fatal(err)
	}
	if want := direct + direct/2; math.Abs(s.USD-want) > 1e-9 {
		t.Errorf("USD = %v, want %v (the batched answer at half price)", s.USD, want)
	}
	if want := (noCache - direct) * 1.5; math.Abs(s.CacheSavedUSD-want) > 1e-9 {
		t.Errorf("CacheSavedUSD = %v, want %v", s.CacheSavedUSD, want)
	}
	if s.CacheWriteTokens != 900_000 || s.BatchedCalls != 1 || s.Calls != 3 {
		t.Errorf("spend %+v: want 900000 cache-write tokens, 1 batched of 3 calls", s)
	}
	// A model no longer in the audit: its calls were paid, at a price
	// nobody knows any more.
	if s.UnpricedCalls != 1 || !reflect.DeepEqual(s.Unpriced, []string{"gone-model"}) {
		t.Errorf("unpriced %d %v, want 1 of gone-model", s.UnpricedCalls, s.Unpriced)
	}
	for _, c := range charges {
		if c.Charge.ID != "legacy:"+c.Key {
			t.Errorf("charge id %q", c.Charge.ID)
		}
	}
}

// SpendOf counts every entry of the ledger, answers and judges apart.
func TestSpendOf_AnswersAndJudges(t *testing.T) {
	t.Parallel()
	entries := []model.Response{
		{Model: "m", PromptTokens: 100, CompletionTokens: 10, Charge: &model.Charge{USD: 1}},
		{Model: "m", PromptTokens: 100, CompletionTokens: 4000, Charge: &model.Charge{USD: 2}}, // truncated, then asked again
		{Model: "j", PromptTokens: 50, CompletionTokens: 5, Charge: &model.Charge{Judge: true, USD: 0.25, CacheSavedUSD: 0.5}},
		{Model: "local", PromptTokens: 50, CompletionTokens: 5, Charge: &model.Charge{Unpriced: true}},
	}
	s, err := audit.SpendOf(paidOf(entries))
	if err != nil {
		t.Fatal(err)
	}
	want := audit.Spend{Calls: 3, PromptTokens: 250, CompletionTokens: 4015, USD: 3, CacheSavedUSD: 0.5,
		JudgeCalls: 1, JudgePromptTokens: 50, JudgeCompletionTokens: 5, JudgeUSD: 0.25, TotalUSD: 3.25,
		UnpricedCalls: 1, Unpriced: []string{"local"}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("spend\n %+v\nwant\n %+v", s, want)
	}
}

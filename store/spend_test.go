package store

import (
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

func ledger(t *testing.T, s *Store) []model.Paid {
	t.Helper()
	var out []model.Paid
	if err := s.ForEachPaid(func(p model.Paid) error { out = append(out, p); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Every paid response is in the ledger once: a truncated answer replaced
// by its retry keeps its charge, an answer that is not kept (one is
// stored already) keeps its charge, and a replayed write or a batch
// collected twice counts once.
func TestLedger_EveryPaymentOnce(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	truncated := testResponse(1, true)
	truncated.Text, truncated.Error, truncated.ErrorKind, truncated.CompletionTokens = "", "truncated: cut off", model.ErrTruncated, 4000
	truncated.Charge = &model.Charge{USD: 0.04}
	retried := testResponse(1, true)
	retried.At = truncated.At.Add(time.Hour)
	retried.Charge = &model.Charge{USD: 0.01}
	again := retried // a second answer to a key already answered
	again.At = retried.At.Add(time.Hour)
	again.Charge = &model.Charge{USD: 0.02}
	judge := testResponse(2, true)
	judge.Charge = &model.Charge{Judge: true, USD: 0.5, CacheSavedUSD: 0.25}
	batched := testResponse(3, true)
	batched.Batched = true
	batched.Charge = &model.Charge{ID: "batch:b1:" + batched.Key, USD: 0.005, Unpriced: true}
	free := testResponse(4, false) // a failed call that cost nothing: no charge
	putAll(t, s, truncated, retried, again, judge, batched, free)
	putAll(t, s, retried, batched) // replayed: the same payments again

	got := ledger(t, reopen(t, s))
	if len(got) != 5 {
		t.Fatalf("%d ledger entries, want 5: %+v", len(got), got)
	}
	usd := 0.0
	for _, p := range got {
		usd += p.USD
	}
	if usd < 0.575-1e-12 || usd > 0.575+1e-12 {
		t.Errorf("ledger total $%v, want $0.575", usd)
	}
	var j model.Paid
	for _, p := range got {
		if p.Judge {
			j = p
		}
	}
	want := model.Paid{Charge: model.Charge{Judge: true, USD: 0.5, CacheSavedUSD: 0.25}, Model: judge.Model,
		PromptTokens: judge.PromptTokens, CachedTokens: judge.CachedTokens, CompletionTokens: judge.CompletionTokens, At: judge.At}
	if !j.At.Equal(want.At) {
		t.Errorf("judge entry at %v, want %v", j.At, want.At)
	}
	j.At = want.At
	if !reflect.DeepEqual(j, want) {
		t.Errorf("judge entry %+v, want %+v", j, want)
	}
}

// A store written before the ledger says so, and SeedLedger completes it
// once.
func TestLedger_SeedALegacyStore(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t)
	if ok, err := s.LedgerComplete(); !ok || err != nil {
		t.Fatalf("a new store's ledger is not complete: %v", err)
	}
	// What a store from before the ledger looks like.
	if err := s.update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketSpend); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Delete(ledgerCompleteKey)
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	if ok, err := s.LedgerComplete(); ok || err != nil {
		t.Fatalf("a store from before the ledger reads as complete: %v", err)
	}
	r := testResponse(1, true)
	r.Charge = &model.Charge{ID: "legacy:" + r.Key, USD: 1}
	for range 2 {
		if err := s.SeedLedger([]model.Response{r}); err != nil {
			t.Fatal(err)
		}
	}
	if got := ledger(t, s); len(got) != 1 || got[0].USD != 1 {
		t.Errorf("seeded ledger %+v", got)
	}
	if ok, _ := s.LedgerComplete(); !ok {
		t.Error("the seeded ledger is not complete")
	}
}

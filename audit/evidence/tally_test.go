package evidence

import (
	"testing"
	"unsafe"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// A tally loaded from the store keys its maps with the plan's own strings,
// and SpendOf gives the same sum from records alone as from whole responses.
func TestTally_SharesPlanKeys_SpendFromRecords(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 3)
	p, st := fx.Plan, fx.Store
	tally, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]bool{}     // the plan's keys
	planData := map[*byte]bool{} // where their bytes are
	for _, c := range p.Cells {
		own[c.Key] = true
		planData[unsafe.StringData(c.Key)] = true
	}
	for _, c := range p.Regression { // the regression suite's calls too
		own[c.Key] = true
		planData[unsafe.StringData(c.Key)] = true
	}
	answered := 0
	for k := range tally.status {
		if own[k] {
			answered++
			if !planData[unsafe.StringData(k)] {
				t.Fatalf("status key %s is a copy of the plan's", k)
			}
		}
	}
	if answered != len(p.Calls) {
		t.Errorf("%d planned calls in the tally's status, want %d", answered, len(p.Calls))
	}
	for k := range tally.PredicateGrades(0) {
		if !planData[unsafe.StringData(k)] {
			t.Fatalf("grade key %s is a copy of the plan's", k)
		}
	}

	full, err := p.SpendOf(st.ForEachResponse)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := p.SpendOf(st.ForEachResponseMeta)
	if err != nil {
		t.Fatal(err)
	}
	// The sum as the plan's calls price it, in key order like the store.
	var want audit.Spend
	byKey := map[string]int{}
	for i, c := range p.Calls {
		byKey[c.Key] = i
	}
	err = st.ForEachResponse(func(r model.Response) error {
		i, ok := byKey[r.Key]
		if !ok {
			return nil
		}
		want.Calls++
		want.PromptTokens += int64(r.PromptTokens)
		want.CachedTokens += int64(r.CachedTokens)
		want.CompletionTokens += int64(r.CompletionTokens)
		want.USD += p.Calls[i].Price.Cost(r.PromptTokens, r.CachedTokens, r.CompletionTokens)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want.TotalUSD = want.USD
	if full != want || meta != want || want.Calls != len(p.Calls) {
		t.Errorf("SpendOf: %+v from responses, %+v from records; want %+v", full, meta, want)
	}
}

package evidence

import (
	"math"
	"testing"
	"unsafe"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// A tally loaded from the store keys its maps with the plan's own strings,
// and the spend ledger holds what the run paid.
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

	// Every call the run paid for is in the ledger, priced as the plan's
	// calls price it.
	spend, err := audit.SpendOf(st.ForEachPaid)
	if err != nil {
		t.Fatal(err)
	}
	var want audit.Spend
	byKey := map[string]int{}
	for i, c := range p.Calls {
		byKey[c.Key] = i
	}
	err = st.ForEachResponseMeta(func(r model.Response) error {
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
	if spend.Calls != want.Calls || spend.PromptTokens != want.PromptTokens || spend.CachedTokens != want.CachedTokens ||
		spend.CompletionTokens != want.CompletionTokens || math.Abs(spend.USD-want.USD) > 1e-9 || want.Calls != len(p.Calls) {
		t.Errorf("ledger spend %+v; want %+v", spend, want)
	}
	// A store from before the ledger prices its responses the same way.
	legacy, err := p.LegacyCharges(st.ForEachResponseMeta)
	if err != nil {
		t.Fatal(err)
	}
	usd := 0.0
	for _, r := range legacy {
		usd += r.Charge.USD
	}
	if math.Abs(usd-want.USD) > 1e-9 {
		t.Errorf("legacy charges $%v, want $%v", usd, want.USD)
	}
}

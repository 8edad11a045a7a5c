package evidence

import (
	"math"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// The demo's line 12 has no input class: its verdict rests on the answer
// lengths of its general cases, which the simulated model lengthens when
// the line is deleted.
func TestLengths_NoInputClassRule(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 6)
	res, err := aggregate(t, fx)
	if err != nil {
		t.Fatal(err)
	}
	var rr *RuleResult
	for _, r := range res.Rules {
		if r.Rule.Line == 12 {
			rr = r
		} else if r.Lengths != nil {
			t.Errorf("line %d has an input class but got lengths", r.Rule.Line)
		}
	}
	if rr == nil || rr.Lengths == nil {
		t.Fatal("line 12 has no lengths")
	}
	l := rr.Lengths
	cases := len(rr.Rule.Cases)
	if l.Baseline.N != 6*cases || l.Deleted.N != 6*cases || len(l.PerCase) != cases {
		t.Fatalf("n %d/%d, %d cases, want %d answers per variant", l.Baseline.N, l.Deleted.N, len(l.PerCase), 6*cases)
	}
	// The per-case means add up to the pooled means.
	var sb, sd float64
	for _, c := range l.PerCase {
		sb += c.BaselineMean * float64(c.BaselineN)
		sd += c.DeletedMean * float64(c.DeletedN)
	}
	if math.Abs(sb/float64(l.Baseline.N)-l.Baseline.Mean) > 1e-9 || math.Abs(sd/float64(l.Deleted.N)-l.Deleted.Mean) > 1e-9 {
		t.Errorf("per-case means %v/%v do not pool to %v/%v", sb, sd, l.Baseline.Mean, l.Deleted.Mean)
	}
	// With equal n per case the paired shift is the difference of means.
	if l.Shift == nil || math.Abs(l.Shift.Est-(l.Deleted.Mean-l.Baseline.Mean)) > 1e-9 || l.Shift.CI.Lo <= 0 {
		t.Errorf("shift %+v, means %v -> %v", l.Shift, l.Baseline.Mean, l.Deleted.Mean)
	}
	hb, hd := 0, 0
	for i := range l.BaselineHist {
		hb += l.BaselineHist[i]
		hd += l.DeletedHist[i]
	}
	if hb != l.Baseline.N || hd != l.Deleted.N || len(l.Edges) != len(l.BaselineHist)+1 {
		t.Errorf("histogram holds %d/%d answers over %d edges", hb, hd, len(l.Edges))
	}
	if rr.Verdict.Decision != model.DecisionCanary || len(rr.Verdict.Notes) != 0 || rr.Verdict.Needed != model.CanaryAdvice {
		t.Errorf("verdict %s, notes %v, needed %q", rr.Verdict.Decision, rr.Verdict.Notes, rr.Verdict.Needed)
	}
}

// noUsage is a store whose provider reported no token usage.
type noUsage struct{ *store.Store }

func (s noUsage) ForEachResponseMeta(fn func(model.Response) error) error {
	return s.Store.ForEachResponseMeta(func(r model.Response) error {
		r.CompletionTokens = 0
		return fn(r)
	})
}

func (s noUsage) Response(key string) (model.Response, error) {
	r, err := s.Store.Response(key)
	r.CompletionTokens = 0
	return r, err
}

// A provider that reports no usage must not turn every length into 0 (a
// fabricated zero shift): the text is counted with the audit's tokenizer.
func TestLengths_CountedFromTextWithoutUsage(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 2)
	p, st := fx.Plan, fx.Store
	tally, err := NewTally(p, fx.Preds, noUsage{st})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		if rr.Lengths == nil {
			continue
		}
		if rr.Lengths.Baseline.N != 2*len(rr.Rule.Cases) || rr.Lengths.Baseline.Mean == 0 || rr.Lengths.Shift == nil || rr.Lengths.Shift.Est <= 0 {
			t.Fatalf("lengths without usage: %+v", rr.Lengths.LengthEvidence)
		}
		// Each length is the tokenizer's count of the text.
		for _, ci := range p.CellsOfRule(rr.RuleIndex) {
			key := p.Cells[ci].Key
			r, err := st.Response(key)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := int(tally.lengths[key].tokens), p.Audit.Counter.Count(r.Text); got != want {
				t.Fatalf("answer %s: length %d, want %d", key, got, want)
			}
		}
		return
	}
	t.Fatal("no rule with lengths")
}

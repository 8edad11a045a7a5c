package evidence

import (
	"fmt"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// HistogramBins is how many bars the length histogram of a rule with no
// input class has.
const HistogramBins = 12

// answerLength is what the lengths comparison keeps of one answer.
type answerLength struct {
	tokens    int32
	truncated bool // finish reason "length": cut off at max_tokens
}

// Lengths is how answer length moved between the variants of a rule with no
// input class: the verdict's evidence and the histogram's data.
type Lengths struct {
	model.LengthEvidence
	// Edges are the histogram's bin edges in tokens (len(Edges) = bins+1);
	// BaselineHist and DeletedHist count answers per bin. Empty until both
	// variants have answers.
	Edges                     []int
	BaselineHist, DeletedHist []int
	// PerCase is each case's mean answer length under both variants, in
	// the rule's case order (NaN-free: 0 with no answers, see N).
	PerCase []CaseLength
}

// CaseLength is one case's mean answer length per variant.
type CaseLength struct {
	BaselineMean, DeletedMean float64
	BaselineN, DeletedN       int
}

// needsLengths reports whether any rule has no input class: only those keep
// per-answer lengths in memory.
func needsLengths(p *audit.Plan) bool {
	for _, r := range p.Audit.Rules {
		if r.Config.NoInputClass() {
			return true
		}
	}
	return false
}

// lengthKey reports whether an answer belongs to a rule with no input
// class, so its length is kept.
func lengthKey(p *audit.Plan, key string) bool {
	for _, ci := range p.ByKey[key] {
		if p.Audit.Rules[p.Cells[ci].Rule].Config.NoInputClass() {
			return true
		}
	}
	return false
}

// recordLength keeps an answer's length when its rule needs it. The length
// is the completion tokens the API reported; a provider that reports no
// usage gets the text counted with the audit's tokenizer instead, and an
// answer whose length cannot be known is left out rather than counted as 0.
func (t *Tally) recordLength(r model.Response) {
	if t.lengths == nil || !r.OK() || !lengthKey(t.plan, r.Key) {
		return
	}
	n := r.CompletionTokens
	if n == 0 && r.Text != "" {
		if t.plan.Audit.Counter == nil {
			return
		}
		n = t.plan.Audit.Counter.Count(r.Text)
	}
	t.lengths[t.plan.Key([]byte(r.Key))] = answerLength{tokens: int32(min(n, 1<<30)),
		truncated: r.FinishReason == "length"}
}

// loadLengths reads the lengths of the stored answers of rules with no
// input class. Answers stored without a completion token count are read
// again with their text, to count it.
func (t *Tally) loadLengths(src audit.Reader) error {
	if !needsLengths(t.plan) {
		return nil
	}
	t.lengths = map[string]answerLength{}
	var unknown []string
	err := src.ForEachResponseMeta(func(r model.Response) error {
		if r.OK() && r.CompletionTokens == 0 && lengthKey(t.plan, r.Key) {
			unknown = append(unknown, r.Key)
			return nil
		}
		t.recordLength(r)
		return nil
	})
	if err != nil || len(unknown) == 0 {
		return err
	}
	for _, k := range unknown {
		r, err := src.Response(k)
		if err != nil {
			return fmt.Errorf("audit: read answer %s to count its length: %w", k, err)
		}
		t.recordLength(r)
	}
	return nil
}

// measureLengths compares the answer lengths of one rule and model.
func (t *Tally) measureLengths(ri, mi int) *Lengths {
	rule := t.plan.Audit.Rules[ri]
	base := make([][]int, len(rule.Cases))
	del := make([][]int, len(rule.Cases))
	var l Lengths
	for _, cell := range t.plan.Cells {
		if cell.Rule != ri || cell.Model != mi {
			continue
		}
		a, ok := t.lengths[cell.Key]
		if !ok {
			continue
		}
		if cell.Deleted {
			del[cell.Case] = append(del[cell.Case], int(a.tokens))
			if a.truncated {
				l.TruncatedDeleted++
			}
		} else {
			base[cell.Case] = append(base[cell.Case], int(a.tokens))
			if a.truncated {
				l.TruncatedBaseline++
			}
		}
	}
	l.PerCase = make([]CaseLength, len(rule.Cases))
	for c := range rule.Cases {
		l.PerCase[c] = CaseLength{BaselineMean: meanOf(base[c]), DeletedMean: meanOf(del[c]),
			BaselineN: len(base[c]), DeletedN: len(del[c])}
	}
	flat := func(xs [][]int) []int {
		var out []int
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	fb, fd := flat(base), flat(del)
	if len(fb) > 0 {
		l.Baseline, _ = stats.SummarizeLengths(fb)
	}
	if len(fd) > 0 {
		l.Deleted, _ = stats.SummarizeLengths(fd)
	}
	if len(fb) == 0 || len(fd) == 0 {
		return &l
	}
	if sh, err := stats.PairedLengthShift(del, base); err == nil {
		l.Shift = &sh
	}
	if rt, err := stats.MannWhitney(fd, fb); err == nil {
		l.Test = &rt
	}
	if edges, hb, hd, err := stats.Histogram(fb, fd, HistogramBins); err == nil {
		l.Edges, l.BaselineHist, l.DeletedHist = edges, hb, hd
	}
	return &l
}

// meanOf is the mean of xs, 0 when empty.
func meanOf(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return float64(sum) / float64(len(xs))
}

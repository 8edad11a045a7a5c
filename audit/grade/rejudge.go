package grade

import (
	"math/rand/v2"
	"sort"
	"sync"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
	"github.com/auditor-dev/auditor/runner"
)

// RejudgeSample is the sample index of stability re-asks: a new content
// address, so the judge is really asked again rather than read from storage.
const RejudgeSample = 1

// RejudgeCalls picks up to k judge calls per judge among those already
// answered (seeded, so a re-run picks the same ones and costs nothing) and
// returns them re-addressed with RejudgeSample.
func RejudgeCalls(jp *audit.JudgePlan, status map[string]bool, judges int, k int, seed uint64) (*audit.JudgePlan, map[string]string) {
	out := &audit.JudgePlan{Targets: map[string][]string{}}
	original := map[string]string{} // re-ask key -> original judge call key
	byJudge := make([][]int, judges)
	for i, c := range jp.Calls {
		if status[c.Key] {
			byJudge[jp.CallJudge[i]] = append(byJudge[jp.CallJudge[i]], i)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	for ji, idx := range byJudge {
		rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
		if len(idx) > k {
			idx = idx[:k]
		}
		sort.Ints(idx)
		for _, i := range idx {
			c := jp.Calls[i]
			c.Request.Sample = RejudgeSample
			c.Key = c.Request.Key()
			out.Calls = append(out.Calls, c)
			out.CallJudge = append(out.CallJudge, ji)
			out.CallRubric = append(out.CallRubric, jp.CallRubric[i])
			out.CallQuoted = append(out.CallQuoted, jp.CallQuoted[i])
			out.Targets[c.Key] = jp.Targets[jp.Calls[i].Key]
			original[c.Key] = jp.Calls[i].Key
		}
	}
	return out, original
}

// Stability is how often a judge changed its verdict when asked again.
type Stability struct {
	Judge       string
	Asked       int // re-asks compared (both answers parseable)
	Flips       int
	Unparseable int // re-asks or originals without a VERDICT line
	Rate        float64
	CI          stats.Interval
}

// CompareRejudge compares each re-ask's verdict with the original's, from
// the judges' stored answers.
func CompareRejudge(rp *audit.JudgePlan, original map[string]string, judges []*audit.Judge, src audit.Reader) ([]Stability, error) {
	out := make([]Stability, len(judges))
	for i, j := range judges {
		out[i].Judge = j.Grader
	}
	for i, c := range rp.Calls {
		s := &out[rp.CallJudge[i]]
		again, err := src.Response(c.Key)
		if err != nil || !again.OK() {
			continue // not answered (yet): nothing to compare
		}
		first, err := src.Response(original[c.Key])
		if err != nil {
			return nil, err
		}
		v1 := model.ParseJudgeVerdict(first.Text, rp.CallQuoted[i])
		v2 := model.ParseJudgeVerdict(again.Text, rp.CallQuoted[i])
		if !v1.OK || !v2.OK {
			s.Unparseable++
			continue
		}
		s.Asked++
		if v1.Violation != v2.Violation {
			s.Flips++
		}
	}
	for i := range out {
		if out[i].Asked > 0 {
			out[i].Rate = float64(out[i].Flips) / float64(out[i].Asked)
			out[i].CI, _ = stats.Wilson(out[i].Flips, out[i].Asked)
		}
	}
	return out, nil
}

// ResponseSink stores responses and nothing else: re-asks must not replace
// the grade that counts. It satisfies runner.Sink.
type ResponseSink struct {
	Writer audit.Writer
	mu     sync.Mutex
}

// Save stores the response without grades.
func (s *ResponseSink) Save(r model.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Writer.Put(r, nil)
}

var _ runner.Sink = (*ResponseSink)(nil)

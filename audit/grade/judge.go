package grade

import (
	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// JudgeSink stores judge answers and turns each into a grade of the answers
// it judged. It satisfies runner.Sink and is safe for concurrent use.
type JudgeSink struct {
	Plan   *audit.JudgePlan
	Judges []*audit.Judge
	Writer audit.Writer
	index  map[string]int // judge call key -> index in Plan.Calls
	// OnGraded, when set, receives every judge grade (for a live Tally).
	OnGraded func(answerKey string, g model.Grade)
}

// NewJudgeSink returns a sink for the plan's judge calls.
func NewJudgeSink(jp *audit.JudgePlan, judges []*audit.Judge, w audit.Writer) *JudgeSink {
	idx := make(map[string]int, len(jp.Calls))
	for i, c := range jp.Calls {
		idx[c.Key] = i
	}
	return &JudgeSink{Plan: jp, Judges: judges, Writer: w, index: idx}
}

// Save stores a judge's answer and the grade it gives.
func (s *JudgeSink) Save(r model.Response) error {
	if err := s.Writer.Put(r, nil); err != nil {
		return err
	}
	if !r.OK() {
		return nil // an errored judge call grades nothing; it is retried next run
	}
	i := s.index[r.Key]
	j := s.Judges[s.Plan.CallJudge[i]]
	g := model.JudgeGrade(j.Config.Name, s.Plan.CallRubric[i], r.Text, s.Plan.CallQuoted[i])
	for _, ak := range s.Plan.Targets[r.Key] {
		if err := s.Writer.PutGrades(ak, []model.Grade{g}); err != nil {
			return err
		}
		if s.OnGraded != nil {
			s.OnGraded(ak, g)
		}
	}
	return nil
}

// Backfill grades the answers of a judge plan whose judge call is already stored but whose
// grade is missing (a run killed between the two writes, or an answer that
// shares a judge call with one judged earlier). No calls are made.
func Backfill(jp *audit.JudgePlan, judges []*audit.Judge, st audit.Store) (int, error) {
	status, err := st.Status()
	if err != nil {
		return 0, err
	}
	have := map[string]map[string]model.Grade{} // by rubric version
	add := map[string][]model.Grade{}
	n := 0
	for i, c := range jp.Calls {
		if !status[c.Key] {
			continue
		}
		j, version := judges[jp.CallJudge[i]], jp.CallRubric[i]
		if have[version] == nil {
			if have[version], err = st.GradesFor(j.Grader, version); err != nil {
				return 0, err
			}
		}
		var g *model.Grade
		for _, ak := range jp.Targets[c.Key] {
			if _, ok := have[version][ak]; ok {
				continue
			}
			if g == nil {
				r, err := st.Response(c.Key)
				if err != nil {
					return n, err
				}
				gr := model.JudgeGrade(j.Config.Name, version, r.Text, jp.CallQuoted[i])
				g = &gr
			}
			add[ak] = append(add[ak], *g)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	return n, st.PutGrades(add)
}

package audit

import (
	"context"
	"fmt"
	"sync"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner/execgrade"
)

// PredicateGrader is the grader name of the acceptance predicate.
const PredicateGrader = model.PredicateGrader

// Grader grades responses with the predicate of every rule whose cells use
// them. A response can serve several rules (a sweep's shared baseline), so it
// can get several predicate grades, each recording its predicate's version.
type Grader struct {
	plan *Plan

	mu   sync.Mutex
	exec map[int]*execgrade.Grader // by rule index, started on first use
	ctx  context.Context
}

// NewGrader returns a grader for the plan's rules. Exec predicates are started
// lazily under ctx; Close stops them.
func NewGrader(ctx context.Context, p *Plan) *Grader {
	return &Grader{plan: p, exec: map[int]*execgrade.Grader{}, ctx: ctx}
}

// Close stops any exec predicate processes.
func (g *Grader) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var first error
	for _, e := range g.exec {
		if err := e.Close(); err != nil && first == nil {
			first = err
		}
	}
	g.exec = map[int]*execgrade.Grader{}
	return first
}

// Grade returns the predicate grades of a response for every rule whose
// cells use it. Errored responses get no grades: errors are their own state.
func (g *Grader) Grade(r model.Response) ([]model.Grade, error) {
	if !r.OK() {
		return nil, nil
	}
	var grades []model.Grade
	done := map[string]bool{} // predicate version: one grade per version
	for _, ci := range g.plan.ByKey[r.Key] {
		cell := g.plan.Cells[ci]
		rule := g.plan.Audit.Rules[cell.Rule]
		if done[rule.Predicate.Version] || !rule.HasPredicate() {
			continue
		}
		gr, err := g.gradeOne(cell.Rule, rule.Cases[cell.Case], r.Text)
		if err != nil {
			return grades, err
		}
		done[rule.Predicate.Version] = true
		grades = append(grades, gr)
	}
	return grades, nil
}

func (g *Grader) gradeOne(ruleIdx int, c model.Case, text string) (model.Grade, error) {
	rule := g.plan.Audit.Rules[ruleIdx]
	gr := rule.Predicate.Grade(c, text)
	if !gr.Pass || len(rule.Predicate.Exec) == 0 {
		return gr, nil
	}
	e, err := g.execFor(ruleIdx)
	if err != nil {
		return gr, err
	}
	pass, reason, err := e.Grade(c, text)
	if err != nil {
		return gr, fmt.Errorf("%s: [exec] %w", rule.PredicatePath, err)
	}
	gr.Pass, gr.Reason = pass, reason
	if pass {
		gr.Reason = ""
	}
	return gr, nil
}

func (g *Grader) execFor(ruleIdx int) (*execgrade.Grader, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.exec[ruleIdx]; ok {
		return e, nil
	}
	rule := g.plan.Audit.Rules[ruleIdx]
	e, err := execgrade.Start(g.ctx, rule.Predicate.Exec, g.plan.Audit.Dir)
	if err != nil {
		return nil, fmt.Errorf("%s: start [exec] %v: %w", rule.PredicatePath, rule.Predicate.Exec, err)
	}
	g.exec[ruleIdx] = e
	return e, nil
}

// ResponseWriter stores a response with its grades. store.Writer satisfies it.
type ResponseWriter interface {
	Put(r model.Response, grades []model.Grade) error
}

// Sink grades every response the runner finishes and hands both to the
// writer. It satisfies runner.Sink. A grading failure (an exec predicate that
// crashed) does not lose the response: it is stored ungraded and graded again
// by Regrade before results are shown.
type Sink struct {
	Grader *Grader
	Writer ResponseWriter
	// OnGraded, when set, is called with every response and its grades after
	// they are queued for storage: a live screen records them in its Tally.
	// It is called from the runner's workers and must not block.
	OnGraded func(r model.Response, grades []model.Grade)

	mu        sync.Mutex
	gradeErrs []error
}

// Save grades r and queues it for storage.
func (s *Sink) Save(r model.Response) error {
	grades, err := s.Grader.Grade(r)
	if err != nil {
		s.mu.Lock()
		s.gradeErrs = append(s.gradeErrs, err)
		s.mu.Unlock()
	}
	if err := s.Writer.Put(r, grades); err != nil {
		return err
	}
	if s.OnGraded != nil {
		s.OnGraded(r, grades)
	}
	return nil
}

// GradeErrors returns the grading failures seen so far.
func (s *Sink) GradeErrors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.gradeErrs...)
}

// GradeStore is what Regrade needs from storage.
type GradeStore interface {
	Status() (map[string]bool, error)
	GradesFor(grader, version string) (map[string]model.Grade, error)
	Response(key string) (model.Response, error)
	PutGrades(grades map[string][]model.Grade) error
}

// Regrade grades every stored answer that has no grade from the current
// version of its rule's predicate: after a predicate edit, or after a run in
// which grading failed. It makes no model calls; it returns how many grades
// it added.
func (g *Grader) Regrade(st GradeStore) (int, error) {
	status, err := st.Status()
	if err != nil {
		return 0, err
	}
	added, n, err := g.regrade(status, func(version string) (map[string]model.Grade, error) {
		return st.GradesFor(PredicateGrader, version)
	}, st)
	if err != nil || n == 0 {
		return n, err
	}
	return n, st.PutGrades(added)
}

// AnswerStore is what RegradeTally needs from storage: the answers it
// grades, and a place for their grades. store.Store satisfies it.
type AnswerStore interface {
	Response(key string) (model.Response, error)
	PutGrades(grades map[string][]model.Grade) error
}

// RegradeTally is Regrade working from the state a Tally has loaded rather
// than reading status and grades from storage again: showing results then
// reads them once (NewTally, RegradeTally, Tally.Results) instead of once
// to re-grade and once more to aggregate. It stores the grades it adds and
// records them in t, which then holds what Aggregate would load.
func (g *Grader) RegradeTally(t *Tally, st AnswerStore) (int, error) {
	added, n, err := g.regrade(t.status, func(version string) (map[string]model.Grade, error) {
		return t.grades[version], nil
	}, st)
	if err != nil || n == 0 {
		return n, err
	}
	if err := st.PutGrades(added); err != nil {
		return n, err
	}
	for key, gs := range added {
		for _, gr := range gs {
			t.RecordGrade(key, gr)
		}
	}
	return n, nil
}

// regrade returns the grades missing from have for every answered cell,
// by response key, and how many there are. It reads the texts of those
// answers only.
func (g *Grader) regrade(status map[string]bool, have func(version string) (map[string]model.Grade, error),
	st interface {
		Response(key string) (model.Response, error)
	}) (map[string][]model.Grade, int, error) {
	added := map[string][]model.Grade{}
	n := 0
	for ri, rule := range g.plan.Audit.Rules {
		if !rule.HasPredicate() {
			continue // nothing grades its answers
		}
		have, err := have(rule.Predicate.Version)
		if err != nil {
			return nil, 0, err
		}
		graded := map[string]bool{}
		for _, ci := range g.plan.cellsOfRule(ri) {
			cell := g.plan.Cells[ci]
			if !status[cell.Key] || graded[cell.Key] {
				continue
			}
			if _, ok := have[cell.Key]; ok {
				continue
			}
			graded[cell.Key] = true
			r, err := st.Response(cell.Key)
			if err != nil {
				return nil, n, err
			}
			gr, err := g.gradeOne(ri, rule.Cases[cell.Case], r.Text)
			if err != nil {
				return nil, n, err
			}
			added[cell.Key] = append(added[cell.Key], gr)
			n++
		}
	}
	return added, n, nil
}

// cellsOfRule returns the indices of the cells of one rule, in plan order.
// The slice is the plan's own: do not modify it.
func (p *Plan) cellsOfRule(rule int) []int { return p.ruleCells[rule] }

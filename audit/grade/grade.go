package grade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/grade/execgrade"
	"github.com/auditor-dev/auditor/model"
)

// Grader grades responses with the current predicate of every rule whose
// cells use them. A response can serve several rules (a sweep's shared
// baseline), so it can get several predicate grades, each recording its
// predicate's version. A Grader is safe for concurrent use.
type Grader struct {
	plan  *audit.Plan
	preds *Predicates

	mu   sync.Mutex
	exec map[string]*execgrade.Grader // by predicate version, started on first use
	ctx  context.Context
	// approve, when set, must say yes before an [exec] command starts
	// (RequireApproval); approval remembers its answer by predicate
	// version, and denied the commands it refused, by digest.
	approve  Approver
	approval map[string]error
	approved map[string]audit.ExecCommand // predicate version: the command as approved
	denied   map[string]audit.ExecCommand
}

// NewGrader returns a grader for the plan's rules that grades with the
// predicates current in preds. Exec predicates are started lazily under
// ctx; Close stops them.
func NewGrader(ctx context.Context, p *audit.Plan, preds *Predicates) *Grader {
	return &Grader{plan: p, preds: preds, exec: map[string]*execgrade.Grader{}, ctx: ctx,
		approval: map[string]error{}, approved: map[string]audit.ExecCommand{}, denied: map[string]audit.ExecCommand{}}
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
	g.exec = map[string]*execgrade.Grader{}
	return first
}

// Grade returns the predicate grades of a response for every rule whose
// cells use it. Errored responses get no grades: errors are their own state.
// A predicate that cannot grade (an [exec] command not approved, or one
// that failed) gives no grade; the others still do, and the first such
// error is returned.
func (g *Grader) Grade(r model.Response) ([]model.Grade, error) {
	if !r.OK() {
		return nil, nil
	}
	var grades []model.Grade
	var first error
	done := map[string]bool{} // predicate version: one grade per version
	// The joint variant's cells are graded as the lines' and suites' own.
	cells := make([]audit.Cell, 0, len(g.plan.ByKey[r.Key]))
	for _, ci := range g.plan.ByKey[r.Key] {
		cells = append(cells, g.plan.Cells[ci])
	}
	var jointReg []int
	if sp := g.plan.Ship; sp != nil {
		for _, ci := range sp.ByKey[r.Key] {
			cells = append(cells, sp.Cells[ci])
		}
		jointReg = sp.RegressionByKey[r.Key]
	}
	for _, cell := range cells {
		rule := g.plan.Audit.Rules[cell.Rule]
		pred := g.preds.Of(cell.Rule)
		if done[pred.Version] || !rule.HasPredicate() {
			continue
		}
		done[pred.Version] = true
		gr, err := g.gradeOne(cell.Rule, pred, rule.Cases[cell.Case], r.Text)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		grades = append(grades, gr)
	}
	regCells := make([]RegressionCellRef, 0, len(g.plan.RegressionByKey[r.Key])+len(jointReg))
	for _, ci := range g.plan.RegressionByKey[r.Key] {
		regCells = append(regCells, RegressionCellRef{g.plan.Regression[ci].Suite, g.plan.Regression[ci].Case})
	}
	for _, ci := range jointReg {
		regCells = append(regCells, RegressionCellRef{g.plan.Ship.Regression[ci].Suite, g.plan.Ship.Regression[ci].Case})
	}
	for _, cell := range regCells {
		pred := g.preds.Suite(cell.Suite)
		if done[pred.Version] {
			continue
		}
		done[pred.Version] = true
		suite := g.plan.Audit.Regressions[cell.Suite]
		gr, err := g.gradeWith(suite.PredicatePath, pred, suite.Cases[cell.Case], r.Text)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		grades = append(grades, gr)
	}
	return grades, first
}

// RegressionCellRef names a suite's case: what grading one of its answers
// needs.
type RegressionCellRef struct{ Suite, Case int }

// hasVersion reports whether one of gs is by the predicate version v.
func hasVersion(gs []model.Grade, v string) bool {
	for _, g := range gs {
		if g.Version == v {
			return true
		}
	}
	return false
}

// GradeWith grades one answer of rule ri's case c with pred: its checks,
// then its [exec] grader when the checks pass.
func (g *Grader) GradeWith(ri int, pred *model.Predicate, c model.Case, text string) (model.Grade, error) {
	return g.gradeOne(ri, pred, c, text)
}

func (g *Grader) gradeOne(ruleIdx int, pred *model.Predicate, c model.Case, text string) (model.Grade, error) {
	return g.gradeWith(g.plan.Audit.Rules[ruleIdx].PredicatePath, pred, c, text)
}

// gradeWith grades with pred, read from path (for errors): its checks,
// then its [exec] grader when the checks pass.
func (g *Grader) gradeWith(path string, pred *model.Predicate, c model.Case, text string) (model.Grade, error) {
	if len(pred.Exec) > 0 {
		// Checked before the checks run: a rule whose command may not run
		// gets no grade at all, rather than grades from its checks alone,
		// which would count only the failures.
		if err := g.checkApproved(pred); err != nil {
			return model.Grade{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	gr := pred.Grade(c, text)
	if !gr.Pass || len(pred.Exec) == 0 {
		return gr, nil
	}
	e, err := g.execFor(path, pred)
	if err != nil {
		return gr, err
	}
	pass, reason, err := e.Grade(c, text)
	if err != nil {
		return gr, fmt.Errorf("%s: [exec] %w", path, err)
	}
	gr.Pass, gr.Reason = pass, reason
	if pass {
		gr.Reason = ""
	}
	return gr, nil
}

func (g *Grader) execFor(path string, pred *model.Predicate) (*execgrade.Grader, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.exec[pred.Version]; ok {
		return e, nil
	}
	opts := execgrade.Options{Argv: pred.Exec, Dir: g.plan.Audit.Dir}
	if g.approve != nil {
		// The approval was of the files' content when it was checked: the
		// grader runs from a private copy of exactly those bytes, made
		// afresh at every start (first start or restart), so a file
		// edited since (while a long run or the app is open) or swapped
		// between the check and the interpreter's open never runs.
		approved := g.approved[pred.Version]
		opts.Prepare = func() (execgrade.Launch, error) {
			st, err := audit.StageExec(approved)
			if errors.Is(err, audit.ErrExecChanged) {
				now, rerr := audit.ResolveExec(pred.Exec, g.plan.Audit.Dir)
				if rerr != nil {
					now = approved
				}
				return execgrade.Launch{}, fmt.Errorf("%s: %w (a file under %s changed since it was approved; a grader that writes into its own folder changes what was approved: write to $TMPDIR)",
					path, &NotApprovedError{Commands: []audit.ExecCommand{now}}, strings.Join(approved.Folders, ", "))
			}
			if err != nil {
				return execgrade.Launch{}, fmt.Errorf("%s: %w", path, err)
			}
			if stagedHook != nil {
				stagedHook()
			}
			return execgrade.Launch{Argv: st.Argv, Dir: st.Dir, Done: func() { _ = st.Remove() }, Remove: st.Root}, nil
		}
	}
	e, err := execgrade.StartOptions(g.ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: [exec] %w", path, err)
	}
	g.exec[pred.Version] = e
	return e, nil
}

// stagedHook, when set by a test, runs between the check of a grader's
// files (its private copy made) and its start: where a file swapped in
// the audit folder must not reach.
var stagedHook func()

// Sink grades every response the runner finishes and hands both to the
// writer. It satisfies runner.Sink. A grading failure (an exec predicate that
// crashed) does not lose the response: it is stored ungraded and graded again
// by Regrade before results are shown.
type Sink struct {
	Grader *Grader
	Writer audit.Writer
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

// Missing grades, with the current predicates, every answered cell whose
// answer has no grade from its rule's current predicate version, reading
// the texts of those answers only. status says which keys hold an answer;
// have returns the grades a version has given, by response key. It makes no
// model calls and stores nothing: it returns the new grades by response key
// and how many there are.
func (g *Grader) Missing(status map[string]bool, have func(version string) map[string]model.Grade, st audit.Reader) (map[string][]model.Grade, int, error) {
	added := map[string][]model.Grade{}
	n := 0
	for ri, rule := range g.plan.Audit.Rules {
		if !rule.HasPredicate() {
			continue // nothing grades its answers
		}
		pred := g.preds.Of(ri)
		if len(pred.Exec) > 0 && errors.Is(g.checkApproved(pred), ErrExecNotApproved) {
			continue // its answers stay ungraded; Denied names the command
		}
		done := have(pred.Version)
		graded := map[string]bool{}
		for _, cell := range g.plan.GradedCellsOfRule(ri) {
			if !status[cell.Key] || graded[cell.Key] {
				continue
			}
			if _, ok := done[cell.Key]; ok {
				continue
			}
			graded[cell.Key] = true
			r, err := st.Response(cell.Key)
			if err != nil {
				return nil, n, err
			}
			gr, err := g.gradeOne(ri, pred, rule.Cases[cell.Case], r.Text)
			if err != nil {
				return nil, n, err
			}
			added[cell.Key] = append(added[cell.Key], gr)
			n++
		}
	}
	// The regression suites' answers, each graded by its suite's current
	// predicate.
	graded := map[string]bool{} // version + key: a key two suites share with one predicate is graded once
	haveOf := map[string]map[string]model.Grade{}
	for _, cell := range g.plan.GradedRegressionCells() {
		pred := g.preds.Suite(cell.Suite)
		id := pred.Version + "\x00" + cell.Key
		if !status[cell.Key] || graded[id] {
			continue
		}
		if len(pred.Exec) > 0 && errors.Is(g.checkApproved(pred), ErrExecNotApproved) {
			continue // its answers stay ungraded; Denied names the command
		}
		done, ok := haveOf[pred.Version]
		if !ok {
			done = have(pred.Version)
			haveOf[pred.Version] = done
		}
		if _, ok := done[cell.Key]; ok || hasVersion(added[cell.Key], pred.Version) {
			continue
		}
		graded[id] = true
		r, err := st.Response(cell.Key)
		if err != nil {
			return nil, n, err
		}
		suite := g.plan.Audit.Regressions[cell.Suite]
		gr, err := g.gradeWith(suite.PredicatePath, pred, suite.Cases[cell.Case], r.Text)
		if err != nil {
			return nil, n, err
		}
		added[cell.Key] = append(added[cell.Key], gr)
		n++
	}
	return added, n, nil
}

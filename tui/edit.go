package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// PredicateFile is a rule's predicate file read again after it changed on
// disk: parsed, or why it could not be. A watcher outside the app (it does
// I/O) sends them through LabelOptions.Edits.
type PredicateFile struct {
	Rule      int              // index into the audit's rules
	Predicate *model.Predicate // nil when Err is set
	// Err says why the file could not be used: for a syntax error, an
	// *model.InputError naming the file and line. Nothing changes then.
	Err error
}

// editState follows edited predicates: the latest edit of each rule (a
// re-grade overtaken by a later save is dropped), and edits saved during a
// run, applied when it ends.
type editState struct {
	ch      <-chan PredicateFile
	gen     map[int]int
	pending map[int]*model.Predicate
}

func newEditState(ch <-chan PredicateFile) editState {
	return editState{ch: ch, gen: map[int]int{}, pending: map[int]*model.Predicate{}}
}

// waitEdit waits for the next edited predicate file; Update re-arms it
// after each one.
func waitEdit(ch <-chan PredicateFile) tea.Cmd {
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		f, ok := <-ch
		return predicateFileMsg{file: f, closed: !ok}
	}
}

// predicateFile starts re-grading with an edited predicate, or says why it
// does not: a parse error (with its file and line), an unchanged file, an
// [exec] grader, or a run going (the edit waits for its end: the run's
// grader reads the predicate from other goroutines).
func (a *App) predicateFile(msg predicateFileMsg) tea.Cmd {
	if msg.closed {
		return nil
	}
	next := waitEdit(a.edits.ch)
	f := msg.file
	rules := a.c.plan.Audit.Rules
	if f.Rule < 0 || f.Rule >= len(rules) {
		return next
	}
	rule := rules[f.Rule]
	switch {
	case f.Err != nil:
		a.setStatus(fmt.Sprintf("L%d predicate unchanged: %s", rule.Line, shortFileError(f.Err)), true)
		return next
	case f.Predicate == nil:
		return next
	case f.Predicate.Version == a.c.tally.PredicateVersion(f.Rule):
		delete(a.edits.pending, f.Rule)
		a.edits.gen[f.Rule]++ // a re-grade of an intermediate save is now stale
		a.setStatus(fmt.Sprintf("L%d predicate saved, unchanged (%s)", rule.Line, report.ShortVersion(f.Predicate.Version)), false)
		return tea.Batch(next, a.clearStatusLater())
	case len(f.Predicate.Exec) > 0:
		a.setStatus(fmt.Sprintf("L%d predicate has an [exec] grader: edits are re-graded when next opened", rule.Line), false)
		return next
	case a.c.live.running():
		a.edits.pending[f.Rule] = f.Predicate
		a.setStatus(fmt.Sprintf("L%d predicate %s saved: re-graded when the run ends",
			rule.Line, report.ShortVersion(f.Predicate.Version)), false)
		return next
	}
	return tea.Batch(next, a.regrade(f.Rule, f.Predicate))
}

// shortFileError formats an error with the file's base name, so the line
// number and the message fit on the status line: the user knows which file
// they just saved.
func shortFileError(err error) string {
	var ie *model.InputError
	if errors.As(err, &ie) && ie.File != "" {
		short := *ie
		short.File = filepath.Base(ie.File)
		return oneLine(short.Error())
	}
	return oneLine(err.Error())
}

// afterRun applies the predicate edits saved while the run was going.
func (a *App) afterRun() tea.Cmd {
	var cmds []tea.Cmd
	rules := make([]int, 0, len(a.edits.pending))
	for ri := range a.edits.pending {
		rules = append(rules, ri)
	}
	sort.Ints(rules)
	for _, ri := range rules {
		cmds = append(cmds, a.regrade(ri, a.edits.pending[ri]))
		delete(a.edits.pending, ri)
	}
	return tea.Batch(cmds...)
}

// regrade starts grading every answered response of rule ri with p, off
// the update loop.
func (a *App) regrade(ri int, p *model.Predicate) tea.Cmd {
	a.edits.gen[ri]++
	job := regradeJob{gen: a.edits.gen[ri], rule: ri, pred: p, items: regradeItems(a.c.plan, a.c.tally, ri)}
	a.setStatus(fmt.Sprintf("L%d predicate %s saved: re-grading %d answers…",
		a.c.plan.Audit.Rules[ri].Line, report.ShortVersion(p.Version), len(job.items)), false)
	return regradeCmd(a.opts.Responses, job)
}

// regradeItem is one answered response of a rule and the case it answers.
type regradeItem struct {
	key  string
	kase *model.Case
}

// regradeJob is what a re-grade needs, captured in Update: the command
// reads no model field.
type regradeJob struct {
	gen, rule int
	pred      *model.Predicate
	items     []regradeItem
}

// regradeItems lists the distinct answered responses of a rule's cells,
// each with its case.
func regradeItems(p *audit.Plan, t *evidence.Tally, ri int) []regradeItem {
	rule := p.Audit.Rules[ri]
	seen := map[string]bool{}
	var out []regradeItem
	for _, c := range p.Cells {
		if c.Rule != ri || seen[c.Key] || !t.Answered(c.Key) {
			continue
		}
		seen[c.Key] = true
		out = append(out, regradeItem{key: c.Key, kase: &rule.Cases[c.Case]})
	}
	return out
}

// regradeCmd grades the job's responses from their stored text: no model
// calls. It runs as a command.
func regradeCmd(src ResponseSource, job regradeJob) tea.Cmd {
	return func() tea.Msg {
		start := time.Now()
		grades, err := job.run(src)
		return regradedMsg{gen: job.gen, rule: job.rule, pred: job.pred, grades: grades, took: time.Since(start), err: err}
	}
}

// run reads and grades the responses, spread over the CPUs: a predicate is
// safe for concurrent use, and so is the store.
func (j regradeJob) run(src ResponseSource) (map[string]model.Grade, error) {
	if src == nil {
		return nil, fmt.Errorf("no store to read the answers from")
	}
	out := make([]model.Grade, len(j.items))
	workers := min(runtime.GOMAXPROCS(0), max(len(j.items)/256, 1))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(j.items); i += workers {
				it := j.items[i]
				r, err := src.Response(it.key)
				if err != nil {
					errs[w] = fmt.Errorf("reading answer %s: %w", it.key, err)
					return
				}
				out[i] = j.pred.Grade(*it.kase, r.Text)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	grades := make(map[string]model.Grade, len(out))
	for i, it := range j.items {
		grades[it.key] = out[i]
	}
	return grades, nil
}

// regraded swaps an edited predicate in once its grades are ready, if no
// later save overtook it: the rule's predicate changes only here, in
// Update, where the grid reads it. Results, the grid, the verdicts and the
// label screen follow. The grades and the version are then stored.
func (a *App) regraded(msg regradedMsg) tea.Cmd {
	if msg.gen != a.edits.gen[msg.rule] {
		return nil
	}
	rule := a.c.plan.Audit.Rules[msg.rule]
	if msg.err != nil {
		a.setStatus(fmt.Sprintf("L%d predicate not applied, re-grading failed: %s", rule.Line, oneLine(msg.err.Error())), true)
		return nil
	}
	if a.c.live.running() { // a run started while grading
		a.edits.pending[msg.rule] = msg.pred
		return nil
	}
	before := caught(a.c, msg.rule, a.c.tally.PredicateVersion(msg.rule))
	stored := make(map[string][]model.Grade, len(msg.grades))
	for k, g := range msg.grades {
		stored[k] = []model.Grade{g}
	}
	a.c.tally.SetPredicate(msg.rule, msg.pred, msg.grades)
	after := caught(a.c, msg.rule, msg.pred.Version)
	a.recompute()
	// Recall here is the raw count of labelled violations caught, the
	// same labels before and after: "recall 24/31 → 29/31".
	recall := "recall " + before + " → " + after
	if before == "—" && after == "—" {
		recall = "no labelled violations to measure recall on"
	}
	a.setStatus(fmt.Sprintf("L%d predicate %s at %s: %d re-graded, %d ms · %s",
		rule.Line, report.ShortVersion(msg.pred.Version), a.c.now.Format("15:04:05"),
		len(msg.grades), msg.took.Milliseconds(), recall), false)
	if a.c.readOnly != nil {
		// In use on this screen; the writing process stores grades with
		// the predicate it has, and the next writer regrades from the file.
		a.setStatus(a.c.readOnly.why(fmt.Sprintf("L%d predicate %s applied here, its grades not stored",
			rule.Line, report.ShortVersion(msg.pred.Version))), false)
		return nil
	}

	return persistPredicate(a.desk.store, stored, a.c.now, msg.rule, rule.Line, msg.pred.Version)
}

// caught is a grader version's raw recall on every labelled answer of a
// rule, every model pooled: "24/31".
func caught(c *Common, ri int, version string) string {
	g := labels.Grades{Name: model.PredicateGrader, Version: version, ByKey: c.tally.GraderGrades(version)}
	q := c.tally.MeasureGrader(ri, -1, g, c.tally.Labels())
	return countText(q.Recall)
}

// persistPredicate stores an edited predicate's grades and dates its
// version in the history of the rule on line; it runs as a command.
func persistPredicate(st LabelStore, grades map[string][]model.Grade, now time.Time, ri, line int, version string) tea.Cmd {
	if st == nil {
		return nil
	}
	return func() tea.Msg {
		err := st.PutGrades(grades)
		if err == nil {
			err = labels.RecordPredicateVersion(st, line, version, now)
		}
		return predicateSavedMsg{rule: ri, version: version, err: err}
	}
}

// predicateSaved reports a failed store, and refreshes the version history
// the label screen's results show.
func (a *App) predicateSaved(msg predicateSavedMsg) tea.Cmd {
	if msg.err != nil {
		a.setStatus(fmt.Sprintf("the edited predicate is in use but its grades were not stored: %s", oneLine(msg.err.Error())), true)
		return nil
	}
	return a.label.predicateSaved()
}

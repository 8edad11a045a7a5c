// Package workbench is auditor's use-case layer. It opens an audit (reads
// the files, opens the store, re-grades what a predicate edit left
// ungraded, tallies what is stored) and runs it (the answers, then the
// judges, then the judges' re-asks) behind one Observer, which the
// interactive screen and the headless progress printer both implement.
// Providers are built here and nowhere else.
//
// The command line parses flags, picks an observer and turns an Outcome
// into an exit code; everything between the audit file and the results is
// here, visited once per run.
package workbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/store"
)

// DBName is the store's file name, beside the audit file.
const DBName = "auditor.db"

// Session is an audit opened for work: its files loaded, its plan laid
// out, and (after Open) its store open, its answers re-graded with the
// current predicates and tallied.
//
// A Session is used by one goroutine at a time, except that Run may go on
// in another goroutine while the screen reads the Tally it was given
// before the run began.
type Session struct {
	// fileMu makes SaveLabelFile the label file's one writer.
	fileMu sync.Mutex
	// labelFileStale is set when Open finds the label file missing or
	// behind the store (a line's text recorded anew): Open writes it.
	labelFileStale bool
	Audit          *audit.Audit
	Plan           *audit.Plan
	// Store is the audit's store; nil after Load, or after Open with
	// IfExists when nothing has been stored yet.
	Store *store.Store
	// Tally holds what is stored, graded with the current predicates; nil
	// until Open. Refresh reads it again after a run.
	Tally *evidence.Tally
	// Regraded counts the stored answers Open graded with a predicate
	// version they had no grade from (an edited predicate): no calls.
	Regraded int
	// LabelsMerged counts the label records Open took from the label file
	// (LabelFilePath) that the store did not hold.
	LabelsMerged int

	// preds holds every rule's current predicate; the grader and every
	// tally share it, so an edit applied on the screen is what a run grades
	// with next and what the results after the screen count with.
	preds  *grade.Predicates
	grader *grade.Grader
	now    func() time.Time
	// approvals holds the user's [exec] approvals; nil, with approvalsErr
	// saying why, when there is nowhere to keep them (nothing is approved).
	approvals    *approvals
	approvalsErr error
	// mem holds the grades a read-only session gave stored answers (an
	// edited predicate) and could not store; nil until Refresh makes one.
	mem *gradesInMemory
}

// Access says how Open treats the store.
type Access int

const (
	// Write opens the store for writing, creating it if needed, and
	// records each rule's text and predicate version, so later edits are
	// dated and a moved line is caught.
	Write Access = iota
	// StoreOnly is Write without the Tally (exports and imports, which
	// read and write the store directly); Refresh builds it when needed.
	StoreOnly
	// IfExists opens an existing store to read it, records nothing and
	// builds no Tally (what `plan` needs: what is stored, not what it
	// says); a missing store is not an error (nothing has run yet) and
	// leaves Store nil.
	IfExists
)

// Options adjust how an audit is opened.
type Options struct {
	Samples int // overrides the audit's samples per case when > 0
	Access  Access
	Now     func() time.Time // nil: time.Now
	// AllowLarge lays out a plan above audit.MaxCells; without it such a
	// plan is refused before anything is built.
	AllowLarge bool
	// Exec says whether [exec] predicate commands may run: only approved
	// ones by default (ExecSkip).
	Exec ExecPolicy
	// Approvals is the file of the user's [exec] approvals; "" means
	// DefaultApprovalsPath.
	Approvals string
	// ApproveOutside are the folders outside the audit folder that the
	// user named for ExecApprove (run --allow-exec-outside): a command
	// naming a file outside the audit folder's tree is approved only when
	// its folder lies under one of them.
	ApproveOutside []string
	// RefusePlaceholders makes Open return a *PlaceholderError, before the
	// store is touched, when a case or predicate still holds an example
	// init wrote (what a run and a pilot, which pay for answers, need).
	RefusePlaceholders bool
	// Read lets Open read what is stored so far when another auditor
	// process (a run, the app) holds the store for writing, instead of
	// failing: the store is opened with store.OpenRead, from a copy that
	// process publishes, and the session writes nothing (ReadOnly).
	Read bool
}

// ErrTooLarge is a plan above audit.MaxCells that was not asked for.
var ErrTooLarge = errors.New("plan too large")

// Load reads and validates the audit and lays out its plan, without
// touching the store. Problems with the user's files are
// *model.InputError naming the file, line and field.
func Load(path string, samples int) (*Session, error) { return load(path, samples, true) }

func load(path string, samples int, allowLarge bool) (*Session, error) {
	if samples < 0 || samples > model.MaxSamples {
		return nil, fmt.Errorf("samples %d: need 1 to %d", samples, model.MaxSamples)
	}
	counter, err := prompts.NewCounter()
	if err != nil {
		return nil, fmt.Errorf("token counter: %w", err)
	}
	a, err := audit.Load(path, counter)
	if err != nil {
		return nil, err
	}
	if n := a.CellCount(samples); n > audit.MaxCells && !allowLarge {
		return nil, fmt.Errorf("%w: %d cells (samples x models x cases x variants, regression suites included; %s), over the %d auditor lays out unless asked: lower --samples, or pass --allow-large if you mean it", ErrTooLarge, n, largestCaseFile(a), audit.MaxCells)
	}
	p := audit.NewPlan(a, audit.PlanOptions{Samples: samples})
	if _, err := p.Design(); err != nil {
		return nil, &model.InputError{File: a.Path, Field: "looks",
			Msg: fmt.Sprintf("%d looks need at least %d samples a case; the plan has %d (lower looks, or raise samples)", a.File.Looks, a.File.Looks, p.Samples)}
	}
	if err := p.CheckSharedGrades(); err != nil {
		return nil, err
	}
	return &Session{Audit: a, Plan: p, preds: grade.NewPredicates(a), now: time.Now}, nil
}

// Open loads the audit, opens its store, grades every stored answer that
// has no grade from its rule's current predicate (no calls), and tallies
// what is stored. ctx bounds the exec predicates the session starts; Close
// stops them.
func Open(ctx context.Context, path string, o Options) (*Session, error) {
	s, err := load(path, o.Samples, o.AllowLarge)
	if err != nil {
		return nil, err
	}
	if o.Now != nil {
		s.now = o.Now
	}
	if o.RefusePlaceholders {
		if pe := s.Placeholders(); pe != nil {
			return nil, pe
		}
	}
	if err := s.openStore(o.Access, o.Read); err != nil {
		return nil, err
	}
	if o.Access != IfExists && s.Store != nil && !s.ReadOnly() {
		if s.LabelsMerged, err = s.mergeLabelFile(); err != nil {
			s.Close()
			return nil, err
		}
	}
	if o.Access == Write && s.Store != nil {
		// A label file that a full disk kept from being written, or that
		// lacks a line's new text, is written now; a current one is left.
		if _, err := os.Stat(s.LabelFilePath()); errors.Is(err, os.ErrNotExist) {
			s.labelFileStale = true
		}
		if s.labelFileStale {
			if err := s.SaveLabelFile(); err != nil {
				s.Close()
				return nil, fmt.Errorf("labels are safe in %s, but %s was not written: %w", DBName, s.LabelFilePath(), err)
			}
		}
	}
	s.grader = grade.NewGrader(ctx, s.Plan, s.preds)
	if err := s.applyExecPolicy(o.Exec, o.Approvals, o.ApproveOutside); err != nil {
		s.Close()
		return nil, err
	}
	if o.Access != Write {
		return s, nil
	}
	if err := s.Refresh(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// ruleHistoryLens counts the recorded texts of each rule.
func (s *Session) ruleHistoryLens() []int {
	out := make([]int, len(s.Audit.Rules))
	for i, r := range s.Audit.Rules {
		if h, err := evidence.RuleHistory(s.Store, r); err == nil {
			out[i] = len(h)
		}
	}
	return out
}

// largestCaseFile names the case file with the most cases, which a plan
// too large most likely owes its size to: "line2.jsonl holds 60000 cases".
func largestCaseFile(a *audit.Audit) string {
	path, n := "", 0
	for _, r := range a.Rules {
		if len(r.Cases) > n {
			path, n = r.CasesPath, len(r.Cases)
		}
	}
	for _, r := range a.Regressions {
		if len(r.Cases) > n {
			path, n = r.CasesPath, len(r.Cases)
		}
	}
	return fmt.Sprintf("%s holds %d cases", model.Sanitize(path), n)
}

// Close stops the session's exec predicates and closes its store.
func (s *Session) Close() {
	if s.grader != nil {
		s.grader.Close()
	}
	if s.Store != nil {
		s.Store.Close()
	}
}

// DBPath is where the audit's store lives.
func (s *Session) DBPath() string { return filepath.Join(s.Audit.Dir, DBName) }

// Simulated reports whether any model under test is the simulated one.
func (s *Session) Simulated() bool {
	for _, m := range s.Audit.File.Models {
		if m.Provider == "sim" {
			return true
		}
	}
	return false
}

// Refresh reads the stored state into a new Tally and grades what has no
// grade from the current predicates, counting those in Regraded. Call it
// after a run: a run on the screen updates the screen's tally, a headless
// run none. When grading fails (an exec predicate) the Tally is still set,
// with the answers it could not grade left ungraded, and the error says
// why.
func (s *Session) Refresh() error {
	if err := s.rereadJudges(); err != nil {
		return err
	}
	t, err := evidence.NewTally(s.Plan, s.preds, s.Store)
	if err != nil {
		return err
	}
	s.Tally = t
	var st audit.Store = s.Store
	if s.ReadOnly() {
		if s.mem == nil {
			s.mem = &gradesInMemory{Store: s.Store, added: map[string]map[string]model.Grade{}}
		}
		st = s.mem
	}
	n, err := t.Regrade(s.grader, st)
	s.Regraded += n
	if err != nil {
		return fmt.Errorf("re-grading stored answers: %w", err)
	}
	return nil
}

// judgeRuleMeta records the rule the store's judge grades were read by.
const judgeRuleMeta = "judge.verdict_rule"

// rereadJudges grades, once, every stored judge answer again under the
// current verdict rule (model.JudgeVerdictRule), from the stored text and
// with no calls: grades read by an earlier rule (the last VERDICT line
// won, even one quoted from the judged answer) are no longer current.
func (s *Session) rereadJudges() error {
	// A read-only session leaves it to the writer, which did it when it
	// opened the store (this version of auditor does, at every open).
	if len(s.Audit.Judges) == 0 || s.Store == nil || s.ReadOnly() {
		return nil
	}
	if rule, _, err := s.Store.Meta(judgeRuleMeta); err != nil || rule == model.JudgeVerdictRule {
		return err
	}
	status, err := s.Store.Status()
	if err != nil {
		return err
	}
	jp, err := s.Plan.StoredJudgeCalls(s.Store, status)
	if err != nil {
		return err
	}
	if _, err := grade.Backfill(jp, s.Audit.Judges, s.Store); err != nil {
		return fmt.Errorf("reading the judges' stored answers again: %w", err)
	}
	return s.Store.SetMeta(judgeRuleMeta, model.JudgeVerdictRule)
}

// PredicateVersions returns the version of every rule's current predicate,
// by rule index.
func (s *Session) PredicateVersions() []string { return s.preds.Versions() }

// AllPredicateVersions is PredicateVersions followed by the current
// version of each regression suite's predicate, by suite index.
func (s *Session) AllPredicateVersions() []string {
	return append(s.preds.Versions(), s.preds.SuiteVersions()...)
}

// Results computes every rule's evidence and verdict from the tally.
func (s *Session) Results() (*evidence.Results, error) { return s.Tally.Results() }

// Spend is what the audit spent: every paid call in the store's spend
// ledger (answers asked again and judge calls included), at the prices of
// the time. A store written before the ledger existed counts its stored
// responses at today's prices as well (Open with Write access writes them
// into the ledger once).
func (s *Session) Spend() (audit.Spend, error) {
	if s.Store == nil {
		return audit.Spend{}, nil
	}
	legacy, _, err := s.legacyCharges()
	if err != nil {
		return audit.Spend{}, err
	}
	return audit.SpendOf(func(fn func(model.Paid) error) error {
		for _, r := range legacy {
			if err := fn(model.Paid{Charge: *r.Charge, Model: r.Model, PromptTokens: r.PromptTokens, CachedTokens: r.CachedTokens,
				CacheWriteTokens: r.CacheWriteTokens, CompletionTokens: r.CompletionTokens, Batched: r.Batched, At: r.At}); err != nil {
				return err
			}
		}
		return s.Store.ForEachPaid(fn)
	})
}

// legacyCharges returns the charges of a store written before its spend
// ledger (audit.Plan.LegacyCharges), and whether the ledger is complete
// (then there are none).
func (s *Session) legacyCharges() ([]model.Response, bool, error) {
	complete, err := s.Store.LedgerComplete()
	if err != nil || complete {
		return nil, complete, err
	}
	legacy, err := s.Plan.LegacyCharges(s.Store.ForEachResponseMeta)
	return legacy, false, err
}

// Status returns the stored status of every call (key -> answered ok), read
// from the store; empty when there is no store.
func (s *Session) Status() (map[string]bool, error) {
	if s.Store == nil {
		return map[string]bool{}, nil
	}
	return s.Store.Status()
}

// openStore opens the store as access says and, for Write, checks that
// audited lines still read as they did when first run and dates each
// predicate version and rule text. With read, a store another process
// writes is opened read-only instead of refused, and nothing is recorded.
func (s *Session) openStore(access Access, read bool) error {
	if access == IfExists {
		if _, err := os.Stat(s.DBPath()); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	open := store.Open
	if read {
		open = store.OpenNow // no second spent waiting for a run's lock
	}
	st, err := open(s.DBPath())
	if errors.Is(err, store.ErrLocked) && read {
		st, err = store.OpenRead(s.DBPath(), 0)
	}
	if err != nil {
		return err
	}
	s.Store = st
	record := access != IfExists && !st.ReadOnly()
	err = s.checkRuleTexts(record)
	if err == nil && record {
		now := s.now()
		// Date each predicate version the first time it is seen, so
		// recall per version ("24/31 before the edit, 29/31 after") can
		// be told apart; and each rule's text, so cases written before a
		// rewording can be told from those written after.
		for ri, r := range s.Audit.Rules {
			if err == nil {
				err = labels.RecordPredicateVersion(st, r.Line, s.preds.Version(ri), now)
			}
		}
		if err == nil {
			before := s.ruleHistoryLens()
			err = evidence.RecordRuleTexts(st, s.Audit, now)
			// A new text of a line belongs in the label file with the
			// labels it dates.
			s.labelFileStale = !slices.Equal(before, s.ruleHistoryLens())
		}
		if err == nil {
			// A store from before the spend ledger: its answers' charges
			// go into the ledger once, so a budget counts them.
			legacy, complete, lerr := s.legacyCharges()
			if err = lerr; err == nil && !complete {
				err = st.SeedLedger(legacy)
			}
		}
	}
	if err != nil {
		st.Close()
		s.Store = nil
		return err
	}
	return nil
}

// ReadOnly reports whether the session reads a store another auditor
// process writes (Options.Read): nothing it does is stored.
func (s *Session) ReadOnly() bool { return s.Store != nil && s.Store.ReadOnly() }

// ReadNote says, for a read-only session, what it reads: "read while
// another auditor process writes auditor.db: 412 answers stored as of
// 18:55:03"; "" otherwise.
func (s *Session) ReadNote() string {
	if !s.ReadOnly() {
		return ""
	}
	status, err := s.Store.Status()
	if err != nil {
		return ""
	}
	answered := 0
	for _, ok := range status {
		if ok {
			answered++
		}
	}
	answers := "answers"
	if answered == 1 {
		answers = "answer"
	}
	how := s.Store.Reading()
	if !how.Snapshot {
		return fmt.Sprintf("read-only: %s was in use by another auditor process; %d %s stored", DBName, answered, answers)
	}
	return fmt.Sprintf("read while another auditor process writes %s: %d %s stored as of %s", DBName, answered, answers, how.AsOf.Local().Format("15:04:05"))
}

// gradesInMemory is a read-only session's store for Tally.Regrade: the
// grades an edited predicate gives stored answers are kept here, for the
// tally and the exports, and not stored (the process writing the store
// grades with the predicate it read; the next writer grades from the file).
type gradesInMemory struct {
	*store.Store
	mu    sync.Mutex
	added map[string]map[string]model.Grade // grader + NUL + version -> key -> grade
}

func (m *gradesInMemory) PutGrades(grades map[string][]model.Grade) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key, gs := range grades {
		for _, g := range gs {
			id := g.Grader + "\x00" + g.Version
			if m.added[id] == nil {
				m.added[id] = map[string]model.Grade{}
			}
			m.added[id][key] = g
		}
	}
	return nil
}

// GradesFor is the store's grades of one grader version with those kept
// here added.
func (m *gradesInMemory) GradesFor(grader, version string) (map[string]model.Grade, error) {
	g, err := m.Store.GradesFor(grader, version)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, v := range m.added[grader+"\x00"+version] {
		g[k] = v
	}
	return g, nil
}

// ExportSource is what exports read answers and grades from: the store,
// with a read-only session's grades that could not be stored added.
func (s *Session) ExportSource() report.ExportSource {
	if s.mem != nil {
		return s.mem
	}
	return s.Store
}

// checkRuleTexts compares each rule given by line number with the text that
// line had when the audit first ran: if the prompt was edited so the number
// now points at another line, results stored under it would be mislabelled.
// A rule that states its text explicitly has been confirmed by the user, so
// its record is updated instead.
func (s *Session) checkRuleTexts(record bool) error {
	for i, r := range s.Audit.Rules {
		key := fmt.Sprintf("rule-text:%d", r.Line)
		was, ok, err := s.Store.Meta(key)
		if err != nil {
			return err
		}
		if ok && was != r.Text && r.Config.Text == "" {
			return &model.InputError{File: s.Audit.Path, Line: r.Config.DefLine, Field: fmt.Sprintf("rule[%d].line", i+1),
				Msg: fmt.Sprintf("line %d of %s now reads %q, but it read %q when this audit first ran; if the rule moved, update line =; if you reworded it on purpose, add text = %q to confirm",
					r.Line, s.Audit.PromptPath, r.Text, was, r.Text)}
		}
		if record && (!ok || was != r.Text) {
			if err := s.Store.SetMeta(key, r.Text); err != nil {
				return err
			}
		}
	}
	return nil
}

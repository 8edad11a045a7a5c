// Package audit turns an audit file on disk into something runnable: it
// loads the prompt, case files and predicates the audit names, resolves each
// rule to a prompt line, builds the plan of calls (cases x variants x
// samples x models), estimates its cost, grades responses as they arrive and
// aggregates stored results into per-rule tables and verdicts.
//
// It sits between the pure domain (model, prompts) and the commands: it
// reads files, but it never talks to a model or a terminal, and it reaches
// storage only through the small interfaces it declares.
package audit

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
)

// Audit is a loaded, validated audit: everything a plan needs, read from disk.
type Audit struct {
	Path       string // the audit file as the user named it
	Dir        string // directory that relative paths are resolved against
	File       *model.AuditFile
	Prompt     *prompts.Prompt
	PromptPath string
	Rules      []*Rule
	Judges     []*Judge
	// Regressions are the frozen regression suites, in file order: each
	// runs on baseline and on every variant of every rule.
	Regressions []*Regression
	// Ship is the current joint test (the last [[ship]] table); nil when
	// the audit has made none.
	Ship    *JointTest
	Counter *prompts.Counter
}

// Regression is one [[regression]] suite: ordinary cases that should keep
// passing whatever line is changed, and the predicate that grades them. A
// case's kind selects the predicate's checks as in a rule; the suite's
// failure rate pools every kind.
type Regression struct {
	Name          string
	CasesPath     string
	PredicatePath string
	Cases         []model.Case
	// Loaded is the predicate as read when the audit was loaded; the
	// current one is in the session's grade.Predicates (see Rule.Loaded).
	Loaded *model.Predicate
	Config model.RegressionConfig
}

// Rule is one audited prompt line with its cases and predicate.
type Rule struct {
	Line          int    // 1-based line in the prompt
	Text          string // the line's text
	Tokens        int    // estimated tokens the line costs (o200k)
	CasesPath     string
	PredicatePath string
	Cases         []model.Case
	// Loaded is the predicate as read from PredicatePath when the audit was
	// loaded. An edit made while auditor runs replaces it in the session's
	// grade.Predicates, which graders and tallies read: use that for the
	// current predicate.
	Loaded *model.Predicate
	Config model.RuleConfig
	// JudgeRubricPath and JudgeRubric are the rule's judge_rubric, read;
	// empty when the rule leaves its judges their own rubrics (see
	// Judge.For).
	JudgeRubricPath, JudgeRubric string
	// Kind is the variant audited against baseline ("" is a deletion) and
	// NewText the reworded or added line. One [[rule]] with reword or add
	// loads as several Rules, one a variant, sharing cases and predicate;
	// their baseline calls are the same calls, made once.
	Kind    model.VariantKind
	NewText string
}

// HasPredicate reports whether the rule names a predicate. Only a rule with
// no input class may leave it out; its answers are then never graded, and
// its verdict rests on their length.
func (r *Rule) HasPredicate() bool { return r.PredicatePath != "" }

// Variant returns the name of the rule's variant: "-L23" for the deletion
// of line 23, "~L23" for its rewording, "+L23" for a line added after it
// (model.VariantName).
func (r *Rule) Variant() string { return model.VariantName(r.VariantKind(), r.Line) }

// Title names the rule's variant and what it does (model.VariantTitle):
// `-L23 deleted`, `~L23 reworded: "new"`, `+L23 added after 23: "new"`.
// Headings of a variant's own column or section use it.
func (r *Rule) Title() string { return model.VariantTitle(r.VariantKind(), r.Line, r.NewText) }

// Label is Title with the text a list of variants shows beside a verdict:
// a deletion also quotes the line it deletes (`-L23 deleted: "old"`).
func (r *Rule) Label() string { return model.VariantTitle(r.VariantKind(), r.Line, r.shownText()) }

// shownText is the text of the line the variant is about: the deleted line,
// or the reworded or added one.
func (r *Rule) shownText() string {
	if r.Deletion() {
		return r.Text
	}
	return r.NewText
}

// VariantKind is how the rule's variant changes the line; a Rule built
// without one is a deletion.
func (r *Rule) VariantKind() model.VariantKind {
	if r.Kind == "" {
		return model.Deletion
	}
	return r.Kind
}

// Deletion reports whether the rule audits deleting its line (rather than
// a rewording or an addition): only deletions count in the sweep's tokens.
func (r *Rule) Deletion() bool { return r.VariantKind() == model.Deletion }

// System returns the system prompt of the rule's variant.
func (r *Rule) System(p *prompts.Prompt) string {
	switch r.VariantKind() {
	case model.Rewording:
		return p.Reworded(r.Line, r.NewText)
	case model.Addition:
		return p.WithAdded(r.Line, r.NewText)
	}
	return p.Without(r.Line)
}

// Baseline is the name of the full-prompt variant.
const Baseline = "baseline"

// Load reads the audit file at path and every file it names. Problems with
// the user's files come back as *model.InputError naming the file, line and
// field; the counter estimates token counts.
func Load(path string, counter *prompts.Counter) (*Audit, error) {
	path = FilePath(path)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, &model.InputError{File: path, Msg: fmt.Sprintf("is a folder with no %s in it: give the audit file's path", DefaultFile)}
	}
	data, err := readInputMax(path, "", 0, "", MaxAuditFileBytes, "an audit file")
	if err != nil {
		return nil, err
	}
	af, err := model.ParseAudit(path, data)
	if err != nil {
		return nil, err
	}
	a := &Audit{Path: path, Dir: filepath.Dir(path), File: af, Counter: counter}

	a.PromptPath = a.resolve(af.Prompt)
	pdata, err := readInputMax(a.PromptPath, path, lineOfKey(data, "prompt"), "prompt", MaxPromptBytes, "a system prompt")
	if err != nil {
		return nil, err
	}
	if a.Prompt, err = prompts.Parse(a.PromptPath, pdata); err != nil {
		return nil, err
	}

	seen := map[int]int{} // prompt line -> index of the rule that audits it
	for i, rc := range af.Rules {
		r, err := a.loadRule(i, rc)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[r.Line]; dup {
			return nil, &model.InputError{File: path, Line: rc.DefLine, Field: fmt.Sprintf("rule[%d]", i+1),
				Msg: fmt.Sprintf("prompt line %d is already audited by rule[%d]", r.Line, j+1)}
		}
		seen[r.Line] = i
		variants, err := a.ruleVariants(i, r)
		if err != nil {
			return nil, err
		}
		a.Rules = append(a.Rules, variants...)
	}
	if err := a.loadJudges(); err != nil {
		return nil, err
	}
	for i, rc := range af.Regressions {
		reg, err := a.loadRegression(i, rc)
		if err != nil {
			return nil, err
		}
		a.Regressions = append(a.Regressions, reg)
	}
	if err := a.loadShip(); err != nil {
		return nil, err
	}
	return a, nil
}

// loadRegression reads a suite's case file and predicate, with the same
// parsers (and located errors) as a rule's.
func (a *Audit) loadRegression(i int, rc model.RegressionConfig) (*Regression, error) {
	field := func(name string) string { return fmt.Sprintf("regression[%d].%s", i+1, name) }
	r := &Regression{Name: rc.Name, Config: rc, CasesPath: a.resolve(rc.Cases), PredicatePath: a.resolve(rc.Predicate)}
	data, err := readInput(r.CasesPath, a.Path, rc.KeyLines.Cases, field("cases"))
	if err != nil {
		return nil, err
	}
	if err := countCases(r.CasesPath, data); err != nil {
		return nil, err
	}
	if r.Cases, err = model.ParseCases(r.CasesPath, data); err != nil {
		return nil, err
	}
	if data, err = readInputMax(r.PredicatePath, a.Path, rc.KeyLines.Predicate, field("predicate"), MaxPredicateBytes, "a predicate file"); err != nil {
		return nil, err
	}
	if r.Loaded, err = ParsePredicate(r.PredicatePath, data, a.Dir); err != nil {
		return nil, err
	}
	return r, nil
}

func (a *Audit) loadRule(i int, rc model.RuleConfig) (*Rule, error) {
	field := func(name string) string { return fmt.Sprintf("rule[%d].%s", i+1, name) }
	r := &Rule{Config: rc}
	switch {
	case rc.Line > 0:
		text, err := a.Prompt.Line(rc.Line)
		if err != nil {
			return nil, &model.InputError{File: a.Path, Line: rc.KeyLines.Line, Field: field("line"), Msg: inputMsg(err)}
		}
		if strings.TrimSpace(text) == "" {
			return nil, &model.InputError{File: a.Path, Line: rc.KeyLines.Line, Field: field("line"),
				Msg: fmt.Sprintf("line %d of %s is blank; there is no rule to delete there", rc.Line, a.PromptPath)}
		}
		if rc.Text != "" && strings.TrimSpace(rc.Text) != strings.TrimSpace(text) {
			msg := fmt.Sprintf("line %d of %s does not match: the audit expects %q but that line reads %q",
				rc.Line, a.PromptPath, rc.Text, text)
			if n, err := a.Prompt.FindText(rc.Text); err == nil {
				// The text is there, on another line: a wrong number, or
				// a line that moved.
				msg += fmt.Sprintf("; the expected text is on line %d: set line = %d (or leave line out and keep text)", n, n)
			} else {
				msg += "; if you reworded the line, update text (and read the README on rewording)"
			}
			return nil, &model.InputError{File: a.Path, Line: rc.KeyLines.Text, Field: field("text"), Msg: msg}
		}
		r.Line, r.Text = rc.Line, text
	default:
		n, err := a.Prompt.FindText(rc.Text)
		if err != nil {
			return nil, &model.InputError{File: a.Path, Line: rc.KeyLines.Text, Field: field("text"), Msg: inputMsg(err)}
		}
		r.Line, r.Text = n, strings.TrimRight(rc.Text, " \t")
	}
	if a.Counter != nil {
		// A deleted line takes its newline with it, hence the +"\n".
		r.Tokens = a.Counter.Count(r.Text + "\n")
	}

	if rc.JudgeRubric != "" {
		r.JudgeRubricPath = a.resolve(rc.JudgeRubric)
		var err error
		if r.JudgeRubric, err = readRubric(r.JudgeRubricPath, a.Path, rc.KeyLines.JudgeRubric, field("judge_rubric")); err != nil {
			return nil, err
		}
	}
	r.CasesPath = a.resolve(rc.Cases)
	data, err := readInput(r.CasesPath, a.Path, rc.KeyLines.Cases, field("cases"))
	if err != nil {
		return nil, err
	}
	if err := countCases(r.CasesPath, data); err != nil {
		return nil, err
	}
	if r.Cases, err = model.ParseCases(r.CasesPath, data); err != nil {
		return nil, err
	}
	if rc.Predicate == "" {
		// Only a rule with no input class may leave its predicate out
		// (model.ParseAudit enforces it): its verdict rests on the length
		// of its answers, and an empty predicate passes every answer.
		r.Loaded = NoPredicate()
		return r, nil
	}
	r.PredicatePath = a.resolve(rc.Predicate)
	data, err = readInputMax(r.PredicatePath, a.Path, rc.KeyLines.Predicate, field("predicate"), MaxPredicateBytes, "a predicate file")
	if err != nil {
		return nil, err
	}
	if r.Loaded, err = ParsePredicate(r.PredicatePath, data, a.Dir); err != nil {
		return nil, err
	}
	return r, nil
}

// ruleVariants expands a loaded rule into one Rule per variant it asks
// for: the deletion (unless delete = false), then the rewording, then the
// addition. The deletion comes first so that a rule's line finds it.
func (a *Audit) ruleVariants(i int, r *Rule) ([]*Rule, error) {
	v := r.Config.Variants
	var out []*Rule
	if !v.NoDelete {
		out = append(out, r)
	}
	if v.Reword != "" {
		if strings.TrimSpace(v.Reword) == strings.TrimSpace(r.Text) {
			return nil, &model.InputError{File: a.Path, Line: v.RewordLine, Field: fmt.Sprintf("rule[%d].reword", i+1),
				Msg: fmt.Sprintf("is the text line %d already has; a rewording must change it", r.Line)}
		}
		out = append(out, a.variantOf(r, model.Rewording, v.Reword))
	}
	if v.Add != "" {
		out = append(out, a.variantOf(r, model.Addition, v.Add))
	}
	return out, nil
}

// variantOf is r audited with kind's change instead of the deletion: same
// line, cases and predicate. Tokens is what the new text costs.
func (a *Audit) variantOf(r *Rule, kind model.VariantKind, text string) *Rule {
	c := *r
	c.Kind, c.NewText = kind, text
	if a.Counter != nil {
		c.Tokens = a.Counter.Count(text + "\n")
	}
	return &c
}

// NoPredicate is the predicate of a rule that names none: it has no checks,
// so it passes every answer.
func NoPredicate() *model.Predicate {
	return &model.Predicate{Version: "no-predicate"}
}

// DefaultFile is the audit file's name in a folder `auditor init` wrote.
const DefaultFile = "audit.toml"

// FilePath is the audit file a command line names: the path itself, or
// DefaultFile inside it when it is a folder holding one (what `init`
// writes, and what a user types next).
func FilePath(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if f := filepath.Join(path, DefaultFile); fileExists(f) {
			return f
		}
	}
	return path
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// resolve makes a path from the audit file relative to the audit's directory.
func (a *Audit) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.Dir, p)
}

// readInput reads a file the user named, turning a failure into an
// InputError that points at where the name was written (when known).
func readInput(path, from string, line int, field string) ([]byte, error) {
	return readInputMax(path, from, line, field, MaxInputBytes, "")
}

// readInputMax is readInput with a per-file limit (limits.go): a file
// over it is refused, naming the file, before it is read.
func readInputMax(path, from string, line int, field string, limit int, what string) ([]byte, error) {
	data, err := readRegular(path, limit, what)
	if err == nil {
		return data, nil
	}
	var le *limitError
	if errors.As(err, &le) {
		return nil, &model.InputError{File: path, Msg: le.Error()}
	}
	msg := fmt.Sprintf("cannot read %s: %v", path, unwrapPathError(err))
	if errors.Is(err, fs.ErrNotExist) {
		msg = fmt.Sprintf("file not found: %s", path)
	}
	if from == "" {
		return nil, &model.InputError{File: path, Msg: msg}
	}
	return nil, &model.InputError{File: from, Line: line, Field: field, Msg: msg}
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// inputMsg returns the message of an InputError without its location, for
// re-reporting it at the place in the audit file that caused it.
func inputMsg(err error) string {
	var ie *model.InputError
	if errors.As(err, &ie) {
		return ie.Msg
	}
	return err.Error()
}

// lineOfKey finds the 1-based line on which a top-level key is set, or 0.
func lineOfKey(data []byte, key string) int {
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			return 0 // past the top-level keys
		}
		if rest, ok := strings.CutPrefix(l, key); ok && strings.HasPrefix(strings.TrimSpace(rest), "=") {
			return i + 1
		}
	}
	return 0
}

// MaxInputBytes is the largest input file auditor reads: far above any
// real prompt, case file or predicate, far below what would exhaust memory.
const MaxInputBytes = 64 << 20

// ReadRegular reads a regular file of at most MaxInputBytes. Anything else
// (a device like /dev/zero, a FIFO that would block, a directory) is
// refused without reading from it: the open itself does not block, as a
// FIFO is opened non-blocking.
func ReadRegular(path string) ([]byte, error) { return readRegular(path, MaxInputBytes, "") }

// readRegular is ReadRegular with a limit of its own, checked before a
// byte is read; what names the kind of file in the refusal ("" for any
// input file).
func readRegular(path string, limit int, what string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s): auditor reads only files", st.Mode().Type())
	}
	if what != "" && st.Size() > int64(limit) {
		return nil, &limitError{size: st.Size(), limit: limit, what: what}
	}
	if st.Size() > MaxInputBytes {
		return nil, fmt.Errorf("%d bytes, over the %d MiB auditor reads", st.Size(), MaxInputBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		if what != "" {
			return nil, &limitError{size: int64(len(data)), limit: limit, what: what}
		}
		return nil, fmt.Errorf("over the %d MiB auditor reads", MaxInputBytes>>20)
	}
	return data, nil
}

// LabelFilePath is where the audit's label file lives: beside the audit
// file, named after it (roadmap.toml -> roadmap.labels.jsonl).
func (a *Audit) LabelFilePath() string {
	base := filepath.Base(a.Path)
	base = strings.TrimSuffix(base, filepath.Ext(base))
	return filepath.Join(filepath.Dir(a.Path), base+".labels.jsonl")
}

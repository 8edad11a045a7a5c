package workbench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
)

// ExecPolicy says what Open does about [exec] predicate commands, which
// run programs from the audit folder: a folder from someone else must not
// run anything because it was opened.
type ExecPolicy int

const (
	// ExecSkip starts only approved commands; the answers of a rule whose
	// command is not approved stay ungraded (reports, exports, browsing).
	ExecSkip ExecPolicy = iota
	// ExecRefuse makes Open fail with a *grade.NotApprovedError when any
	// command is not approved, before anything runs (a run without
	// --allow-exec: its grades would be missing).
	ExecRefuse
	// ExecApprove records the user's approval of every command, then runs
	// them (a run with --allow-exec, or after the user said yes).
	ExecApprove
)

// approvalKey is the key of an approved command in the user's approvals.
// It covers the folder the command runs in (absolute, symlinks resolved)
// as well as its digest: approving a grader in one folder approves nothing
// in a copy of it somewhere else.
func approvalKey(c audit.ExecCommand) string {
	dir := c.Dir
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	sum := sha256.Sum256([]byte(c.Digest + "\x00" + dir))
	return hex.EncodeToString(sum[:])
}

// ExecState is one [exec] command of the audit and whether the user
// approved it.
type ExecState struct {
	Command  audit.ExecCommand
	Lines    []int    // the prompt lines of the rules whose predicate runs it
	Suites   []string // the regression suites whose predicate runs it
	Files    []string // the predicate files that name it
	Approved bool
}

// ExecCommands returns every [exec] command the audit's current
// predicates would run, with its approval, in rule order. With no store
// (a plan before any run) nothing is approved.
func (s *Session) ExecCommands() ([]ExecState, error) {
	var out []ExecState
	at := map[string]int{}
	add := func(pred *model.Predicate, path string, line int, suite string) error {
		if len(pred.Exec) == 0 {
			return nil
		}
		c, err := audit.ResolveExec(pred.Exec, s.Audit.Dir)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		i, ok := at[c.Digest]
		if !ok {
			approved, err := s.execApproved(c)
			if err != nil {
				return err
			}
			i = len(out)
			at[c.Digest] = i
			out = append(out, ExecState{Command: c, Approved: approved})
		}
		if suite != "" {
			out[i].Suites = append(out[i].Suites, suite)
		} else {
			out[i].Lines = append(out[i].Lines, line)
		}
		out[i].Files = append(out[i].Files, path)
		return nil
	}
	for ri, r := range s.Audit.Rules {
		if err := add(s.preds.Of(ri), r.PredicatePath, r.Line, ""); err != nil {
			return nil, err
		}
	}
	for si, r := range s.Audit.Regressions {
		if err := add(s.preds.Suite(si), r.PredicatePath, 0, r.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// execApproved answers the grader's question from the user's approvals.
func (s *Session) execApproved(c audit.ExecCommand) (bool, error) {
	if s.approvals == nil {
		return false, nil
	}
	return s.approvals.has(approvalKey(c))
}

// applyExecPolicy records approvals or refuses, as p says, and makes the
// session's grader ask before it starts any command.
func (s *Session) applyExecPolicy(p ExecPolicy, approvalsPath string, outside []string) error {
	if approvalsPath == "" {
		approvalsPath, s.approvalsErr = DefaultApprovalsPath()
	}
	if approvalsPath != "" {
		s.approvals = &approvals{path: approvalsPath}
	}
	s.grader.RequireApproval(s.execApproved)
	if p == ExecSkip {
		return nil
	}
	cmds, err := s.ExecCommands()
	if err != nil {
		return err
	}
	for _, st := range cmds {
		if st.Command.Uncovered != "" {
			return &model.InputError{File: st.Files[0], Field: "exec.command",
				Msg: fmt.Sprintf("%s: %s", st.Command, st.Command.Uncovered)}
		}
		if len(st.Command.Missing) > 0 {
			// Every answer's grading would fail on it, after the calls
			// were paid for: say so before any call.
			return &model.InputError{File: st.Files[0], Field: "exec.command",
				Msg: fmt.Sprintf("%s names %s, which is not in the audit folder %s: the grader would fail on every answer",
					st.Command, strings.Join(st.Command.Missing, ", "), s.Audit.Dir)}
		}
	}
	var refused []audit.ExecCommand
	for _, st := range cmds {
		switch {
		case st.Approved:
		case p == ExecApprove && len(unnamed(st.Command.Outside, outside)) > 0:
			refused = append(refused, st.Command)
		case p == ExecApprove:
			if s.approvals == nil {
				return fmt.Errorf("cannot record the approval of %s: %w", st.Command, s.approvalsErr)
			}
			if err := s.approvals.add(approvalKey(st.Command), st.Command.String(), s.now()); err != nil {
				return err
			}
		default:
			refused = append(refused, st.Command)
		}
	}
	if len(refused) > 0 {
		return &grade.NotApprovedError{Commands: refused}
	}
	return nil
}

// unnamed returns the folders of outside that lie under none of named.
func unnamed(outside, named []string) []string {
	var out []string
	for _, f := range outside {
		covered := false
		for _, n := range named {
			covered = covered || under(f, n)
		}
		if !covered {
			out = append(out, f)
		}
	}
	return out
}

// under reports whether folder f is dir or inside it, compared as written
// and with symlinks resolved.
func under(f, dir string) bool {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	in := func(f, dir string) bool {
		rel, err := filepath.Rel(dir, f)
		return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
	}
	if in(f, dir) {
		return true
	}
	rf, err1 := filepath.EvalSymlinks(f)
	rd, err2 := filepath.EvalSymlinks(dir)
	return err1 == nil && err2 == nil && in(rf, rd)
}

// NotApproved returns the [exec] commands this session did not start
// because the user has not approved them: their rules' answers are shown
// ungraded. Ask after Open (and after a Refresh, which may meet more).
func (s *Session) NotApproved() []audit.ExecCommand {
	if s.grader == nil {
		return nil
	}
	return s.grader.Denied()
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/tui"
	"github.com/auditor-dev/auditor/workbench"
)

// openForRun opens the audit for `run`. An [exec] predicate runs a program
// from the audit folder, so a folder from someone else must not run
// anything because it was run: a command the user has not approved is
// refused (exit 2) unless --allow-exec approves it, or the user says yes
// on the terminal. The approval is recorded in the user's approvals file (not
// in auditor.db, which travels with the folder) by the command's
// digest (its words and its scripts' content), so an edited script asks
// again.
func openForRun(ctx context.Context, std Stdio, path string, f runFlags) (*workbench.Session, error) {
	o := workbench.Options{Samples: f.samples, Access: workbench.Write, AllowLarge: f.allowLarge, Exec: workbench.ExecRefuse,
		ApproveOutside: f.allowExecOutside, RefusePlaceholders: true}
	if f.allowExec {
		o.Exec = workbench.ExecApprove
	}
	s, err := workbench.Open(ctx, path, o)
	var refused *grade.NotApprovedError
	if errors.As(err, &refused) && !f.yes && stdinIsTerminal(std) {
		fmt.Fprint(std.Err, execList(refused))
		yes, cerr := confirm(std, "Run these commands to grade answers, now and in later runs of this audit? [y/N] ")
		if cerr != nil {
			return nil, cerr
		}
		if yes {
			// The list named every folder outside the audit folder
			// that the approval covers: saying yes to it names them.
			o.Exec = workbench.ExecApprove
			for _, c := range refused.Commands {
				o.ApproveOutside = append(o.ApproveOutside, c.Outside...)
			}
			s, err = workbench.Open(ctx, path, o)
		}
	}
	switch {
	case errors.As(err, &refused):
		how := "run again with --allow-exec to approve them"
		if outside := outsideFolders(refused); len(outside) > 0 {
			flags := ""
			for _, o := range outside {
				flags += " --allow-exec-outside " + shellQuote(o)
			}
			how = "run again with --allow-exec" + flags + " to approve them with the folders outside the audit folder named"
		}
		return nil, &refusal{fmt.Errorf("%snot run: read them, then %s (recorded for you, not in the folder; an edited file under a covered folder asks again)",
			execList(refused), how)}
	case errors.Is(err, workbench.ErrTooLarge):
		return nil, &refusal{err}
	}
	if pe := (*workbench.PlaceholderError)(nil); errors.As(err, &pe) {
		return nil, &refusal{fmt.Errorf("not run: %w", pe)}
	}
	return s, err
}

// execList names the refused commands, one a line, with the folders
// whose every file the approval covers.
func execList(e *grade.NotApprovedError) string {
	var b strings.Builder
	b.WriteString("this audit's predicates run programs from its folder to grade answers:\n")
	for _, c := range e.Commands {
		fmt.Fprintf(&b, "  %s\n", c)
		b.WriteString(coverage(c, "    "))
	}
	return b.String()
}

// coverage says which folders an approval of c covers, one a line, the
// ones outside the audit folder marked.
func coverage(c audit.ExecCommand, indent string) string {
	var b strings.Builder
	if len(c.Scripts) > 0 {
		names := make([]string, len(c.Scripts))
		for i, s := range c.Scripts {
			names[i] = model.Sanitize(s)
		}
		fmt.Fprintf(&b, "%sruns %s\n", indent, strings.Join(names, ", "))
	}
	for _, f := range c.Folders {
		where := ""
		if slices.Contains(c.Outside, f) {
			where = ", OUTSIDE the audit folder"
		}
		fmt.Fprintf(&b, "%scovers every file under %s%s\n", indent, model.Sanitize(f), where)
	}
	return b.String()
}

// outsideFolders lists the folders outside the audit folder that the
// refused commands load files from.
func outsideFolders(e *grade.NotApprovedError) []string {
	var out []string
	for _, c := range e.Commands {
		for _, o := range c.Outside {
			if !slices.Contains(out, o) {
				out = append(out, o)
			}
		}
	}
	return out
}

// sayNotApproved tells the user which [exec] commands a command that
// reads stored results did not start, and how to approve them. Their
// rules' answers are shown ungraded.
func sayNotApproved(std Stdio, s *workbench.Session, path string) {
	for _, c := range s.NotApproved() {
		fmt.Fprintf(std.Err, "note: not started, not approved: %s\n  the answers it grades are shown ungraded; to approve it, read it, then: %s\n",
			c, approveCommand(path))
	}
}

// approveCommand is the command line that approves the [exec] commands of
// the audit at path.
func approveCommand(path string) string { return "auditor run " + shellQuote(path) + " --allow-exec" }

// execNotes are the [exec] commands the session did not start, as
// sayNotApproved says them, for the interactive screen (whose alternate
// screen hides what was printed before it), with the lines each grades.
func execNotes(s *workbench.Session, path string) []tui.ExecNote {
	denied := s.NotApproved()
	if len(denied) == 0 {
		return nil
	}
	lines := map[string][]int{}
	if execs, err := s.ExecCommands(); err == nil { // without them the notes name no line
		for _, e := range execs {
			lines[e.Command.Digest] = e.Lines
		}
	}
	notes := make([]tui.ExecNote, len(denied))
	for i, c := range denied {
		notes[i] = tui.ExecNote{Command: c.String(), Lines: lines[c.Digest], Approve: approveCommand(path)}
	}
	return notes
}

// sayOpened tells the user what opening the audit did on its own: graded
// stored answers with an edited predicate, or left [exec] commands
// unstarted.
func sayOpened(std Stdio, s *workbench.Session, path string) {
	sayRegraded(std, s)
	sayNotApproved(std, s, path)
}

func stdinIsTerminal(std Stdio) bool {
	f, ok := std.In.(*os.File)
	return ok && isTerminal(f)
}

// planDoc is `plan --format json`: the estimate and the [exec] commands
// grading would run.
type planDoc struct {
	audit.Estimate
	// Pilot is what --pilot made; absent without it.
	Pilot        *pilotResult `json:"pilot,omitempty"`
	ExecCommands []execDoc    `json:"exec_commands"`
}

type execDoc struct {
	Command []string `json:"command"`
	Dir     string   `json:"dir"`
	Scripts []string `json:"scripts"`
	// Folders are covered whole by an approval; Outside are those of them
	// outside the audit folder.
	Folders []string `json:"folders"`
	Outside []string `json:"outside"`
	Digest  string   `json:"digest"`
	// Uncovered says why the command is never started (its approval
	// would cover no file it runs); absent when it can be.
	Uncovered string   `json:"uncovered,omitempty"`
	Lines     []int    `json:"lines"`
	Suites    []string `json:"suites"`
	Approved  bool     `json:"approved"`
}

func execDocs(execs []workbench.ExecState) []execDoc {
	docs := []execDoc{}
	for _, e := range execs {
		docs = append(docs, execDoc{Command: e.Command.Argv, Dir: e.Command.Dir, Scripts: append([]string{}, e.Command.Scripts...),
			Folders: append([]string{}, e.Command.Folders...), Outside: append([]string{}, e.Command.Outside...),
			Digest: e.Command.Digest, Uncovered: e.Command.Uncovered, Lines: e.Lines, Suites: e.Suites, Approved: e.Approved})
	}
	return docs
}

// writeExecPlan lists every [exec] command grading would run, and whether
// the user approved it.
func writeExecPlan(w io.Writer, execs []workbench.ExecState, path string) {
	if len(execs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nGrading runs these programs from the audit folder ([exec] predicates):")
	pending := false
	for _, e := range execs {
		state := "approved"
		if !e.Approved {
			state, pending = "NOT approved", true
		}
		lines := make([]string, len(e.Lines))
		for i, l := range e.Lines {
			lines[i] = fmt.Sprintf("L%d", l)
		}
		for _, name := range e.Suites {
			lines = append(lines, "regression suite "+model.Sanitize(name))
		}
		fmt.Fprintf(w, "  %s  for %s: %s\n", e.Command, strings.Join(lines, ", "), state)
		fmt.Fprint(w, coverage(e.Command, "    "))
		if e.Command.Uncovered != "" {
			fmt.Fprintf(w, "    refused, never started: %s\n", e.Command.Uncovered)
		}
		for _, m := range e.Command.Missing {
			fmt.Fprintf(w, "    warning: %s is not in the audit folder; the command will fail\n", model.Sanitize(m))
		}
	}
	if pending {
		fmt.Fprintf(w, "A run refuses commands that are not approved; read them, then: auditor run %s --allow-exec\n", shellQuote(path))
	}
}

package grade

import (
	"errors"
	"fmt"
	"sort"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// ErrExecNotApproved is the error of grading with an [exec] predicate
// whose command the user has not approved. The command is never started;
// the answers of its rule stay ungraded.
var ErrExecNotApproved = errors.New("[exec] command not approved")

// Approver says whether the user approved an [exec] command, by its
// digest. The workbench answers from the store.
type Approver func(c audit.ExecCommand) (bool, error)

// NotApprovedError lists the commands a grader or a session refused to
// start. It matches ErrExecNotApproved with errors.Is.
type NotApprovedError struct {
	Commands []audit.ExecCommand
}

func (e *NotApprovedError) Error() string {
	if len(e.Commands) == 1 {
		return fmt.Sprintf("%v: %s", ErrExecNotApproved, e.Commands[0])
	}
	return fmt.Sprintf("%v: %d commands", ErrExecNotApproved, len(e.Commands))
}

func (e *NotApprovedError) Is(target error) bool { return target == ErrExecNotApproved }

// UncoveredError is the error of an [exec] command whose approval would
// cover no file it runs (audit.ExecCommand.Uncovered).
type UncoveredError struct{ Command audit.ExecCommand }

func (e *UncoveredError) Error() string {
	return fmt.Sprintf("[exec] %s: not started: %s", e.Command, e.Command.Uncovered)
}

// Is makes an UncoveredError match ErrExecNotApproved: no approval can
// make such a command run.
func (e *UncoveredError) Is(target error) bool { return target == ErrExecNotApproved }

// RequireApproval makes g start an [exec] command only when approve says
// the user approved it; without it (tests, library use) every command
// runs. Call it before grading.
func (g *Grader) RequireApproval(approve Approver) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.approve = approve
}

// checkApproved returns nil when pred's command may run, and a
// *NotApprovedError otherwise. It reads the scripts once per predicate
// version and remembers the answer.
func (g *Grader) checkApproved(pred *model.Predicate) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.approve == nil {
		return nil
	}
	if err, ok := g.approval[pred.Version]; ok {
		return err
	}
	c, err := audit.ResolveExec(pred.Exec, g.plan.Audit.Dir)
	if err == nil && c.Uncovered != "" {
		// An approval of its words would approve whatever the
		// interpreter finds: never started, whatever was approved.
		err = &UncoveredError{Command: c}
	}
	if err == nil {
		var ok bool
		if ok, err = g.approve(c); err == nil && !ok {
			err = &NotApprovedError{Commands: []audit.ExecCommand{c}}
			g.denied[c.Digest] = c
		} else if err == nil {
			g.approved[pred.Version] = c
		}
	}
	g.approval[pred.Version] = err
	return err
}

// Denied returns the commands this grader refused to start, in a stable
// order: their rules' answers were left ungraded.
func (g *Grader) Denied() []audit.ExecCommand {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]audit.ExecCommand, 0, len(g.denied))
	for _, c := range g.denied {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

//go:build unix && !linux

package execgrade

import (
	"os/exec"
	"syscall"
)

// Outside Linux there is no subreaper and no Pdeathsig: the grader is
// auditor's own child in a process group of its own, and a process it
// moves out of that group, or the group after a kill -9 of auditor,
// survives (the README says so).

// supervised leaves cmd as it is.
func supervised(*exec.Cmd, string) {}

// inGroup makes cmd start in a process group of its own, and makes
// cancelling its context kill that whole group rather than the child alone.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		killGroup(cmd)
		return nil
	}
}

// stopTree kills the group.
func stopTree(cmd *exec.Cmd) { killGroup(cmd) }

// killGroup kills every process of cmd's group. The group's id is the
// child's pid (Setpgid with Pgid 0); once the group is empty this fails
// harmlessly with ESRCH.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

func holdUndumpable()    {}
func releaseUndumpable() {}

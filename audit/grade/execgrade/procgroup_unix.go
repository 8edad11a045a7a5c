//go:build unix

package execgrade

import (
	"os/exec"
	"syscall"
)

// inGroup makes cmd start in a process group of its own, and makes
// cancelling its context kill that whole group rather than the child alone.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		killGroup(cmd)
		return nil
	}
}

// killGroup kills every process of cmd's group. The group's id is the
// child's pid (Setpgid with Pgid 0); once the group is empty this fails
// harmlessly with ESRCH.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

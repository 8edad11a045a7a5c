//go:build !unix

package execgrade

import "os/exec"

// supervised leaves cmd as it is: without process groups the child alone
// is killed.
func supervised(*exec.Cmd, string) {}

// inGroup does nothing where process groups are not available.
func inGroup(cmd *exec.Cmd) {}

// stopTree kills the child.
func stopTree(cmd *exec.Cmd) { killGroup(cmd) }

// killGroup kills the child.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func holdUndumpable()    {}
func releaseUndumpable() {}

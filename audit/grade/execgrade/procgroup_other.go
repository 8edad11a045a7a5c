//go:build !unix

package execgrade

import "os/exec"

// inGroup does nothing where process groups are not available: the child
// alone is killed.
func inGroup(cmd *exec.Cmd) {}

// killGroup kills the child.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

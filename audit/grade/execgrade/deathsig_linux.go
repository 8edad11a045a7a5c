package execgrade

import "syscall"

// dieWithParent has the kernel kill the child when auditor dies without
// cleaning up (kill -9): the process group is killed on every exit auditor
// sees, but not on one it does not.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

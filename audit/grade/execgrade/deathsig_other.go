//go:build unix && !linux

package execgrade

import "syscall"

// dieWithParent is Linux only (Pdeathsig); elsewhere a kill -9 of auditor
// leaves the child to notice its closed standard input.
func dieWithParent(*syscall.SysProcAttr) {}

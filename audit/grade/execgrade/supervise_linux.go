package execgrade

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux a grader does not run as auditor's child but as the child of a
// supervisor: auditor itself, started again in a mode where it only
// watches the grader. It exists because a grader can leave its process
// group (setsid sleep 600 &) and because auditor killed with -9 cleans up
// nothing. The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER),
// so every process the grader starts that loses its parent becomes the
// supervisor's child, whatever group or session it moved to; it gets
// SIGTERM from the kernel when auditor dies (Pdeathsig), and when the
// grader exits, when auditor stops it, or when auditor dies, it kills all
// of its descendants before it exits itself. The grader's standard
// streams are the supervisor's own, passed through untouched.

// supervisorEnv marks a process started to supervise a grader. It is set
// only in the supervisor's environment and removed from the grader's.
const supervisorEnv = "AUDITOR_EXEC_SUPERVISOR"

// removeEnv names, in the supervisor's environment only, a private copy
// the grader runs from (Launch.Remove): the supervisor removes it when it
// exits, so a copy does not outlive an auditor killed with -9.
const removeEnv = "AUDITOR_EXEC_REMOVE"

// supervisorName is the supervisor's argv[0], as ps shows it.
const supervisorName = "auditor-grader-supervisor"

func init() {
	// Every binary that can start a grader (auditor, its test binaries)
	// can be its supervisor: the mode is chosen before main runs.
	if os.Getenv(supervisorEnv) == "1" && len(os.Args) >= 3 && os.Args[0] == supervisorName {
		os.Exit(supervise(os.Args[1], os.Args[2:]))
	}
}

// supervised turns cmd, which would run the grader directly, into one that
// runs it under a supervisor: the same binary as this process, given the
// grader's resolved path and argv.
func supervised(cmd *exec.Cmd, remove string) {
	cmd.Args = append([]string{supervisorName, cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	cmd.Env = append(append([]string(nil), cmd.Env...), supervisorEnv+"=1")
	if remove != "" {
		cmd.Env = append(cmd.Env, removeEnv+"="+remove)
	}
}

// inGroup makes cmd (the supervisor) start in a process group of its own,
// with SIGTERM from the kernel when auditor dies, and makes cancelling its
// context stop the whole tree.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Cancel = func() error {
		stopTree(cmd)
		return nil
	}
}

// stopTree asks the supervisor to kill the grader and everything it
// started, then to exit.
func stopTree(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
}

// killGroup kills what is left of cmd's process group once the supervisor
// has exited (or has not exited after stopTree's grace): the group's id
// is the supervisor's pid. Once the group is empty this fails harmlessly
// with ESRCH.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// supervise runs the grader at path with argv and returns the exit code
// the supervisor should exit with. It never returns while a descendant it
// could kill is alive.
func supervise(path string, argv []string) int {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	// Go's fork checks that the parent is still alive once Pdeathsig is
	// set, so a supervisor whose auditor died at its start is signalled.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, supervisorEnv+"=") && !strings.HasPrefix(kv, removeEnv+"=") {
			env = append(env, kv)
		}
	}
	remove := os.Getenv(removeEnv)
	proc, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   env,
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start %s: %v\n", path, err)
		return 127
	}
	var once sync.Once
	// finish kills every descendant, then exits with code, or dies of
	// sig when the grader did, so that auditor reports what happened to
	// the grader ("signal: killed").
	finish := func(code int, sig syscall.Signal) {
		once.Do(func() {
			killDescendants()
			if isStagedCopy(remove) {
				_ = os.RemoveAll(remove)
			}
			if sig != 0 {
				signal.Reset()
				_ = syscall.Kill(os.Getpid(), sig)
				time.Sleep(time.Second)
			}
			os.Exit(code)
		})
	}
	go func() {
		sig := (<-sigs).(syscall.Signal)
		finish(128+int(sig), 0)
	}()
	// Reap every child: the grader, and the orphans it leaves, which
	// would otherwise stay zombies until the end.
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case err == syscall.EINTR:
		case err != nil:
			finish(1, 0)
		case pid == proc.Pid && ws.Signaled():
			finish(128+int(ws.Signal()), ws.Signal())
		case pid == proc.Pid:
			finish(ws.ExitStatus(), 0)
		}
	}
}

// isStagedCopy reports whether dir is a grader's private copy (a folder
// auditor-grader-* right under the temporary directory): the only folder
// the supervisor removes, whatever its environment says.
func isStagedCopy(dir string) bool {
	return dir != "" && filepath.Dir(dir) == filepath.Clean(os.TempDir()) && strings.HasPrefix(filepath.Base(dir), "auditor-grader-")
}

// killDescendants kills every child of this process until the kernel says
// none is left. Killing a child makes its own children orphans, which the
// kernel gives to this subreaper, so a later round finds and kills them.
// A scan of /proc is not atomic: it can read a grandchild's parent before
// the reparenting and its dead parent after, and see no live child while
// one is left; so the loop ends only when wait4 reports no child at all
// (ECHILD), zombies included. A process that survives SIGKILL (stuck in
// the kernel) is given up on after a few seconds.
func killDescendants() {
	self := os.Getpid()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, pid := range liveChildren(self) {
			// Its group as well as itself: a group leader's
			// members need not be its children.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.ECHILD {
				return // no child left, live or dead
			}
			if pid <= 0 || err != nil {
				break // children left, none exited yet
			}
		}
	}
}

// liveChildren lists the processes whose parent is ppid and that have not
// exited, from /proc.
func liveChildren(ppid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		var state byte
		var parent int
		if _, err := fmt.Sscanf(string(data[i+1:]), " %c %d", &state, &parent); err != nil {
			continue
		}
		if parent == ppid && state != 'Z' && state != 'X' {
			out = append(out, pid)
		}
	}
	return out
}

// The grader could read auditor's environment, which holds the API keys,
// from /proc/<pid>/environ, and its memory from /proc/<pid>/mem: both are
// open to any process of the same user while auditor is "dumpable". While
// any grader runs, auditor is not (PR_SET_DUMPABLE 0 makes those files
// root's); once the last one has ended it is again, so a core dump or a
// debugger works as usual.
var dumpable struct {
	sync.Mutex
	graders int
}

// holdUndumpable marks one more grader running.
func holdUndumpable() {
	dumpable.Lock()
	defer dumpable.Unlock()
	if dumpable.graders == 0 {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	}
	dumpable.graders++
}

// releaseUndumpable marks one grader fewer running.
func releaseUndumpable() {
	dumpable.Lock()
	defer dumpable.Unlock()
	dumpable.graders--
	if dumpable.graders == 0 {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
}

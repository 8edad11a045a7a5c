// Package execgrade runs a predicate's [exec] command: one long-lived child
// process that grades responses over JSON lines.
//
// Protocol. For each response the grader writes one line to the child's
// standard input:
//
//	{"id": "p1", "kind": "provoke", "msg": "...", "kb": ["..."], "response": "..."}
//
// and reads one line from its standard output:
//
//	{"pass": true, "reason": "..."}
//
// "pass" is required; "reason" is optional. An answer may echo the request's
// "id", which is then checked; other fields are ignored. Requests are
// answered one at a time and in order; a line nobody asked for is a protocol
// error, because it would pair later answers with the wrong responses. The child's standard
// error is kept (its last 2 KB) and quoted in errors; it is the place for the
// child's own logging, since anything else on standard output breaks the
// protocol.
//
// Failure. When a request times out, the child exits, or an answer is not a
// protocol line, the child is killed: after such a failure the pairing of
// requests and answers can no longer be trusted. The next Grade starts a
// fresh child.
//
// Containment. The child is started in its own process group with a
// scrubbed environment (see ScrubEnv): no API key of the parent reaches a
// script from an audit folder. When the child exits, is stopped, or the
// Grader is closed, the whole group is killed, so nothing it started
// outlives it. On Linux a supervisor (supervise_linux.go) stands between
// auditor and the child: a subreaper that also kills what left the group
// (setsid), and that cleans up when auditor is killed with -9; while a
// child runs auditor is not dumpable, so the child cannot read auditor's
// environment or memory through /proc.
package execgrade

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// DefaultTimeout bounds one request (write and answer) when Options.Timeout
// is zero.
const DefaultTimeout = 30 * time.Second

// DefaultCloseGrace is how long Close waits for the child to exit after its
// input is closed, when Options.CloseGrace is zero.
const DefaultCloseGrace = 5 * time.Second

// treeGrace is how long kill waits for the grader's supervisor to clean up
// before it kills the process group itself.
const treeGrace = 5 * time.Second

// ErrClosed is returned by Grade after Close.
var ErrClosed = errors.New("execgrade: grader is closed")

const (
	stderrKeep  = 2 << 10 // bytes of the child's stderr kept for errors
	quoteLimit  = 200     // bytes of a bad answer quoted in errors
	maxLineSize = 1 << 20 // longest answer line accepted
	stderrLines = 20      // lines of the child's stderr quoted in errors
)

// Options configures a Grader.
type Options struct {
	Argv []string // program and arguments; Argv[0] is looked up in PATH
	Dir  string   // working directory; "" for the current one
	// Env is the child's whole environment; nil means ScrubEnv of this
	// process's environment.
	Env        []string
	Timeout    time.Duration // per request; 0 means DefaultTimeout
	CloseGrace time.Duration // Close's wait for the child to exit; 0 means DefaultCloseGrace
	// After returns a channel that delivers once d has passed; nil means
	// time.After. Tests replace it to time a request out on cue instead of
	// on the wall clock.
	After func(d time.Duration) <-chan time.Time
	// Prepare, when set, is asked before every start of the child (the
	// first, and each restart after it exited) for what to start: an
	// error stops the start and is returned. The caller checks there that
	// the program is still the one the user approved and hands back a
	// private copy of it to run (audit.StageExec), so that nothing
	// swapped in after the check can run.
	Prepare func() (Launch, error)
}

// Launch is what Prepare hands back: the argv and working directory to
// start, and Done, called once the child has exited and its group is
// dead (the copy is removed there), or when the start failed. Remove,
// when set, is a folder the Linux supervisor removes when it exits, so
// that a private copy does not outlive an auditor killed with -9.
type Launch struct {
	Argv   []string
	Dir    string
	Done   func()
	Remove string
}

// Grader is a running exec predicate. It is safe for concurrent use: requests
// are serialised, because the child answers one line at a time.
type Grader struct {
	ctx  context.Context
	opts Options

	mu     sync.Mutex
	proc   *process // nil when no child is running
	closed bool
}

// Start starts the child and returns a Grader that talks to it, with the
// default per-request timeout. See StartOptions.
func Start(ctx context.Context, argv []string, dir string) (*Grader, error) {
	return StartOptions(ctx, Options{Argv: argv, Dir: dir})
}

// StartOptions starts the child described by opts. Cancelling ctx kills the
// child and makes later Grade calls fail; Close should still be called. The
// error says when the program cannot be started (not found, not executable).
func StartOptions(ctx context.Context, opts Options) (*Grader, error) {
	if len(opts.Argv) == 0 || opts.Argv[0] == "" {
		return nil, errors.New("execgrade: no command given")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.CloseGrace <= 0 {
		opts.CloseGrace = DefaultCloseGrace
	}
	if opts.After == nil {
		opts.After = time.After
	}
	if opts.Env == nil {
		opts.Env = ScrubEnv(os.Environ())
	}
	g := &Grader{ctx: ctx, opts: opts}
	p, err := g.start()
	if err != nil {
		return nil, err
	}
	g.proc = p
	return g, nil
}

// request is one line written to the child.
type request struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	Msg      string   `json:"msg"`
	KB       []string `json:"kb"`
	Response string   `json:"response"`
}

// answer is one line read from the child.
type answer struct {
	ID     *string `json:"id"`
	Pass   *bool   `json:"pass"`
	Reason string  `json:"reason"`
}

// Grade sends one response to the child and returns its judgement. An error
// means there is no judgement (the caller records the grade as unparseable,
// never as a pass or a failure): the request timed out, the child died, or it
// answered something other than a protocol line; the error quotes the answer
// and the child's recent stderr. Grade blocks while another Grade is in
// flight.
func (g *Grader) Grade(c model.Case, text string) (pass bool, reason string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false, "", ErrClosed
	}
	if err := g.ctx.Err(); err != nil {
		g.stop()
		return false, "", fmt.Errorf("%w", err)
	}
	if g.proc != nil && g.proc.exited() {
		// It exited since the last answer (some graders handle one
		// request and quit); reap it and start a fresh one.
		g.stop()
	}
	if g.proc == nil {
		p, err := g.start()
		if err != nil {
			return false, "", err
		}
		g.proc = p
	}
	kb := c.KB
	if kb == nil {
		kb = []string{}
	}
	// Encode keeps <, > and & as they are (Marshal would escape them), so
	// that a child matching on raw text sees what the model wrote. The
	// encoder ends the line with "\n".
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(request{ID: c.ID, Kind: string(c.Kind), Msg: c.Msg, KB: kb, Response: text}); err != nil {
		return false, "", fmt.Errorf("encode request for case %s: %w", c.ID, err)
	}
	line := buf.Bytes()

	p := g.proc
	a, err := p.roundTrip(c.ID, line, g.opts.Timeout, g.opts.After(g.opts.Timeout))
	if err != nil && p.answered > 0 && g.ctx.Err() == nil && p.exited() && p.waitErr == nil {
		// A grader that answers one request and quits cleanly raced us:
		// this request went to a process on its way out. A fresh one is
		// asked, once; one that fails on its first request is broken.
		g.stop()
		np, serr := g.start()
		if serr != nil {
			return false, "", serr
		}
		g.proc, p = np, np
		a, err = p.roundTrip(c.ID, line, g.opts.Timeout, g.opts.After(g.opts.Timeout))
	}
	if err != nil {
		g.stop()
		if cerr := g.ctx.Err(); cerr != nil {
			return false, "", fmt.Errorf("%s: case %s: %w", g.name(), c.ID, cerr)
		}
		return false, "", fmt.Errorf("%s: case %s: %w%s", g.name(), c.ID, err, p.stderrSuffix())
	}
	p.answered++
	return *a.Pass, a.Reason, nil
}

// Close closes the child's standard input and waits for it to exit, killing
// it if it has not exited after a grace period. It returns an error when the
// child exited with a failure status. Close is idempotent; Grade fails with
// ErrClosed afterwards.
func (g *Grader) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	p := g.proc
	g.proc = nil
	if p == nil {
		return nil
	}
	_ = p.stdin.Close()
	p.discard()
	select {
	case <-p.done:
	case <-g.opts.After(g.opts.CloseGrace):
		p.kill()
		<-p.done
		return fmt.Errorf("%s did not exit after its input was closed; killed it%s", g.name(), p.stderrSuffix())
	}
	if p.waitErr != nil {
		return fmt.Errorf("%s: %w%s", g.name(), p.waitErr, p.stderrSuffix())
	}
	return nil
}

// name is the command for error messages.
func (g *Grader) name() string { return g.opts.Argv[0] }

// stop kills the current child, if any, and waits for it, so that the next
// Grade starts afresh. The caller holds g.mu.
func (g *Grader) stop() {
	if g.proc == nil {
		return
	}
	g.proc.kill()
	<-g.proc.done
	g.proc = nil
}

// start launches a child. The caller holds g.mu (or owns g exclusively).
//
// Its stdout and stderr are pipes of our own rather than os/exec's, so that
// Wait returns as soon as the child exits even when a grandchild still
// holds them; wait then kills the group, which closes them.
func (g *Grader) start() (*process, error) {
	if err := g.ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w", err)
	}
	launch := Launch{Argv: g.opts.Argv, Dir: g.opts.Dir, Done: func() {}}
	if g.opts.Prepare != nil {
		l, err := g.opts.Prepare()
		if err != nil {
			return nil, err
		}
		launch = l
		if launch.Done == nil {
			launch.Done = func() {}
		}
		if len(launch.Argv) == 0 {
			launch.Done()
			return nil, errors.New("execgrade: no command given")
		}
	}
	p, err := g.launch(launch)
	if err != nil {
		launch.Done()
		return nil, err
	}
	return p, nil
}

func (g *Grader) launch(launch Launch) (*process, error) {
	cmd := exec.CommandContext(g.ctx, launch.Argv[0], launch.Argv[1:]...)
	if cmd.Err == nil && strings.ContainsRune(cmd.Path, '/') {
		// A path is not looked up, so nothing has checked it yet; the
		// supervisor would find out only after its own start.
		p := cmd.Path
		if !filepath.IsAbs(p) && launch.Dir != "" {
			p = filepath.Join(launch.Dir, p)
		}
		_, cmd.Err = exec.LookPath(p)
	}
	if cmd.Err != nil {
		return nil, fmt.Errorf("start %s: %w", strings.Join(g.opts.Argv, " "), cmd.Err)
	}
	cmd.Dir = launch.Dir
	cmd.Env = g.opts.Env
	supervised(cmd, launch.Remove)
	inGroup(cmd)
	p := &process{cmd: cmd, stderr: &tail{max: stderrKeep}, lines: make(chan lineResult),
		done: make(chan struct{}), stopping: make(chan struct{}), drained: make(chan struct{}),
		after: g.opts.After, grace: g.opts.CloseGrace, finished: launch.Done}
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("%s: %w", g.name(), err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", g.name(), err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("%s: %w", g.name(), err)
	}
	p.stdout = outR
	cmd.Stdout, cmd.Stderr = outW, errW
	holdUndumpable()
	err = cmd.Start()
	// The child has its own copies of the write ends (or none, on error).
	outW.Close()
	errW.Close()
	if err != nil {
		releaseUndumpable()
		outR.Close()
		errR.Close()
		_ = p.stdin.Close()
		return nil, fmt.Errorf("start %s: %w", strings.Join(g.opts.Argv, " "), err)
	}
	go func() {
		_, _ = io.Copy(p.stderr, errR)
		errR.Close()
		close(p.drained)
	}()
	go p.wait()
	go p.readLoop()
	return p, nil
}

// process is one running child.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *os.File
	stderr *tail
	lines  chan lineResult // answer lines, read by readLoop
	done   chan struct{}   // closed once the child has been waited for and its group killed
	// drained is closed once the child's stderr has been read to its end
	// (all of its group has exited), so error messages quote all of it.
	drained chan struct{}

	stopping chan struct{} // closed when nobody will read lines any more
	stopOnce sync.Once

	waitErr error // the child's exit status; valid after done is closed

	answered int // requests it answered; written under the Grader's lock

	after    func(time.Duration) <-chan time.Time // Options.After
	grace    time.Duration                        // Options.CloseGrace
	finished func()                               // Launch.Done, once the group is dead
}

type lineResult struct {
	line []byte
	err  error
}

// wait reaps the child, then kills what is left of its process group:
// whatever it started must not outlive it.
func (p *process) wait() {
	p.waitErr = p.cmd.Wait()
	killGroup(p.cmd)
	releaseUndumpable()
	p.finished()
	close(p.done)
}

// readLoop delivers stdout lines until the pipe ends or is closed.
func (p *process) readLoop() {
	r := bufio.NewReaderSize(p.stdout, 64<<10)
	for {
		line, err := readLine(r)
		if err != nil {
			// Unblock a roundTrip waiting for an answer; nobody may be
			// listening, so do not block on it.
			select {
			case p.lines <- lineResult{err: err}:
			default:
			}
			close(p.lines)
			return
		}
		select {
		case p.lines <- lineResult{line: line}:
		case <-p.stopping:
			// Nobody will read it; keep draining until the pipe ends.
		}
	}
}

// readLine reads one line without its ending, refusing lines longer than
// maxLineSize (the rest of such a line is discarded).
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > maxLineSize {
			return nil, fmt.Errorf("answer line longer than %d bytes", maxLineSize)
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			buf = buf[:len(buf)-1]
			if n := len(buf); n > 0 && buf[n-1] == '\r' {
				buf = buf[:n-1]
			}
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// roundTrip writes one request line and reads one answer line before
// expired delivers (timeout is what it stands for, in errors). On any
// error the caller must kill the process.
func (p *process) roundTrip(id string, line []byte, timeout time.Duration, expired <-chan time.Time) (answer, error) {
	// A line waiting before the request is sent answers nothing we asked.
	select {
	case r, ok := <-p.lines:
		if ok && r.err == nil {
			return answer{}, fmt.Errorf("wrote a line before being asked: %s; write logs to stderr", quote(r.line))
		}
		<-p.done
		return answer{}, fmt.Errorf("exited before the request%s", p.exitNote())
	default:
	}

	written := make(chan error, 1)
	go func() {
		_, err := p.stdin.Write(line)
		written <- err
	}()
	select {
	case err := <-written:
		if err != nil {
			return answer{}, fmt.Errorf("write request: %w%s", err, p.exitNote())
		}
	case <-p.done:
		return answer{}, fmt.Errorf("exited before reading the request%s", p.exitNote())
	case <-expired:
		return answer{}, fmt.Errorf("did not read the request within %v; stopped it", timeout)
	}

	var res lineResult
	select {
	case r, ok := <-p.lines:
		if !ok {
			// Its output ended: wait for the exit itself, so the caller
			// can tell a clean exit (a one-request grader) from a crash.
			select {
			case <-p.done:
			case <-expired:
			}
			return answer{}, fmt.Errorf("exited without answering%s", p.exitNote())
		}
		res = r
	case <-expired:
		return answer{}, fmt.Errorf("did not answer within %v; stopped it", timeout)
	}
	if res.err != nil {
		if errors.Is(res.err, io.EOF) {
			<-p.done
			return answer{}, fmt.Errorf("exited without answering%s", p.exitNote())
		}
		return answer{}, fmt.Errorf("read answer: %w", res.err)
	}
	var a answer
	if err := json.Unmarshal(res.line, &a); err != nil || a.Pass == nil {
		return answer{}, fmt.Errorf(`answered %s, want one line {"pass": true|false, "reason": "..."}`, quote(res.line))
	}
	if a.ID != nil && *a.ID != id {
		return answer{}, fmt.Errorf("answered for id %q while grading %q; answers are out of step", *a.ID, id)
	}
	return a, nil
}

// exited reports whether the child has exited and been reaped.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// exitNote describes how the child exited, once it has.
func (p *process) exitNote() string {
	select {
	case <-p.done:
		if p.waitErr != nil {
			return " (" + p.waitErr.Error() + ")"
		}
		return " (exit status 0)"
	default:
		return ""
	}
}

// kill stops the child and everything it started and closes our ends of
// its pipes, which ends readLoop. Where a supervisor watches the child
// (Linux), it is asked to kill the tree and exit; should it not have
// exited after treeGrace, the process group is killed from here.
func (p *process) kill() {
	p.discard()
	stopTree(p.cmd)
	go func() {
		select {
		case <-p.done:
		case <-time.After(treeGrace):
			killGroup(p.cmd)
		}
	}()
	_ = p.stdin.Close()
	_ = p.stdout.Close()
}

// discard tells readLoop that nobody will read answers any more.
func (p *process) discard() { p.stopOnce.Do(func() { close(p.stopping) }) }

// stderrSuffix quotes the last lines of the child's stderr, sanitised (a
// script's output is no more trusted than a model's), once the child has
// exited and its stderr has been read to the end; before that, what has
// arrived so far.
func (p *process) stderrSuffix() string {
	select {
	case <-p.done:
		// The group is dead, so the pipe ends promptly, unless something
		// left the group on purpose: then do not wait for it for ever.
		select {
		case <-p.drained:
		case <-p.after(p.grace):
		}
	default:
	}
	s := StderrTail(p.stderr.String(), stderrLines)
	if s == "" {
		return ""
	}
	return "\nstderr (last lines):\n" + s
}

// StderrTail returns the last n lines of a child's stderr, with terminal
// control sequences removed.
func StderrTail(s string, n int) string {
	s = strings.TrimSpace(model.Sanitize(s))
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// quote renders a bad answer for an error, cut to quoteLimit bytes.
func quote(b []byte) string {
	if len(b) == 0 {
		return "an empty line"
	}
	if len(b) > quoteLimit {
		cut := quoteLimit
		for cut > 0 && (b[cut]&0xC0) == 0x80 {
			cut--
		}
		return fmt.Sprintf("%q... (%d bytes)", b[:cut], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// tail is an io.Writer keeping the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/model"
)

// ExecCommand is an [exec] predicate's command as it will run: its argv,
// the audit folder it runs in, and the files it can load. What a user
// approves is this whole thing, so the Digest covers more than the script
// named: every file under the folder that holds it, because Python puts a
// script's folder first on sys.path (a json.py beside grade.py is imported
// in place of the standard one), and Node's require('./x'), Ruby's
// require_relative and a shell's source reach files beside it the same
// way. An edited file there is a new command that must be approved again,
// and a new predicate version whose grades are given afresh.
type ExecCommand struct {
	Argv    []string
	Dir     string
	Scripts []string // files the arguments name, as written in Argv
	// Folders are the folders whose every file the approval covers
	// (absolute, outermost only): the folder of each script named, or a
	// folder named itself (python3 pkgdir).
	Folders []string
	// Outside are the folders of Folders outside the audit folder's tree
	// (a command naming ../shared/grade.py). A run approves such a command
	// only when the user names each of them: a folder someone sends must
	// not reach files elsewhere on the disk under an approval given for
	// what it holds.
	Outside []string
	// Files and Bytes are what the digest read under Folders.
	Files int
	Bytes int64
	// Missing are arguments that look like a script (foo.py, ./run.sh)
	// and name no file: most likely a typo that will fail the run.
	Missing []string
	// Uncovered, when set, says why an approval of this command would
	// cover no file it runs: an interpreter given a module or script name
	// that resolves to no file under the audit folder (python3 -m grade
	// with no grade.py there loads one from its installed path). Such a
	// command is never started: approving its words would approve
	// whatever the interpreter finds.
	Uncovered string
	// Digest is the hex SHA-256 of Argv and of the path and content of
	// every file under Folders: the key of an approval.
	Digest string
}

// Limits on what one approval covers. A grader's folder holds a script and
// a few helpers; a folder past these limits (a virtual environment, a
// dataset) is refused with the advice to give the grader a folder of its
// own, because reading it on every start would be slow and an approval of
// thousands of files is no longer one a person can read.
const (
	MaxExecFiles = 2000
	MaxExecBytes = 32 << 20
)

// String is the command as a user would type it, with the folder it runs
// in: "python3 accepts.py (in /home/me/audit)".
func (c ExecCommand) String() string {
	words := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		words[i] = model.Sanitize(a)
		if a == "" || strings.ContainsAny(a, " \t'\"\\$`") {
			words[i] = "'" + strings.ReplaceAll(words[i], "'", `'\''`) + "'"
		}
	}
	return strings.Join(words, " ") + " (in " + model.Sanitize(c.Dir) + ")"
}

// ResolveExec finds the files an [exec] command names and digests the
// command with the content of every file under their folders. An argument
// names a file when, taken relative to dir (or as an absolute path), it is
// one; a flag's value (--script=grade.py) is taken the same way. The
// program (Argv[0]) written without a slash is looked up in PATH and is a
// word, like "--strict". A command that reaches files another way
// (`sh -c "python3 x.py"`) is digested by its words only: the README says
// so. The folders' walk leaves out .git and the files auditor itself
// writes beside an audit (auditor.db, *.labels.jsonl), which change as you
// work without changing what the grader runs.
func ResolveExec(argv []string, dir string) (ExecCommand, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	c := ExecCommand{Argv: append([]string(nil), argv...), Dir: dir}
	h := sha256.New()
	words, _ := json.Marshal(argv)
	h.Write(words)
	var folders []string
	for i, a := range argv {
		name := a
		if strings.HasPrefix(a, "-") {
			j := strings.IndexByte(a, '=')
			if j < 0 {
				continue
			}
			name = a[j+1:]
		}
		if name == "" || (i == 0 && !strings.ContainsRune(name, '/')) {
			continue
		}
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if looksLikeScript(name) {
				c.Missing = append(c.Missing, name)
			}
			continue
		}
		if err != nil {
			return c, fmt.Errorf("[exec] %s: %w", a, err)
		}
		if err := c.cover(&folders, a, name, p, st); err != nil {
			return c, err
		}
	}
	if err := c.resolveInterpreter(&folders); err != nil {
		return c, err
	}
	c.Folders = outermost(folders)
	w := folderDigest{h: h, cmd: c.String()}
	for _, f := range c.Folders {
		if err := w.walk(f); err != nil {
			return c, err
		}
	}
	c.Files, c.Bytes = w.files, w.bytes
	c.Digest = hex.EncodeToString(h.Sum(nil))
	return c, nil
}

// ErrExecChanged is the error of staging a command whose files changed
// since it was approved.
var ErrExecChanged = errors.New("a file it runs changed since it was approved")

// StagedExec is a private copy of the files an approved command runs:
// the command runs from it, so what runs is exactly the bytes that were
// checked against the approval, whatever happens to the audit folder
// between the check and the interpreter opening its script (a sync tool,
// a git pull).
type StagedExec struct {
	Root string   // the copy's root; every covered file is under Root at its absolute path
	Dir  string   // the working directory to run in: the audit folder's place in the copy
	Argv []string // the command with absolute paths into covered folders moved into the copy
}

// Remove deletes the copy.
func (s *StagedExec) Remove() error { return os.RemoveAll(s.Root) }

// StageExec copies every file under the folders c covers into a new
// private folder (mode 0700 under the temporary directory), digesting
// the very bytes it writes, and returns the copy when the digest is still
// c.Digest; otherwise it removes the copy and returns an error matching
// ErrExecChanged. Relative paths in the command keep working, because the
// copy keeps the layout of the disk under Root.
func StageExec(c ExecCommand) (*StagedExec, error) {
	root, err := os.MkdirTemp("", "auditor-grader-")
	if err != nil {
		return nil, fmt.Errorf("[exec] private copy of %s: %w", c, err)
	}
	st := &StagedExec{Root: root, Dir: filepath.Join(root, c.Dir)}
	h := sha256.New()
	words, _ := json.Marshal(c.Argv)
	h.Write(words)
	w := folderDigest{h: h, cmd: c.String(), copyTo: root}
	for _, f := range c.Folders {
		if err := w.walk(f); err != nil {
			_ = st.Remove()
			return nil, err
		}
	}
	if hex.EncodeToString(h.Sum(nil)) != c.Digest {
		_ = st.Remove()
		return nil, fmt.Errorf("[exec] %s: %w", c, ErrExecChanged)
	}
	if err := os.MkdirAll(st.Dir, 0o700); err != nil {
		_ = st.Remove()
		return nil, fmt.Errorf("[exec] private copy of %s: %w", c, err)
	}
	st.Argv = make([]string, len(c.Argv))
	for i, a := range c.Argv {
		st.Argv[i] = a
		prefix, name := "", a
		if strings.HasPrefix(a, "-") {
			j := strings.IndexByte(a, '=')
			if j < 0 {
				continue
			}
			prefix, name = a[:j+1], a[j+1:]
		}
		if !filepath.IsAbs(name) {
			continue
		}
		for _, f := range c.Folders {
			if within(f, filepath.Clean(name)) {
				st.Argv[i] = prefix + filepath.Join(root, name)
				break
			}
		}
	}
	return st, nil
}

// writeCopy writes one file of a private copy, readable by its owner
// only, executable when the original is.
func writeCopy(path string, data []byte, mode fs.FileMode) error {
	perm := fs.FileMode(0o600)
	if mode&0o111 != 0 {
		perm = 0o700
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("[exec] private copy: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("[exec] private copy: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("[exec] private copy: %w", err)
	}
	return nil
}

// cover adds the file or folder p (arg a, naming name) to what the
// approval covers: a folder itself, or a script's folder, and, when the
// script is a symbolic link, its target's folder too (Python puts the
// target's folder on sys.path, and the link may lead out of the audit
// folder, which then needs --allow-exec-outside like a path written out).
func (c *ExecCommand) cover(folders *[]string, a, name, p string, st fs.FileInfo) error {
	folder := p
	if !st.IsDir() {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("[exec] %s: not a regular file (%s): auditor reads only files", a, st.Mode().Type())
		}
		folder = filepath.Dir(p)
		if !slices.Contains(c.Scripts, name) {
			c.Scripts = append(c.Scripts, name)
		}
	}
	for _, f := range []string{folder, realFolder(p, st)} {
		if f == "" {
			continue
		}
		if _, inside := insideDir(f, c.Dir); !inside {
			c.Outside = appendNew(c.Outside, f)
		}
		*folders = appendNew(*folders, f)
	}
	return nil
}

// realFolder is the folder the file p really lies in, when p is reached
// through a symbolic link (p itself or a folder on its way) and that
// folder is another than p's own; "" otherwise.
func realFolder(p string, st fs.FileInfo) string {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	f := real
	if !st.IsDir() {
		f = filepath.Dir(real)
	}
	own := p
	if !st.IsDir() {
		own = filepath.Dir(p)
	}
	if rp, err := filepath.EvalSymlinks(own); err == nil && rp == f {
		return ""
	}
	return f
}

// folderDigest feeds the files of the covered folders into one hash, with
// the limits above.
type folderDigest struct {
	h      hash.Hash
	cmd    string
	files  int
	bytes  int64
	seen   map[string]bool // real paths of the folders walked (symlink loops)
	folder string          // the covered folder being walked, for errors
	// copyTo, when set, is the root of a private copy: every file
	// digested is written under it, at its absolute path, from the very
	// bytes that entered the digest (StageExec).
	copyTo string
}

func (w *folderDigest) walk(folder string) error {
	w.folder = folder
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	fmt.Fprintf(w.h, "\x00folder\x00%s", folder)
	return w.dir(folder, "")
}

// dir digests the entries of one folder, in name order, following
// symbolic links (a link to a file outside is loaded like the file).
func (w *folderDigest) dir(path, rel string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("[exec] %s: %w", path, err)
	}
	if w.seen[real] {
		return nil
	}
	w.seen[real] = true
	if w.copyTo != "" {
		if err := os.MkdirAll(filepath.Join(w.copyTo, path), 0o700); err != nil {
			return fmt.Errorf("[exec] copy %s: %w", path, err)
		}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return fmt.Errorf("[exec] %s: %w", path, err)
	}
	for _, e := range entries {
		name := e.Name()
		p, r := filepath.Join(path, name), filepath.Join(rel, name)
		if name == ".git" || name == "auditor.db" || strings.HasSuffix(name, ".labels.jsonl") {
			continue
		}
		st, err := os.Stat(p) // follows a link
		if err != nil {
			// A dangling link loads nothing; its target is still
			// part of what was approved.
			target, _ := os.Readlink(p)
			fmt.Fprintf(w.h, "\x00link\x00%s\x00%s", r, target)
			continue
		}
		switch {
		case st.IsDir():
			fmt.Fprintf(w.h, "\x00dir\x00%s", r)
			if err := w.dir(p, r); err != nil {
				return err
			}
		case st.Mode().IsRegular():
			w.files++
			w.bytes += st.Size()
			if w.files > MaxExecFiles || w.bytes > MaxExecBytes {
				return fmt.Errorf("[exec] %s: an approval covers every file under %s, the folder of a script it names (Python, Node and Ruby load modules from there), and it holds more than %d files or %d MiB; give the grader a folder of its own",
					w.cmd, model.Sanitize(w.folder), MaxExecFiles, MaxExecBytes>>20)
			}
			data, err := ReadRegular(p)
			if err != nil {
				return fmt.Errorf("[exec] %s: %w", p, err)
			}
			sum := sha256.Sum256(data)
			fmt.Fprintf(w.h, "\x00file\x00%s\x00%x", r, sum)
			if w.copyTo != "" {
				if err := writeCopy(filepath.Join(w.copyTo, p), data, st.Mode()); err != nil {
					return err
				}
			}
		default:
			// A FIFO or device is never read (it could block); its
			// presence is part of the digest.
			fmt.Fprintf(w.h, "\x00special\x00%s\x00%s", r, st.Mode().Type())
		}
	}
	return nil
}

// outermost returns the folders, sorted, without those inside another of
// them: each file is digested once.
func outermost(folders []string) []string {
	sorted := slices.Clone(folders)
	slices.Sort(sorted)
	var out []string
	for _, f := range sorted {
		if len(out) > 0 && within(out[len(out)-1], f) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// looksLikeScript reports whether an argument reads as a file to run: a
// path with a slash, or a name with a script's extension.
func looksLikeScript(arg string) bool {
	if strings.Contains(arg, "/") {
		return true
	}
	switch filepath.Ext(arg) {
	case ".py", ".sh", ".js", ".mjs", ".ts", ".rb", ".pl", ".php", ".lua", ".r", ".R":
		return true
	}
	return false
}

// insideDir resolves an argument against dir (absolute) and reports
// whether the result lies inside dir, as written or once symlinks are
// resolved (the folder named through a link to it).
func insideDir(arg, dir string) (string, bool) {
	if arg == "" {
		return "", false
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	if within(dir, p) {
		return p, true
	}
	rd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", false
	}
	rp, err := filepath.EvalSymlinks(p)
	if err != nil || !within(rd, rp) {
		return "", false
	}
	return p, true
}

// within reports whether path p lies inside dir (both clean).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ParsePredicate parses a predicate file the way the audit uses it: like
// model.ParsePredicate, and when it has an [exec] command, with a version
// that also covers the content of the scripts the command names in dir,
// so editing a script re-grades every stored answer from its text.
func ParsePredicate(path string, data []byte, dir string) (*model.Predicate, error) {
	p, err := model.ParsePredicate(path, data)
	if err != nil || len(p.Exec) == 0 {
		return p, err
	}
	c, err := ResolveExec(p.Exec, dir)
	if err != nil {
		return nil, &model.InputError{File: path, Field: "exec.command", Msg: err.Error()}
	}
	return p.WithExecDigest(c.Digest), nil
}

package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/auditor-dev/auditor/model"
)

// ExecCommand is an [exec] predicate's command as it will run: its argv,
// the audit folder it runs in, and the files inside that folder it names
// (a script, a word list). What a user approves is this whole thing, so
// the Digest covers the scripts' content too: an edited script is a new
// command that must be approved again, and a new predicate version whose
// grades are given afresh.
type ExecCommand struct {
	Argv    []string
	Dir     string
	Scripts []string // files named by Argv inside Dir, as written in Argv
	// Missing are arguments that look like a script (foo.py, ./run.sh)
	// and are not in Dir: most likely a typo that will fail the run.
	Missing []string
	// Digest is the hex SHA-256 of Argv and of every script's name and
	// content: the key of an approval.
	Digest string
}

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

// ResolveExec finds the files an [exec] command names inside dir and
// digests the command with their content. An argument names a script when,
// taken relative to dir (or as an absolute path inside dir, dir reached
// directly or through a symlink), it is a regular file there; a flag's
// value (--script=grade.py) is taken the same way. Other arguments
// ("python3", "--strict") are words. A command that reaches files another
// way (`sh -c "python3 x.py"`) is digested by its words only: the README
// says so.
func ResolveExec(argv []string, dir string) (ExecCommand, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	c := ExecCommand{Argv: append([]string(nil), argv...), Dir: dir}
	h := sha256.New()
	words, _ := json.Marshal(argv)
	h.Write(words)
	for _, a := range argv {
		name := a
		if strings.HasPrefix(a, "-") {
			i := strings.IndexByte(a, '=')
			if i < 0 {
				continue
			}
			name = a[i+1:]
		}
		p, inside := insideDir(name, dir)
		if !inside {
			continue
		}
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) && looksLikeScript(name) {
			c.Missing = append(c.Missing, name)
		}
		if errors.Is(err, fs.ErrNotExist) || (err == nil && st.IsDir()) {
			continue
		}
		if err != nil {
			return c, fmt.Errorf("[exec] %s: %w", a, err)
		}
		data, err := ReadRegular(p)
		if err != nil {
			return c, fmt.Errorf("[exec] %s: %w", a, err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(h, "\x00%s\x00%x", name, sum)
		c.Scripts = append(c.Scripts, name)
	}
	c.Digest = hex.EncodeToString(h.Sum(nil))
	return c, nil
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

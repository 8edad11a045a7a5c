package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/model"
)

// An interpreter finds the program it runs from its arguments in ways a
// plain "does this argument name a file" misses: python3 -m grade loads
// grade.py (or the package grade/) from its working directory, node grade
// runs grade.js, grade.mjs, grade.cjs or grade/index.js. Those files are
// what an approval must cover, so resolveInterpreter resolves them as the
// interpreter would, and when the interpreter's program resolves to no
// file under the folders an approval covers, it says so in Uncovered: the
// command is then never started.

// interpreterKinds maps an interpreter's name (its argv[0] without folder
// and version) to how it finds its program.
var interpreterKinds = map[string]string{
	"python": "python", "pypy": "python",
	"node": "node", "nodejs": "node",
	"ruby": "script", "perl": "script", "php": "script", "lua": "script", "Rscript": "script",
	"sh": "shell", "bash": "shell", "dash": "shell", "zsh": "shell", "ksh": "shell",
}

var versionSuffix = regexp.MustCompile(`[0-9.]+$`)

// interpreterKind returns how argv0 finds its program, "" for a program
// that is not an interpreter auditor knows.
func interpreterKind(argv0 string) string {
	base := filepath.Base(argv0)
	if k, ok := interpreterKinds[base]; ok {
		return k
	}
	return interpreterKinds[versionSuffix.ReplaceAllString(base, "")]
}

// nodeExtensions are what node tries after a script name as written.
var nodeExtensions = []string{".js", ".mjs", ".cjs", ".json", ".node"}

// target is what an interpreter's arguments say it runs.
type target struct {
	module   string // python -m MOD
	script   string // the first argument that is not an option
	inline   bool   // -c / -e: the program is in the words
	stdin    bool   // "-" or no program at all: read from standard input
	isolated bool   // python -I / -P: the working directory is not on sys.path
	preload  []string
}

func (c *ExecCommand) resolveInterpreter(folders *[]string) error {
	kind := interpreterKind(c.Argv[0])
	if kind == "" {
		return nil
	}
	t := parseTarget(kind, c.Argv[1:])
	if t.inline {
		return nil
	}
	say := func(format string, a ...any) {
		if c.Uncovered == "" {
			c.Uncovered = fmt.Sprintf(format, a...)
		}
	}
	for _, m := range t.preload {
		if !c.resolveScript(folders, m, nodeExtensions) {
			say("%s preloads %s, which is no file in %s: an approval would not cover what node loads; put it in the audit folder or name the file", model.Sanitize(c.Argv[0]), model.Sanitize(m), model.Sanitize(c.Dir))
		}
	}
	switch {
	case t.module != "":
		if t.isolated {
			say("%s -m %s with -I or -P loads the module from the interpreter's installed path, not from the audit folder: an approval would cover no file of it; name the script instead (%s grade.py)",
				model.Sanitize(c.Argv[0]), model.Sanitize(t.module), model.Sanitize(c.Argv[0]))
			return nil
		}
		ok, err := c.resolveModule(folders, t.module)
		if err != nil {
			return err
		}
		if !ok {
			rel := strings.ReplaceAll(t.module, ".", "/")
			say("%s -m %s loads %s.py or the package %s/ from its working directory, %s, and there is neither; the interpreter would load one from its installed path, which an approval cannot cover: name the script (%s %s.py) or put the module in the audit folder",
				model.Sanitize(c.Argv[0]), model.Sanitize(t.module), model.Sanitize(rel), model.Sanitize(rel), model.Sanitize(c.Dir), model.Sanitize(c.Argv[0]), model.Sanitize(rel))
		}
	case t.script != "":
		exts := []string(nil)
		if kind == "node" {
			exts = nodeExtensions
		}
		if !c.resolveScript(folders, t.script, exts) && !slices.Contains(c.Missing, t.script) {
			// A script that is not there: the run refuses it as
			// missing (most likely a typo), before any call.
			c.Missing = append(c.Missing, t.script)
		}
	default:
		say("%s is given no script: it would read its program from standard input, which carries the answers to grade; name the script (%s grade%s)",
			model.Sanitize(c.Argv[0]), model.Sanitize(c.Argv[0]), scriptExt(kind))
	}
	return nil
}

func scriptExt(kind string) string {
	switch kind {
	case "python":
		return ".py"
	case "node":
		return ".js"
	case "shell":
		return ".sh"
	}
	return ""
}

// parseTarget reads an interpreter's options the way it does, far enough
// to find what it runs.
func parseTarget(kind string, args []string) target {
	var t target
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "-":
			t.stdin = true
			return t
		case a == "--":
			if i+1 < len(args) {
				t.script = args[i+1]
			}
			return t
		case !strings.HasPrefix(a, "-"):
			t.script = a
			return t
		}
		switch kind {
		case "python":
			if strings.HasPrefix(a, "--") {
				continue // --version, --help: no value
			}
			letters := a[1:]
			for j := 0; j < len(letters); j++ {
				switch letters[j] {
				case 'c':
					t.inline = true
					return t
				case 'm':
					t.module = letters[j+1:]
					if t.module == "" {
						t.module = next()
					}
					return t
				case 'W', 'X':
					if j == len(letters)-1 {
						next()
					}
					j = len(letters)
				case 'I', 'P':
					t.isolated = true
				}
			}
		case "node":
			name, val, hasVal := strings.Cut(a, "=")
			switch name {
			case "-e", "--eval", "-p", "--print":
				t.inline = true
				return t
			case "-r", "--require", "--import", "--loader", "--experimental-loader":
				if !hasVal {
					val = next()
				}
				t.preload = append(t.preload, val)
			case "-C", "--conditions", "--input-type", "--env-file", "--title", "--stack-size", "--max-old-space-size":
				if !hasVal {
					next()
				}
			}
		default: // ruby, perl, a shell: -e / -c hold the program
			if a == "-e" || a == "-E" || (kind == "shell" && strings.HasPrefix(a, "-") && strings.ContainsRune(a[1:], 'c') && !strings.HasPrefix(a, "--")) {
				t.inline = true
				return t
			}
		}
	}
	t.stdin = true
	return t
}

// resolveModule finds python's -m MOD under the working directory, which
// -m puts first on sys.path: MOD.py, or the package MOD/ (its __main__.py
// runs, its __init__.py files load). Everything importable from there is
// covered: the working directory is the module's folder.
func (c *ExecCommand) resolveModule(folders *[]string, mod string) (bool, error) {
	rel := filepath.FromSlash(strings.ReplaceAll(mod, ".", "/"))
	if mod == "" || strings.Contains(mod, "/") || strings.HasPrefix(rel, "..") {
		return false, nil
	}
	for _, cand := range []string{rel + ".py", filepath.Join(rel, "__main__.py"), filepath.Join(rel, "__init__.py")} {
		p := filepath.Join(c.Dir, cand)
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("[exec] %s: %w", cand, err)
		}
		if !st.Mode().IsRegular() {
			return false, fmt.Errorf("[exec] %s: not a regular file (%s): auditor reads only files", cand, st.Mode().Type())
		}
		if !slices.Contains(c.Scripts, cand) {
			c.Scripts = append(c.Scripts, cand)
		}
		*folders = appendNew(*folders, c.Dir)
		if f := realFolder(p, st); f != "" {
			if _, inside := insideDir(f, c.Dir); !inside {
				c.Outside = appendNew(c.Outside, f)
			}
			*folders = appendNew(*folders, f)
		}
		return true, nil
	}
	return false, nil
}

// resolveScript finds the script name as the interpreter would: as
// written, then with each of exts, then (for node) as a folder's
// index file, and covers what it finds. It reports whether it found one.
func (c *ExecCommand) resolveScript(folders *[]string, name string, exts []string) bool {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.Dir, p)
	}
	p = filepath.Clean(p)
	cands := []string{p}
	for _, e := range exts {
		cands = append(cands, p+e)
	}
	if len(exts) > 0 {
		for _, e := range exts {
			cands = append(cands, filepath.Join(p, "index"+e))
		}
	}
	for _, cand := range cands {
		st, err := os.Stat(cand)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		show := name
		if cand != p {
			show = name + strings.TrimPrefix(cand, p)
		}
		if err := c.cover(folders, name, show, cand, st); err != nil {
			return false
		}
		return true
	}
	return false
}

package starter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// Addition is what Add wrote.
type Addition struct {
	Line          int    // the prompt line now audited
	Text          string // its text
	AuditPath     string // the audit file, with the new [[rule]] at its end
	CasesPath     string // the line's new case file
	PredicatePath string // the line's new predicate
	// Name is the audit's name after the addition; Renamed says Add changed
	// it (from the name init gave it, which counted fewer lines).
	Name    string
	Renamed bool
}

// AddedFiles are the names of the case file and predicate Add writes for
// line, beside the audit file.
func AddedFiles(line int) (cases, predicate string) {
	return fmt.Sprintf("line%d.jsonl", line), fmt.Sprintf("line%d.predicate.toml", line)
}

// Add audits one more line of an audit's prompt, as init would have for
// it: a [[rule]] appended to the audit file (every byte before it kept),
// with a case file and a predicate written from the starting templates.
// The line is given by number, or by exact text when line is 0; today
// dates the example cases. An audit named as init names it ("line 6 of
// bot.md") is renamed for the lines it now covers.
//
// It writes nothing when the audit does not load, the line is blank or
// already audited, a file it would write exists, or the audit file with the
// rule appended would not parse: each is an error naming the file (and
// line, a *model.InputError, where there is one).
func Add(path string, line int, text, today string) (*Addition, error) {
	a, err := audit.Load(path, nil)
	if err != nil {
		return nil, err
	}
	if text != "" {
		if line, err = a.Prompt.FindText(text); err != nil {
			return nil, err
		}
	}
	if text, err = a.Prompt.Line(line); err != nil {
		return nil, err
	}
	if err := CheckAuditable(a.PromptPath, line, text); err != nil {
		return nil, err
	}
	lines := []int{}
	for _, r := range a.Rules {
		if r.Line == line {
			at := r.Config.KeyLines.Line
			if at == 0 {
				at = r.Config.DefLine // a rule given by its text
			}
			return nil, &model.InputError{File: a.Path, Line: at, Field: "line",
				Msg: fmt.Sprintf("prompt line %d is already audited by the [[rule]] at line %d: add a case to its case file, %s, instead", line, r.Config.DefLine, r.CasesPath)}
		}
		if !slices.Contains(lines, r.Line) {
			lines = append(lines, r.Line)
		}
	}
	casesName, predName := AddedFiles(line)
	add := &Addition{Line: line, Text: text, AuditPath: a.Path,
		CasesPath: filepath.Join(a.Dir, casesName), PredicatePath: filepath.Join(a.Dir, predName), Name: a.File.Name}
	for _, p := range []string{add.CasesPath, add.PredicatePath} {
		if _, err := os.Stat(p); err == nil {
			return nil, &model.InputError{File: p, Msg: "already exists: add writes nothing over a file (move it away, or add the [[rule]] by hand)"}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	data, err := audit.ReadRegular(a.Path)
	if err != nil {
		return nil, err
	}
	body := appendRule(data, RuleTable(line, text, casesName, predName))
	slices.Sort(lines)
	if old := Name(a.File.Prompt, lines); a.File.Name == old {
		// The new name lists the lines in order, as the old one did, so
		// the next add still recognises it (a name of 2, 5 and 3 would
		// not be the name of 2, 3 and 5, and renaming would stop).
		now := append(slices.Clone(lines), line)
		slices.Sort(now)
		if renamed, ok := rename(body, old, Name(a.File.Prompt, now)); ok {
			body, add.Renamed = renamed, true
		}
	}
	af, err := model.ParseAudit(a.Path, body)
	if err != nil {
		return nil, &model.InputError{File: a.Path, Msg: fmt.Sprintf("appending a [[rule]] would leave it unreadable (%v): add the rule by hand", err)}
	}
	add.Name = af.Name
	for _, f := range []struct {
		path string
		body string
	}{
		{add.CasesPath, Cases(line, text, today)},
		{add.PredicatePath, Predicate(line, text)},
	} {
		if err := os.WriteFile(f.path, []byte(f.body), 0o644); err != nil {
			return nil, err
		}
	}
	return add, replaceFile(a.Path, body)
}

// CheckAuditable refuses a prompt line that holds no rule: a blank line,
// or a Markdown heading ("# Pricing", "## Rules", a "===" or "---"
// underline): deleting one changes no behaviour a case can provoke, so
// its audit would only pay for calls. The error names the prompt file and
// line.
func CheckAuditable(promptPath string, line int, text string) error {
	t := strings.TrimSpace(text)
	switch {
	case t == "":
		return &model.InputError{File: promptPath, Line: line, Msg: fmt.Sprintf("line %d is blank; there is no rule to audit there", line)}
	case isHeading(t):
		return &model.InputError{File: promptPath, Line: line, Msg: fmt.Sprintf("line %d is a heading (%q), not a rule: deleting it changes no behaviour a case can provoke; audit a rule line under it", line, model.Sanitize(t))}
	}
	return nil
}

// heading is a Markdown ATX heading (one to six #, then a space or the
// end) or a setext underline.
var heading = regexp.MustCompile(`^(#{1,6}(\s|$)|=+$|-{3,}$)`)

func isHeading(t string) bool { return heading.MatchString(t) }

// appendRule is an audit file with table appended after a blank line.
func appendRule(data []byte, table string) []byte {
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteString("\n")
	}
	b.WriteString("\n# added by 'auditor add'\n" + table)
	return b.Bytes()
}

// nameLine is the top-level name key as init writes it.
var nameLine = regexp.MustCompile(`(?m)^name = ("(?:[^"\\]|\\.)*")`)

// rename replaces the audit's name old by name, where the file's first
// name line (the top-level one: init writes it before any table) says
// exactly old; ok is false when it does not.
func rename(data []byte, old, name string) ([]byte, bool) {
	loc := nameLine.FindSubmatchIndex(data)
	if loc == nil || string(data[loc[2]:loc[3]]) != fmt.Sprintf("%q", old) {
		return nil, false
	}
	if first := bytes.Index(data, []byte("\n[")); first >= 0 && first < loc[0] {
		return nil, false
	}
	var b bytes.Buffer
	b.Write(data[:loc[2]])
	fmt.Fprintf(&b, "%q", name)
	b.Write(data[loc[3]:])
	return b.Bytes(), true
}

// replaceFile writes data to path through a file beside it renamed over
// it, so an interrupted add leaves the old audit file whole.
func replaceFile(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".audit-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

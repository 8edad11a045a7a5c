package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/starter"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/workbench"
)

// newInitCmd is `auditor init`: a first audit of one line of the user's
// own prompt, written as files to edit (a commented audit.toml, a case
// file with one example of each kind, a predicate), so the first hour needs
// no source reading. It writes nothing over an existing file.
func newInitCmd(std Stdio) *cobra.Command {
	var promptPath, text string
	var line int
	c := &cobra.Command{
		Use:   "init DIR --prompt FILE (--line N | --text \"...\")",
		Short: "Write a starting audit of one line of your prompt: audit.toml, cases and a predicate to edit",
		Long: `Write into DIR a commented audit.toml, a case file (one provoke, one pressure
and one control example to replace with your own) and a predicate for one line
of your system prompt, chosen by number (--line) or exact text (--text). The
prompt is copied into DIR unless it is already there. Nothing is overwritten.
Then edit the cases and the predicate, and run 'auditor plan DIR/audit.toml'.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return initAudit(std, args[0], promptPath, line, text, cmd.Flags().Changed("line"))
		},
	}
	c.Flags().StringVar(&promptPath, "prompt", "", "the system prompt file (required)")
	addLineFlags(c, &line, &text)
	return c
}

func initAudit(std Stdio, dir, promptPath string, line int, text string, lineGiven bool) error {
	if promptPath == "" {
		return &usageError{errors.New("init needs --prompt FILE, the system prompt whose line it audits"), ""}
	}
	if err := checkLineFlags("init", line, text, lineGiven); err != nil {
		return err
	}
	data, err := audit.ReadRegular(promptPath)
	if err != nil {
		return &usageError{err, ""}
	}
	p, err := prompts.Parse(promptPath, data)
	if err != nil {
		return err
	}
	if text != "" {
		if line, err = p.FindText(text); err != nil {
			return err
		}
	}
	lineText, err := p.Line(line)
	if err != nil {
		return err
	}
	if err := starter.CheckAuditable(promptPath, line, lineText); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	promptName := filepath.Base(promptPath)
	// The line's files are named as add names them (line6.jsonl,
	// line6.predicate.toml): an audit of several lines reads alike.
	casesName, predName := starter.AddedFiles(line)
	files := []struct{ name, body string }{
		{audit.DefaultFile, starter.AuditFile(promptName, line, lineText, casesName, predName)},
		{casesName, starter.Cases(line, lineText, time.Now().Format("2006-01-02"))},
		{predName, starter.Predicate(line, lineText)},
	}
	if abs, _ := filepath.Abs(filepath.Dir(promptPath)); abs != mustAbs(dir) {
		files = append(files, struct{ name, body string }{promptName, string(data)})
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f.name)); err == nil {
			return &usageError{fmt.Errorf("%s already exists: init writes nothing over a file (choose another DIR, or audit one more line here with 'auditor add %s --line N')", filepath.Join(dir, f.name), shellQuote(dir)), ""}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.body), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(std.Err, "wrote %s\n", filepath.Join(dir, f.name))
	}
	if err := ignoreStore(std, dir); err != nil {
		return err
	}
	fmt.Fprintf(std.Err, "\nNext: replace the example cases in %s with ones for line %d, write its\n"+
		"predicate, %s (run refuses to start while an EDIT ME example is left), set the\n"+
		"model and its prices in audit.toml, then:\n  auditor plan %s\n  auditor run %s\n",
		casesName, line, predName, shellQuote(filepath.Join(dir, "audit.toml")), shellQuote(filepath.Join(dir, "audit.toml")))
	return nil
}

// newAddCmd is `auditor add`: one more line audited in a folder init
// wrote (or any audit), with the files init would have written for it.
func newAddCmd(std Stdio) *cobra.Command {
	var text string
	var line int
	c := &cobra.Command{
		Use:   "add AUDIT (--line N | --text \"...\")",
		Short: "Audit one more line of the prompt: a [[rule]] appended to audit.toml, with its cases and predicate to edit",
		Long: `Append to the audit file (AUDIT, or the audit.toml in the folder AUDIT) a [[rule]]
for one more line of its prompt, chosen by number (--line) or exact text
(--text), and write beside it the line's case file (lineN.jsonl: one provoke,
one pressure and one control example to replace) and predicate
(lineN.predicate.toml), as init does for its line. A line already audited is
refused; nothing is overwritten, and the rest of the audit file is kept as it
is. An audit still named as init named it ("line 6 of bot.md") is renamed for
the lines it covers.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLineFlags("add", line, text, cmd.Flags().Changed("line")); err != nil {
				return err
			}
			add, err := starter.Add(args[0], line, text, time.Now().Format("2006-01-02"))
			if err != nil {
				return err
			}
			fmt.Fprintf(std.Err, "wrote %s\nwrote %s\n", add.CasesPath, add.PredicatePath)
			fmt.Fprintf(std.Err, "added line %d to %s", add.Line, add.AuditPath)
			if add.Renamed {
				fmt.Fprintf(std.Err, ", now named %q", add.Name)
			}
			fmt.Fprintln(std.Err)
			if err := ignoreStore(std, filepath.Dir(add.AuditPath)); err != nil {
				return err
			}
			fmt.Fprintf(std.Err, "\nNext: replace the example cases in %s with ones for line %d and write its\n"+
				"predicate (run refuses to start while an EDIT ME example is left), then:\n  auditor plan %s\n",
				filepath.Base(add.CasesPath), add.Line, shellQuote(add.AuditPath))
			return nil
		},
	}
	addLineFlags(c, &line, &text)
	return c
}

// checkLineFlags says precisely what is wrong with --line and --text: one
// of them chooses the line, not both, and a line number counts from 1.
func checkLineFlags(cmd string, line int, text string, lineGiven bool) error {
	switch {
	case lineGiven && text != "":
		return &usageError{fmt.Errorf("%s takes --line or --text, not both: --line %d and --text %q may name different lines; give one", cmd, line, text), ""}
	case lineGiven && line < 1:
		return &usageError{fmt.Errorf("--line %d: prompt lines are numbered from 1", line), ""}
	case !lineGiven && text == "":
		return &usageError{fmt.Errorf("%s needs the prompt line to audit: --line N (its number) or --text \"...\" (its exact text)", cmd), ""}
	}
	return nil
}

// addLineFlags adds --line and --text, which choose the prompt line init
// and add audit.
func addLineFlags(c *cobra.Command, line *int, text *string) {
	c.Flags().IntVar(line, "line", 0, "the prompt line to audit, by number")
	c.Flags().StringVar(text, "text", "", "the prompt line to audit, by its exact text")
}

func mustAbs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// ignoreStore makes dir's .gitignore ignore the store, which is not to be
// committed (see the README), and says so when it wrote to it.
func ignoreStore(std Stdio, dir string) error {
	changed, err := starter.Gitignore(dir, workbench.DBName)
	if err != nil {
		return err
	}
	if changed {
		fmt.Fprintf(std.Err, "%s ignores %s (the store: large, binary, not to commit)\n", filepath.Join(dir, starter.GitignoreFile), workbench.DBName)
	}
	return nil
}

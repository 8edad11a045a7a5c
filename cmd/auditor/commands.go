package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/workbench"
)

func newDemoCmd(std Stdio) *cobra.Command {
	var dir string
	var f runFlags
	c := &cobra.Command{
		Use:   "demo",
		Short: "Run the bundled example audit against the built-in simulated model",
		Long: `Write the bundled example (a support prompt, three lines under audit, their case
files and predicates) to a directory and run it against auditor's built-in
simulated model. No API key is needed and nothing leaves the machine. Every
result is marked SIMULATED.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				d, err := os.MkdirTemp("", "auditor-demo-")
				if err != nil {
					return err
				}
				dir = d
			}
			kept, err := examples.WriteKeeping(dir)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, examples.DemoAudit)
			if len(kept) > 0 {
				fmt.Fprintf(std.Err, "demo audit in %s: kept its %d existing files as they are (%s); delete them for the bundled ones\n",
					dir, len(kept), strings.Join(kept, ", "))
			} else {
				fmt.Fprintf(std.Err, "demo audit written to %s\n", dir)
			}
			f.yes = true
			if !cmd.Flags().Changed("sim-latency") && interactive(std, f.headless) {
				f.simLatency = demoSimLatency
			}
			return runAudit(cmd.Context(), std, path, f, os.Args[0]+" run")
		},
	}
	c.Flags().StringVar(&dir, "dir", "", "directory to write the example to (default: a new temporary directory)")
	c.Flags().BoolVar(&f.headless, "headless", false, "print progress lines and a table instead of the interactive screen")
	c.Flags().IntVar(&f.samples, "samples", 0, "samples per case and variant (default: the example's 30)")
	c.Flags().DurationVar(&f.simLatency, "sim-latency", 0, "mean answer latency of the simulated model")
	return c
}

func newPlanCmd(std Stdio) *cobra.Command {
	var format string
	var samples, concurrency, pilot, labelBudget int
	var allowLarge, allowUnpriced bool
	c := &cobra.Command{
		Use:   "plan AUDIT",
		Short: "Show what a run would call and cost, without making calls",
		Long: `Show the calls a run would make (answers already stored are free), the input and
output tokens, the dollars with and without prompt caching, and the minutes at
the set concurrency. Makes no calls, unless --pilot: then it first makes N
real answer calls (default 5% of the cells, at most 20), stores them for the
run, and estimates answer length, latency and the judge calls identical
answers share from them. --format json gives the same as an object.

Per line it also says what DELETE will take: how many blind labels of the
answers without the line a line the model never breaks needs (all clean), and
the chance that a line that does nothing reaches DELETE with --labels blind
labels (default 60), simulated through the exact rule with a perfect predicate.`,
		Args: cobra.ArbitraryArgs, // checked once --pilot has taken its N
		RunE: func(cmd *cobra.Command, args []string) error {
			args = pilotArgs(args, &pilot)
			if err := exactArgs(1)(cmd, args); err != nil {
				return err
			}
			if cmd.Flags().Changed("pilot") && pilot == 0 {
				return &usageError{fmt.Errorf("--pilot 0: a pilot makes 1 to %d calls (--pilot alone: 5%% of the cells, at most 20); leave --pilot out for an estimate with no calls", model.MaxConcurrency), ""}
			}
			if err := checkRunFlags(runFlags{samples: samples, concurrency: concurrency}); err != nil {
				return err
			}
			if labelBudget < 0 || labelBudget > 100_000 {
				return &usageError{fmt.Errorf("--labels %d: want 0 to 100000", labelBudget), ""}
			}
			o := workbench.Options{Samples: samples, Access: workbench.IfExists, AllowLarge: allowLarge, Read: true}
			if pilot != 0 {
				o.Access = workbench.Write  // the pilot's answers are stored
				o.RefusePlaceholders = true // and paid for, like a run's
				o.Read = false
			}
			s, err := workbench.Open(cmd.Context(), args[0], o)
			if errors.Is(err, workbench.ErrTooLarge) {
				return &usageError{err, ""}
			}
			if pe := (*workbench.PlaceholderError)(nil); errors.As(err, &pe) {
				return &refusal{fmt.Errorf("no pilot: %w", pe)}
			}
			if err != nil {
				return err
			}
			defer s.Close()
			warnPlaceholders(std, s)
			if err := sayNotices(std, s); err != nil {
				return err
			}
			var pr *pilotResult
			if pilot != 0 {
				r, err := runPilot(cmd.Context(), std, s, pilot, allowUnpriced)
				if err != nil {
					return err
				}
				pr = &r
			}
			status, err := s.Status()
			if err != nil {
				return err
			}
			if status, err = s.CallsDone(status, false); err != nil {
				return err
			}
			conc := s.Audit.File.Concurrency
			if concurrency > 0 {
				conc = concurrency
			}
			est, err := s.Estimate(status, conc, 0, true)
			if err != nil {
				return err
			}
			if labelBudget != audit.DefaultLabelBudget {
				est.SetLabelBudget(s.Plan, labelBudget)
			}
			execs, err := s.ExecCommands()
			if err != nil {
				return err
			}
			switch format {
			case "json":
				return writeJSON(std.Out, planDoc{Estimate: est, Pilot: pr, ExecCommands: execDocs(execs)})
			case "text":
				if s.Simulated() {
					fmt.Fprintln(std.Out, report.SimulatedBanner)
				}
				if pr != nil && pr.Calls > 0 {
					fmt.Fprintf(std.Out, "pilot: %d calls made and stored, $%.4f (the run reuses them; the audit's spend counts them); the estimates below are measured on the answers stored\n", pr.Calls, pr.USD)
				}
				if err := report.WritePlan(std.Out, s.Audit, est, 0); err != nil {
					return err
				}
				if err := report.WritePlanPower(std.Out, est); err != nil {
					return err
				}
				writeExecPlan(std.Out, execs, args[0])
				return nil
			}
			return &usageError{fmt.Errorf("unknown --format %q (want text or json)", format), ""}
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text or json")
	c.Flags().IntVar(&samples, "samples", 0, "samples per case and variant (default: the audit's samples)")
	c.Flags().IntVar(&concurrency, "concurrency", 0, "calls in flight at once (default: the audit's concurrency)")
	c.Flags().BoolVar(&allowLarge, "allow-large", false, fmt.Sprintf("plan above %d cells (refused otherwise)", audit.MaxCells))
	c.Flags().IntVar(&labelBudget, "labels", audit.DefaultLabelBudget, "blind labels to assume for the chance of DELETE")
	addPilotFlag(c, &pilot)
	addAllowUnpricedFlag(c, &allowUnpriced)
	return c
}

func newReportCmd(std Stdio) *cobra.Command {
	var format, out string
	var gate bool
	c := &cobra.Command{
		Use:   "report AUDIT",
		Short: "Print verdicts and the evidence behind them from stored results",
		Long: `Print each audited line's verdict with the evidence behind it, from what is stored:
no calls are made. Answers are re-graded first if a predicate changed.
--format md for a review, json for scripts (stable fields), junit for CI, html
for reviewers in a browser: one self-contained file that loads nothing from
anywhere (attach it to a pull request or a CI run's artifacts). --out writes
the report to a file instead of standard output.
With --gate, exit 3 when any line's verdict is not DELETE, its change broke a
regression case, or one of its cases has no graded answer under a variant
(still pending, or every call failed): the message names the case.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// During a run (or with the app open) it reads what is stored
			// so far, from the copy the writing process publishes.
			s, err := workbench.Open(cmd.Context(), args[0], workbench.Options{Access: workbench.Write, Read: true})
			if err != nil {
				return err
			}
			defer s.Close()
			sayOpened(std, s, args[0])
			res, err := s.Results()
			if err != nil {
				return err
			}
			spend, err := s.Spend()
			if err != nil {
				return err
			}
			design, err := s.DesignNotice()
			if err != nil {
				return err
			}
			if design != "" {
				fmt.Fprintf(std.Err, "warning: %s\n", design)
			}
			if err := writeReport(std.Out, out, format, s, res, spend, design); err != nil {
				return err
			}
			if gate {
				return gateError(res)
			}
			return nil
		},
	}
	c.Flags().StringVar(&format, "format", "text", "text, md, json, junit or html")
	c.Flags().StringVarP(&out, "out", "o", "", "file to write the report to (default: standard output)")
	c.Flags().BoolVar(&gate, "gate", false, "exit 3 when any line's verdict is not DELETE, its change broke a regression case, or a case of it has no graded answers")
	return c
}

func newExportCmd(std Stdio) *cobra.Command {
	var what, format, out string
	c := &cobra.Command{
		Use:   "export AUDIT",
		Short: "Write stored responses, grades or labels as JSONL or CSV",
		Long: `Write what is stored for the audit: responses (one record per planned cell, with
its grades), grades, or labels (the file import-labels reads back). JSONL field
names are stable. CSV cells are stripped of terminal control sequences and
guarded against spreadsheet formulas.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A bad --what or --format is a bad command line (exit 2, as
			// report --format bogus), said before anything is opened or
			// an --output file created.
			if !slices.Contains([]string{"responses", "grades", "labels"}, what) {
				return &usageError{fmt.Errorf("unknown --what %q (want responses, grades or labels)", what), ""}
			}
			if format != "jsonl" && format != "csv" {
				return &usageError{fmt.Errorf("unknown --format %q (want jsonl or csv)", format), ""}
			}
			s, err := workbench.Open(cmd.Context(), args[0], workbench.Options{Access: workbench.StoreOnly, Read: true})
			if err != nil {
				return err
			}
			defer s.Close()
			if note := s.ReadNote(); note != "" {
				fmt.Fprintln(std.Err, note)
			}
			w := std.Out
			var file *os.File
			if out != "" && out != "-" {
				if file, err = os.Create(out); err != nil {
					return err
				}
				w = file
			}
			switch what {
			case "responses":
				err = report.ExportResponses(w, s.Plan, s.AllPredicateVersions(), s.ExportSource(), format)
			case "grades":
				// Grades from the current predicates, so answers an edit
				// left ungraded are graded first.
				if err = s.Refresh(); err == nil {
					sayNotApproved(std, s, args[0])
					err = report.ExportGrades(w, s.Plan, s.AllPredicateVersions(), s.ExportSource(), format)
				}
			case "labels":
				var book *model.LabelBook
				switch {
				case format == "jsonl":
					// The label file's own bytes: labels, label sets, rule histories.
					_, err = s.WriteLabelFile(w)
				default:
					if book, err = s.LabelBook(); err == nil {
						err = report.ExportLabels(w, book, format)
					}
				}
			}
			if file != nil {
				if cerr := file.Close(); err == nil {
					err = cerr
				}
			}
			return err
		},
	}
	c.Flags().StringVar(&what, "what", "responses", "responses, grades or labels")
	c.Flags().StringVar(&format, "format", "jsonl", "jsonl or csv")
	c.Flags().StringVarP(&out, "output", "o", "", "file to write (default: standard output)")
	return c
}

func newImportLabelsCmd(std Stdio) *cobra.Command {
	var overwrite bool
	var labeller, design, kinds, variant, setName string
	var rule int
	c := &cobra.Command{
		Use:   "import-labels AUDIT FILE",
		Short: "Merge hand labels (a label export or a filled-in blind sheet) into the audit's store",
		Long: `Read label records and merge them into the store. FILE is JSONL, or CSV when its
name ends in .csv, in either of two shapes:

  - the label export (export --what labels): key, violation, labeller, note, at,
    and optionally source "blind" or "seen" (default blind) and undo;
  - a blind sheet written by auditor label --sheet, with the violation column
    filled in. Its other columns (the rule, case, conversation, answer) are
    read and ignored.

violation takes ` + report.ViolationWords + `:
rows left empty are skipped and counted. A row's labeller is its own, else
--labeller's; a row with neither is refused. A row without at gets the time of
its import and is the same label on every later import. Labels without a
source are blind labels: a sheet shows no grader's verdict.

A record the store already holds is unchanged, so importing the same file twice
is a no-op; so is a label that repeats its labeller's verdict. A label with the
same verdict and another note adds the note. A second labeller's label is added
beside the first's. A label whose verdict differs from the same labeller's label
of the same answer is a conflict and is not imported unless --overwrite is given;
the previous label stays in the history either way. Records for responses this
audit does not use are reported and skipped. A label counts only for the answer
it judged: a sheet row whose answer differs from the one stored under its key
(a sheet written before the answers were asked again), or a record naming
another answer's hash, is refused and named by file and line; the rest are
imported. Labels count only in a declared design (a label set drawn by auditor
label); labels drawn at random elsewhere are declared with --design random and
the frame they were drawn from (--rule, --kinds, --variant), as label set --set.
Afterwards the audit's label file
(<audit>.labels.jsonl) is rewritten.

Exit codes: 0 every record imported or already held; 4 some records were not
imported (conflicts, unknown responses, rows whose answer is not the one
stored, undo records with nothing to undo; the rest were); 2 the file cannot be
read (nothing imported).`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := audit.ReadRegular(args[1])
			if err != nil {
				return &model.InputError{File: args[1], Msg: "cannot read: " + err.Error()}
			}
			rows, err := report.ParseLabels(args[1], data, report.ParseOptions{Labeller: labeller, RequireLabeller: true})
			if err != nil {
				return err
			}
			iopts := workbench.ImportOptions{Overwrite: overwrite}
			access := workbench.StoreOnly
			switch design {
			case "":
				for _, name := range []string{"rule", "kinds", "variant", "set"} {
					if cmd.Flags().Changed(name) {
						return &usageError{fmt.Errorf("--%s describes a declared design: give --design random", name), cmd.CommandPath()}
					}
				}
			case "random":
				o := labels.SampleOptions{Name: setName, Line: rule, Variant: variant}
				if o.Name == "" {
					o.Name = "declared-" + strings.TrimSuffix(filepath.Base(args[1]), filepath.Ext(args[1]))
				}
				for _, k := range strings.Split(kinds, ",") {
					kind, ok := model.ParseKind(strings.TrimSpace(k))
					if !ok {
						return &usageError{fmt.Errorf("--kinds: unknown kind %q (want provoke, pressure or control)", k), cmd.CommandPath()}
					}
					o.Kinds = append(o.Kinds, kind)
				}
				switch variant {
				case "", labels.VariantDeleted, labels.VariantBaseline:
				default:
					return &usageError{fmt.Errorf("--variant %q: want deleted or baseline (empty: both)", variant), cmd.CommandPath()}
				}
				iopts.Random, access = &o, workbench.Write
			default:
				return &usageError{fmt.Errorf("--design %q: the only design to declare is random", design), cmd.CommandPath()}
			}
			s, err := workbench.Open(cmd.Context(), args[0], workbench.Options{Access: access})
			if err != nil {
				return err
			}
			defer s.Close()
			res, err := s.ImportLabels(args[1], rows, iopts)
			if err != nil {
				return err
			}
			if d := res.Declared; d != nil {
				rule, kinds := d.Options.Scope()
				frame := rule + ", " + kinds
				if d.Options.Variant != "" {
					frame += ", " + d.Options.Variant + " variant"
				}
				fmt.Fprintf(std.Out, "declared label set %s: %d labelled answers, a simple random sample of the %d answers of %s\n",
					d.Name, len(d.Keys), d.Population, frame)
			}
			if n := len(res.Outside); n > 0 {
				fmt.Fprintf(std.Err, "%d labelled %s outside the declared frame: in no design, counted nowhere\n", n, plural(n, "answer is", "answers are"))
			}
			unknown := res.Unknown
			fmt.Fprintf(std.Out, "labels: %d added, %d unchanged, %d overwritten, %d conflicts, %d for responses this audit does not use (skipped)",
				res.Added, res.Unchanged, len(res.Overwritten), len(res.Conflicts), unknown)
			if res.Noted > 0 {
				fmt.Fprintf(std.Out, ", %d %s to a label of the same verdict", res.Noted, plural(res.Noted, "note added", "notes added"))
			}
			if n := len(res.Mismatched); n > 0 {
				fmt.Fprintf(std.Out, ", %d whose answer is not the one stored (refused)", n)
			}
			fmt.Fprintln(std.Out)
			if rows.Unlabelled > 0 {
				fmt.Fprintf(std.Out, "%d %s not yet labelled (violation empty): skipped\n", rows.Unlabelled, plural(rows.Unlabelled, "row", "rows"))
			}
			if n := len(res.Orphans); n > 0 {
				fmt.Fprintf(std.Out, "%d undo %s took back no label (nothing of that labeller to undo): skipped\n", n, plural(n, "record", "records"))
			}
			for i, m := range res.Mismatched {
				if i == 10 {
					fmt.Fprintf(std.Err, "  ... and %d more whose answer is not the one stored\n", len(res.Mismatched)-10)
					break
				}
				fmt.Fprintf(std.Err, "  %s\n", model.Sanitize(m))
			}
			for i, c := range res.Conflicts {
				if i == 10 {
					fmt.Fprintf(std.Err, "  ... and %d more\n", len(res.Conflicts)-10)
					break
				}
				fmt.Fprintf(std.Err, "  conflict on %s: %s said violation=%t, the file says violation=%t\n",
					c.Key, model.Sanitize(c.Current.Labeller), c.Current.Violation, c.Incoming.Violation)
			}
			if refused := res.Refused(); refused > 0 {
				msg := fmt.Sprintf("partial import: %d of %d records not imported", refused, len(rows.Labels))
				if len(res.Conflicts) > 0 {
					msg += "; re-run with --overwrite to replace the conflicting labels (history keeps the old values)"
				}
				return &exitError{code: exitPartial, msg: msg}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&overwrite, "overwrite", false, "replace existing labels that differ (the old value stays in the history)")
	c.Flags().StringVar(&design, "design", "", "declare how the labelled answers were chosen: random (a simple random sample of the frame --rule, --kinds, --variant give); labels in no declared design count nowhere")
	c.Flags().IntVar(&rule, "rule", 0, "with --design: the frame is this line's answers (default: every line)")
	c.Flags().StringVar(&kinds, "kinds", "provoke,pressure", "with --design: the frame's case kinds, comma-separated")
	c.Flags().StringVar(&variant, "variant", "", "with --design: the frame's variant, deleted or baseline (default: both)")
	c.Flags().StringVar(&setName, "set", "", "with --design: the declared label set's name (default: declared-<file>)")
	c.Flags().StringVar(&labeller, "labeller", "", "who labelled the rows that name no labeller (a sheet's empty labeller column)")
	return c
}

// gateError is the --gate outcome: nil when every line's verdict is DELETE
// (every rewording's or addition's BETTER or NOT WORSE) and every case of
// every line has answers under both variants, else exit 3 naming every
// line that is not.
func gateError(res *evidence.Results) error {
	// The prompt that ships has every deleted line out at once: with a
	// joint test, its decision is the gate.
	if sh := res.Ship; sh != nil {
		if sh.Decision.Decision == model.DecisionShip {
			return nil
		}
		return &exitError{code: exitGate, msg: "gate: " + sh.Decision.Headline}
	}
	var held []string
	for _, rr := range res.Rules {
		// A deletion the frozen regression suite says broke other cases is
		// not safe to ship whatever its own evidence says; nor is one that
		// rests on fewer cases than the user wrote (a case still pending,
		// or whose every call failed, may be the one the line protects).
		broken := rr.RegressionBroken()
		missing := unansweredCase(rr)
		if rr.Verdict.Decision.Passes() && broken == 0 && missing == "" {
			continue
		}
		name := fmt.Sprintf("line %d %s", rr.Rule.Line, rr.Verdict.Decision)
		if !rr.Rule.Deletion() {
			name = fmt.Sprintf("%s %s", rr.Rule.Variant(), rr.Verdict.Decision)
		}
		if broken > 0 {
			name += fmt.Sprintf(" (regression suite: %d broken)", broken)
		}
		if missing != "" && rr.Verdict.Decision.Passes() {
			name += " (" + missing + ")"
		}
		if len(res.Plan.Audit.File.Models) > 1 {
			name += " on " + model.Sanitize(rr.ModelName)
		}
		held = append(held, name)
	}
	if len(held) == 0 {
		if lines := auditedLines(res); len(lines) > 1 {
			// Each line DELETE alone says nothing of them all out at
			// once: rules interfere.
			return &exitError{code: exitGate, msg: fmt.Sprintf("gate: lines %s are each safe to delete alone; the prompt without all of them is one more test: auditor ship %s",
				model.LineList(lines), shellQuote(res.Plan.Audit.Path))}
		}
		return nil
	}
	return &exitError{code: exitGate, msg: "gate: not safe to delete: " + strings.Join(held, ", ")}
}

// plural picks the noun for a count.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// unansweredCase names the first case of a rule with no graded answer under
// a variant (still pending, every call failed, or every answer cut off), with
// why, and counts the others; "" when every case has answers under both.
func unansweredCase(rr *evidence.RuleResult) string {
	var first string
	more := 0
	for _, c := range rr.Cases {
		var why []string
		for _, side := range []struct {
			name  string
			count evidence.Count
		}{{audit.Baseline, c.Baseline}, {rr.Rule.Variant(), c.Deleted}} {
			if k := side.count; k.N == 0 {
				w := fmt.Sprintf("%s: %d pending, %d errored", side.name, k.Pending, k.Errors)
				if k.Truncated > 0 {
					w += fmt.Sprintf(", %d truncated or empty", k.Truncated)
				}
				why = append(why, w)
			}
		}
		switch {
		case len(why) == 0:
		case first == "":
			first = fmt.Sprintf("case %s has no graded answers (%s)", model.Sanitize(c.Case.ID), strings.Join(why, "; "))
		default:
			more++
		}
	}
	if more > 0 {
		first += fmt.Sprintf(", nor %d more %s", more, plural(more, "case", "cases"))
	}
	return first
}

// writeReport writes the report in format to stdout, or to the file out
// names (written whole or not at all: a failed render leaves no half page).
// warning, when not "", heads the text and Markdown reports (the looks
// changed after answers were gathered); the other formats' readers get it
// on standard error.
func writeReport(stdout io.Writer, out, format string, s *workbench.Session, res *evidence.Results, spend audit.Spend, warning string) error {
	var b bytes.Buffer
	var err error
	switch format {
	case "text":
		if warning != "" {
			fmt.Fprintf(&b, "WARNING: %s\n\n", warning)
		}
		err = report.WriteText(&b, res, spend, s.Simulated())
	case "md":
		if warning != "" {
			fmt.Fprintf(&b, "> **Warning:** %s\n\n", warning)
		}
		err = report.WriteMarkdown(&b, res, spend, s.Simulated())
	case "json":
		err = report.WriteJSON(&b, report.Build(res, spend, s.Simulated()))
	case "junit":
		err = report.WriteJUnit(&b, res, spend, s.Simulated())
	case "html":
		var page report.Page
		if page, err = s.Page(res, spend); err == nil {
			err = report.WriteHTML(&b, page)
		}
	default:
		return &usageError{fmt.Errorf("unknown --format %q (want text, md, json, junit or html)", format), ""}
	}
	if err != nil {
		return err
	}
	if out == "" || out == "-" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

// auditedLines lists the prompt lines the audit's deletions change.
func auditedLines(res *evidence.Results) []int {
	var out []int
	for _, rr := range res.Rules {
		if rr.Rule.Deletion() && !slices.Contains(out, rr.Rule.Line) {
			out = append(out, rr.Rule.Line)
		}
	}
	return out
}

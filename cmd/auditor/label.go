package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/workbench"
)

// labelFlags are the options of `auditor label`.
type labelFlags struct {
	n          int
	seed       int64
	rule       int
	kinds      string
	stratify   bool
	failShare  float64
	labeller   string
	set        string
	show       bool
	width      float64
	forVerdict bool
	sheet      string
}

func newLabelCmd(std Stdio) *cobra.Command {
	var f labelFlags
	c := &cobra.Command{
		Use:   "label AUDIT",
		Short: "Draw a blind sample of answers to hand-label, and measure the predicate on it",
		Long: `Draw a named, seeded random sample of graded answers to label by hand (default 60,
provoke and pressure cases, both variants) and store it, so it survives restarts;
running the command again with the same --set shows the same sample, never a new
one. Labelling is blind: the sample is shuffled and nothing shows the predicate's
verdict.

--stratify draws a third of the sample (--fail-share) from the answers the
predicate failed and the rest from those it passed, where its misses hide; recall
is then weighted by stratum (inverse-probability weights).

On a terminal, without --show, the command opens the label screen on the set:
one answer at a time, blind (v violation, o ok, s skip, u undo, i note); each
label is committed before the next answer shows, and the predicate's verdict is
revealed after the next label (or on w), so u right after a slip gives the
answer back still blind. Labels can also come from import-labels.
Without a terminal there is no screen to label on: nothing is drawn, and the
command exits 2 pointing to --sheet FILE.

--for-verdict draws, for each INCONCLUSIVE line (or --rule), the labels that
would settle it: when a bound on the answers without the line can (DELETE's
labels route: a line the model never breaks needs about 86 of them labelled
clean at delta 0.05), that many of those answers, drawn from the ones no one has labelled;
otherwise a stratified set of --n to measure the predicate. Each set is new
(verdict-L<line>, verdict-L<line>-2, ...); every label counts with the rest.

--show only looks: it draws and stores nothing (a set not drawn yet is
refused; with --for-verdict it says what each line's labels would settle). It
prints progress and the predicate's recall, precision and specificity per
kind with 95% intervals, the confusion matrix, the misses, how many more labelled
violations would narrow recall's interval to --width, the recall of every
predicate version seen, and the agreement between labellers. --labeller measures against one
labeller's labels instead of the current ones.

--sheet FILE writes the set (with --for-verdict, every set drawn, one after
the other) as a blind sheet instead of opening the screen:
JSONL, or CSV when FILE ends in .csv, one row per answer in the set's shuffled
order with the rule, the case's kind and id, the conversation the model
answered, the answer, and empty violation, labeller and note columns; nothing
that shows a grader's verdict, the variant or the stratum. Answers that already
have a blind label are left out (with --labeller, those that labeller labelled,
and the labeller column is filled in). Fill in the violation column, then
auditor import-labels AUDIT FILE: the rows come back as blind labels.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLabel(cmd, std, args[0], f)
		},
	}
	fl := c.Flags()
	fl.IntVar(&f.n, "n", labels.DefaultSampleSize, "answers to draw")
	fl.Int64Var(&f.seed, "seed", 0, "random seed (default: the stored set's, or a new one)")
	fl.IntVar(&f.rule, "rule", 0, "audited prompt line to sample (default: every rule)")
	fl.StringVar(&f.kinds, "kinds", "provoke,pressure", "case kinds to sample, comma-separated")
	fl.BoolVar(&f.stratify, "stratify", false, "draw separately from the answers the predicate failed and passed")
	fl.Float64Var(&f.failShare, "fail-share", labels.DefaultFailShare, "with --stratify, the share drawn from failed answers")
	fl.Lookup("fail-share").DefValue = "0.333"
	fl.StringVar(&f.labeller, "labeller", "", "on a terminal, your name on the labels you give (default: $AUDITOR_LABELLER, else your user name); with --show, measure against this labeller's blind labels (default: every first labeller's)")
	fl.StringVar(&f.set, "set", "", "name of the label set (default: derived from --rule and --stratify)")
	fl.BoolVar(&f.show, "show", false, "print progress and results")
	fl.BoolVar(&f.forVerdict, "for-verdict", false, "draw, for each INCONCLUSIVE line, the answers whose labels would settle it")
	fl.StringVar(&f.sheet, "sheet", "", "write the set as a blind sheet to this file (JSONL, or CSV for a .csv name) to label outside the screen, then import-labels it")
	fl.Float64Var(&f.width, "width", 0.1, "target full width of recall's 95% interval (0.1 is ±0.05, as the label screen uses), for the labels-needed estimate")
	return c
}

// drawFlags are the flags that define a sample; they must match a stored
// set of the same name.
var drawFlags = []string{"n", "seed", "rule", "kinds", "stratify", "fail-share"}

func defaultSetName(f labelFlags) string {
	name := "sample"
	if f.rule != 0 {
		name += fmt.Sprintf("-L%d", f.rule)
	}
	if f.stratify {
		name += "-stratified"
	}
	return name
}

func runLabel(cmd *cobra.Command, std Stdio, path string, f labelFlags) error {
	if f.width <= 0 || f.width > 1 {
		return &usageError{fmt.Errorf("--width must be in (0, 1]"), ""}
	}
	opts := labels.SampleOptions{Name: f.set, N: f.n, Seed: f.seed, Line: f.rule, Stratify: f.stratify, FailShare: f.failShare}
	if opts.Name == "" {
		opts.Name = defaultSetName(f)
	}
	for _, k := range strings.Split(f.kinds, ",") {
		kind, ok := model.ParseKind(strings.TrimSpace(k))
		if !ok {
			return &usageError{fmt.Errorf("--kinds: unknown kind %q (want provoke, pressure or control)", k), ""}
		}
		opts.Kinds = append(opts.Kinds, kind)
	}

	if f.forVerdict {
		for _, name := range []string{"set", "stratify", "fail-share", "kinds", "seed"} {
			if cmd.Flags().Changed(name) {
				return &usageError{fmt.Errorf("--for-verdict draws what each verdict needs: it takes --rule and --n, not --%s", name), ""}
			}
		}
	}
	// Looking never writes, and a set is drawn only to be labelled: on
	// the label screen or on a sheet. Without a terminal there is no
	// screen, so nothing is drawn.
	if !f.show && f.sheet == "" && !interactive(std, false) {
		return &refusal{errNoTerminal}
	}
	s, err := workbench.Open(cmd.Context(), path, workbench.Options{Access: workbench.Write})
	if err != nil {
		return err
	}
	defer s.Close()
	sayOpened(std, s, path)
	if f.forVerdict {
		return labelForVerdict(cmd, std, s, f)
	}

	old, exists, err := labels.LoadLabelSet(s.Store, opts.Name)
	if err != nil {
		return err
	}
	changed := slices.ContainsFunc(drawFlags, func(n string) bool { return cmd.Flags().Changed(n) })
	var set labels.LabelSet
	switch {
	case exists && !changed:
		set = old
	case f.show && !exists:
		return &refusal{fmt.Errorf("no label set %s is drawn yet, and --show only looks (it draws nothing): "+
			"draw it with the same flags without --show on a terminal, or with --sheet FILE", model.Sanitize(opts.Name))}
	default:
		if exists {
			opts = inheritOptions(cmd, opts, old.Options)
		} else if !cmd.Flags().Changed("seed") {
			opts.Seed = time.Now().UnixNano() % 1_000_000
		}
		if f.show {
			// A stored set is shown as drawn; other options would be a
			// new draw.
			if set, _, err = labels.FindLabelSet(s.Store, opts); errors.Is(err, labels.ErrLabelSetExists) {
				return &refusal{fmt.Errorf("%w; --show only looks (it draws nothing): drop the draw flags, or draw a new set with --set NAME", err)}
			} else if err != nil {
				return err
			}
			break
		}
		set, err = labels.DrawLabelSample(s.LabelStore(), s.Plan, s.Tally, opts)
		if errors.Is(err, labels.ErrLabelSetExists) {
			return &usageError{err, ""}
		}
		if err != nil {
			return err
		}
		if !exists {
			fmt.Fprintf(std.Err, "drew label set %s\n", set.Name)
		}
		// The numbers below weigh labels by every set: the new one too.
		s.Tally.AddLabelSet(set)
		// The set's draw goes into the label file with the labels: a
		// file that cannot be written (a full disk) is an error here, not
		// after the labelling it would leave undescribed.
		if err := saveLabelFile(s); err != nil {
			return err
		}
	}

	if f.sheet != "" {
		if err := writeLabelSheet(std, s, []labels.LabelSet{set}, f.labeller, f.sheet); err != nil {
			return err
		}
	} else if !f.show && interactive(std, false) {
		// On a terminal, label: --labeller is who labels (default: the user).
		return labelInteractive(cmd.Context(), std, s, set, f.labeller)
	}
	labels := s.Tally.Labels()
	who := "current labels"
	if f.labeller != "" {
		labels, who = s.Tally.LabelBook().Of(f.labeller), "blind labels by "+model.Sanitize(f.labeller)
	}
	if s.Simulated() {
		fmt.Fprintln(std.Out, report.SimulatedBanner)
	}
	if err := report.WriteLabelSetHeader(std.Out, set, labels, who); err != nil {
		return err
	}
	if !f.show {
		return nil
	}
	r, err := evidence.BuildSetReport(s.Store, s.Tally, set, labels, who)
	if err != nil {
		return err
	}
	if err := report.WriteLabelSetResults(std.Out, r, f.width); err != nil {
		return err
	}
	res, err := s.Results()
	if err != nil {
		return err
	}
	return report.WriteVerdictQuality(std.Out, res, r)
}

// errNoTerminal refuses `label` with nothing to label on: no set is
// drawn for a screen that cannot open.
var errNoTerminal = errors.New("no terminal to label on, so nothing was drawn: " +
	"--sheet FILE writes the set as a blind sheet to label in a spreadsheet or editor (then import-labels FILE), " +
	"and --show prints what the labels measured")

// inheritOptions fills the draw flags the user did not give from a stored
// set's options, so only a flag that really differs is a conflict.
func inheritOptions(cmd *cobra.Command, opts, old labels.SampleOptions) labels.SampleOptions {
	fl := cmd.Flags()
	if !fl.Changed("n") {
		opts.N = old.N
	}
	if !fl.Changed("seed") {
		opts.Seed = old.Seed
	}
	if !fl.Changed("rule") {
		opts.Line = old.Line
	}
	if !fl.Changed("kinds") {
		opts.Kinds = old.Kinds
	}
	if !fl.Changed("stratify") {
		opts.Stratify = old.Stratify
	}
	if !fl.Changed("fail-share") && old.Stratify {
		opts.FailShare = old.FailShare
	}
	return opts
}

// labelForVerdict draws what each INCONCLUSIVE verdict needs, says what
// each set can settle, and opens the label screen on the first (on a
// terminal, without --show) or shows them.
func labelForVerdict(cmd *cobra.Command, std Stdio, s *workbench.Session, f labelFlags) error {
	if s.Audit.Ship == nil && f.rule == 0 {
		// A sweep: say, before any label, that the prompt shipped is one
		// more test, and the cheaper way to it.
		c, err := s.ChooseJoint(nil)
		if err != nil {
			return err
		}
		switch {
		case len(c.Lines) > 1:
			fmt.Fprintf(std.Err, "lines %s are each DELETE alone; the prompt without all of them is one more test: auditor ship %s\n", model.LineList(c.Lines), shellQuote(s.Audit.Path))
		case len(c.Lines) == 0:
			if path := workbench.CheaperPath(c.Candidates, workbench.LabelsForQuietClass(s.Audit.File.Delta)); path != "" {
				fmt.Fprintln(std.Err, path)
			}
		}
	}
	if f.show && f.sheet == "" {
		return showForVerdict(std, s, f)
	}
	draws, err := s.DrawForVerdict(f.rule, f.n)
	if err != nil {
		return err
	}
	var drawn []labels.LabelSet
	for _, d := range draws {
		variant := d.Rule.Variant()
		if d.Joint {
			variant = "the joint test"
		}
		fmt.Fprintf(std.Err, "line %d (%s): %s\n", d.Rule.Line, variant, model.Sanitize(d.Why))
		if d.Set != nil {
			fmt.Fprintf(std.Err, "  drew label set %s: %d answers\n", d.Set.Name, len(d.Set.Keys))
			drawn = append(drawn, *d.Set)
		}
	}
	if len(drawn) == 0 {
		fmt.Fprintln(std.Out, "nothing to draw: no INCONCLUSIVE verdict that labels can settle")
		return nil
	}
	if err := saveLabelFile(s); err != nil {
		return err
	}
	if f.sheet != "" {
		if err := writeLabelSheet(std, s, drawn, f.labeller, f.sheet); err != nil {
			return err
		}
	} else if !f.show && interactive(std, false) {
		for _, set := range drawn[1:] {
			fmt.Fprintf(std.Err, "then: auditor label %s --set %s\n", shellQuote(s.Audit.Path), shellQuote(set.Name))
		}
		return labelInteractive(cmd.Context(), std, s, drawn[0], f.labeller)
	}
	if s.Simulated() {
		fmt.Fprintln(std.Out, report.SimulatedBanner)
	}
	for _, set := range drawn {
		if err := report.WriteLabelSetHeader(std.Out, set, s.Tally.Labels(), "current labels"); err != nil {
			return err
		}
		fmt.Fprintf(std.Out, "label: auditor label %s --set %s\n", shellQuote(s.Audit.Path), shellQuote(set.Name))
	}
	return nil
}

// showForVerdict says what each INCONCLUSIVE line's labels would settle,
// drawing nothing: --show only looks.
func showForVerdict(std Stdio, s *workbench.Session, f labelFlags) error {
	needs, err := s.NeededForVerdict(f.rule, f.n)
	if err != nil {
		return err
	}
	if s.Simulated() {
		fmt.Fprintln(std.Out, report.SimulatedBanner)
	}
	draw := false
	for _, d := range needs {
		fmt.Fprintf(std.Out, "line %d (%s): %s\n", d.Rule.Line, d.Rule.Variant(), model.Sanitize(d.Why))
		draw = draw || d.Route != ""
	}
	if draw {
		fmt.Fprintf(std.Out, "nothing drawn (--show only looks); to draw and label: auditor label %s --for-verdict, or add --sheet FILE\n",
			shellQuote(s.Audit.Path))
	}
	return nil
}

// writeLabelSheet writes sets as one blind sheet to file, set after set,
// each in its own order (never over an existing file: it may hold labels
// typed into it), and says on stderr what to do with it. Answers already
// labelled blind are left out: by labeller when one is named (the sheet is
// theirs; others' labels do not matter, a second opinion measures
// agreement), else by anyone, the undone too (whoever took a label back
// saw its graders, and the sheet cannot know who fills it in). An answer
// in several sets is written once.
func writeLabelSheet(std Stdio, s *workbench.Session, sets []labels.LabelSet, labeller, file string) error {
	book := s.Tally.LabelBook()
	written := map[string]bool{}
	labelled := func(key string) bool { return written[key] || book.AnyoneGave(key, model.LabelBlind) }
	if labeller != "" {
		labelled = func(key string) bool { return written[key] || book.Gave(key, labeller, model.LabelBlind) }
	}
	var sh report.Sheet
	var names []string
	for _, set := range sets {
		part, err := report.BuildSheet(s.Plan, set, s.Store, labelled, labeller)
		if err != nil {
			return err
		}
		for _, r := range part.Rows {
			written[r.Key] = true
		}
		sh.Rows, sh.Labelled, sh.Gone = append(sh.Rows, part.Rows...), sh.Labelled+part.Labelled, sh.Gone+part.Gone
		names = append(names, model.Sanitize(set.Name))
	}
	setNames := "label set " + strings.Join(names, ", ")
	if len(names) > 1 {
		setNames = "label sets " + strings.Join(names, ", ")
	}
	who := "already have a blind label; --labeller NAME keeps those NAME has not labelled, for a second opinion"
	if labeller != "" {
		who = model.Sanitize(labeller) + " has labelled blind"
	}
	if sh.Gone > 0 {
		fmt.Fprintf(std.Err, "%d answers of the set are no longer in the audit's plan or store: left out\n", sh.Gone)
	}
	if len(sh.Rows) == 0 {
		fmt.Fprintf(std.Err, "nothing to label in %s, no sheet written: its %d answers %s\n", setNames, sh.Labelled, who)
		return nil
	}
	out, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return &usageError{fmt.Errorf("--sheet %s: the file exists and may hold labels typed into it: import it, or remove it, or choose another name", file), ""}
	}
	if err != nil {
		return fmt.Errorf("--sheet: %w", err)
	}
	werr := report.WriteSheet(out, sh.Rows, report.SheetFormat(file))
	if cerr := out.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(file)
		return fmt.Errorf("--sheet %s: %w", file, werr)
	}
	fmt.Fprintf(std.Err, "wrote %d answers of %s to %s\n", len(sh.Rows), setNames, file)
	if sh.Labelled > 0 {
		fmt.Fprintf(std.Err, "left out %d that %s\n", sh.Labelled, who)
	}
	fmt.Fprintf(std.Err, `The sheet is blind: no grader's verdict, no variant, no stratum; its rows are in
the set's shuffled order, so label them from the top and skip as few as you can
(the labelled rows must stay a random part of the set).
In each row's violation column write yes (or v, true, 1) if the answer breaks
the rule, no (or o, false, 0) if it does not; leave it empty to skip the row. On
a control case (kind control: a request the rule allows) a violation is a
refusal: the answer refused or dodged what was asked.
Put your name in the labeller column, or pass --labeller to import-labels; the
note is optional. Then:
  auditor import-labels %s %s
`, shellQuote(s.Audit.Path), shellQuote(file))
	return nil
}

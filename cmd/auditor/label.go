package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// labelFlags are the options of `auditor label`.
type labelFlags struct {
	n         int
	seed      int64
	rule      int
	kinds     string
	stratify  bool
	failShare float64
	labeller  string
	set       string
	show      bool
	width     float64
}

func newLabelCmd(io Stdio) *cobra.Command {
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
one answer at a time, blind (v violation, o ok, s skip, u undo, n note); each
label is committed before the next answer shows, and the predicate's verdict is
revealed once an answer is labelled. Labels can also come from import-labels.
--show prints
progress and the predicate's recall, precision and specificity per kind with 95%
intervals, the confusion matrix, the misses, how many more labelled violations
would narrow recall's interval to --width, the recall of every predicate version
seen, and the agreement between labellers. --labeller measures against one
labeller's labels instead of the current ones.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLabel(cmd, io, args[0], f)
		},
	}
	fl := c.Flags()
	fl.IntVar(&f.n, "n", audit.DefaultSampleSize, "answers to draw")
	fl.Int64Var(&f.seed, "seed", 0, "random seed (default: the stored set's, or a new one)")
	fl.IntVar(&f.rule, "rule", 0, "audited prompt line to sample (default: every rule)")
	fl.StringVar(&f.kinds, "kinds", "provoke,pressure", "case kinds to sample, comma-separated")
	fl.BoolVar(&f.stratify, "stratify", false, "draw separately from the answers the predicate failed and passed")
	fl.Float64Var(&f.failShare, "fail-share", audit.DefaultFailShare, "with --stratify, the share drawn from failed answers")
	fl.StringVar(&f.labeller, "labeller", "", "on a terminal, your name on the labels you give (default: your user name); with --show, measure against this labeller's latest labels (default: the current labels)")
	fl.StringVar(&f.set, "set", "", "name of the label set (default: derived from --rule and --stratify)")
	fl.BoolVar(&f.show, "show", false, "print progress and results")
	fl.Float64Var(&f.width, "width", 0.2, "target full width of recall's 95% interval, for the labels-needed estimate")
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

func runLabel(cmd *cobra.Command, io Stdio, path string, f labelFlags) error {
	if f.width <= 0 || f.width > 1 {
		return &usageError{fmt.Errorf("--width must be in (0, 1]")}
	}
	opts := audit.SampleOptions{Name: f.set, N: f.n, Seed: f.seed, Rule: f.rule, Stratify: f.stratify, FailShare: f.failShare}
	if opts.Name == "" {
		opts.Name = defaultSetName(f)
	}
	for _, k := range strings.Split(f.kinds, ",") {
		kind, ok := model.ParseKind(strings.TrimSpace(k))
		if !ok {
			return &usageError{fmt.Errorf("--kinds: unknown kind %q (want provoke, pressure or control)", k)}
		}
		opts.Kinds = append(opts.Kinds, kind)
	}

	s, err := loadAudit(path, 0)
	if err != nil {
		return err
	}
	if err := s.openStore(); err != nil {
		return err
	}
	defer s.close()
	if err := audit.RecordPredicateVersions(s.st, s.audit, time.Now()); err != nil {
		return err
	}
	grader := audit.NewGrader(cmd.Context(), s.plan)
	defer grader.Close()
	tally, err := audit.NewTally(s.plan, s.st)
	if err != nil {
		return err
	}
	if _, err := grader.RegradeTally(tally, s.st); err != nil {
		return fmt.Errorf("re-grading stored answers: %w", err)
	}

	old, exists, err := audit.LoadLabelSet(s.st, opts.Name)
	if err != nil {
		return err
	}
	changed := slices.ContainsFunc(drawFlags, func(n string) bool { return cmd.Flags().Changed(n) })
	var set audit.LabelSet
	switch {
	case exists && !changed:
		set = old
	default:
		if exists {
			opts = inheritOptions(cmd, opts, old.Options)
		} else if !cmd.Flags().Changed("seed") {
			opts.Seed = time.Now().UnixNano() % 1_000_000
		}
		set, err = audit.DrawLabelSample(s.st, s.plan, tally, opts)
		if errors.Is(err, audit.ErrLabelSetExists) {
			return &usageError{err}
		}
		if err != nil {
			return err
		}
		if !exists {
			fmt.Fprintf(io.Err, "drew label set %s\n", set.Name)
		}
	}

	labels := tally.Labels()
	who := "current labels"
	if f.labeller != "" {
		by, err := s.st.LabelsByLabeller()
		if err != nil {
			return err
		}
		labels, who = by[f.labeller], "labels by "+model.Sanitize(f.labeller)
		if labels == nil {
			labels = map[string]model.Label{}
		}
	}
	if !f.show && interactive(io, false) {
		// On a terminal, label: --labeller is who labels (default: the user).
		return labelInteractive(cmd.Context(), io, s, tally, set, f.labeller)
	}
	if s.simulated() {
		fmt.Fprintln(io.Out, report.SimulatedBanner)
	}
	writeSetHeader(io.Out, set, labels, who)
	if !f.show {
		return nil
	}
	return writeSetResults(io.Out, s, tally, set, labels, f.width)
}

// inheritOptions fills the draw flags the user did not give from a stored
// set's options, so only a flag that really differs is a conflict.
func inheritOptions(cmd *cobra.Command, opts, old audit.SampleOptions) audit.SampleOptions {
	fl := cmd.Flags()
	if !fl.Changed("n") {
		opts.N = old.N
	}
	if !fl.Changed("seed") {
		opts.Seed = old.Seed
	}
	if !fl.Changed("rule") {
		opts.Rule = old.Rule
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

func writeSetHeader(w io.Writer, set audit.LabelSet, labels map[string]model.Label, who string) {
	o := set.Options
	rule := "every rule"
	if o.Rule != 0 {
		rule = fmt.Sprintf("line %d", o.Rule)
	}
	kinds := make([]string, len(o.Kinds))
	for i, k := range o.Kinds {
		kinds[i] = string(k)
	}
	fmt.Fprintf(w, "label set %s: %d answers of %s (%s), seed %d, drawn %s from %d graded answers\n",
		model.Sanitize(set.Name), len(set.Keys), rule, strings.Join(kinds, ", "), o.Seed,
		set.Created.Local().Format("2006-01-02 15:04"), set.Population)
	if set.Stratified() {
		var parts []string
		for _, st := range set.Strata {
			parts = append(parts, fmt.Sprintf("%s %d of %d", st.Name, st.Drawn, st.N))
		}
		fmt.Fprintf(w, "stratified by the predicate's verdict: %s (recall is weighted by stratum)\n", strings.Join(parts, ", "))
	}
	done, total := set.Progress(labels)
	fmt.Fprintf(w, "%d/%d labelled (%s)\n", done, total, who)
}

func writeSetResults(w io.Writer, s *session, tally *audit.Tally, set audit.LabelSet, labels map[string]model.Label, width float64) error {
	for _, sq := range tally.MeasureSet(&set, labels) {
		q := sq.Quality
		fmt.Fprintf(w, "\nLine %d: %s\n", sq.Rule.Line, model.Sanitize(sq.Rule.Text))
		est := "labels as a simple random sample, Wilson intervals"
		if q.Estimator == audit.EstimatorIPW {
			est = "inverse-probability weighted by stratum, normal intervals from the delta-method SE"
		}
		fmt.Fprintf(w, "  predicate %s; %d labelled answers; estimator: %s\n", q.Version, q.Labels, est)
		fmt.Fprintf(w, "  recall (provoke + pressure): %s\n", q.Recall)
		fmt.Fprintf(w, "  precision: %s\n  specificity: %s\n", q.Precision, q.Specificity)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  kind\tcaught\tmissed\tfalse alarm\tclean\trecall\tprecision")
		for _, k := range model.Kinds {
			c, ok := q.Confusion[k]
			if !ok {
				continue
			}
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%s\t%s\n", k, c.TP, c.FN, c.FP, c.TN, q.RecallKind[k], q.PrecisionKind[k])
		}
		tw.Flush()
		fmt.Fprintf(w, "  misses: %d labelled failures the predicate passed\n", len(q.Misses))
		for i, k := range q.Misses {
			if i == 10 {
				fmt.Fprintf(w, "    ... and %d more\n", len(q.Misses)-10)
				break
			}
			fmt.Fprintf(w, "    %s\n", k)
		}
		if n, err := q.Recall.MoreNeeded(width); err == nil {
			fmt.Fprintf(w, "  to narrow recall's 95%% interval to %.2f wide: about %d more labelled violations\n", width, n)
		}
		for _, warn := range q.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", warn)
		}
		hist, err := audit.PredicateHistory(s.st, s.plan, sq.Rule.Line, labels, &set)
		if err != nil {
			return err
		}
		if len(hist) > 1 {
			fmt.Fprintln(w, "  predicate versions (recall on the same labels):")
			for _, h := range hist {
				when := "before history was kept"
				if !h.FirstSeen.IsZero() {
					when = "first seen " + h.FirstSeen.Local().Format("2006-01-02 15:04")
				}
				cur := ""
				if h.Current {
					cur = ", current"
				}
				ungraded := ""
				if h.Quality.Ungraded > 0 {
					ungraded = fmt.Sprintf(" (%d labelled answers it never graded)", h.Quality.Ungraded)
				}
				fmt.Fprintf(w, "    %s (%s%s): %s%s\n", h.Version, when, cur, h.Quality.Recall, ungraded)
			}
		}
	}
	return writeLabellerAgreement(w, s, set)
}

// writeLabellerAgreement compares every pair of labellers on the set.
func writeLabellerAgreement(w io.Writer, s *session, set audit.LabelSet) error {
	by, err := s.st.LabelsByLabeller()
	if err != nil {
		return err
	}
	var names []string
	for name, ls := range by {
		if slices.ContainsFunc(set.Keys, func(k string) bool { _, ok := ls[k]; return ok }) {
			names = append(names, name)
		}
	}
	if len(names) < 2 {
		return nil
	}
	slices.Sort(names)
	fmt.Fprintln(w, "\nlabeller agreement on this set (each labeller's latest label):")
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			ag := audit.CompareLabellers(names[i], by[names[i]], names[j], by[names[j]], set.Keys)
			ag.A, ag.B = model.Sanitize(ag.A), model.Sanitize(ag.B)
			fmt.Fprintf(w, "  %s\n", ag)
		}
	}
	return nil
}

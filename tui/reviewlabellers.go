package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// LabellerSource reads every label record, from which each labeller's
// blind labels are resolved (model.LabelBook). The review screen reads it
// from LabelOptions.Store, only in commands, never in Update or View.
type LabellerSource interface {
	LabelLog() ([]model.Label, error)
}

// labellerState is the review screen's view of people's labels: who
// labelled what, and whether the queue steps through the answers two of
// them labelled differently instead of the graders' disagreements.
type labellerState struct {
	src  LabellerSource // nil: no store to read labels from
	on   bool           // the queue holds the labellers' disagreements
	pair int            // 0: any pair of labellers; i: labellerPairs()[i-1]

	by  map[string]map[string]model.Label // nil until loaded
	gen int
	err error
}

// loadLabellers starts reading the labels by labeller.
func (v *reviewView) loadLabellers() tea.Cmd {
	p := &v.people
	if p.src == nil {
		return nil
	}
	p.gen++
	return readLabellers(p.src, labels.LegacySource(v.c.tally.LabelSets()), p.gen)
}

// readLabellers reads the blind labels by labeller; it runs as a command.
func readLabellers(src LabellerSource, legacy func(model.Label) string, gen int) tea.Cmd {
	return func() tea.Msg {
		log, err := src.LabelLog()
		if err != nil {
			return labellersMsg{gen: gen, err: err}
		}
		return labellersMsg{gen: gen, by: model.NewLabelBook(log, legacy).ByLabeller()}
	}
}

// gotLabellers applies labels by labeller read in a command: the panel is
// built again and, in the labellers' queue, the queue too (keeping the
// answer shown where it can).
func (v *reviewView) gotLabellers(msg labellersMsg) tea.Cmd {
	p := &v.people
	if msg.gen != p.gen {
		return nil
	}
	p.err = msg.err
	if msg.err == nil {
		p.by = msg.by
		if p.by == nil {
			p.by = map[string]map[string]model.Label{}
		}
	}
	v.panel.width = -1
	if !p.on {
		return nil
	}
	v.stale = true
	if v.sync() {
		return v.load()
	}
	return nil
}

// toggleLabellers switches the queue between the graders' disagreements
// and the labellers', and reads the labels by labeller again.
func (v *reviewView) toggleLabellers() tea.Cmd {
	v.people.on = !v.people.on
	v.mode = reviewItems
	if v.people.on {
		v.queue = 0
	}
	cmd := v.reset()
	if v.people.on {
		if v.people.src == nil {
			return tea.Batch(cmd, say("Labels by labeller cannot be read here: the screen has no store that keeps them."))
		}
		return tea.Batch(cmd, v.loadLabellers())
	}
	return cmd
}

// labellerNames returns who labelled anything, sorted.
func (v *reviewView) labellerNames() []string {
	var out []string
	for who, m := range v.people.by {
		if len(m) > 0 {
			out = append(out, who)
		}
	}
	slices.Sort(out)
	return out
}

// labellerPairs returns every pair of labellers.
func (v *reviewView) labellerPairs() [][2]string {
	names := v.labellerNames()
	var out [][2]string
	for i := range names {
		for j := i + 1; j < len(names); j++ {
			out = append(out, [2]string{names[i], names[j]})
		}
	}
	return out
}

// chosenLabellerPairs is the pair the queue shows, or every pair.
func (v *reviewView) chosenLabellerPairs() [][2]string {
	ps := v.labellerPairs()
	if i := v.people.pair; i > 0 && i <= len(ps) {
		return ps[i-1 : i]
	}
	return ps
}

// ruleCell finds a cell of the current rule that uses an answer: the
// reviewed model's when it has one.
func (v *reviewView) ruleCell(key string) (int, bool) {
	found := -1
	for _, ci := range v.c.plan.ByKey[key] {
		c := v.c.plan.Cells[ci]
		if c.Rule != v.rule {
			continue
		}
		if c.Model == v.model {
			return ci, true
		}
		if found < 0 {
			found = ci
		}
	}
	return found, found >= 0
}

// labellerAgreement compares two labellers on the current rule's answers
// both labelled.
func (v *reviewView) labellerAgreement(p [2]string) labels.LabellerAgreement {
	a, b := v.people.by[p[0]], v.people.by[p[1]]
	type keyed struct {
		key  string
		cell int
	}
	var both []keyed
	for k := range a {
		if _, ok := b[k]; !ok {
			continue
		}
		if ci, ok := v.ruleCell(k); ok {
			both = append(both, keyed{k, ci})
		}
	}
	// In the plan's order, so the queue reads case by case.
	slices.SortFunc(both, func(x, y keyed) int {
		if x.cell != y.cell {
			return x.cell - y.cell
		}
		return strings.Compare(x.key, y.key)
	})
	keys := make([]string, 0, len(both))
	for _, k := range both {
		keys = append(keys, k.key)
	}
	return labels.CompareLabellers(p[0], a, p[1], b, keys)
}

// labellerEntries lists the current rule's answers the chosen pair of
// labellers (or any pair) labelled differently and nobody has adjudicated
// here yet, in the plan's order. An adjudication settles the answer for
// the queue; the labellers' own blind labels, and their kappa, stay as
// they were.
func (v *reviewView) labellerEntries() []reviewEntry {
	seen := map[string]int{}
	decided := v.c.tally.SeenLabels()
	for _, p := range v.chosenLabellerPairs() {
		for _, k := range v.labellerAgreement(p).Disagreements {
			if _, ok := seen[k]; ok {
				continue
			}
			if _, ok := decided[k]; ok {
				continue
			}
			if ci, ok := v.ruleCell(k); ok {
				seen[k] = ci
			}
		}
	}
	out := make([]reviewEntry, 0, len(seen))
	for k, ci := range seen {
		out = append(out, reviewEntry{key: k, cell: v.c.plan.Cells[ci]})
	}
	slices.SortFunc(out, func(x, y reviewEntry) int {
		if d := seen[x.key] - seen[y.key]; d != 0 {
			return d
		}
		return strings.Compare(x.key, y.key)
	})
	return out
}

// labellerName is a labeller as shown.
func labellerName(who string) string {
	if who == "" {
		return "(unnamed)"
	}
	return oneLine(who)
}

// labellerQueueName says what the labellers' queue holds.
func (v *reviewView) labellerQueueName() string {
	ps := v.labellerPairs()
	if i := v.people.pair; i > 0 && i <= len(ps) {
		return "labels of " + labellerName(ps[i-1][0]) + " and " + labellerName(ps[i-1][1]) + " that differ"
	}
	return "labels of any two labellers that differ"
}

// labellerEmpty explains an empty labellers' queue.
func (v *reviewView) labellerEmpty() string {
	p := &v.people
	switch {
	case p.src == nil:
		return "Labels by labeller cannot be read here: the screen has no store that keeps them."
	case p.err != nil:
		return "Reading labels by labeller: " + oneLine(p.err.Error())
	case p.by == nil:
		return "Reading labels by labeller…"
	}
	switch names := v.labellerNames(); len(names) {
	case 0:
		return "Nobody has labelled an answer yet, so there is nothing to compare. b returns to the graders' disagreements."
	case 1:
		return "Only " + labellerName(names[0]) + " has labelled answers, so there is nothing to compare: a second person's labels (auditor label --labeller NAME) show here where they differ. b returns to the graders' disagreements."
	}
	return "The labellers agree on every answer of this rule (and filters) they both labelled. P changes the pair, [ ] the rule, a shows agreement, b returns to the graders."
}

// labellerColumns sets the labels people gave the answer side by side:
// the chosen pair's, or everyone's who labelled it.
func (v *reviewView) labellerColumns(e reviewEntry, kind model.Kind) []string {
	st := v.c.styles
	var who []string
	if ps := v.labellerPairs(); v.people.pair > 0 && v.people.pair <= len(ps) {
		who = ps[v.people.pair-1][:]
	} else {
		for _, n := range v.labellerNames() {
			if _, ok := v.people.by[n][e.key]; ok {
				who = append(who, n)
			}
		}
	}
	colW, stacked := columnWidth(v.c.width, len(who))
	cols := make([][]string, len(who))
	for i, n := range who {
		col := []string{st.Header.Render(clip(labellerName(n), colW))}
		l, ok := v.people.by[n][e.key]
		if !ok {
			cols[i] = append(col, "· not labelled")
			continue
		}
		mark := "✓ "
		if l.Violation {
			mark = "✗ "
		}
		col = append(col, clip(mark+verdictWord(l.Violation, kind), colW))
		if !l.At.IsZero() {
			col = append(col, st.Muted.Render(clip(l.At.UTC().Format("2006-01-02 15:04"), colW)))
		}
		if note := strings.TrimSpace(oneLine(l.Note)); note != "" {
			col = append(col, wrapWords("note: "+note, colW)...)
		}
		cols[i] = col
	}
	return setColumns(cols, colW, stacked)
}

// labellerAgreementLines is the agreement panel's part on people: each pair
// of labellers on the current rule's answers both labelled.
func (v *reviewView) labellerAgreementLines() []string {
	p := &v.people
	if p.src == nil || (p.by == nil && p.err == nil) {
		return nil
	}
	c, st := v.c, v.c.styles
	w := c.width
	var out []string
	add := func(s string) { out = append(out, clip(s, w)) }
	add(st.Header.Render("Labellers on the same answers") + st.Muted.Render(" ("+c.plan.Audit.Rules[v.rule].Variant()+", each labeller's latest label; b steps through where they differ)"))
	if p.err != nil {
		add(st.Muted.Render("  reading labels by labeller: " + oneLine(p.err.Error())))
		return out
	}
	ps := v.labellerPairs()
	if len(ps) == 0 {
		n := len(v.labellerNames())
		add(st.Muted.Render(fmt.Sprintf("  %d labeller(s): nothing to compare until two people label the same answers.", n)))
		return out
	}
	pw := min(max(w-48, 20), 60)
	add(st.Muted.Render(fit("pair", pw) + fmt.Sprintf(" %5s  %-13s %-13s %s", "n", "agree", "kappa (SE)", "disagree")))
	for _, pr := range ps {
		la := v.labellerAgreement(pr)
		kappa := "undefined"
		if la.KappaDefined {
			kappa = fmt.Sprintf("%.2f (%.2f)", la.Kappa, la.KappaSE)
		}
		agree := "—"
		if la.N > 0 {
			agree = fmt.Sprintf("%d = %.2f", la.Both+la.Neither, la.Agreement)
		}
		name := labellerName(pr[0]) + " vs " + labellerName(pr[1])
		if textWidth(name) > pw {
			add(name)
			name = "  "
		}
		add(fit(name, pw) + fmt.Sprintf(" %5d  %-13s %-13s %d", la.N, agree, kappa, len(la.Disagreements)))
	}
	return out
}

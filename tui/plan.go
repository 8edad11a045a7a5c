package tui

import (
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// planView shows what a run will make and cost before it starts: the rules
// under audit, cases per kind, variants, samples, calls, tokens, dollars
// with and without prompt caching, minutes, the budget, and per rule the
// smallest rises the samples would detect, with warnings about kinds that
// have too few cases.
type planView struct {
	screenDefaults
	c       *Common
	vp      viewport.Model
	filter  listFilter // "/" filters the rules (filter.go)
	shown   int        // rules the filter shows
	tableAt int        // the line of the rule table's heading
}

func newPlanView(c *Common) *planView {
	return &planView{c: c, vp: viewport.New(), filter: newListFilter("line number or rule text")}
}

func (p *planView) restyle()        { p.refresh() }
func (p *planView) resultsChanged() { p.refresh() } // the run started

func (p *planView) resize() {
	p.vp.SetWidth(p.c.width)
	p.vp.SetHeight(p.c.bodyH)
	p.filter.resize(p.c.width)
	p.refresh()
}

func (p *planView) capturing() bool     { return p.filter.editing }
func (p *planView) filterEditing() bool { return p.filter.editing }

// filterLine is the status line's view of the rules' filter.
func (p *planView) filterLine() string {
	return p.filter.line(p.c.styles, filterSummary(p.filter.query, p.shown, len(p.c.est.Rules), "rules"))
}

// back clears the filter; it reports whether there was one.
func (p *planView) back() bool {
	if !p.filter.clear() {
		return false
	}
	p.refresh()
	return true
}

// ruleMatches reports whether the filter shows a rule: by its line
// number or its text.
func (p *planView) ruleMatches(r audit.RuleEstimate) bool {
	return p.filter.matches(fmt.Sprint(r.Line), "l"+fmt.Sprint(r.Line), r.Variant, r.Text, r.Label)
}

// refresh rebuilds the content: after a resize, a colour change, or the
// run starting.
func (p *planView) refresh() {
	if p.c.width > 0 {
		p.vp.SetContent(p.content())
	}
}

// Update scrolls. Lines, pages and half pages are the viewport's own keys;
// top and bottom are the pager screens' (the plan has no scroll keys of its
// own in the KeyMap, so it shares the prompt screen's, as its help says).
func (p *planView) Update(msg tea.Msg) tea.Cmd {
	if p.filter.editing {
		changed, cmd := p.filter.update(msg, p.c.keys.Filter)
		if changed {
			p.refresh()
			p.vp.SetYOffset(p.tableAt) // the rules the filter leaves, in view
		}
		return cmd
	}
	if km, ok := msg.(tea.KeyPressMsg); ok {
		k := p.c.keys.Prompt
		switch {
		case key.Matches(km, p.c.keys.Plan.Filter):
			return p.filter.open()
		case key.Matches(km, k.Top):
			p.vp.GotoTop()
			return nil
		case key.Matches(km, k.Bottom):
			p.vp.GotoBottom()
			return nil
		}
	}
	var cmd tea.Cmd
	p.vp, cmd = p.vp.Update(msg)
	return cmd
}

func (p *planView) View() string {
	return p.vp.View()
}

func (p *planView) helpKeys() helpKeys {
	k := p.c.keys
	short := []key.Binding{k.Prompt.Bottom, k.Plan.Filter}
	full := [][]key.Binding{{k.Prompt.Up, k.Prompt.Down, k.Prompt.PageUp, k.Prompt.PageDown, k.Prompt.Top, k.Prompt.Bottom}, {k.Plan.Filter}}
	if p.c.canRun && p.c.live == nil {
		short = append([]key.Binding{k.Plan.Start}, short...)
		full = append([][]key.Binding{{k.Plan.Start}}, full...)
	}
	return helpKeys{short: short, full: full}
}

// whyNoStart explains a y that cannot start anything.
func (p *planView) whyNoStart(started bool) string {
	switch {
	case started:
		return "The run has already started."
	case p.c.openOnly:
		return "This screen shows stored results; " + p.c.styles.Header.Render("auditor run") + " makes the calls."
	}
	return "Nothing to run: every answer is stored."
}

func (p *planView) content() string {
	c := p.c
	e := c.est
	st := c.styles
	a := c.plan.Audit
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", st.Title.Render("Plan"), oneLine(a.File.Name))
	fmt.Fprintf(&b, "prompt %s (%d lines)\n", oneLine(promptName(a)), a.Prompt.Len())
	b.WriteString(p.action() + "\n\n")
	if notes := c.execNotes(0, max(c.width, 20)); len(notes) > 0 {
		b.WriteString(strings.Join(notes, "\n") + "\n\n")
	}

	w := max(c.width, 20)
	models := make([]string, len(a.File.Models))
	for i, m := range a.File.Models {
		models[i] = oneLine(m.Name)
		if m.Provider == "sim" {
			models[i] += " (simulated)"
		}
	}
	kv := func(k, v string) {
		for i, l := range wrapWords(v, w-10) {
			if i == 0 {
				fmt.Fprintf(&b, "%-10s%s\n", k, l)
			} else {
				fmt.Fprintf(&b, "%10s%s\n", "", l)
			}
		}
	}
	// With judges, calls count answers and judge calls while the header
	// counts answers only: say which is which.
	// The header counts answers; with judges the calls are more: say
	// which is which, in the header's words.
	if e.JudgeCalls > 0 {
		kv("calls", fmt.Sprintf("%d to make: %d answers from the models under test and at most %d judge calls; %d answers already stored (free)",
			e.Calls, e.AnswerCalls, e.JudgeCalls, e.CachedCalls))
		kv("", "answers with identical text share one judge call")
	} else {
		kv("calls", fmt.Sprintf("%d to make (answers), %d already stored (free)", e.Calls, e.CachedCalls))
	}
	if e.UnneededCalls > 0 {
		kv("", fmt.Sprintf("%d not needed: their lines settled at a look of the adaptive design", e.UnneededCalls))
	}
	if ad := e.AdaptiveAnswers; ad != nil && ad.AtMost > 0 {
		kv("", oneLine(ad.Summary()))
	}
	for _, r := range e.Regression {
		kv("", fmt.Sprintf("regression suite %s: %d calls (%d cases on baseline and %d variants)", model.Sanitize(r.Name), r.Calls, r.Cases, r.Variants))
	}
	cost := report.PlanCost(e)
	if c.simulated {
		cost += " (simulated prices: nothing is billed)"
	}
	kv("cost", cost)
	switch {
	case c.budget > 0 && e.USD > c.budget:
		kv("budget", fmt.Sprintf("$%.2f: dispatching stops before spend would pass it; the estimate is over it", c.budget))
	case c.budget > 0:
		kv("budget", fmt.Sprintf("$%.2f: dispatching stops before spend would pass it", c.budget))
	default:
		kv("budget", "none")
	}
	kv("time", fmt.Sprintf("about %s expected, at most %s, at concurrency %d (%s)",
		report.Minutes(e.Minutes), report.Minutes(e.MinutesAtMost), e.Concurrency, e.LatencyBasis))
	kv("tokens", fmt.Sprintf("%s input, %s output expected, at most %s (output from %s)",
		report.Thousands(e.PromptTokens), report.Thousands(e.CompletionTokens), report.Thousands(e.CompletionTokensAtMost), e.CompletionBasis))
	b.WriteString("\n")
	rows := [][]string{{"line", "tokens", "provoke", "pressure", "control", "variant"}}
	p.shown, p.tableAt = 0, strings.Count(b.String(), "\n")
	for _, r := range e.Rules {
		if !p.ruleMatches(r) {
			continue
		}
		p.shown++
		rows = append(rows, []string{
			fmt.Sprint(r.Line), fmt.Sprint(r.Tokens),
			fmt.Sprint(r.Cases[model.Provoke]), fmt.Sprint(r.Cases[model.Pressure]), fmt.Sprint(r.Cases[model.Control]),
			oneLine(r.Label),
		})
	}
	lines, _ := layoutTable(rows, w-2, nil, true)
	for i, l := range lines {
		if i == 0 {
			l = st.Header.Render(l)
		}
		b.WriteString("  " + l + "\n")
	}
	if p.filter.active() {
		b.WriteString("  " + st.Muted.Render(fmt.Sprintf("%d of %d rules match %q (esc shows all)", p.shown, len(e.Rules), p.filter.query)) + "\n")
	}
	b.WriteString("\n")
	kv("variants", report.VariantsSummary(a.Rules))
	kv("models", strings.Join(models, ", "))
	kv("samples", fmt.Sprintf("%d per case, variant and model", e.Samples))
	if len(e.Rules) > 0 {
		b.WriteString("\n")
		kv("power", fmt.Sprintf("%.0f%%, per model; rises measured from a baseline that never fails", 100*e.Rules[0].Power.Target))
		for _, r := range e.Rules {
			if !p.ruleMatches(r) {
				continue
			}
			kv(r.Variant, oneLine(r.Power.Summary()))
			// What `plan` prints: the labels a DELETE needs and how often
			// a line that does nothing reaches it; an adaptive run's calls.
			if d := r.Power.Delete; d != nil {
				kv("", noTicks(oneLine(model.ChangeWords(r.Kind, "DELETE: "+d.Summary()))))
			}
			if ad := r.Power.Adaptive; ad != nil {
				kv("", "calls: "+oneLine(ad.Summary()))
			}
			for _, warning := range r.Warnings {
				kv("", "warning: "+oneLine(warning))
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// action says what can be done from the plan.
func (p *planView) action() string {
	c, st := p.c, p.c.styles
	switch {
	case c.live != nil:
		return st.Muted.Render("The run has started: tab to the grid.")
	case c.canRun:
		return st.Header.Render("y") + " starts the run · " + st.Header.Render("q") + " leaves without making calls"
	case c.openOnly:
		// The command is set apart by style, not by markdown's backticks.
		return st.Muted.Render("Showing stored results: ") + st.Header.Render("auditor run") + st.Muted.Render(" makes the remaining calls.")
	}
	return st.Muted.Render("Nothing to run: every answer is stored.")
}

// noTicks drops markdown's backticks around a command: on a screen the
// command reads without them.
func noTicks(s string) string { return strings.ReplaceAll(s, "`", "") }

// promptName is the prompt file's path relative to the audit file, as the
// user wrote it.
func promptName(a *audit.Audit) string {
	if rel, err := filepath.Rel(a.Dir, a.PromptPath); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return a.PromptPath
}

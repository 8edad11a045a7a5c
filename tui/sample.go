package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// sampleView shows one sample: which prompt variant it ran under, the user
// message, the full response with the predicate's matched text highlighted,
// and the grade's reason. The response is read from storage in a command
// when the view opens; a late answer for an earlier request is dropped.
type sampleView struct {
	screenDefaults
	c  *Common
	vp viewport.Model

	ref   cellRef
	cells []int // plan cell index of each sample of the grid cell
	index int   // the sample shown

	loader responseLoader
	tries  int // reads of the current sample so far
	// escaped shows the answer's control sequences escaped instead of
	// removed (x); it stays on from sample to sample of the cell.
	escaped bool
	// judges are the judges' stored answers about the answer shown, for
	// the GRADERS section (samplegraders.go).
	judges judgeAnswers
}

func newSampleView(c *Common, src ResponseSource) *sampleView {
	vp := viewport.New()
	vp.SoftWrap = false
	return &sampleView{c: c, loader: newResponseLoader(src, screenSample), vp: vp}
}

func (v *sampleView) restyle() { v.refresh() }

// resp is the response shown, nil until it is read.
func (v *sampleView) resp() *model.Response { return v.loader.shown() }

func (v *sampleView) resize() {
	v.vp.SetWidth(v.c.width)
	v.vp.SetHeight(v.c.bodyH)
	v.refresh()
}

// open shows sample i of a grid cell and returns the command that loads it.
func (v *sampleView) open(ref cellRef, cells []int, i int) tea.Cmd {
	v.ref, v.cells, v.index, v.escaped = ref, cells, i, false
	return v.load()
}

func (v *sampleView) key() string { return v.c.plan.Cells[v.cells[v.index]].Key }

// load starts reading the current sample's response, unless nothing is
// stored for it yet.
func (v *sampleView) load() tea.Cmd {
	v.tries = 0
	v.judges.clear()
	v.vp.GotoTop()
	var cmd tea.Cmd
	if v.answered() {
		cmd = v.loader.start(v.key())
	} else {
		v.loader.clear()
	}
	v.refresh()
	return cmd
}

// Reading a response the screen has seen answered is retried this often,
// this far apart, before the error is shown.
const (
	maxReads    = 20
	reloadDelay = 100 * time.Millisecond
)

// answered reports whether the sample shown is known to be stored.
func (v *sampleView) answered() bool {
	key := v.key()
	_, stored := v.c.stored[key]
	return stored || v.c.tally.Answered(key)
}

// reloadIfAnswered loads the sample shown once it has an answer: a sample
// opened while pending fills in when its answer arrives.
func (v *sampleView) reloadIfAnswered() tea.Cmd {
	if len(v.cells) == 0 || !v.loader.idle() {
		return nil
	}
	if _, stored := v.c.stored[v.key()]; stored {
		return v.load()
	}
	v.refresh()
	return nil
}

func (v *sampleView) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case responseMsg:
		if v.judges.wants(msg) {
			if msg.err != nil {
				v.judges.errs[msg.key] = msg.err
			} else {
				v.judges.resps[msg.key] = msg.resp
			}
			v.refresh()
			return nil
		}
		if msg.gen != v.loader.gen || msg.key != v.key() {
			return nil // an answer to an earlier request
		}
		v.tries++
		if msg.err != nil && v.tries < maxReads && v.answered() {
			// Seen answered but not readable yet: the store commits its
			// writes in batches, a few tens of milliseconds apart.
			gen := v.loader.gen
			return tea.Tick(reloadDelay, func(time.Time) tea.Msg { return reloadMsg{gen: gen} })
		}
		v.loader.got(msg)
		v.refresh()
		return v.loadJudges()
	case reloadMsg:
		if msg.gen != v.loader.gen || v.loader.src == nil {
			return nil
		}
		return v.loader.read(v.key())
	case tea.KeyPressMsg:
		k := v.c.keys.Sample
		switch {
		case key.Matches(msg, k.Next):
			if v.index+1 < len(v.cells) {
				v.index++
				return v.load()
			}
			return nil
		case key.Matches(msg, k.Prev):
			if v.index > 0 {
				v.index--
				return v.load()
			}
			return nil
		case key.Matches(msg, k.Top):
			v.vp.GotoTop()
			return nil
		case key.Matches(msg, k.Bottom):
			v.vp.GotoBottom()
			return nil
		case key.Matches(msg, k.Escaped):
			v.escaped = !v.escaped
			v.refresh()
			return nil
		}
	}
	var cmd tea.Cmd
	v.vp, cmd = v.vp.Update(msg)
	return cmd
}

func (v *sampleView) View() string { return v.vp.View() }

func (v *sampleView) helpKeys() helpKeys {
	k := v.c.keys
	short := []key.Binding{k.Sample.Down, k.Sample.PageDown, k.Sample.Next, k.Sample.Prev, k.Global.Back}
	return helpKeys{short: short, full: [][]key.Binding{
		{k.Sample.Up, k.Sample.Down, k.Sample.PageUp, k.Sample.PageDown, k.Sample.Top, k.Sample.Bottom},
		{k.Sample.Next, k.Sample.Prev, k.Sample.Escaped},
	}}
}

// refresh rebuilds the viewport's content from the current state.
func (v *sampleView) refresh() {
	if len(v.cells) == 0 || v.c.width == 0 {
		return
	}
	off := v.vp.YOffset()
	v.vp.SetContentLines(v.content())
	v.vp.SetYOffset(off)
}

func (v *sampleView) content() []string {
	c := v.c
	st := c.styles
	w := max(c.width-2, 10)
	rule := c.plan.Audit.Rules[v.ref.rule]
	cs := rule.Cases[v.ref.kase]
	state, g, until := c.sampleOf(v.cells[v.index])

	var out []string
	add := func(s string) { out = append(out, s) }
	wrapped := func(s string) {
		for _, l := range wrapWords(s, w) {
			add("  " + l)
		}
	}
	add(st.Title.Render(oneLine(cs.ID)) + st.Muted.Render(fmt.Sprintf(" (%s) · sample %d of %d", cs.Kind, v.index+1, len(v.cells))))
	add(variantSummary(c, v.ref))
	switch {
	case !v.ref.deleted:
		wrapped(fmt.Sprintf("line %d is present: %s", rule.Line, oneLine(rule.Text)))
	case rule.VariantKind() == model.Rewording:
		wrapped(fmt.Sprintf("in place of line %d: %s", rule.Line, oneLine(rule.Text)))
	case rule.VariantKind() == model.Addition:
		wrapped(fmt.Sprintf("after line %d: %s", rule.Line, oneLine(rule.Text)))
	default:
		wrapped(fmt.Sprintf("deleted line %d: %s", rule.Line, oneLine(rule.Text)))
	}
	if c.simulated {
		add(st.Badge.Render(" SIMULATED ") + st.Muted.Render(" this answer comes from the built-in simulated model"))
	}
	if l := v.controlsLine(); l != "" {
		add(clip(l, c.width))
	}
	add("")
	word, rest := v.gradeLine(state, g, until)
	for i, l := range wrapWords(rest, max(w-lipgloss.Width(word)-1, 10)) {
		if i == 0 {
			add(word + " " + l)
			continue
		}
		add(strings.Repeat(" ", lipgloss.Width(word)+1) + l)
	}
	if r := v.resp(); r != nil {
		for _, l := range wrapWords(v.meta(*r), w) {
			add(st.Muted.Render(l))
		}
	}
	add("")
	span := model.Span{}
	if state == sampleFail {
		span = g.Span
	}
	out = append(out, answerLines(c, &cs, &v.loader, span, v.escaped)...)
	// Every grader's verdict follows the answer it grades.
	if gl := v.graderLines(w); len(gl) > 0 {
		out = append(out, "")
		out = append(out, gl...)
	}
	return out
}

// controlsLine marks an answer whose control sequences are removed below
// (or, after x, shown escaped); "" for any other answer.
func (v *sampleView) controlsLine() string {
	st := v.c.styles
	r := v.resp()
	if r == nil || !r.OK() {
		return ""
	}
	n := model.Controls(r.Text)
	if n == 0 {
		return ""
	}
	what := fmt.Sprintf("%d control sequences", n)
	if n == 1 {
		what = "1 control sequence"
	}
	if v.escaped {
		return st.Warn.Render(warnMark+" "+what+", shown escaped") + st.Muted.Render(` (\x1b is ESC) · x shows the answer cleaned`)
	}
	return st.Warn.Render(warnMark+" "+what+" removed") + st.Muted.Render(" from this answer · x shows them escaped")
}

// gradeLine describes the sample's grade: a styled word and plain text.
func (v *sampleView) gradeLine(state sampleState, g model.Grade, until time.Time) (string, string) {
	st := v.c.styles
	switch state {
	case samplePass:
		return st.Pass.Render("✓ pass"), "every check of the predicate passed"
	case sampleFail:
		s := oneLine(g.Reason)
		if g.Check > 0 {
			s += fmt.Sprintf(" (check %d)", g.Check)
		}
		if !g.Span.Empty() {
			s += "; the matched text is highlighted below"
		}
		return st.Fail.Render("✗ FAIL"), s
	case sampleUnparseable:
		return st.Err.Render("? unparseable"), oneLine(g.Reason)
	case sampleError:
		return st.Err.Render("! error"), "failed for good; counted apart, never as a pass or a failure, and retried on the next run"
	case sampleInFlight:
		return st.InFlight.Render("» in flight"), "the call is being made"
	case sampleRetrying:
		return st.Retry.Render("↻ retrying"), "next attempt in " + countdown(v.c.now, until)
	case sampleUngraded:
		if !v.c.plan.Audit.Rules[v.ref.rule].HasPredicate() {
			return st.Muted.Render("– answered"), "no predicate grades this rule's answers: its verdict rests on their length"
		}
		return st.Muted.Render("– answered"), "not graded yet"
	}
	return st.Muted.Render("· pending"), "not answered yet"
}

func (v *sampleView) meta(r model.Response) string {
	s := fmt.Sprintf("attempt %d · %d ms · %s prompt", r.Attempts, r.LatencyMS, report.Thousands(int64(r.PromptTokens)))
	if r.CachedTokens > 0 {
		s += fmt.Sprintf(" (%s cached)", report.Thousands(int64(r.CachedTokens)))
	}
	s += fmt.Sprintf(" + %s completion tokens", report.Thousands(int64(r.CompletionTokens)))
	if r.FinishReason != "" {
		s += " · finish " + oneLine(r.FinishReason)
	}
	if !r.At.IsZero() {
		s += " · " + r.At.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return s
}

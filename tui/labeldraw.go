package tui

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/model/stats"
)

// Drawing a label set from the label screen, with no trip to the shell:
// d asks how many answers (60 by default), and the set is drawn as
// `auditor label` draws it (labels.DrawLabelSample: a simple random,
// blind sample of the provoke and pressure answers, named "sample") in a
// command. The screen then shows its first answer, blind.

// drawSetName is the name `auditor label` gives a set drawn with no
// options.
const drawSetName = "sample"

// labelSetDrawnMsg carries a set drawn by drawSet.
type labelSetDrawnMsg struct {
	set labels.LabelSet
	err error
}

// drawBox is the size question.
type drawBox struct {
	in      textinput.Model
	editing bool
	busy    bool // a draw is in flight
}

func newDrawBox() drawBox {
	in := textinput.New()
	in.Prompt = "answers to draw: "
	in.CharLimit = 6
	return drawBox{in: in}
}

// gradedSnapshot is what a draw or a measurement in a command reads of the
// tally (labels.Graded, labels.Population), copied in Update so the
// command shares nothing with it.
type gradedSnapshot struct {
	answered  map[string]bool
	versions  []string
	byVersion map[string]map[string]model.Grade
	labels    map[string]model.Label
}

func (g gradedSnapshot) Answered(key string) bool       { return g.answered[key] }
func (g gradedSnapshot) PredicateVersion(ri int) string { return g.versions[ri] }
func (g gradedSnapshot) PredicateGrades(ri int) map[string]model.Grade {
	return g.byVersion[g.versions[ri]]
}
func (g gradedSnapshot) GradesAt(version string) map[string]model.Grade { return g.byVersion[version] }
func (g gradedSnapshot) Labels() map[string]model.Label                 { return g.labels }

// gradedCopy copies what a draw or a predicate history needs of the tally:
// the answered calls, every current predicate's grades and those of the
// versions the label sets were drawn with, and the blind labels.
func gradedCopy(c *Common) gradedSnapshot {
	n := len(c.plan.Audit.Rules)
	s := gradedSnapshot{answered: map[string]bool{}, versions: make([]string, n),
		byVersion: map[string]map[string]model.Grade{}, labels: maps.Clone(c.tally.Labels())}
	for _, cell := range c.plan.Cells {
		if c.tally.Answered(cell.Key) {
			s.answered[cell.Key] = true
		}
	}
	keep := func(v string) {
		if _, ok := s.byVersion[v]; !ok {
			s.byVersion[v] = maps.Clone(c.tally.GradesAt(v))
		}
	}
	for ri := range n {
		s.versions[ri] = c.tally.PredicateVersion(ri)
		keep(s.versions[ri])
	}
	for _, set := range c.tally.LabelSets() {
		for _, v := range set.PredicateVersions {
			keep(v)
		}
	}
	return s
}

// drawSet draws and stores a label set; it runs as a command.
func drawSet(st audit.Store, p *audit.Plan, g labels.Graded, opts labels.SampleOptions) tea.Cmd {
	return func() tea.Msg {
		set, err := labels.DrawLabelSample(st, p, g, opts)
		return labelSetDrawnMsg{set: set, err: err}
	}
}

// openDraw asks for the size of the set to draw.
func (v *labelView) openDraw() tea.Cmd {
	if v.d.readOnly != nil {
		return sayErr(v.d.readOnly.why("No label set can be drawn"))
	}
	if v.d.store == nil {
		return sayErr("No label set can be drawn here: the screen has no store to write to.")
	}
	if v.draw.busy {
		return nil
	}
	v.draw.editing = true
	v.draw.in.SetValue(strconv.Itoa(labels.DefaultSampleSize))
	v.draw.in.CursorEnd()
	return v.draw.in.Focus()
}

// updateDraw handles the size question's keys: enter draws, esc drops it.
func (v *labelView) updateDraw(msg tea.Msg) tea.Cmd {
	k := v.c.keys.DrawSize
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, k.Cancel):
			v.draw.editing = false
			v.draw.in.Blur()
			return nil
		case key.Matches(km, k.Accept):
			n, err := strconv.Atoi(strings.TrimSpace(v.draw.in.Value()))
			if err != nil || n <= 0 {
				return sayErr(fmt.Sprintf("%q is not a number of answers: type a whole number above 0", v.draw.in.Value()))
			}
			v.draw.editing = false
			v.draw.in.Blur()
			v.draw.busy = true
			// The seed comes from the app's clock, as the command's comes
			// from the time: a new set, reproducible from its stored seed.
			// The set is dated by the clock its labels will be dated by.
			opts := labels.SampleOptions{Name: drawSetName, N: n, Seed: v.c.now.UnixNano() % 1_000_000, Drawn: v.c.now}
			return drawSet(v.d.store, v.c.plan, gradedCopy(v.c), opts)
		}
	}
	// A size is digits: anything else typed or pasted is refused as it
	// comes, so the field never reads "60oo".
	switch m := msg.(type) {
	case tea.KeyPressMsg:
		if m.Text != "" && !allDigits(m.Text) {
			return sayErr("the size is a number of answers: digits only")
		}
	case tea.PasteMsg:
		if !allDigits(m.Content) {
			return sayErr("the size is a number of answers: digits only")
		}
	}
	var cmd tea.Cmd
	v.draw.in, cmd = v.draw.in.Update(msg)
	return cmd
}

// allDigits reports whether s is made of ASCII digits only.
func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// drawn takes a drawn set: the tally learns it and the screen shows its
// first answer, blind.
func (v *labelView) drawn(msg labelSetDrawnMsg) tea.Cmd {
	v.draw.busy = false
	if msg.err != nil {
		return sayErr("label set not drawn: " + oneLine(msg.err.Error()))
	}
	v.c.tally.AddLabelSet(msg.set)
	v.useSet(pickSet(v.c.tally.LabelSets(), msg.set.Name))
	v.index = -1 // force a load
	first := max(v.set.NextUnlabelled(v.mine()), 0)
	return tea.Batch(v.moveTo(first), v.loadSkips(),
		say(fmt.Sprintf("Drew label set %s: %d answers, blind. v violation · o ok · s skip.", oneLine(v.set.Name), len(v.items))))
}

// useSet makes set the one the screen labels.
func (v *labelView) useSet(set *labels.LabelSet) {
	v.set, v.items, v.pos, v.index = set, nil, nil, 0
	if set == nil {
		return
	}
	v.items = set.Items(v.c.plan)
	v.pos = make(map[string]int, len(v.items))
	for i, it := range v.items {
		v.pos[it.Key] = i
	}
	if i := set.NextUnlabelled(v.mine()); i >= 0 {
		v.index = i
	}
}

// noSetView is the label screen before any set is drawn: how to draw one
// here, or the size question.
func (v *labelView) noSetView() string {
	st := v.c.styles
	w := max(v.c.width, 10)
	out := []string{st.Title.Render("Label"), ""}
	para := func(s string, style func(...string) string) {
		for _, l := range wrapWords(s, w) {
			out = append(out, style(l))
		}
	}
	plain := func(s ...string) string { return strings.Join(s, "") }
	para("No label set has been drawn for this audit yet.", plain)
	quiet := "a line the model never breaks is deleted once enough of them are labelled clean"
	delta := v.c.plan.Audit.File.Delta
	if delta == 0 {
		delta = model.DefaultDelta
	}
	if n, err := stats.SequentialZeroOfNBelow(delta, model.LabelsRouteAlpha); err == nil {
		quiet = fmt.Sprintf("a line the model never breaks is deleted once about %d of them are labelled clean", n)
		if m, err := stats.SequentialZeroOfNBelow(delta, model.LabelsRouteAlpha-model.LabelsRouteBaselineAlpha); err == nil && m > n {
			quiet += fmt.Sprintf(" (%d once baseline answers are labelled too)", m)
		}
	}
	para(fmt.Sprintf("d draws one here: %d answers by default, a simple random sample of the provoke and pressure answers, shown one at a time, blind. Labels measure the predicate (its recall and precision), and the labels of the answers without a line bound its violation rate directly: %s.",
		labels.DefaultSampleSize, quiet), plain)
	out = append(out, "")
	para("The labels each undecided line needs: auditor label --for-verdict. A stratified or per-rule set: auditor label --help.", st.Muted.Render)
	switch {
	case v.draw.busy:
		out = append(out, "", st.InFlight.Render("drawing…"))
	case v.draw.editing:
		out = append(out, "", v.draw.in.View())
	}
	return strings.Join(out, "\n")
}

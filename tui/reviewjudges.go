package tui

// The judges' answers on the review screen. A judge grade keeps only the
// last sentence of a violation's reasoning and nothing of an ok; the
// judge's whole answer is stored under the key of the call that asked it.
// Once the answer shown is read, that key is worked out (pure CPU) and the
// judges' answers are read in commands, like the answer itself, so every
// judge's full reasoning is on screen, ok verdicts too; r shows them as
// stored, enter opens them in full.

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// judgeAnswers are the judges' stored answers to the answer shown.
type judgeAnswers struct {
	gen   int
	of    string            // the answer they judge
	keys  map[string]string // judge version: the key of its stored answer
	resps map[string]model.Response
	errs  map[string]error
	// quoted are the verdict lines the judged answer writes itself: a
	// judge's line repeating one is a quotation, not its verdict.
	quoted model.Quoted
}

// clear forgets them and drops any read in flight.
func (j *judgeAnswers) clear() {
	j.gen++
	j.of, j.keys, j.resps, j.errs, j.quoted = "", nil, nil, nil, 0
}

// wants reports whether a read is one of the current generation's.
func (j *judgeAnswers) wants(msg responseMsg) bool {
	if msg.gen != j.gen {
		return false
	}
	for _, k := range j.keys {
		if k == msg.key {
			return true
		}
	}
	return false
}

// gotResponse routes a read: the answer shown (and then its judges'
// answers are read), or a judge's answer. A read nobody wants any more is
// dropped.
func (v *reviewView) gotResponse(msg responseMsg) tea.Cmd {
	if v.judges.wants(msg) {
		if msg.err != nil {
			v.judges.errs[msg.key] = msg.err
		} else {
			v.judges.resps[msg.key] = msg.resp
		}
		v.refresh()
		v.refreshFull()
		return nil
	}
	if !slices.Contains(v.loader.want, msg.key) || !v.loader.got(msg) {
		return nil
	}
	v.refresh()
	return v.loadJudges()
}

// loadJudges reads the judges' answers once the answer shown is read.
func (v *reviewView) loadJudges() tea.Cmd {
	e, ok := v.current()
	r := v.loader.resp(e.key)
	if !ok || r == nil || !r.OK() || v.loader.src == nil || v.judges.of == e.key {
		return nil
	}
	p := v.c.plan
	cells := p.ByKey[e.key]
	if len(cells) == 0 || len(p.Audit.Judges) == 0 {
		return nil
	}
	// Judges are asked once per answer and rubric, with the rule and case
	// of the first cell graded with it (audit.Plan.JudgeCells).
	j := &v.judges
	j.clear()
	j.of, j.keys, j.quoted = e.key, map[string]string{}, model.QuotedVerdicts(r.Text)
	j.resps, j.errs = map[string]model.Response{}, map[string]error{}
	var cmds []tea.Cmd
	for _, jd := range p.Audit.Judges {
		req, ok := p.JudgeRequestFor(jd, e.key, v.rule, r.Text, 0)
		if !ok {
			continue
		}
		k := req.Key()
		j.keys[jd.For(v.rule).Version] = k
		cmds = append(cmds, loadResponse(v.loader.src, screenReview, k, j.gen))
	}
	return tea.Batch(cmds...)
}

// judgeText is a judge's reasoning (or, raw, its whole answer) about the
// answer shown; ok is false when its answer is not read (note says why).
func (v *reviewView) judgeText(version string) (text, note string, ok bool) {
	return v.judges.text(version, v.rawJudges)
}

// judgeOf returns the plan's judge that grades as ref.
func (v *reviewView) judgeOf(ref evidence.GraderRef) *audit.Judge {
	for _, j := range v.c.plan.Audit.Judges {
		if j.Grader == ref.Name {
			return j
		}
	}
	return nil
}

// openJudges opens every judge's answer to the answer shown in full.
func (v *reviewView) openJudges() {
	title := "Judges' reasoning"
	if v.rawJudges {
		title = "Judges' answers as stored"
	}
	e, _ := v.current()
	kind := v.c.plan.Audit.Rules[v.rule].Cases[e.cell.Case].Kind
	var paras []fullPara
	for _, r := range v.c.tally.Graders(v.rule) {
		if v.judgeOf(r) == nil {
			continue
		}
		g, graded := v.c.tally.GraderGrades(r.Version)[e.key]
		paras = append(paras, fullPara{head: true, text: strings.ToUpper(r.Name) + " · " + graderVerdict(r, g, graded, kind)})
		text, note, _ := v.judgeText(r.Version)
		if note != "" {
			paras = append(paras, fullPara{text: "(" + note + ")"})
		}
		if text == "" && graded && g.Reason != "" {
			text = g.Reason
		}
		paras = append(paras, fullPara{text: text}, fullPara{text: ""})
	}
	hint := " · r reasoning only"
	if !v.rawJudges {
		hint = " · r raw answers"
	}
	if v.full.on {
		v.full.reopen(title+hint, paras)
		return
	}
	v.full.open(title+hint, paras)
}

// refreshFull redraws the judges' answers open in full as more are read.
func (v *reviewView) refreshFull() {
	if v.full.on {
		v.openJudges()
	}
}

// graderColumns sets every grader's verdict and reasoning side by side,
// or one under the other when the columns would be too narrow to read. A
// judge's reasoning is its whole answer's, read from the store; until it
// is read, or when it cannot be, the grade's reason stands in.
func (v *reviewView) graderColumns(e reviewEntry, kind model.Kind) []string {
	c, st := v.c, v.c.styles
	refs := c.tally.Graders(v.rule)
	colW, stacked := columnWidth(c.width, len(refs))
	cols := make([][]string, len(refs))
	raw := make([]string, len(refs))
	for i, r := range refs {
		raw[i] = r.Name
	}
	names := shortNames(raw, colW) // what tells two judges apart stays
	for i, r := range refs {
		g, graded := c.tally.GraderGrades(r.Version)[e.key]
		col := []string{st.Header.Render(names[i]), clip(graderVerdict(r, g, graded, kind), colW)}
		reason, note := "", ""
		switch {
		case !graded:
		case r.Name == model.PredicateGrader && !g.Pass && !g.Unparseable:
			reason = g.Reason
			if g.Check > 0 {
				reason += fmt.Sprintf(" (check %d)", g.Check)
			}
		case r.Name == model.PredicateGrader:
			reason = "every check passed"
		default:
			var full bool
			if reason, note, full = v.judgeText(r.Version); !full {
				// The grade's summary stands in; enter says why.
				reason, note = g.Reason, "the grade's summary: the judge's answer is not read"
				if _, reading := v.judges.keys[r.Version]; reading && v.judges.errs[v.judges.keys[r.Version]] == nil {
					note = "the grade's summary; reading the judge's answer…"
				}
			}
		}
		col = append(col, wrapText(strings.TrimSpace(reason), colW)...)
		if note != "" {
			for _, l := range wrapWords("("+note+")", colW) {
				col = append(col, st.Muted.Render(l))
			}
		}
		cols[i] = col
	}
	return setColumns(cols, colW, stacked)
}

// columnGap is the space between side-by-side columns.
const columnGap = 3

// columnWidth is the width of each of n columns side by side in width, or
// of one column when they would be too narrow to read (stacked).
func columnWidth(width, n int) (colW int, stacked bool) {
	colW = (width - 2 - columnGap*(n-1)) / max(n, 1)
	if colW < 24 {
		return max(width-4, 10), true
	}
	return colW, false
}

// setColumns lays columns of lines side by side, indented by two, or one
// under the other when stacked.
func setColumns(cols [][]string, colW int, stacked bool) []string {
	if stacked {
		var out []string
		for i, col := range cols {
			if i > 0 {
				out = append(out, "")
			}
			for _, l := range col {
				out = append(out, "  "+l)
			}
		}
		return out
	}
	rows := 0
	for _, col := range cols {
		rows = max(rows, len(col))
	}
	out := make([]string, rows)
	for r := range rows {
		var b strings.Builder
		b.WriteString("  ")
		for i, col := range cols {
			cell := ""
			if r < len(col) {
				cell = col[r]
			}
			if i < len(cols)-1 {
				b.WriteString(fit(cell, colW))
				b.WriteString(strings.Repeat(" ", columnGap))
			} else {
				b.WriteString(cell)
			}
		}
		out[r] = b.String()
	}
	return out
}

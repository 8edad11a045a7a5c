package tui

// The answer view's GRADERS section: every grader of the rule with its
// verdict on the answer shown (the predicate, each judge), and each judge's
// reasoning, as promptfoo and Inspect show every grader per sample. A
// judge's grade keeps only the last sentence of its reasoning; its whole
// answer is stored under the key of the call that asked it, read in
// commands once the answer is read (see reviewjudges.go, which reads them
// the same way for the review screen).

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
)

// loadJudges reads the judges' answers about the answer shown, once it is
// read; nil when there are no judges or nothing to read.
func (v *sampleView) loadJudges() tea.Cmd {
	r := v.resp()
	key := v.key()
	p := v.c.plan
	if r == nil || !r.OK() || v.loader.src == nil || v.judges.of == key || len(p.Audit.Judges) == 0 {
		return nil
	}
	j := &v.judges
	j.clear()
	j.of, j.keys, j.quoted = key, map[string]string{}, model.QuotedVerdicts(r.Text)
	j.resps, j.errs = map[string]model.Response{}, map[string]error{}
	var cmds []tea.Cmd
	for _, jd := range p.Audit.Judges {
		req, ok := p.JudgeRequestFor(jd, key, v.ref.rule, r.Text, 0)
		if !ok {
			continue
		}
		k := req.Key()
		j.keys[jd.For(v.ref.rule).Version] = k
		cmds = append(cmds, loadResponse(v.loader.src, screenSample, k, j.gen))
	}
	return tea.Batch(cmds...)
}

// graderLines is the GRADERS section: one line per grader with its
// verdict and reason, a judge's reasoning wrapped below it. Empty before
// the answer is read or when the call failed.
func (v *sampleView) graderLines(w int) []string {
	c := v.c
	st := c.styles
	r := v.resp()
	if r == nil || !r.OK() {
		return nil
	}
	refs := c.tally.Graders(v.ref.rule)
	if !c.plan.Audit.Rules[v.ref.rule].HasPredicate() {
		refs = refs[1:] // no predicate grades this rule
	}
	if len(refs) == 0 {
		return nil
	}
	key := v.key()
	nameW := 0
	for _, g := range refs {
		nameW = max(nameW, textWidth(oneLine(g.Name)))
	}
	nameW = min(nameW, max(w/3, 12))
	out := []string{st.Header.Render("GRADERS")}
	for _, ref := range refs {
		g, graded := c.tally.GraderGrades(ref.Version)[key]
		word, reason := "", ""
		switch {
		case !graded && ref.Name != model.PredicateGrader:
			word, reason = st.Muted.Render("– not judged"), v.notJudged()
		case !graded:
			word, reason = st.Muted.Render("– not graded"), "not graded yet"
		case g.Unparseable:
			word, reason = st.Err.Render("? unparseable"), oneLine(g.Reason)
		case g.Pass:
			word, reason = st.Pass.Render("✓ pass"), oneLine(g.Reason)
		default:
			word, reason = st.Fail.Render("✗ FAIL"), oneLine(g.Reason)
		}
		head := "  " + fit(oneLine(g.Grader), nameW)
		if g.Grader == "" {
			head = "  " + fit(oneLine(ref.Name), nameW)
		}
		line := head + " " + word
		if reason != "" {
			line += " " + st.Muted.Render(reason)
		}
		out = append(out, clip(line, w+2))
		if ref.Name == model.PredicateGrader || !graded {
			continue
		}
		text, note, ok := v.judgeText(ref.Version)
		if note != "" {
			out = append(out, "    "+st.Muted.Render(note))
		}
		if ok {
			for _, para := range strings.Split(text, "\n") {
				for _, l := range wrapWords(oneLine(para), max(w-4, 10)) {
					out = append(out, "    "+l)
				}
			}
		}
	}
	return out
}

// notJudged says why a judge has no grade of the answer shown: judging
// goes on, has not begun, or the answer is newer than the judging.
func (v *sampleView) notJudged() string {
	l := v.c.live
	switch {
	case l != nil && l.running() && l.phase == "judging":
		return "judging is under way"
	case l != nil && l.running():
		return "judging begins when the answers are in"
	case l != nil && l.stopped != nil && l.answering():
		return "judging had not begun when the run stopped; the next run judges it"
	}
	return "the next run asks the judges"
}

// judgeText is a judge's reasoning about the answer shown; ok is false
// when its answer is not read (note says why).
func (v *sampleView) judgeText(version string) (text, note string, ok bool) {
	return v.judges.text(version, false)
}

// text is the judge's reasoning about the answer shown, or with raw its
// whole stored answer; ok is false when that answer is not read (note says
// why). The sample and review screens both show judges through it.
func (j *judgeAnswers) text(version string, raw bool) (text, note string, ok bool) {
	k, asked := j.keys[version]
	switch {
	case !asked:
		return "", "", false
	case j.errs[k] != nil:
		return "", "judge's answer not read: " + oneLine(j.errs[k].Error()), false
	}
	r, read := j.resps[k]
	switch {
	case !read:
		return "", "reading the judge's answer…", false
	case !r.OK():
		return "", "the judge's call failed: " + oneLine(r.Error), false
	case raw:
		return r.Text, "", true
	}
	verdict := model.ParseJudgeVerdict(r.Text, j.quoted)
	switch {
	case verdict.QuotedOnly:
		return r.Text, "its VERDICT lines repeat the answer's: the whole answer", true
	case !verdict.OK:
		return r.Text, "no VERDICT line: the whole answer", true
	case verdict.Reasoning == "":
		return "", "no reasoning before the verdict", true
	}
	return verdict.Reasoning, "", true
}

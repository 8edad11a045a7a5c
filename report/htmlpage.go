package report

import (
	"cmp"
	"math"
	"slices"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// Page is what `auditor report --format html` draws: the JSON report (Doc,
// every number the page shows comes from it), and what the JSON report
// leaves out because it is text, not numbers: the prompt, a few answers per
// line with their grades and labels, the plan's estimate and the label
// totals. BuildPage gathers it; WriteHTML draws it.
type Page struct {
	Doc Doc
	// Prompt is the audited prompt's lines (line n is Prompt[n-1]).
	Prompt []string
	// Rules runs beside Doc.Rules, in the same order.
	Rules []PageRule
	// Estimate is what the plan expected the whole audit to take before
	// any answer was stored; nil when it could not be made.
	Estimate *audit.Estimate
	Labels   LabelTotals
}

// PageRule is what the page shows of one rule beyond its RuleDoc: its
// variant's title and the answers set side by side.
type PageRule struct {
	Title    string // "-L23 deleted: \"...\"" (audit.Rule.Label)
	Evidence []CaseEvidence
}

// LabelTotals counts the labels given: blind labels (the truth the graders
// are measured against) and seen ones (the review queue's decisions), by
// how many labellers.
type LabelTotals struct {
	Blind, Seen, Labellers int
}

// CaseEvidence is one case's answers with and without the change, sample
// by sample: Why says why the page shows this case ("fixed", "broken",
// "largest rise", "control").
type CaseEvidence struct {
	Case, Kind, Why string
	Msg             string // the user turn the model answered
	Baseline        CaseCountDoc
	Variant         CaseCountDoc
	Pairs           []AnswerPair
}

// AnswerPair is one sample of a case under both variants; either side is
// nil when that answer is not stored.
type AnswerPair struct {
	Sample            int
	Baseline, Variant *Answer
}

// Answer is one stored answer as the page shows it: its text (model
// output, untrusted), every grader's verdict and the human labels.
type Answer struct {
	Text   string
	Grades []AnswerGrade
	Labels []AnswerLabel
}

// AnswerGrade is one grader's verdict on an answer.
type AnswerGrade struct {
	Grader string // "predicate" or "judge:<model>"
	// Verdict is "fail", "pass" or "unparseable"; "" when not graded.
	Verdict, Reason string
}

// AnswerLabel is a human label of an answer: blind (counted against the
// graders) or seen (an adjudication, never in recall or a verdict).
type AnswerLabel struct {
	Source, Labeller string
	Violation        bool
	Note             string
}

// Evidence limits: the page shows a few cases per line and a few samples
// per case, so a nine-line sweep stays well under 2 MB.
const (
	evidenceCases   = 4
	evidenceSamples = 3
)

// BuildPage gathers the page for the results: doc is Build's JSON report
// of them, t the tally they came from, st the store the answers are read
// from, est the plan's estimate before the run (nil: none).
func BuildPage(res *evidence.Results, doc Doc, t *evidence.Tally, st audit.Reader, est *audit.Estimate) (Page, error) {
	p := Page{Doc: doc, Prompt: res.Plan.Audit.Prompt.Lines, Estimate: est}
	book := t.LabelBook()
	p.Labels = LabelTotals{Blind: len(book.Truth()), Seen: len(book.Seen()), Labellers: len(book.Labellers())}
	for i, rr := range res.Rules {
		pr := PageRule{Title: rr.Rule.Label()}
		if rr.Rule.HasPredicate() {
			ev, err := caseEvidence(res.Plan, rr, doc.Rules[i], t, st)
			if err != nil {
				return Page{}, err
			}
			pr.Evidence = ev
		}
		p.Rules = append(p.Rules, pr)
	}
	return p, nil
}

// caseEvidence picks the cases a reviewer should read for a rule: for a
// rewording or an addition the cases it fixed and broke; then the
// provoking cases whose failures rose most without the line, and the
// control case that moved most; and for each up to evidenceSamples
// samples, those whose grades differ between the variants first.
func caseEvidence(p *audit.Plan, rr *evidence.RuleResult, rd RuleDoc, t *evidence.Tally, st audit.Reader) ([]CaseEvidence, error) {
	type pick struct {
		index int
		why   string
	}
	var picks []pick
	chosen := map[int]bool{}
	add := func(i int, why string) {
		if i >= 0 && !chosen[i] && len(picks) < evidenceCases {
			chosen[i] = true
			picks = append(picks, pick{i, why})
		}
	}
	byID := map[string]int{}
	for i, c := range rr.Rule.Cases {
		byID[c.ID] = i
	}
	if !rr.Rule.Deletion() {
		for _, id := range rr.Flips.Broken {
			add(byID[id], "broken")
		}
		for _, id := range rr.Flips.Fixed {
			add(byID[id], "fixed")
		}
	}
	rise := func(cr evidence.CaseResult) float64 { return cr.Deleted.Rate() - cr.Baseline.Rate() }
	order := make([]int, len(rr.Cases))
	for i := range order {
		order[i] = i
	}
	// Largest rise first, then the case file's order: the same store picks
	// the same cases.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rise(rr.Cases[b]), rise(rr.Cases[a])) })
	provoking := 0
	for _, i := range order {
		if cr := rr.Cases[i]; cr.Case.Kind.Provoking() && (cr.Baseline.N > 0 || cr.Deleted.N > 0) && provoking < evidenceCases-1 {
			why := "largest rise"
			if rise(cr) <= 0 {
				why = "provoking" // no case rose: the first ones
			}
			add(i, why)
			provoking++
		}
	}
	// The control case that moved most either way (the first of equals).
	control, moved := -1, -1.0
	for i, cr := range rr.Cases {
		if cr.Case.Kind == model.Control && (cr.Baseline.N > 0 || cr.Deleted.N > 0) && math.Abs(rise(cr)) > moved {
			control, moved = i, math.Abs(rise(cr))
		}
	}
	if control >= 0 {
		add(control, "control")
	}
	slices.SortStableFunc(picks, func(a, b pick) int { return cmp.Compare(a.index, b.index) })

	// The cells of each picked case, by sample.
	cells := map[int]map[int][2]string{} // case -> sample -> [baseline key, variant key]
	for _, ci := range p.CellsOfRule(rr.RuleIndex) {
		c := p.Cells[ci]
		if c.Model != rr.Model || !chosen[c.Case] {
			continue
		}
		if cells[c.Case] == nil {
			cells[c.Case] = map[int][2]string{}
		}
		pair := cells[c.Case][c.Sample]
		if c.Deleted {
			pair[1] = c.Key
		} else {
			pair[0] = c.Key
		}
		cells[c.Case][c.Sample] = pair
	}
	graders := t.Graders(rr.RuleIndex)
	if rr.Rule.Config.NoInputClass() {
		graders = graders[:1]
	}
	truth, seen := t.Labels(), t.SeenLabels()
	var out []CaseEvidence
	for _, pk := range picks {
		c := rr.Rule.Cases[pk.index]
		ce := CaseEvidence{Case: c.ID, Kind: string(c.Kind), Why: pk.why, Msg: c.Msg}
		if pk.index < len(rd.Cases) {
			ce.Baseline, ce.Variant = rd.Cases[pk.index].Baseline, rd.Cases[pk.index].Deleted
		}
		samples := make([]int, 0, len(cells[pk.index]))
		for s := range cells[pk.index] {
			samples = append(samples, s)
		}
		slices.Sort(samples)
		// Samples whose verdicts differ between the variants first, then
		// labelled ones, then in order.
		score := func(s int) int {
			keys := cells[pk.index][s]
			n := 0
			a, okA := t.GradesAt(graders[0].Version)[keys[0]]
			b, okB := t.GradesAt(graders[0].Version)[keys[1]]
			if okA && okB && a.Pass != b.Pass {
				n += 2
			}
			if _, ok := truth[keys[0]]; ok {
				n++
			}
			if _, ok := truth[keys[1]]; ok {
				n++
			}
			return n
		}
		slices.SortStableFunc(samples, func(a, b int) int { return cmp.Compare(score(b), score(a)) })
		for _, s := range samples {
			if len(ce.Pairs) == evidenceSamples {
				break
			}
			keys := cells[pk.index][s]
			pair := AnswerPair{Sample: s}
			var err error
			if pair.Baseline, err = answerOf(keys[0], t, st, graders, truth, seen); err != nil {
				return nil, err
			}
			if pair.Variant, err = answerOf(keys[1], t, st, graders, truth, seen); err != nil {
				return nil, err
			}
			if pair.Baseline != nil || pair.Variant != nil {
				ce.Pairs = append(ce.Pairs, pair)
			}
		}
		slices.SortFunc(ce.Pairs, func(a, b AnswerPair) int { return cmp.Compare(a.Sample, b.Sample) })
		out = append(out, ce)
	}
	return out, nil
}

// answerOf reads one stored answer with its grades and labels; nil when
// the call is not answered.
func answerOf(key string, t *evidence.Tally, st audit.Reader, graders []evidence.GraderRef, truth, seen map[string]model.Label) (*Answer, error) {
	if key == "" || !t.Answered(key) {
		return nil, nil
	}
	r, err := st.Response(key)
	if err != nil {
		return nil, err
	}
	a := &Answer{Text: r.Text}
	for _, g := range graders {
		ag := AnswerGrade{Grader: g.Name}
		if gr, ok := t.GradesAt(g.Version)[key]; ok {
			switch {
			case gr.Unparseable:
				ag.Verdict = "unparseable"
			case gr.Pass:
				ag.Verdict = "pass"
			default:
				ag.Verdict = "fail"
			}
			ag.Reason = gr.Reason
		}
		a.Grades = append(a.Grades, ag)
	}
	if l, ok := truth[key]; ok {
		a.Labels = append(a.Labels, AnswerLabel{Source: model.LabelBlind, Labeller: l.Labeller, Violation: l.Violation, Note: l.Note})
	}
	if l, ok := seen[key]; ok {
		a.Labels = append(a.Labels, AnswerLabel{Source: model.LabelSeen, Labeller: l.Labeller, Violation: l.Violation, Note: l.Note})
	}
	return a, nil
}

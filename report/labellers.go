package report

import (
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// LabellersLines compares, for people, every pair of labellers who gave
// blind labels to the same answers of a rule: Cohen's kappa with its
// standard error, raw agreement and the disagreements ("ana vs ben: kappa
// 0.77 (SE 0.08), agree 53/60 = 0.88, 7 disagreements"). Low agreement
// means the rule's intent is unclear to people too, and a recall measured
// against one person's labels is as shaky as that. Empty with fewer than
// two labellers on the same answers.
func LabellersLines(rr *evidence.RuleResult) []string {
	var out []string
	for _, ag := range rr.Labellers {
		ag.A, ag.B = model.Sanitize(ag.A), model.Sanitize(ag.B)
		out = append(out, "labellers on the same answers (blind labels; the first labeller's count): "+ag.String())
	}
	return out
}

// LabellerDoc is two labellers' agreement on the blind labels both gave a
// rule's answers, in `report --format json`. Kappa is null when undefined
// (both gave every answer one label).
type LabellerDoc struct {
	A             string   `json:"a"`
	B             string   `json:"b"`
	N             int      `json:"n"`
	Both          int      `json:"both_violation"`
	OnlyA         int      `json:"only_a_violation"`
	OnlyB         int      `json:"only_b_violation"`
	Neither       int      `json:"neither"`
	Agreement     float64  `json:"agreement"`
	Kappa         *float64 `json:"kappa"`
	KappaSE       float64  `json:"kappa_se"`
	Disagreements int      `json:"disagreements"`
}

func labellerDocs(rr *evidence.RuleResult) []LabellerDoc {
	out := []LabellerDoc{}
	for _, ag := range rr.Labellers {
		d := LabellerDoc{A: ag.A, B: ag.B, N: ag.N, Both: ag.Both, OnlyA: ag.OnlyA, OnlyB: ag.OnlyB, Neither: ag.Neither,
			Agreement: ag.Agreement, KappaSE: ag.KappaSE, Disagreements: len(ag.Disagreements)}
		if ag.KappaDefined {
			k := ag.Kappa
			d.Kappa = &k
		}
		out = append(out, d)
	}
	return out
}

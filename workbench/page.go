package workbench

import (
	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// Page gathers the HTML report of the results: the JSON report's numbers,
// the prompt, the answers it sets side by side (read from the store), and
// beside the spend what the plan expects of the whole audit.
func (s *Session) Page(res *evidence.Results, spend audit.Spend) (report.Page, error) {
	doc := report.Build(res, spend, s.Simulated())
	est := s.FirstEstimate()
	return report.BuildPage(res, doc, s.Tally, s.Store, &est)
}

// FirstEstimate is what a plan of the whole audit says with nothing stored
// (no answer, no judge's grade): every call, from the audit file's stated
// assumptions, as `plan` said before the first run when it made no pilot.
// No stored answer informs it, so it is the same for the same audit.
func (s *Session) FirstEstimate() audit.Estimate {
	conc := s.Audit.File.Concurrency
	e := s.Plan.Estimate(map[string]bool{}, conc, audit.History{}, 0, s.caches())
	s.Plan.AddJudges(&e, map[string]map[string]model.Grade{}, nil, conc, audit.History{})
	return e
}

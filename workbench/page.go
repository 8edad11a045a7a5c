package workbench

import (
	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/report"
)

// Page gathers the HTML report of the results: the JSON report's numbers,
// the prompt, the answers it sets side by side (read from the store), and
// beside the spend what the plan expected with nothing stored, from its
// stated assumptions (no stored answer informs it, so it is what a plan
// said before the run, and the same for the same audit).
func (s *Session) Page(res *evidence.Results, spend audit.Spend) (report.Page, error) {
	doc := report.Build(res, spend, s.Simulated())
	var est *audit.Estimate
	if e, err := s.Estimate(map[string]bool{}, s.Audit.File.Concurrency, 0, false); err == nil {
		est = &e
	}
	return report.BuildPage(res, doc, s.Tally, s.Store, est)
}

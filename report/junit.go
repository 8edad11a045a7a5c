package report

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Name    string       `xml:"name,attr"`
	Tests   int          `xml:"tests,attr"`
	Fails   int          `xml:"failures,attr"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name  string      `xml:"name,attr"`
	Tests int         `xml:"tests,attr"`
	Fails int         `xml:"failures,attr"`
	Cases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes one test case per audited line and model. A line
// "passes" when its verdict is DELETE (deleting it is supported by the
// evidence); KEEP and INCONCLUSIVE are failures, so a CI job that gates a
// prompt change which removes these lines goes red with the reason.
func WriteJUnit(w io.Writer, res *audit.Results) error {
	s := junitSuite{Name: res.Plan.Audit.File.Name}
	for _, rr := range res.Rules {
		c := junitCase{
			Name:      fmt.Sprintf("line %d: %s", rr.Rule.Line, model.Sanitize(rr.Rule.Text)),
			Classname: "auditor." + rr.ModelName,
			SystemOut: fmt.Sprintf("verdict %s: %s", rr.Verdict.Decision, rr.Verdict.Reason),
		}
		if rr.Verdict.Decision != model.DecisionDelete {
			c.Failure = &junitFailure{Message: string(rr.Verdict.Decision) + ": " + rr.Verdict.Reason, Type: string(rr.Verdict.Decision),
				Body: fmt.Sprintf("line %d is not safe to delete: %s", rr.Rule.Line, rr.Verdict.Reason)}
			s.Fails++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	doc := junitSuites{Name: "auditor", Tests: s.Tests, Fails: s.Fails, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

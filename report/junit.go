package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
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
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Fails      int             `xml:"failures,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

// junitText is element text written as CDATA, so a multi-line report
// stays readable in the XML (encoding/xml splits any "]]>" in it).
type junitText struct {
	Text string `xml:",cdata"`
}

func cdata(s string) *junitText { return &junitText{Text: s} }

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitFailure   `xml:"failure,omitempty"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes one test case per audited line and model. A line
// "passes" when its verdict is DELETE (deleting it is supported by the
// evidence); KEEP, INCONCLUSIVE and CANARY are failures, so a CI job that
// gates a prompt change which removes these lines goes red with the reason.
// Each case carries the same facts as the text report (its system-out is
// that report's block for the line) and its key numbers as properties; the
// suite carries the sweep and the spend.
func WriteJUnit(w io.Writer, res *evidence.Results, spend audit.Spend, simulated bool) error {
	s := junitSuite{Name: res.Plan.Audit.File.Name}
	if c := shipJUnit(res); c != nil {
		s.Tests++
		if c.Failure != nil {
			s.Fails++
		}
		s.Cases = append(s.Cases, *c)
	}
	multiModel := len(res.Plan.Audit.File.Models) > 1
	for _, rr := range res.Rules {
		v := rr.Verdict
		name := fmt.Sprintf("line %d: %s", rr.Rule.Line, model.Sanitize(rr.Rule.Text))
		if !rr.Rule.Deletion() {
			name = fmt.Sprintf("line %d: %s", rr.Rule.Line, model.Sanitize(rr.Rule.Title()))
		}
		c := junitCase{
			Name:      name,
			Classname: "auditor." + model.Sanitize(rr.ModelName),
			SystemOut: cdata(ruleText(rr, multiModel)),
			Properties: []junitProperty{
				{"verdict", string(v.Decision)}, {"reason", v.Reason}, {"bound", v.Bound},
				{"tokens", strconv.Itoa(rr.Rule.Tokens)}, {"tag", model.Sanitize(rr.Rule.Config.Tag)},
				{"cases_file", model.Sanitize(rr.Rule.Config.Cases)}, {"predicate_file", model.Sanitize(rr.Rule.Config.Predicate)},
				{"predicate_version", rr.PredicateVersion},
			},
		}
		if !v.HasControls && v.BaselineN == 0 && rr.Lengths == nil {
			c.Properties = append(c.Properties, junitProperty{"evidence", "none yet"})
		}
		if v.BaselineN > 0 {
			c.Properties = append(c.Properties,
				junitProperty{"provoking_baseline", fmt.Sprintf("%d/%d", v.BaselineFails, v.BaselineN)},
				junitProperty{"provoking_deleted", fmt.Sprintf("%d/%d", v.DeletedFails, v.DeletedN)},
				junitProperty{"diff", fmt.Sprintf("%.4f [%.4f, %.4f]", v.Diff, v.Newcombe.Lo, v.Newcombe.Hi)},
				junitProperty{"provoking_cases", strconv.Itoa(v.ProvokingCases)},
				junitProperty{"control_cases", strconv.Itoa(v.ControlCases)},
				junitProperty{"missed_type_chance", fmt.Sprintf("%.4f (affected share %s, %d provoking cases)",
					v.MissedTypeChance, strconv.FormatFloat(v.AffectedShare, 'f', -1, 64), v.ProvokingCases)})
			if g := v.Grader; g != nil {
				c.Properties = append(c.Properties,
					junitProperty{"grader_route", fmt.Sprintf("%.4f = graded %.4f + misses %.4f + false alarms %.4f (delta %s)",
						g.Rise, g.Graded, g.Miss, g.FalseAlarm, strconv.FormatFloat(v.Delta, 'f', -1, 64))})
			}
		}
		if q := rr.Quality.Recall; q != nil && q.Measured() {
			c.Properties = append(c.Properties, junitProperty{"recall", fmt.Sprintf("%.4f [%.4f, %.4f] of %d labelled violations",
				q.Est, q.CI.Lo, q.CI.Hi, q.Total)})
		}
		if !v.Decision.Passes() {
			body := fmt.Sprintf("line %d is not shown safe to delete: %s", rr.Rule.Line, v.Reason)
			if !rr.Rule.Deletion() {
				body = fmt.Sprintf("%s is not shown safe: %s", model.Sanitize(rr.Rule.Title()), v.Reason)
			}
			if v.Decision == model.DecisionCanary {
				body = fmt.Sprintf("line %d needs a live canary: %s. Next step: %s", rr.Rule.Line, v.Reason, v.Needed)
			}
			c.Failure = &junitFailure{Message: string(v.Decision) + ": " + v.Reason, Type: string(v.Decision), Body: body}
			s.Fails++
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
	}
	g := res.Sweep.SweepGroup
	s.Properties = []junitProperty{
		{"simulated", strconv.FormatBool(simulated)},
		{"delta", strconv.FormatFloat(res.Delta, 'f', -1, 64)},
		{"affected_share", strconv.FormatFloat(AffectedShare(res), 'f', -1, 64)},
		{"lines", strconv.Itoa(g.Lines)}, {"delete", strconv.Itoa(g.Delete)}, {"keep", strconv.Itoa(g.Keep)},
		{"inconclusive", strconv.Itoa(g.Inconclusive)}, {"canary", strconv.Itoa(g.Canary)},
		{"tokens_removed", strconv.Itoa(g.TokensRemoved)}, {"tokens_claimed", strconv.Itoa(g.TokensClaimed)},
		{"spend_calls", strconv.Itoa(spend.Calls)}, {"spend_usd", fmt.Sprintf("%.4f", spend.USD)},
		{"spend_judge_calls", strconv.Itoa(spend.JudgeCalls)}, {"spend_judge_usd", fmt.Sprintf("%.4f", spend.JudgeUSD)},
		{"spend_total_usd", fmt.Sprintf("%.4f", spend.TotalUSD)},
		{"spend_cache_saved_usd", fmt.Sprintf("%.4f", spend.CacheSavedUSD)},
	}
	var out strings.Builder
	for _, l := range sweepLines(res) {
		out.WriteString(l + "\n")
	}
	out.WriteString(spendLine(spend, simulated) + "\n")
	s.SystemOut = cdata(out.String())
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

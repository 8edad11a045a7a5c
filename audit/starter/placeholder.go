package starter

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// caseExamples match the example messages Cases writes; the provoke one
// names its line.
var caseExamples = []*regexp.Regexp{
	literal(provokeExample),
	literal(pressureExample),
	literal(controlExample),
}

// literal matches s exactly, a %d in it standing for any line number.
func literal(s string) *regexp.Regexp {
	parts := strings.Split(s, "%d")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `[0-9]+`))
}

// Placeholders returns, for every case and predicate check of the audit
// (its rules' and its regression suites') that still holds an example the
// starting files were written with, an error naming its file and line. A
// run must not start on them: every answer to a placeholder is a call
// paid for nothing, and a placeholder pattern never matches, so it passes
// every answer. A file several rules share is reported once.
func Placeholders(a *audit.Audit) []*model.InputError {
	var out []*model.InputError
	seen := map[string]bool{}
	check := func(casesPath string, cases []model.Case, predPath string, pred *model.Predicate) {
		if !seen["c\x00"+casesPath] {
			seen["c\x00"+casesPath] = true
			out = append(out, caseExamplesIn(casesPath, cases)...)
		}
		if predPath != "" && pred != nil && !seen["p\x00"+predPath] {
			seen["p\x00"+predPath] = true
			out = append(out, patternExamplesIn(predPath, pred)...)
		}
	}
	for _, r := range a.Rules {
		check(r.CasesPath, r.Cases, r.PredicatePath, r.Loaded)
	}
	for _, r := range a.Regressions {
		check(r.CasesPath, r.Cases, r.PredicatePath, r.Loaded)
	}
	return out
}

func caseExamplesIn(path string, cases []model.Case) []*model.InputError {
	var out []*model.InputError
	for _, c := range cases {
		for _, m := range c.Conversation() {
			if !holdsExample(m.Content) {
				continue
			}
			out = append(out, &model.InputError{File: path, Line: c.Line, Field: "msg",
				Msg: fmt.Sprintf("case %q is still a starting EDIT ME example: replace it with a real request of its kind, or delete the line", model.Sanitize(c.ID))})
			break
		}
	}
	return out
}

func holdsExample(s string) bool {
	for _, re := range caseExamples {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func patternExamplesIn(path string, p *model.Predicate) []*model.InputError {
	var out []*model.InputError
	for _, c := range p.Checks {
		if strings.Contains(c.Pattern, patternExample) {
			line := c.PatternLine
			if line == 0 {
				line = c.Line
			}
			out = append(out, &model.InputError{File: path, Line: line, Field: "fail_if_match",
				Msg: "is still the starting EDIT ME placeholder, which no answer matches: write a pattern that only an answer breaking the line would contain"})
		}
	}
	return out
}

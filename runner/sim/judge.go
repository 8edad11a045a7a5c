package sim

import (
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// The simulated model also plays LLM judges, so the demo shows graders that
// disagree without an API key. A judge recognises the answer it is shown by
// the phrasings the simulated model uses, which tells it the truth; each
// persona then errs in its own way:
//   - a "careful" judge (any name containing "careful", and the default)
//     catches the phrasings a first-draft predicate misses, but overlooks
//     5% of violations and flags 2% of compliant answers;
//   - a "literal" judge (a name containing "literal") has the predicate's
//     blind spot: it misses the evasive phrasings, flags compliant answers
//     that lack an explicit non-commitment, and 2% of its answers have no
//     VERDICT line at all (recorded as unparseable); it also overlooks 4%
//     of the plain violations.
type persona int

const (
	careful persona = iota
	literal
)

func personaOf(judge string) persona {
	if strings.Contains(strings.ToLower(judge), "literal") {
		return literal
	}
	return careful
}

// truth is what the simulated model knows about one of its own phrasings.
type truth struct {
	failure, missable bool
}

// phrasebook maps every phrasing the simulated model uses to its truth.
func phrasebook() map[string]truth {
	book := map[string]truth{}
	for _, p := range []*profile{&roadmap, &credits, &reask, &generic, &competitor} {
		for _, s := range p.violationsCaught {
			book[s] = truth{failure: true}
		}
		for _, s := range p.violationsMissed {
			book[s] = truth{failure: true, missable: true}
		}
		for _, s := range p.compliant {
			book[s] = truth{}
		}
		for _, s := range p.compliantFlagged {
			book[s] = truth{missable: true}
		}
		for _, s := range p.refusalsCaught {
			book[s] = truth{failure: true}
		}
		for _, s := range p.refusalsMissed {
			book[s] = truth{failure: true, missable: true}
		}
		for _, s := range p.controlAnswers {
			book[s] = truth{}
		}
	}
	return book
}

// judge answers a judge call.
func (s *Sim) judge(call runner.Call) string {
	shown := ""
	for _, m := range call.Request.Messages {
		if m.Role == "user" {
			shown = m.Content
		}
	}
	// The longest phrasing found wins, so the outcome never depends on map order.
	t, known, best := truth{}, false, 0
	for phrase, tr := range s.book {
		if len(phrase) > best && strings.Contains(shown, phrase) {
			t, known, best = tr, true, len(phrase)
		}
	}
	p := personaOf(call.Meta.Judge)
	violation := t.failure
	switch {
	case !known:
		violation = false
	case p == careful && t.failure && draw(call.Key, "judge-miss") < 0.05:
		violation = false
	case p == careful && !t.failure && draw(call.Key, "judge-fp") < 0.02:
		violation = true
	case p == literal && t.missable:
		violation = !t.failure // misses evasive failures, flags the compliant answers a predicate would
	case p == literal && t.failure && draw(call.Key, "literal-miss") < 0.04:
		violation = false
	}
	if p == literal && draw(call.Key, "judge-unparseable") < 0.02 {
		return "The answer is borderline and I would want a second opinion before deciding."
	}
	reason := "The answer stays within the rule for this kind of request."
	switch {
	case violation && call.Meta.Kind == model.Control:
		reason = "The answer refuses or deflects a question about something the assistant is allowed to discuss."
	case violation:
		reason = "The answer does what the rule forbids instead of declining."
	}
	verdict := "OK"
	if violation {
		verdict = "VIOLATION"
	}
	return "Reasoning: the request is a " + string(call.Meta.Kind) + " case. " + reason + "\nVERDICT: " + verdict
}

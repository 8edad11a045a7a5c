// Package sim is auditor's built-in simulated model. It answers chat calls
// offline and deterministically so that the bundled demo and the tests run
// without an API key. It is never presented as a real model: everything it
// produces is marked SIMULATED by the commands that show it.
//
// Its behaviour depends on three things, as a real model's would:
//   - whether the audited rule's text is in the system prompt (deleting a
//     load-bearing rule raises the violation rate);
//   - the case's kind (pressure cases fail more often than provoke cases;
//     control cases fail by refusing, more often while the rule is present);
//   - the sample index and case (each call's outcome is drawn from a hash of
//     its content address, so rates differ between cases, as real ones do).
//
// Which rates apply is chosen from the rule's topic, recognised by keywords
// in its text (roadmap speculation, credits and refunds, asking again for
// given information, competitors' prices, answer length, and lines the
// model follows anyway: the customer's name and language, the help centre,
// a sign-off); any other rule gets a mild profile with no effect. Two
// rules about competitors' prices are redundant: the model holds back
// while either is in the prompt, so deleting one changes nothing and
// deleting both does.
//
// A rule about answer length ("Keep answers under 150 words", "Be concise",
// "No preamble") has no input class and no violation to grade: its answers
// never count as failures on provoke and pressure cases. What it changes is
// length. While it is in the system prompt, answers to any case run about
// 50 to 110 words (each case has its own typical length, and samples vary
// around it); once it is deleted they run 35-45% longer, and half of them
// open with a preamble such as "Great question! Let me walk you through
// this." Completion tokens are estimated from the text, so the deleted
// variant also costs more tokens, which is what an audit of such a rule
// measures.
// A share of the violations use phrasings that a first-draft predicate
// misses ("in the coming weeks", "before your renewal"), so the demo shows
// a predicate recall below 1 once responses are hand-labelled, and a few
// compliant answers lack the phrases a predicate looks for, so precision is
// below 1 too.
package sim

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"time"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Options configure the simulated model.
type Options struct {
	// Rules maps each audited prompt line number to its text. The simulated
	// model looks the case's rule up here to pick a profile and to see
	// whether the rule is in the system prompt.
	Rules map[int]string
	// Latency is the mean time an answer takes; zero answers at once. The
	// demo sets it so the grid visibly fills in.
	Latency time.Duration
}

// Sim is the simulated model. It is safe for concurrent use.
type Sim struct {
	rules   map[int]string
	latency time.Duration
	book    map[string]truth // for playing judges
}

// New returns a simulated model.
func New(opts Options) *Sim {
	rules := make(map[int]string, len(opts.Rules))
	for line, text := range opts.Rules {
		rules[line] = text
	}
	return &Sim{rules: rules, latency: opts.Latency, book: phrasebook()}
}

// Outcome is what the simulated model decided for one call: its answer and
// the truth about it, which a perfect human labeller would give.
type Outcome struct {
	Text string
	// Failure is the ground truth: a violation on provoke and pressure
	// cases, a refusal on control cases.
	Failure bool
	// Missable marks failures phrased the way a first-draft predicate
	// misses, and compliant answers phrased the way it wrongly flags.
	Missable bool
}

// Complete answers one call after the simulated latency.
func (s *Sim) Complete(ctx context.Context, call runner.Call) (runner.Completion, error) {
	var out Outcome
	if call.Meta.Judge != "" {
		out.Text = s.judge(call)
	} else {
		out = s.Decide(call)
	}
	if s.latency > 0 {
		// Spread latency between 0.5x and 1.5x the mean, deterministically.
		d := time.Duration(float64(s.latency) * (0.5 + draw(call.Key, "latency")))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return runner.Completion{}, ctx.Err()
		case <-t.C:
		}
	}
	prompt := 0
	for _, m := range call.Request.Messages {
		prompt += estimateTokens(m.Content) + 4
	}
	completion := estimateTokens(out.Text)
	if call.Request.MaxTokens > 0 && completion > call.Request.MaxTokens {
		completion = call.Request.MaxTokens
	}
	return runner.Completion{
		Text:             out.Text,
		FinishReason:     "stop",
		PromptTokens:     prompt,
		CompletionTokens: completion,
	}, nil
}

// Decide returns the outcome of a call without waiting. Tests use it as the
// ground truth for labels.
func (s *Sim) Decide(call runner.Call) Outcome {
	ruleText := s.rules[call.Meta.RuleLine]
	p := profileFor(ruleText)
	present := ruleText != "" && systemContains(call.Request.Messages, ruleText)
	if p == &competitor && !present {
		// Another line on the same topic holds the model back as well.
		for _, other := range s.rules {
			if profileFor(other) == &competitor && systemContains(call.Request.Messages, other) {
				present = true
				break
			}
		}
	}
	rate := p.rate(call.Meta.Kind, present) * caseFactor(p, call.Meta.CaseID)
	if call.Meta.Kind.Provoking() {
		rate *= persistence(call.Request.Messages)
	}
	if rate > 1 {
		rate = 1
	}
	fail := draw(call.Key, "fail") < rate
	missable := draw(call.Key, "phrasing") < p.missShare
	var pool []string
	switch {
	case call.Meta.Kind.Provoking() && fail && missable:
		pool = p.violationsMissed
	case call.Meta.Kind.Provoking() && fail:
		pool = p.violationsCaught
	case call.Meta.Kind.Provoking() && draw(call.Key, "fp") < p.falseFlagShare:
		pool, missable = p.compliantFlagged, true
	case call.Meta.Kind.Provoking():
		pool, missable = p.compliant, false
	case fail && missable:
		pool = p.refusalsMissed
	case fail:
		pool = p.refusalsCaught
	default:
		pool, missable = p.controlAnswers, false
	}
	body := pool[int(draw(call.Key, "text")*float64(len(pool)))%len(pool)]
	opening := openings[int(draw(call.Key, "open")*float64(len(openings)))%len(openings)]
	if p.length != nil && !fail {
		body, opening = p.length.answer(call.Key, call.Meta.CaseID, present)
	}
	return Outcome{Text: opening + body + "\n\n" + signOff, Failure: fail, Missable: missable}
}

// signOff ends every answer, as the demo prompt asks.
const signOff = "— Ava, Lumen Support"

// Name returns a description for headers and logs.
func (s *Sim) Name() string { return "simulated model (sim)" }

// persistence is how much a conversation wears the model down: every user
// turn after the first (the user asking again after an answer) raises the
// chance of giving in by a quarter, as real models tend to yield to
// repetition. A single-turn case is unaffected.
func persistence(msgs []model.Message) float64 {
	users := 0
	for _, m := range msgs {
		if m.Role == "user" {
			users++
		}
	}
	return 1 + 0.25*float64(max(users-1, 0))
}

func systemContains(msgs []model.Message, text string) bool {
	for _, m := range msgs {
		if m.Role == "system" && strings.Contains(m.Content, text) {
			return true
		}
	}
	return false
}

// draw returns a number in [0, 1) fixed by the call's key and a salt, so the
// same call always gets the same answer and independent decisions about one
// call (fail? which phrasing?) use independent numbers.
func draw(key, salt string) float64 {
	h := sha256.Sum256([]byte(salt + "\x00" + key))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

// caseFactor makes some cases fail more than others: real failure rates vary
// by case, which is why arm intervals are clustered by case.
func caseFactor(p *profile, caseID string) float64 {
	if f, ok := p.caseFactors[caseID]; ok {
		return f
	}
	return 0.4 + 1.2*draw(caseID, "case")
}

func estimateTokens(s string) int {
	// About four characters a token for English; good enough for a simulation.
	return (len(s) + 3) / 4
}

var openings = []string{"", "Thanks for reaching out! ", "Hi there, ", "Good question. ", "Happy to help. "}

package sim

import (
	"regexp"
	"strings"

	"github.com/auditor-dev/auditor/model"
)

// profile is how the simulated model behaves for one kind of rule.
type profile struct {
	name string
	// failure rates: [rule present, rule deleted] per kind.
	provoke, pressure, control [2]float64
	// caseFactors scale the rate of named cases; others get a hashed factor.
	caseFactors map[string]float64
	// missShare is the share of failures phrased so a first-draft predicate misses them.
	missShare float64
	// falseFlagShare is the share of compliant provoking answers that lack the
	// phrases a predicate requires (a false positive for the predicate).
	falseFlagShare float64

	violationsCaught, violationsMissed []string
	compliant, compliantFlagged        []string
	refusalsCaught, refusalsMissed     []string
	controlAnswers                     []string

	// length, when set, replaces every answer that is not a failure with
	// one whose length depends on whether the rule is present.
	length *verbosity
}

func (p *profile) rate(k model.Kind, present bool) float64 {
	i := 1
	if present {
		i = 0
	}
	switch k {
	case model.Provoke:
		return p.provoke[i]
	case model.Pressure:
		return p.pressure[i]
	default:
		return p.control[i]
	}
}

func profileFor(ruleText string) *profile {
	t := strings.ToLower(ruleText)
	switch {
	case strings.Contains(t, "speculat") || strings.Contains(t, "roadmap") || strings.Contains(t, "unreleased"):
		return &roadmap
	case strings.Contains(t, "credit") || strings.Contains(t, "refund") || strings.Contains(t, "compensat"):
		return &credits
	case strings.Contains(t, "already given") || strings.Contains(t, "already supplied") || strings.Contains(t, "already provided"):
		return &reask
	case strings.Contains(t, "competitor"):
		return &competitor
	case lengthWords.MatchString(t) || lengthLimit.MatchString(t):
		return &brevity
	case inertWords.MatchString(t):
		return &inert
	}
	return &generic
}

// inertWords recognises rules that describe what the model does anyway:
// answer the question first, use the customer's name, reply in their
// language, say when it is not sure, link the help centre, sign off. The
// simulated model never breaks them, with or without the line.
var inertWords = regexp.MustCompile(`\b(question that was asked|customer's name|language the customer|not sure|help centre|sign off|locale)\b`)

// competitor is a rule that another line repeats: "Do not compare prices
// with competitors'" and, say, "Never quote a competitor's price". The
// model holds back while either line is in the prompt; without both, 44%
// of provoking answers quote a competitor's price and 80% under pressure.
// Deleting either line alone changes nothing (the other holds), so each
// line alone is safe to delete and the two together are not: the
// interference a joint test catches.
var competitor = profile{
	name:           "competitor prices",
	provoke:        [2]float64{0, 0.44},
	pressure:       [2]float64{0, 0.80},
	control:        [2]float64{0.01, 0.01},
	caseFactors:    map[string]float64{},
	missShare:      0.15,
	falseFlagShare: 0,
	violationsCaught: []string{
		"Our Team plan is $12 a seat, and Trellis charges $15 for the same thing.",
		"Compared with Trellis at $15 a seat, our $12 is the better deal.",
	},
	violationsMissed: []string{
		"We work out about a third cheaper than Trellis for a team your size.",
	},
	compliant: []string{
		"I can't compare our prices with other products, but our pricing page lists every Lumen plan.",
	},
	refusalsCaught: []string{"I can't discuss pricing."},
	refusalsMissed: []string{"Pricing isn't something I can get into here."},
	controlAnswers: []string{"The Team plan is billed per seat, monthly or yearly; the pricing page has the details."},
}

// inert is a rule the model follows whether or not the line is there: no
// violation in either variant, and the generic profile's phrasings.
var inert = profile{
	name:             "inert",
	control:          [2]float64{0.01, 0.01},
	missShare:        generic.missShare,
	violationsCaught: generic.violationsCaught,
	violationsMissed: generic.violationsMissed,
	compliant:        generic.compliant,
	refusalsCaught:   generic.refusalsCaught,
	refusalsMissed:   generic.refusalsMissed,
	controlAnswers:   generic.controlAnswers,
}

// lengthWords and lengthLimit recognise rules about answer length: "Be
// concise", "Keep replies short", "No preamble", "Keep answers under 150
// words". They are checked after the topics above, so a rule that names one
// of those topics keeps its profile. Compiled regexps are safe for
// concurrent use and never change.
var (
	lengthWords = regexp.MustCompile(`\b(concise|concisely|brief|briefly|short|shorter|succinct|succinctly|terse|verbose|verbosity|wordy|long-winded|preambles?|rambl\w*)\b`)
	lengthLimit = regexp.MustCompile(`\b\d+\s+(words|sentences|paragraphs|lines|characters|tokens)\b`)
)

// roadmap is a load-bearing rule: without it the model volunteers dates,
// more often under pressure, and one case (a renewal date in the message)
// invites the phrasing a first-draft predicate misses.
var roadmap = profile{
	name:     "roadmap speculation",
	provoke:  [2]float64{0.005, 0.22},
	pressure: [2]float64{0.03, 0.40},
	control:  [2]float64{0.04, 0.01},
	caseFactors: map[string]float64{
		"road-01": 1.6, "road-02": 1.2, "road-03": 0.8, "road-04": 0.5, "road-05": 0.9,
	},
	missShare:      0.23,
	falseFlagShare: 0.03,
	violationsCaught: []string{
		"Offline mode is currently planned for Q3, so you won't have long to wait.",
		"That should arrive next quarter, together with the new billing page.",
		"We expect it by the end of the year; the team is finishing it now.",
		"It's scheduled for release in March, just after the spring update.",
	},
	violationsMissed: []string{
		"It's on our roadmap and should be out in the coming weeks.",
		"It's on the roadmap and should land shortly, so it's worth waiting.",
		"It's on the roadmap and it should be ready before your renewal.",
		"I can't confirm the exact day, but it's coming soon after the next release.",
	},
	compliant: []string{
		"I can't confirm a date for that. It isn't on the public roadmap yet, and I'd rather not guess. I can open a ticket so you're told when it ships.",
		"I don't have a date I can share for that. What's on the public roadmap page is everything that's announced.",
		"I can't share anything about unreleased features or their timing. The public roadmap lists what's announced.",
	},
	compliantFlagged: []string{
		"That isn't something that exists yet, so I won't guess at when it might. Would you like me to open a ticket?",
	},
	refusalsCaught: []string{
		"I'm sorry, I can't discuss product plans or releases.",
		"I'm unable to comment on that.",
	},
	refusalsMissed: []string{
		"That's not something I'm able to go into here.",
	},
	controlAnswers: []string{
		"Yes, that's available in the current release. You'll find it under Settings.",
		"Yes. It's part of the current version on every paid plan; the help centre article has the steps.",
		"It is. Open Settings, choose the option, and it applies to your whole workspace.",
	},
}

// credits is load-bearing in one case only: without the rule, the model
// gives in to the goodwill-credit pressure case and nowhere else.
var credits = profile{
	name:     "credits and refunds",
	provoke:  [2]float64{0, 0.01},
	pressure: [2]float64{0, 0.02},
	control:  [2]float64{0.01, 0.01},
	caseFactors: map[string]float64{
		"cred-01": 1, "cred-02": 1, "cred-03": 1, "cred-04": 1, "cred-05": 20, "cred-06": 1,
	},
	missShare:      0.25,
	falseFlagShare: 0.02,
	violationsCaught: []string{
		"I've applied a credit to your next invoice to make up for it.",
		"You'll receive a refund for the difference within five working days.",
	},
	violationsMissed: []string{
		"Consider it done: this month is on us, and the billing team will review the rest.",
	},
	compliant: []string{
		"I understand. I've passed this to the billing team, who will review the request and reply by email.",
		"I can't decide that myself, but the billing team will review the request today and get back to you.",
	},
	compliantFlagged: []string{
		"I hear you, and I'm sorry for the trouble. Let me get someone who can look at this properly.",
	},
	refusalsCaught: []string{"I can't help with billing questions here."},
	refusalsMissed: []string{"Billing isn't something I handle, sorry."},
	controlAnswers: []string{
		"You can see that under Billing > Invoices, with a download link for each.",
		"Go to Billing > Payment method and choose Replace card.",
	},
}

// reask describes behaviour the model shows anyway: deleting the rule changes
// nothing, so the verdict should not be KEEP.
var reask = profile{
	name:           "asking again for given information",
	provoke:        [2]float64{0.03, 0.03},
	pressure:       [2]float64{0.03, 0.03},
	control:        [2]float64{0.02, 0.02},
	missShare:      0.3,
	falseFlagShare: 0,
	violationsCaught: []string{
		"Could you share your order number so I can look into it?",
		"Could you please confirm your account email first?",
	},
	violationsMissed: []string{
		"What's the order number on that, so I can check?",
	},
	compliant: []string{
		"Thanks for the details. I've looked this up and opened a ticket with billing; you'll hear back within one business day.",
		"Thanks, that's everything I need. I've found it and passed it to the right team.",
	},
	// On controls the failure is not asking for the identifier support needs.
	refusalsCaught: []string{"I'll look into it and get back to you."},
	refusalsMissed: []string{"I'll check the account history and get back to you."},
	controlAnswers: []string{
		"Please send me the order number or the email on the account, and I'll check it right away.",
		"Could you share the invoice number or workspace name? Then I can fix it.",
	},
}

// generic is used for rules the simulated model has no topic for: a low
// failure rate that deleting the rule does not change.
var generic = profile{
	name:             "generic",
	provoke:          [2]float64{0.02, 0.02},
	pressure:         [2]float64{0.02, 0.02},
	control:          [2]float64{0.01, 0.01},
	missShare:        0.2,
	violationsCaught: []string{"Sure, here is exactly what you asked for, no caveats."},
	violationsMissed: []string{"Happy to bend the rules a little for you."},
	compliant:        []string{"Here's what I can tell you, within what I'm allowed to share."},
	refusalsCaught:   []string{"I can't discuss that."},
	refusalsMissed:   []string{"That's not something I can get into."},
	controlAnswers:   []string{"Yes, here's how that works in the current release."},
}

// brevity is a rule about answer length. It has no input class: it shapes
// every answer, so no answer violates it in a way a predicate could grade
// (Failure stays false on provoke and pressure cases) and its effect shows
// only in how long the answers are. Controls keep the generic profile's mild
// refusals.
var brevity = profile{
	name:             "answer length",
	control:          generic.control,
	missShare:        generic.missShare,
	violationsCaught: generic.violationsCaught,
	violationsMissed: generic.violationsMissed,
	compliant:        generic.compliant,
	refusalsCaught:   generic.refusalsCaught,
	refusalsMissed:   generic.refusalsMissed,
	controlAnswers:   generic.controlAnswers,
	length: &verbosity{
		words:         [2]float64{60, 95},
		jitter:        0.18,
		growth:        [2]float64{1.35, 1.45},
		preambleShare: 0.5,
		preambles: []string{
			"Great question! Let me walk you through this. ",
			"Great question! Let me walk you through this step by step. ",
			"Thanks so much for reaching out, I'd be glad to explain everything in detail. ",
		},
		lead: "Here is how that works in the current release of Lumen.",
		sentences: []string{
			"Open Settings from the menu at the top left and choose the section you need.",
			"Changes apply to the whole workspace as soon as you save them.",
			"If you only want them for one project, open that project's settings instead.",
			"Admins can see and change every option; members see the ones that affect their own work.",
			"You can undo the change at any time from the same page.",
			"There is a step-by-step guide with screenshots in the help centre if you'd like to follow along.",
			"If something looks different on your screen, refresh the page or sign out and back in.",
			"The mobile app picks up the change the next time it syncs, usually within a minute.",
			"Nothing you have already created is lost or moved when you do this.",
			"Your plan and your invoices stay exactly as they are.",
			"If you run into an error, send me the message you see and I'll look into it.",
			"Many teams set this up once during onboarding and rarely need to touch it again.",
			"Keyboard shortcuts for the same actions are listed under Help > Shortcuts.",
			"Guests in your workspace will not see the change unless you invite them to the project.",
			"The workspace activity log records who made the change and when.",
			"I can also walk you through the related settings if that would be useful.",
		},
	},
}

// verbosity generates answers whose length depends on whether the rule is
// in the system prompt. Each case has its own typical length and growth, and
// each sample varies around them, all drawn from hashes so the same call
// always gets the same answer.
type verbosity struct {
	// words is the range of a case's typical answer length in words, sign-off
	// included, while the rule is present.
	words [2]float64
	// jitter is how far one sample may stray from its case's typical length,
	// as a share of it (0.2 for -/+20%).
	jitter float64
	// growth is the range of the factor by which a case's answers grow once
	// the rule is deleted.
	growth [2]float64
	// preambleShare is the share of answers that open with a preamble once
	// the rule is deleted; preambles replace the usual opening.
	preambleShare float64
	preambles     []string
	// lead opens every answer; sentences follow it in an order drawn per
	// call until the answer reaches its length. len(sentences) must be a
	// power of two, so that every odd stride visits each sentence once.
	lead      string
	sentences []string
}

// answer returns the body of an answer and its opening.
func (v *verbosity) answer(key, caseID string, present bool) (body, opening string) {
	target := v.words[0] + (v.words[1]-v.words[0])*draw(caseID, "length")
	target *= 1 - v.jitter + 2*v.jitter*draw(key, "length")
	opening = openings[int(draw(key, "open")*float64(len(openings)))%len(openings)]
	if !present {
		target *= v.growth[0] + (v.growth[1]-v.growth[0])*draw(caseID, "growth")
		if draw(key, "preamble") < v.preambleShare {
			opening = v.preambles[int(draw(key, "preamble-text")*float64(len(v.preambles)))%len(v.preambles)]
		}
	}
	// The sign-off counts towards the length, as it does for a reader.
	words := wordCount(opening) + wordCount(v.lead) + wordCount(signOff)
	parts := []string{v.lead}
	n := len(v.sentences)
	start := int(draw(key, "start") * float64(n))
	stride := 1 + 2*int(draw(key, "stride")*float64(n/2)) // odd, so coprime with n
	for i := 0; i < n; i++ {
		s := v.sentences[(start+i*stride)%n]
		w := wordCount(s)
		// Add the sentence while it brings the length closer to the target,
		// so the lengths are unbiased rather than always overshooting.
		if float64(words)+float64(w)/2 > target {
			break
		}
		parts = append(parts, s)
		words += w
	}
	return strings.Join(parts, " "), opening
}

func wordCount(s string) int { return len(strings.Fields(s)) }

package sim

import (
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
	}
	return &generic
}

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

package labels

import "github.com/auditor-dev/auditor/model"

// LegacySource classifies a label stored before labels recorded their
// source. Such records do not say whether the labeller saw the graders'
// verdicts, and the label screen only ever shows the answers of a drawn
// label set, while the review queue shows any. So a legacy label counts as
// blind when its answer belongs to a label set drawn before the label was
// given (it could have come from the label screen), and as seen otherwise.
// A review label given to an answer of an earlier set cannot be told apart
// and counts as blind: the one case this rule gets wrong, and the reason
// every new label records its source.
func LegacySource(sets []LabelSet) func(model.Label) string {
	return func(l model.Label) string {
		for i := range sets {
			s := &sets[i]
			if s.Contains(l.Key) && !s.Created.After(l.At) {
				return model.LabelBlind
			}
		}
		return model.LabelSeen
	}
}

package evidence

import (
	"github.com/auditor-dev/auditor/model"
)

// A label vouches for the answer it judged, not for whatever answer is
// stored under its request's key now: a clone of the audit (the label file
// committed, auditor.db not) asks again and stores new answers under the
// same keys. So every label record is checked against the answer stored
// under its key (model.AnswerDigest.Judged) before it enters the book:
// one that judged another answer counts nowhere (no recall, no labels
// route, no agreement) and is counted apart, for every report and screen
// to say "label again". A record whose key has no answer yet waits until
// one is recorded.

// DigestReader is a Reader that knows the hash of each stored answer
// (store.Store and audittest.MemStore are): AnswerDigests returns, for each
// key with an answer stored, its model.AnswerDigest, keyed by the strings
// given. With a Reader that is not one, labels are not checked.
type DigestReader interface {
	AnswerDigests(keys []string) (map[string]model.AnswerDigest, error)
}

// labelGate sorts label records into those that judged the answer stored
// under their key (admitted to the book), those that judged another
// (stale), and those whose key has no answer yet (pending).
type labelGate struct {
	checked bool // false: the reader cannot say, every record is admitted
	digests map[string]model.AnswerDigest
	pending map[string][]model.Label
	stale   map[string]int // key -> label records (not undo) that judged another answer
}

// newLabelGate reads the digests of the answers labelled in log.
func newLabelGate(src any, log []model.Label) (*labelGate, error) {
	g := &labelGate{pending: map[string][]model.Label{}, stale: map[string]int{}}
	dr, ok := src.(DigestReader)
	if !ok {
		return g, nil
	}
	g.checked = true
	seen := map[string]bool{}
	var keys []string
	for _, l := range log {
		if !seen[l.Key] {
			seen[l.Key] = true
			keys = append(keys, l.Key)
		}
	}
	var err error
	g.digests, err = dr.AnswerDigests(keys)
	return g, err
}

// admit returns the records of log that judged the answers stored now,
// keeping the others apart. It filters log in place: the caller's slice
// is the tally's own (a copy of a large history was the tally's largest
// allocation).
func (g *labelGate) admit(log []model.Label) []model.Label {
	if g == nil || !g.checked {
		return log
	}
	out := log[:0]
	for _, l := range log {
		if g.one(l) {
			out = append(out, l)
		}
	}
	return out
}

// one reports whether a record judged the answer stored under its key;
// when the key has none yet, the record waits in pending.
func (g *labelGate) one(l model.Label) bool {
	if g == nil || !g.checked {
		return true
	}
	d, ok := g.digests[l.Key]
	switch {
	case !ok:
		g.pending[l.Key] = append(g.pending[l.Key], l)
		return false
	case d.Judged(l):
		return true
	}
	if !l.Undo {
		g.stale[l.Key]++
	}
	return false
}

// answered takes in an answer just recorded: the records waiting for its
// key that judged it are returned, in the order given.
func (g *labelGate) answered(r model.Response) []model.Label {
	if g == nil || !g.checked || !r.OK() {
		return nil
	}
	d := model.AnswerDigest{SHA256: model.AnswerHash(r.Text), At: r.At}
	g.digests[r.Key] = d
	waiting := g.pending[r.Key]
	delete(g.pending, r.Key)
	var out []model.Label
	for _, l := range waiting {
		if g.one(l) {
			out = append(out, l)
		}
	}
	return out
}

// labelled takes in a record just stored: it is admitted unless the
// answer it names is not the one known to be stored. A record stored with
// a hash for a key the gate has no digest of names the answer the store
// holds (store.Store.PutLabel refuses any other), which becomes the
// digest.
func (g *labelGate) labelled(l model.Label) bool {
	if g == nil || !g.checked {
		return true
	}
	if _, ok := g.digests[l.Key]; !ok && l.AnswerSHA256 != "" {
		g.digests[l.Key] = model.AnswerDigest{SHA256: l.AnswerSHA256}
	}
	return g.one(l)
}

// staleLabels counts the answers whose labels judged another answer than
// the one stored under their key now.
func (g *labelGate) staleLabels() int {
	if g == nil {
		return 0
	}
	return len(g.stale)
}

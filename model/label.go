package model

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"
)

// Where a label was given. Only blind labels are the truth graders are
// measured against: a person who sees the graders' verdicts leans towards
// them, so a label given in the review queue would flatter (or, corrected
// against, punish) the very graders it measures.
const (
	// LabelBlind: the label screen or an imported sheet, with no grader's
	// verdict in view.
	LabelBlind = "blind"
	// LabelSeen: the review queue, with the graders' verdicts in view. Such
	// a label is an adjudication, shown apart, never in recall.
	LabelSeen = "seen"
)

// Label is a human's judgement of one response, or (Undo) the taking back
// of one. Labels are only ever appended to a response's history; what a
// response's labels are now is what LabelBook makes of that history.
type Label struct {
	Key       string    `json:"key"`
	Violation bool      `json:"violation"` // the response breaks the rule's intent (or, on a control, refuses)
	Labeller  string    `json:"labeller"`
	Note      string    `json:"note"`
	At        time.Time `json:"at"`
	// Source is LabelBlind or LabelSeen; "" on labels stored before
	// labels recorded it (LabelBook classifies those).
	Source string `json:"source,omitempty"`
	// Undo marks a history record that takes back the latest label the same
	// labeller gave the response from the same source (Violation and Note
	// are then ignored). Undoing a first label leaves the answer unlabelled
	// by that labeller; nothing is deleted.
	Undo bool `json:"undo,omitempty"`
	// Unseen marks an undo given before its labeller was shown any
	// grader's verdict of the response (the label screen reveals them
	// only after the next label, or on a key): the label it takes back
	// never unblinded anyone, so the answer stays open to a blind label
	// (Gave leaves the pair out). False on every other record.
	Unseen bool `json:"unseen,omitempty"`
	// AnswerSHA256 is the hash (AnswerHash) of the answer text the label
	// judged. A request's key names what was asked, not what came back: a
	// clone of the audit asks again and may store another answer under the
	// same key, and a label vouches only for the answer it judged. Empty
	// on labels stored before labels recorded it.
	AnswerSHA256 string `json:"answer_sha256,omitempty"`
}

// AnswerHash is the hash a label records of the answer text it judged:
// SHA-256 of the text's bytes, in lower-case hex.
func AnswerHash(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:])
}

// AnswerDigest is what a label's answer is checked against: the hash of
// the answer stored under a key now, and when it was stored.
type AnswerDigest struct {
	SHA256 string
	At     time.Time
}

// Judged reports whether l judged the answer d describes: its hash is
// d's, or, for a label stored before labels recorded hashes, the answer
// was stored before the label was given (an answer stored later is not the
// one it judged: a clone's, asked again).
func (d AnswerDigest) Judged(l Label) bool {
	if l.AnswerSHA256 != "" {
		return l.AnswerSHA256 == d.SHA256
	}
	return !l.At.IsZero() && !d.At.IsZero() && !d.At.After(l.At)
}

// LabelBook resolves label histories into the labels that hold now.
//
// Each labeller has, per response and source, a stack: a label pushes, an
// undo record pops. A labeller's label of a response is the top of their
// stack. The truth of a response (Truth) is the blind label of its first
// labeller: the one whose surviving blind label of it is the oldest. A
// second labeller's blind labels are compared with the first's (kappa) but
// never replace them: letting the latest labeller win would make recall
// depend on who labelled last, and keeping only agreed answers would drop
// exactly the hard ones. Seen labels (review adjudications) never enter
// the truth; Seen gives the latest per response, by anyone.
//
// A blind label that repeats its labeller's current blind label of the
// response (same verdict and note) says nothing new and is left out of the
// history: nobody gives one on purpose (the label screen refuses a second
// blind label), but imports of files without times once appended such a
// copy on every import and open, and a copy would make one undo take back
// only the copy. Leaving them out here collapses those copies in every
// label file the next time it is written. A repeated seen label is kept:
// the review queue may decide an answer again with the same verdict, and
// its undo takes back that decision alone.
//
// A LabelBook is not safe for concurrent use.
type LabelBook struct {
	legacy func(Label) string
	hist   map[string][]Label // response key -> history in the order given
	// st holds each response's stacks, kept as records are pushed, so a
	// push is constant time however long the history (a file of a hundred
	// labellers' labels of each answer made opening an audit quadratic).
	st    map[string]map[stackID][]stacked
	truth map[string]Label
	seen  map[string]Label
	by    map[string]map[string]Label // blind labels: labeller -> key -> label
}

// NewLabelBook resolves a label history: every record ever stored, each
// response's records in the order they were given (records of different
// responses may interleave in any way). legacy gives the source of a record
// stored without one; nil counts such records as blind.
func NewLabelBook(history []Label, legacy func(Label) string) *LabelBook {
	b := &LabelBook{legacy: legacy, hist: map[string][]Label{}, truth: map[string]Label{},
		seen: map[string]Label{}, by: map[string]map[string]Label{}, st: map[string]map[stackID][]stacked{}}
	for _, l := range history {
		b.push(l)
	}
	for key := range b.hist {
		b.resolve(key)
	}
	return b
}

// Add appends a record to its response's history.
func (b *LabelBook) Add(l Label) {
	b.push(l)
	b.resolve(l.Key)
}

// push appends a record to its response's history unless it is a blind
// label repeating its labeller's current one (see LabelBook).
func (b *LabelBook) push(l Label) {
	if !l.Undo && b.SourceOf(l) == LabelBlind {
		if cur, ok := b.Current(l.Key, l.Labeller, LabelBlind); ok && cur.Violation == l.Violation && cur.Note == l.Note {
			return
		}
	}
	order := len(b.hist[l.Key])
	b.hist[l.Key] = append(b.hist[l.Key], l)
	st := b.st[l.Key]
	if st == nil {
		st = map[stackID][]stacked{}
		b.st[l.Key] = st
	}
	l.Source = b.SourceOf(l)
	id := stackID{l.Source, l.Labeller}
	if l.Undo {
		if s := st[id]; len(s) > 0 {
			st[id] = s[:len(s)-1]
		}
		return
	}
	st[id] = append(st[id], stacked{l, order})
}

// SourceOf is a record's source: its own, or the legacy rule's for a
// record stored without one.
func (b *LabelBook) SourceOf(l Label) string {
	switch {
	case l.Source != "":
		return l.Source
	case b.legacy != nil:
		return b.legacy(l)
	}
	return LabelBlind
}

type stackID struct{ source, labeller string }

type stacked struct {
	l     Label
	order int // position in the response's history
}

// stacks returns, for one response, every labeller's surviving labels of
// each source, oldest first (sources filled in). The map is the book's
// own.
func (b *LabelBook) stacks(key string) map[stackID][]stacked { return b.st[key] }

func (b *LabelBook) resolve(key string) {
	delete(b.truth, key)
	delete(b.seen, key)
	for _, m := range b.by {
		delete(m, key)
	}
	firstBlind, lastSeen := -1, -1
	for id, s := range b.stacks(key) {
		if len(s) == 0 {
			continue
		}
		top := s[len(s)-1]
		switch id.source {
		case LabelBlind:
			m := b.by[id.labeller]
			if m == nil {
				m = map[string]Label{}
				b.by[id.labeller] = m
			}
			m[key] = top.l
			if firstBlind < 0 || s[0].order < firstBlind {
				firstBlind = s[0].order
				b.truth[key] = top.l
			}
		case LabelSeen:
			if top.order > lastSeen {
				lastSeen = top.order
				b.seen[key] = top.l
			}
		}
	}
}

// Truth returns the blind label of every response that has one, by key:
// the labels graders are measured against. The map is the book's own: do
// not modify it.
func (b *LabelBook) Truth() map[string]Label { return b.truth }

// Seen returns the latest review adjudication of every response that has
// one, by key. The map is the book's own: do not modify it.
func (b *LabelBook) Seen() map[string]Label { return b.seen }

// ByLabeller returns each labeller's blind labels, by labeller then key.
// The maps are the book's own: do not modify them.
func (b *LabelBook) ByLabeller() map[string]map[string]Label { return b.by }

// Of returns one labeller's blind labels, by key (empty, never nil, for a
// labeller with none). The map is the book's own: do not modify it.
func (b *LabelBook) Of(labeller string) map[string]Label {
	if m := b.by[labeller]; m != nil {
		return m
	}
	return map[string]Label{}
}

// Current returns the label a labeller's next undo on the response would
// take back: their latest surviving label from source.
func (b *LabelBook) Current(key, labeller, source string) (Label, bool) {
	s := b.stacks(key)[stackID{source, labeller}]
	if len(s) == 0 {
		return Label{}, false
	}
	return s[len(s)-1].l, true
}

// Gave reports whether labeller gave key a label of source that holds,
// or one undone after its graders were shown: on the label screen whoever
// saw a blind label's graders stays unblinded after an undo. A label
// taken back by an Unseen undo (before any verdict was shown) and that
// undo count as never given.
func (b *LabelBook) Gave(key, labeller, source string) bool {
	return b.gave(key, func(l Label) bool { return l.Labeller == labeller && b.SourceOf(l) == source })
}

// AnyoneGave reports whether anybody gave key a label of source that
// holds, or one undone after its graders were shown (see Gave).
func (b *LabelBook) AnyoneGave(key, source string) bool {
	return b.gave(key, func(l Label) bool { return b.SourceOf(l) == source })
}

func (b *LabelBook) gave(key string, of func(Label) bool) bool {
	depth := map[string]int{} // surviving labels per labeller
	for _, l := range b.hist[key] {
		if !of(l) {
			continue
		}
		switch {
		case !l.Undo:
			depth[l.Labeller]++
		case depth[l.Labeller] > 0 && l.Unseen:
			depth[l.Labeller]--
		case depth[l.Labeller] > 0:
			return true // undone after its graders were shown
		}
	}
	for _, n := range depth {
		if n > 0 {
			return true
		}
	}
	return false
}

// History returns every record of every response (repeated blind labels
// left out, see LabelBook), each response's records in the order given,
// responses sorted by key: a stable order for files kept in a repository.
func (b *LabelBook) History() []Label {
	keys := make([]string, 0, len(b.hist))
	for k := range b.hist {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []Label
	for _, k := range keys {
		out = append(out, b.hist[k]...)
	}
	return out
}

// Labellers returns the names of everyone with a blind label, sorted.
func (b *LabelBook) Labellers() []string {
	var out []string
	for name, m := range b.by {
		if len(m) > 0 {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

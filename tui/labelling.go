package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
)

// LabelStore is where the label and review screens write labels, and where
// a re-graded predicate's grades and version history go. *store.Store
// satisfies it. It is only called from commands, never from Update or View.
type LabelStore interface {
	// PutLabel commits a label (with fsync) before it returns and returns
	// it as stored (with the hash of the answer it judged): the screens
	// show the next answer only after it did.
	PutLabel(l model.Label) (model.Label, error)
	// The rest reads the predicate's version history
	// (labels.PredicateHistory) and records an edited predicate's version
	// and grades.
	audit.Store
}

// Screen names a screen the app can open on.
type Screen int

// The screens the app can open on. The zero value is the grid (or the plan,
// when a run is waiting for its y).
const (
	ScreenGrid Screen = iota
	ScreenLabel
	ScreenReview
)

// LabelOptions configure labelling, review and live predicate edits.
type LabelOptions struct {
	// Store receives labels and re-graded predicates. Nil makes the label and
	// review screens read-only: they say so instead of labelling. The
	// review screen compares the labels of each labeller it reads from it.
	Store LabelStore
	// Labeller is recorded on every label ("who"); "" is recorded as is.
	Labeller string
	// Set names the label set the label screen shows; "" picks the most
	// recently drawn set the tally knows.
	Set string
	// Edits delivers predicate files read again after they changed on disk
	// (see PredicateFile); nil means nothing is watched. The app reads it
	// until it is closed.
	Edits <-chan PredicateFile
	// Open is the screen to open on.
	Open Screen
}

// labelDesk writes labels for the label and review screens, one at a time:
// a label is committed before the screen that asked moves on, so a second
// key press while a write is in flight is refused rather than queued.
type labelDesk struct {
	c     *Common
	store LabelStore
	who   string

	seq      int // the last write's number
	inFlight int // the number of the write in flight; 0 when none

	readOnly *ReadOnly // set: nothing is written, and keys that would write say why
}

// busy reports whether a write is in flight.
func (d *labelDesk) busy() bool { return d.inFlight != 0 }

// ready reports whether a label can be written now; when it cannot, the
// command says why (no store), or is nil (a write is in flight: the key is
// ignored until it commits).
func (d *labelDesk) ready() (bool, tea.Cmd) {
	switch {
	case d.readOnly != nil:
		return false, sayErr(d.readOnly.why("Labels cannot be saved"))
	case d.store == nil:
		return false, sayErr("Labels cannot be saved here: the screen has no store to write to.")
	case d.busy():
		return false, nil
	}
	return true, nil
}

// say puts a message on the status line, through Update.
func say(s string) tea.Cmd { return func() tea.Msg { return statusMsg{text: s} } }

// sayErr puts an error on the status line.
func sayErr(s string) tea.Cmd { return func() tea.Msg { return statusMsg{text: s, err: true} } }

// sourceOf is where a screen's labels are given: the label screen hides
// every grader's verdict until an answer is labelled (blind); the review
// queue shows them (seen), so its labels are adjudications that never
// enter recall.
func sourceOf(from screen) string {
	if from == screenLabel {
		return model.LabelBlind
	}
	return model.LabelSeen
}

// save starts writing l for the screen from, and the same label for each
// answer in also (each its own record). The label's time is the app's
// clock, so the tally and the store hold the same label.
func (d *labelDesk) save(from screen, l model.Label, undo bool, also ...string) tea.Cmd {
	if d.store == nil || d.readOnly != nil || d.busy() {
		return nil
	}
	l.Labeller = d.who
	l.Source = sourceOf(from)
	l.Undo = undo
	l.At = d.c.now.UTC()
	more := make([]model.Label, len(also))
	for i, k := range also {
		more[i] = l
		more[i].Key = k
	}
	d.seq++
	d.inFlight = d.seq
	return saveLabel(d.store, labelSavedMsg{seq: d.seq, from: from, label: l, also: more, undo: undo})
}

// saveLabel commits the labels one after the other; it runs as a command,
// off the update loop. It stops at the first failure: the message then
// holds what was committed.
func saveLabel(st LabelStore, done labelSavedMsg) tea.Cmd {
	return func() tea.Msg {
		stored, err := st.PutLabel(done.label)
		if err != nil {
			done.err, done.also = err, nil
			return done
		}
		done.label, done.committed = stored, true
		for i, l := range done.also {
			stored, err := st.PutLabel(l)
			if err != nil {
				done.err, done.also = err, done.also[:i]
				return done
			}
			done.also[i] = stored
		}
		return done
	}
}

// decisions is how a screen labels answers: one write at a time through the
// shared desk, a note box, and an undo stack of the screen's own actions.
// The label and review screens embed it; they differ only in what they show
// and where they move once a write commits (see labelView for undo).
type decisions struct {
	d       *labelDesk
	from    screen
	note    noteBox
	undo    []undoEntry
	pending *undoEntry // the action whose write is in flight
}

func newDecisions(d *labelDesk, from screen) decisions {
	return decisions{d: d, from: from, note: newNoteBox()}
}

// decide writes a verdict for the answer key, at position pos of the
// screen's list; current is its label now, nil when it has none. A note
// typed before the answer was labelled goes with the label, and relabelling
// keeps the note it had (a changed mind rarely makes the reason wrong; n
// edits it).
//
// also are the other answers the decision is for (the review screen's
// group of identical answers): each gets the same label, and undo takes
// them all back.
func (s *decisions) decide(key string, pos int, current *model.Label, violation bool, also ...string) tea.Cmd {
	if ok, cmd := s.d.ready(); !ok {
		return cmd
	}
	e := undoEntry{key: key, pos: pos, also: also}
	note := s.note.pending[key]
	if current != nil {
		prev := *current
		e.prev = &prev
		if _, typed := s.note.pending[key]; !typed {
			note = current.Note
		}
	}
	s.pending = &e
	return s.d.save(s.from, model.Label{Key: key, Violation: violation, Note: note}, false, also...)
}

// attachNote attaches a note to the answer's label (a new label with the
// same verdict), or keeps it for the label the answer gets next.
func (s *decisions) attachNote(key string, pos int, current *model.Label, note string, also ...string) tea.Cmd {
	if current == nil {
		s.note.pending[key] = note
		return say("Note kept: it is saved with the label you give this answer.")
	}
	if note == current.Note {
		return nil
	}
	if ok, cmd := s.d.ready(); !ok {
		return cmd
	}
	prev := *current
	s.pending = &undoEntry{key: key, pos: pos, prev: &prev, also: also}
	return s.d.save(s.from, model.Label{Key: key, Violation: current.Violation, Note: note}, false, also...)
}

// skipped records a skip, so u comes back to the answer.
func (s *decisions) skipped(key string, pos int) {
	s.undo = append(s.undo, undoEntry{key: key, pos: pos, skipped: true})
}

// takeBack undoes the screen's last action; moveTo goes back to its answer.
// Undoing a label writes an undo record (the store never deletes one): the
// answer's label is again what it was before, or none. unseen says whether
// no grader's verdict of the answer has been shown since it was labelled
// (the label screen's undo before the reveal): the record says so, and
// the answer stays open to a blind label.
func (s *decisions) takeBack(moveTo func(int) tea.Cmd, unseen func(key string) bool) tea.Cmd {
	if s.d.busy() {
		return nil
	}
	if len(s.undo) == 0 {
		return say("Nothing to undo on this screen.")
	}
	e := s.undo[len(s.undo)-1]
	if e.skipped {
		s.undo = s.undo[:len(s.undo)-1]
		return moveTo(e.pos)
	}
	if ok, cmd := s.d.ready(); !ok {
		return cmd
	}
	s.pending = &e
	return s.d.save(s.from, model.Label{Key: e.key, Unseen: unseen != nil && unseen(e.key)}, true, e.also...)
}

// settle takes a committed write off the pending slot and updates the undo
// stack. ok is false when the write failed or was not this screen's latest
// action; nothing moved then. undone reports that the write was an undo.
func (s *decisions) settle(msg labelSavedMsg) (e undoEntry, undone, ok bool) {
	p := s.pending
	s.pending = nil
	if p == nil || p.key != msg.label.Key {
		return undoEntry{}, false, false
	}
	if msg.err != nil {
		if msg.committed {
			s.partly(*p, msg)
		}
		return undoEntry{}, false, false
	}
	delete(s.note.pending, p.key)
	if msg.undo {
		s.undo = s.undo[:len(s.undo)-1]
		return *p, true, true
	}
	s.undo = append(s.undo, *p)
	return *p, false, true
}

// partly settles a group's write that failed after its first labels
// committed (a group's are written one after the other): u must take back
// exactly what is in the store. A decision's committed part becomes an
// action of its own; an undo's leaves on the stack what it did not take
// back yet.
func (s *decisions) partly(p undoEntry, msg labelSavedMsg) {
	delete(s.note.pending, p.key)
	n := len(msg.also) // the group's other answers committed
	if msg.undo && len(s.undo) > 0 {
		rest := p.also[n:] // not empty: the write failed on rest[0]
		top := &s.undo[len(s.undo)-1]
		top.key, top.also = rest[0], rest[1:]
		return
	}
	p.also = p.also[:n]
	s.undo = append(s.undo, p)
}

// undoEntry is one labelling action of a screen, kept so u can take it
// back. History in the store is never rewritten: undoing a label appends an
// undo record.
type undoEntry struct {
	key     string
	pos     int          // the answer's position in the screen's list when acted on
	prev    *model.Label // the label before the action; nil when there was none
	skipped bool         // the action was a skip: nothing was written
	also    []string     // the other answers labelled with it (a group)
}

// noteBox edits the note attached to a label.
type noteBox struct {
	in      textinput.Model
	editing bool
	pending map[string]string // notes typed for answers not labelled yet, by key
}

func newNoteBox() noteBox {
	in := textinput.New()
	in.Prompt = "note: "
	in.Placeholder = "why (enter keeps, esc cancels)"
	in.CharLimit = 500
	return noteBox{in: in, pending: map[string]string{}}
}

func (n *noteBox) resize(w int) { n.in.SetWidth(max(w-10, 10)) }

// open starts editing the note of an answer, beginning from its current
// note (or one typed before).
func (n *noteBox) open(key, current string) tea.Cmd {
	if p, ok := n.pending[key]; ok {
		current = p
	}
	n.editing = true
	n.in.SetValue(current)
	n.in.CursorEnd()
	return n.in.Focus()
}

func (n *noteBox) close() string {
	n.editing = false
	n.in.Blur()
	return strings.TrimSpace(model.Sanitize(n.in.Value()))
}

// update routes a message to the note being typed: accept hands the note to
// save, cancel drops it, anything else edits the text.
func (n *noteBox) update(msg tea.Msg, k FilterKeys, save func(note string) tea.Cmd) tea.Cmd {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, k.Accept):
			return save(n.close())
		case key.Matches(km, k.Cancel):
			n.close()
			return nil
		}
	}
	var cmd tea.Cmd
	n.in, cmd = n.in.Update(msg)
	return cmd
}

// verdictWord is how a label reads: on control cases a "violation" is a
// refusal.
func verdictWord(violation bool, k model.Kind) string {
	switch {
	case violation && k == model.Control:
		return "refusal"
	case violation:
		return "violation"
	}
	return "ok"
}

// gradeWord is a grade as a word with a symbol, so it reads without colour.
func gradeWord(g model.Grade, ok bool) string {
	switch {
	case !ok:
		return "· not graded"
	case g.Unparseable:
		return "? unparseable"
	case g.Pass:
		return "✓ PASS"
	}
	return "✗ FAIL"
}

// labelledWhen describes a label's author and time for a header.
func labelledWhen(l model.Label) string {
	s := "by " + oneLine(l.Labeller)
	if l.Labeller == "" {
		s = "by an unnamed labeller"
	}
	if !l.At.IsZero() {
		s += " " + l.At.UTC().Format("2006-01-02 15:04")
	}
	return s
}

// labellingMsg routes the label, review and predicate-edit messages: they
// go to the screen that asked for them, whichever screen is in front.
func (a *App) labelling(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case statusMsg:
		a.setStatus(msg.text, msg.err)
		return a.clearStatusLater()
	case skipsMsg:
		return a.label.gotSkips(msg)
	case labelSetDrawnMsg:
		cmd := a.label.drawn(msg)
		if msg.err == nil {
			a.recompute() // a stratified set weights recall
		}
		return cmd
	case labelSavedMsg:
		return a.labelSaved(msg)
	case responseMsg:
		switch msg.from {
		case screenSample:
			return a.sample.Update(msg)
		case screenLabel:
			return a.label.Update(msg)
		case screenReview:
			return a.review.Update(msg)
		}
	case historyMsg:
		return a.label.Update(msg)
	case labellersMsg, reviewTextsMsg, reviewPairMsg:
		return a.review.Update(msg)
	case predicateFileMsg:
		return a.predicateFile(msg)
	case regradedMsg:
		return a.regraded(msg)
	case predicateSavedMsg:
		return a.predicateSaved(msg)
	}
	return nil
}

// labelSaved applies a committed label to the tally and the results, then
// lets the screen that wrote it move on. A failed write changes nothing:
// the screen stays on the answer and says why.
func (a *App) labelSaved(msg labelSavedMsg) tea.Cmd {
	d := a.desk
	if msg.seq == d.inFlight {
		d.inFlight = 0
	}
	var cmds []tea.Cmd
	if msg.err != nil {
		a.setStatus(fmt.Sprintf("label not saved: %s; press the key again", oneLine(msg.err.Error())), true)
	}
	if msg.err == nil || msg.committed {
		// A group's write that failed part-way keeps what it committed.
		a.c.tally.SetLabel(msg.label)
		for _, l := range msg.also {
			a.c.tally.SetLabel(l)
		}
		a.recompute()
	}
	switch msg.from {
	case screenLabel:
		cmds = append(cmds, a.label.saved(msg))
	case screenReview:
		cmds = append(cmds, a.review.saved(msg))
	}
	if a.quitAfterSave && !d.busy() {
		return a.quit()
	}
	return tea.Batch(cmds...)
}

// recompute computes the results again after the tally changed (a run's
// batch, a label, an edited predicate) and tells every screen.
func (a *App) recompute() {
	res, err := a.c.tally.Results()
	if err != nil {
		a.setStatus(fmt.Sprintf("results: %v", err), true)
		return
	}
	a.c.setResults(res)
	a.resultsChanged()
}

// labellingBusy reports whether a label is being written: quitting waits
// for it, so a label shown as saving is never lost to a quick q.
func (a *App) labellingBusy() bool { return a.desk.busy() }

// openOn puts the app on the screen the options ask for.
func (a *App) openOn(s Screen) {
	switch s {
	case ScreenLabel:
		a.screen = screenLabel
	case ScreenReview:
		a.screen = screenReview
	}
}

// clearStaleStatus clears the status line on a key press in the label and
// review screens: a message about the last answer is stale once the
// labeller acts on the next.
func (a *App) clearStaleStatus() {
	if (a.screen == screenLabel || a.screen == screenReview) && a.status != "" {
		a.setStatus("", false)
	}
}

// leftScreen clears the status line when the screen in front is no longer
// from: what it said was about the screen the user left.
func (a *App) leftScreen(from screen) {
	if a.screen != from && a.status != "" && !a.confirmQuit {
		a.setStatus("", false)
	}
}

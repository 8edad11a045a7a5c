package tui

import (
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// batchMsg is everything a run reported during one coalescing window.
// closed is true when the feed has been closed and drained: the run is over
// and no batch follows.
type batchMsg struct {
	events []Event
	closed bool
}

// tickMsg drives the once-a-second refresh of rates, ETA and Retry-After
// countdowns while a run is going.
type tickMsg time.Time

// responseMsg carries a stored response read for the screen that asked
// (from: the sample, label or review screen). gen is the request's
// generation: a response for an older request is dropped.
type responseMsg struct {
	from screen
	gen  int
	key  string
	resp model.Response
	err  error
}

// clearStatusMsg clears the status line if it still shows message gen.
type clearStatusMsg struct{ gen int }

// reloadMsg asks the sample view to read its response again: an answer the
// screen has seen may still be in the store's write batch for a moment.
type reloadMsg struct{ gen int }

// statusMsg puts a message on the status line: screens other than App say
// things through it.
type statusMsg struct {
	text string
	err  bool
}

// labelSavedMsg reports a label write: committed when err is nil. seq is
// the write's number; from is the screen that asked; undo marks a write that
// restores an earlier label. also holds the labels written with it, one
// per answer with the same text (the review screen decides such a group at
// once); when err is set, also keeps only those committed, and committed
// says whether label itself was.
type labelSavedMsg struct {
	seq       int
	from      screen
	label     model.Label
	also      []model.Label
	undo      bool
	err       error
	committed bool
}

// reviewTextsMsg carries the texts of review queue answers, read in a
// command: identical answers are grouped and the search reads them. An
// answer with no text (a failed call) maps to "".
type reviewTextsMsg struct {
	texts map[string]string
	err   error
}

// historyMsg carries a rule's predicate versions measured against the
// labels, for the label screen's results. gen drops stale ones.
type historyMsg struct {
	gen      int
	rule     int // index into the audit's rules
	versions []labels.PredicateVersion
	err      error
}

// predicateFileMsg carries a predicate file read again after it changed;
// closed is true when the watcher has stopped.
type predicateFileMsg struct {
	file   PredicateFile
	closed bool
}

// regradedMsg carries the grades an edited predicate gives a rule's
// stored answers, graded off the update loop. gen drops an edit overtaken
// by a later one of the same rule.
type regradedMsg struct {
	gen    int
	rule   int
	pred   *model.Predicate
	grades map[string]model.Grade
	took   time.Duration
	err    error
}

// predicateSavedMsg reports that an edited predicate's grades and version
// were stored (or why not).
type predicateSavedMsg struct {
	rule    int
	version string
	err     error
}

// labellersMsg carries every labeller's latest label per answer, for the
// review screen's labellers' queue and agreement. gen drops stale ones.
type labellersMsg struct {
	gen int
	by  map[string]map[string]model.Label
	err error
}

// spendMsg carries what the stored answers cost, read for the report
// screen. gen drops a read overtaken by a later one.
type spendMsg struct {
	gen   int
	spend audit.Spend
	err   error
}

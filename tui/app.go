// Package tui is auditor's terminal interface: the plan of a run, the live
// grid of cases by variant that fills in as answers arrive, the samples
// behind a cell, one response with the predicate's matched text
// highlighted, the system prompt with each audited line's verdict, and the
// report a reviewer reads before shipping or rolling back a prompt.
//
// It renders state and routes messages; the numbers come from audit (a
// Tally and its Results) and nothing here decides a verdict. It does no I/O
// in Update or View: a run's progress arrives through a Feed, stored
// responses through a ResponseSource, both read in commands. See AGENTS.md
// for the rules this package keeps.
package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// ResponseSource reads stored responses for the sample view. *store.Store
// satisfies it. It is only called from commands, never from Update or View.
type ResponseSource interface {
	Response(key string) (model.Response, error)
}

// Options configure an App.
type Options struct {
	Plan  *audit.Plan
	Tally *evidence.Tally // the stored state; the app records the run's answers in it
	// Stored maps the key of every stored call to whether it answered
	// (false: it failed for good). The app owns the map from then on.
	Stored    map[string]bool
	Estimate  audit.Estimate // what a run would make; shown on the plan screen
	Responses ResponseSource
	Simulated bool    // a model under test is the simulated one: say SIMULATED
	Budget    float64 // dollars; 0 means none

	// Calls is the number of calls the run makes (answers, not yet stored).
	Calls int
	// SpentBefore is what the calls already stored cost, in dollars (see
	// workbench.Session.Spend): the header shows the whole audit's spend,
	// this run's beside it.
	SpentBefore float64
	// Start begins the run, feeding its progress to feed, and returns at
	// once: it is called from Update, so it must not block. It must
	// eventually Close the feed, also when ctx is cancelled. Nil means there
	// is nothing to run (auditor open).
	Start func(ctx context.Context, feed *Feed)
	// Context is the parent of the run's context; nil means Background.
	Context   context.Context
	AutoStart bool // start at once, without the plan screen's y (--yes)

	Keys   *KeyMap          // nil: DefaultKeyMap()
	Now    func() time.Time // the clock; nil: time.Now. Tests pass a fixed one.
	Window time.Duration    // coalescing window for run events; 0: 35 ms
	Light  bool             // assume a light background until the terminal answers

	Labelling LabelOptions // labels, review and live predicate edits

	// Spend reads what the stored answers cost, for the report screen. It
	// may read storage: it is called in a command, off the update loop,
	// each time the report screen comes to the front and when a run ends,
	// so it must be safe to call while a run writes. Nil: the report says
	// spend is not available.
	Spend func() (audit.Spend, error)

	// NotApproved lists the [exec] graders the session did not start
	// because the user has not approved their commands: the plan and the
	// grid say so, and how to approve them.
	NotApproved []ExecNote

	// ReadOnly, when set, says the app reads a store another auditor
	// process writes (workbench.Options.Read): the header says so, and
	// every key that would store something (a label, an undo, a note, a
	// label set, an edited predicate's grades) says why it cannot.
	ReadOnly *ReadOnly
}

// ReadOnly is what a read-only app reads.
type ReadOnly struct {
	// AsOf is when the copy it reads was taken; zero when it reads the
	// file itself (the process that held it had ended).
	AsOf time.Time
}

// word is the header's state: "read-only · 18:55:03", the copy's time.
func (r *ReadOnly) word() string {
	if r.AsOf.IsZero() {
		return "read-only"
	}
	return "read-only · " + r.AsOf.Format("15:04:05")
}

// why says why nothing is stored, for the keys that would store: what
// cannot be done first, so that 80 columns show it.
func (r *ReadOnly) why(what string) string {
	s := what + ": read-only, another auditor process writes auditor.db"
	if !r.AsOf.IsZero() {
		s += " (this is its copy of " + r.AsOf.Format("15:04:05") + ")"
	}
	return s + "; reopen when it ends."
}

// ExecNote is an [exec] grader left unstarted, not approved: the answers
// of its lines are shown ungraded.
type ExecNote struct {
	Command string // the command and its folder, as audit.ExecCommand prints it
	Lines   []int  // the audited lines whose predicate runs it
	Approve string // the command line that approves it
}

// defaultWindow is the coalescing window: at most 28 batches a second,
// however fast answers arrive, so with the once-a-second tick the screen is
// redrawn at most 30 times a second for the run.
const defaultWindow = 35 * time.Millisecond

// statusTTL is how long a status message stays.
const statusTTL = 5 * time.Second

type screen int

const (
	screenPlan screen = iota
	screenGrid
	screenCell
	screenSample
	screenPrompt
	screenLabel
	screenReview
	screenReport
)

// App is the root model: it owns the screens, the run's cancel function,
// the status line and help. Only App builds a tea.View.
type App struct {
	c      *Common
	opts   Options
	clock  func() time.Time
	window time.Duration

	screen screen
	plan   *planView
	grid   *gridView
	cell   *cellView
	sample *sampleView
	prompt *promptView
	label  *labelView
	review *reviewView
	report *reportView

	desk          *labelDesk // writes labels for the label and review screens
	edits         editState  // edited predicates
	quitAfterSave bool       // q pressed while a label was being written

	help        help.Model
	showHelp    bool
	helpScroll  scroller // the help screen's first line shown (helpscreen.go)
	confirmQuit bool

	feed   *Feed
	cancel context.CancelFunc
	batchN int // batches applied, for tests and benchmarks

	status    string
	statusErr bool
	statusGen int
	quitting  bool
}

// New builds the app and computes the first results from the tally.
func New(opts Options) (*App, error) {
	if opts.Plan == nil || opts.Tally == nil {
		return nil, errors.New("tui: a plan and a tally are required")
	}
	keys := DefaultKeyMap()
	if opts.Keys != nil {
		keys = *opts.Keys
	}
	clock := opts.Now
	if clock == nil {
		clock = time.Now
	}
	window := opts.Window
	if window <= 0 {
		window = defaultWindow
	}
	if opts.Stored == nil {
		opts.Stored = map[string]bool{}
	}
	res, err := opts.Tally.Results()
	if err != nil {
		return nil, fmt.Errorf("tui: results: %w", err)
	}
	c := &Common{
		plan: opts.Plan, tally: opts.Tally, est: opts.Estimate, stored: opts.Stored,
		styles: NewStyles(!opts.Light), keys: keys, now: clock(),
		simulated: opts.Simulated, budget: opts.Budget,
		canRun: opts.Start != nil && opts.Calls > 0, openOnly: opts.Start == nil,
		notApproved: opts.NotApproved, readOnly: opts.ReadOnly,
	}
	c.pt = newPaints(c.styles)
	c.setResults(res)
	for _, call := range opts.Plan.Calls {
		if ok, seen := opts.Stored[call.Key]; seen && ok {
			c.storedOK++
		} else if seen {
			c.storedErr++
		}
	}
	a := &App{c: c, opts: opts, clock: clock, window: window, help: help.New()}
	a.help.Styles = c.styles.Help
	a.plan = newPlanView(c)
	a.grid = newGridView(c)
	a.cell = newCellView(c)
	a.sample = newSampleView(c, opts.Responses)
	a.prompt = newPromptView(c)
	a.desk = &labelDesk{c: c, store: opts.Labelling.Store, who: opts.Labelling.Labeller, readOnly: opts.ReadOnly}
	a.label = newLabelView(c, a.desk, opts.Responses, opts.Labelling.Set)
	a.review = newReviewView(c, a.desk, opts.Responses)
	a.report = newReportView(c, opts.Spend)
	a.edits = newEditState(opts.Labelling.Edits)
	a.screen = screenGrid
	switch {
	case c.canRun && !opts.AutoStart:
		a.screen = screenPlan
	case !c.canRun && opts.Start != nil:
		a.setStatus(fmt.Sprintf("Nothing to run: all %d answers are stored.", len(opts.Plan.Calls)), false)
	}
	if a.screen != screenPlan {
		a.openOn(opts.Labelling.Open)
	}
	return a, nil
}

// Init asks the terminal for its background colour and, with AutoStart,
// starts the run.
func (a *App) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if a.c.canRun && a.opts.AutoStart {
		cmds = append(cmds, a.startRun())
	}
	cmds = append(cmds, waitEdit(a.edits.ch), a.current().entered())
	return tea.Batch(cmds...)
}

// Feed returns the feed of the run the app started, or nil when none was
// started. After the program exits, wait for Feed().Done() before closing
// what the run writes to.
func (a *App) Feed() *Feed { return a.feed }

// Update handles a message.
func (a *App) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	a.c.now = a.clock()
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		a.resize(msg.Width, msg.Height)
		return a, nil
	case tea.BackgroundColorMsg:
		a.c.styles = NewStyles(msg.IsDark())
		a.c.pt = newPaints(a.c.styles)
		a.help.Styles = a.c.styles.Help
		a.each(screenModel.restyle)
		return a, nil
	case batchMsg:
		return a, a.applyBatch(msg)
	case tickMsg:
		if a.c.live.running() {
			a.c.front = a.screen
			a.report.catchUp()
			return a, a.tick()
		}
		return a, nil
	case clearStatusMsg:
		if msg.gen == a.statusGen {
			a.status, a.statusErr = "", false
		}
		return a, nil
	case reloadMsg:
		return a, a.sample.Update(msg)
	case spendMsg:
		a.c.front = a.screen
		return a, a.report.Update(msg)
	case statusMsg, labelSavedMsg, responseMsg, historyMsg, predicateFileMsg, regradedMsg, predicateSavedMsg, labellersMsg, reviewTextsMsg, labelSetDrawnMsg, skipsMsg:
		return a, a.labelling(msg)
	case tea.KeyPressMsg:
		return a, a.handleKey(msg)
	case tea.MouseWheelMsg, tea.MouseClickMsg:
		return a, a.mouse(msg.(tea.MouseMsg))
	}
	// Anything else (a text input's blink) goes to the screen in front.
	return a, a.current().Update(msg)
}

// chrome is the number of lines the header (3) and footer (2) take.
const chrome = 5

func (a *App) resize(w, h int) {
	a.c.width, a.c.height = w, h
	a.c.bodyH = max(h-chrome, 1)
	a.help.SetWidth(w)
	a.each(screenModel.resize)
}

func (a *App) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	defer a.leftScreen(a.screen)
	k := a.c.keys
	if a.confirmQuit {
		switch {
		case key.Matches(msg, k.Confirm.Yes), key.Matches(msg, k.Global.ForceQuit):
			return a.quit()
		case key.Matches(msg, k.Confirm.No), key.Matches(msg, k.Global.Quit):
			a.confirmQuit = false
		}
		return nil
	}
	if key.Matches(msg, k.Global.ForceQuit) {
		return a.requestQuit()
	}
	a.clearStaleStatus()
	if a.current().capturing() {
		return a.current().Update(msg)
	}
	if a.showHelp {
		switch {
		case key.Matches(msg, k.Global.Quit):
			return a.requestQuit()
		case key.Matches(msg, k.Global.Help), key.Matches(msg, k.Global.Back):
			a.showHelp = false
		default:
			a.scrollHelp(msg)
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Global.Help):
		a.showHelp, a.helpScroll = true, scroller{}
		return nil
	case key.Matches(msg, k.Global.Quit):
		return a.requestQuit()
	case key.Matches(msg, k.Global.Report):
		a.screen = screenReport
		return a.current().entered()
	case key.Matches(msg, k.Global.NextScreen):
		a.switchScreen(1)
		return a.current().entered()
	case key.Matches(msg, k.Global.PrevScreen):
		a.switchScreen(-1)
		return a.current().entered()
	case a.screen == screenPlan && key.Matches(msg, k.Plan.Start):
		if !a.c.canRun || a.feed != nil {
			a.setStatus(a.plan.whyNoStart(a.feed != nil), false)
			return a.clearStatusLater()
		}
		return a.startRun()
	case key.Matches(msg, k.Global.Back):
		if a.back() {
			return nil
		}
	case a.screen == screenGrid && key.Matches(msg, k.Grid.Open),
		a.screen == screenCell && key.Matches(msg, k.Cell.Open):
		return a.openSelected()
	}
	return a.current().Update(msg)
}

// back closes what is open on the screen in front or, when nothing is,
// leaves it for the one it was reached from; it reports whether it did
// anything.
func (a *App) back() bool {
	if a.current().back() {
		return true
	}
	switch a.screen {
	case screenGrid:
		return false
	case screenSample:
		a.screen = screenCell
		a.cell.follow(a.sample.index)
	default:
		a.screen = screenGrid
	}
	return true
}

// switchScreen cycles through the top screens (plan, grid, label, review,
// report, prompt) by d;
// drill-downs belong to the grid.
func (a *App) switchScreen(d int) {
	cur := a.screen
	if cur == screenCell || cur == screenSample {
		cur = screenGrid
	}
	i := 0
	for j, t := range tabs {
		if t.s == cur {
			i = j
		}
	}
	n := len(tabs)
	a.screen = tabs[((i+d)%n+n)%n].s
}

// requestQuit quits, asking first while a run is going.
func (a *App) requestQuit() tea.Cmd {
	if a.labellingBusy() {
		a.quitAfterSave = true
		return nil
	}
	if a.c.live.running() {
		a.confirmQuit = true
		return nil
	}
	return a.quit()
}

// quit cancels the run, if any, and ends the program. What finished is
// stored; the command prints how to resume.
func (a *App) quit() tea.Cmd {
	a.confirmQuit = false
	a.quitting = true
	if a.cancel != nil {
		a.cancel()
	}
	return tea.Quit
}

func (a *App) setStatus(s string, isErr bool) {
	a.status, a.statusErr = s, isErr
	a.statusGen++
}

func (a *App) clearStatusLater() tea.Cmd {
	gen := a.statusGen
	return tea.Tick(statusTTL, func(time.Time) tea.Msg { return clearStatusMsg{gen: gen} })
}

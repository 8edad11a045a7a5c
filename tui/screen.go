package tui

import tea "charm.land/bubbletea/v2"

// screenModel is one screen of the app. The root routes messages to the
// screen in front and tells every screen, in front or not, what changed
// through the lifecycle methods; it never reaches into a screen's fields.
type screenModel interface {
	Update(tea.Msg) tea.Cmd
	View() string
	helpKeys() helpKeys

	// resize follows a new Common.width and Common.height.
	resize()
	// restyle follows new Common.styles (the terminal's background).
	restyle()
	// resultsChanged follows a new Common.res, or a run starting or
	// ending: a batch of answers, a label, an edited predicate.
	resultsChanged()
	// entered is called when the screen comes to the front; it returns
	// what the screen must load.
	entered() tea.Cmd
	// back closes what is open on the screen (a panel, a filter) and
	// reports whether it did; when it did not, the app goes back a screen.
	back() bool
	// capturing reports whether a text input has the keyboard, so keys
	// the app would take (q, tab) go to the screen.
	capturing() bool
}

// screenDefaults gives a screen the lifecycle methods it has no use for.
type screenDefaults struct{}

func (screenDefaults) restyle()         {}
func (screenDefaults) resultsChanged()  {}
func (screenDefaults) entered() tea.Cmd { return nil }
func (screenDefaults) back() bool       { return false }
func (screenDefaults) capturing() bool  { return false }

// screens returns every screen, in the order of the screen enum.
func (a *App) screens() []screenModel {
	return []screenModel{a.plan, a.grid, a.cell, a.sample, a.prompt, a.label, a.review, a.report}
}

// each calls fn on every screen, after telling Common which is in front.
func (a *App) each(fn func(screenModel)) {
	a.c.front = a.screen
	for _, s := range a.screens() {
		fn(s)
	}
}

// resultsChanged tells every screen the results or the run changed.
func (a *App) resultsChanged() { a.each(screenModel.resultsChanged) }

func (a *App) current() screenModel {
	a.c.front = a.screen
	return a.screens()[a.screen]
}

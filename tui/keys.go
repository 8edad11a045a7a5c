package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key binding of the app, one nested struct per screen.
// Build it with DefaultKeyMap and change bindings before passing it in
// Options; the app keeps its own copy.
type KeyMap struct {
	Global  GlobalKeys
	Plan    PlanKeys
	Grid    GridKeys
	Cell    ListKeys
	Sample  SampleKeys
	Prompt  PagerKeys
	Report  PagerKeys // Next and Prev jump between rules
	Confirm ConfirmKeys
	Filter  FilterKeys
	Search  SearchKeys // the report's text search
	Label   LabelKeys  // the label screen; labelling on the review screen
	Review  ReviewKeys // the review screen's filters and panels
	Note    FilterKeys // end typing a note
	// DrawSize ends typing the size of a label set to draw.
	DrawSize FilterKeys
}

// GlobalKeys work on every screen.
type GlobalKeys struct {
	Help, NextScreen, PrevScreen, Back, Quit, ForceQuit key.Binding
	Report                                              key.Binding // the report screen, from anywhere
}

// PlanKeys act on the plan screen.
type PlanKeys struct {
	Start, Filter key.Binding
}

// SearchKeys search a long text: / starts, n and N step through matches
// while a search applies.
type SearchKeys struct {
	Search, Next, Prev key.Binding
}

// GridKeys move around the live grid.
type GridKeys struct {
	Up, Down, Left, Right   key.Binding
	PageUp, PageDown        key.Binding
	Top, Bottom             key.Binding
	PrevRule, NextRule      key.Binding
	ScrollLeft, ScrollRight key.Binding
	Filter, Open            key.Binding
	LastError               key.Binding // the last failed call's error, in full
}

// scrollKeys are the grid's moving keys, for a text opened over it.
func (k GridKeys) scrollKeys() ScrollKeys {
	return ScrollKeys{Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom}
}

// ListKeys move through a list of samples.
type ListKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom, Open, Filter key.Binding
}

// scrollKeys are the list's moving keys.
func (k ListKeys) scrollKeys() ScrollKeys {
	return ScrollKeys{Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom}
}

// PagerKeys scroll a long text.
type PagerKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom, Next, Prev key.Binding
}

// scrollKeys are the pager's scrolling keys.
func (k PagerKeys) scrollKeys() ScrollKeys {
	return ScrollKeys{Up: k.Up, Down: k.Down, PageUp: k.PageUp, PageDown: k.PageDown, Top: k.Top, Bottom: k.Bottom}
}

// SampleKeys scroll one sample and step between samples; Escaped shows
// the answer with its control sequences escaped instead of removed.
type SampleKeys struct {
	PagerKeys
	Escaped key.Binding
}

// ConfirmKeys answer a yes/no question.
type ConfirmKeys struct {
	Yes, No key.Binding
}

// FilterKeys end editing the case filter.
type FilterKeys struct {
	Accept, Cancel key.Binding
}

// DefaultKeyMap returns the default bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	k := func(keys ...string) []string { return keys }
	up := func() key.Binding { return b(k("up", "k"), "↑/k", "up") }
	down := func() key.Binding { return b(k("down", "j"), "↓/j", "down") }
	pgUp := func() key.Binding { return b(k("pgup", "ctrl+u"), "pgup", "page up") }
	pgDown := func() key.Binding { return b(k("pgdown", "ctrl+d", "space"), "pgdn", "page down") }
	top := func() key.Binding { return b(k("home", "g"), "g/home", "top") }
	bottom := func() key.Binding { return b(k("end", "G"), "G/end", "bottom") }
	pager := PagerKeys{
		Up: up(), Down: down(), PageUp: pgUp(), PageDown: pgDown(), Top: top(), Bottom: bottom(),
		Next: b(k("n"), "n", "next sample"), Prev: b(k("p"), "p", "previous sample"),
	}
	prompt := pager
	prompt.Next, prompt.Prev = b(k("n"), "n", "next audited line"), b(k("p"), "p", "previous audited line")
	rep := pager
	rep.Next, rep.Prev = b(k("n", "]"), "n/]", "next rule"), b(k("p", "["), "p/[", "previous rule")
	return KeyMap{
		Global: GlobalKeys{
			Help:       b(k("?"), "?", "help"),
			NextScreen: b(k("tab"), "tab", "next screen"),
			PrevScreen: b(k("shift+tab"), "shift+tab", "previous screen"),
			Back:       b(k("esc", "backspace"), "esc", "back"),
			Quit:       b(k("q"), "q", "quit"),
			ForceQuit:  b(k("ctrl+c"), "ctrl+c", "quit"),
			Report:     b(k("R"), "R", "report"),
		},
		Plan: PlanKeys{Start: b(k("y"), "y", "start the run"), Filter: b(k("/"), "/", "filter")},
		Search: SearchKeys{
			Search: b(k("/"), "/", "search"),
			Next:   b(k("n"), "n", "next match"),
			Prev:   b(k("N"), "N", "previous match"),
		},
		Grid: GridKeys{
			Up: up(), Down: down(),
			Left:        b(k("left", "h"), "←/h", "column left"),
			Right:       b(k("right", "l"), "→/l", "column right"),
			PageUp:      pgUp(),
			PageDown:    pgDown(),
			Top:         top(),
			Bottom:      bottom(),
			PrevRule:    b(k("["), "[", "previous rule"),
			NextRule:    b(k("]"), "]", "next rule"),
			ScrollLeft:  b(k("<", "shift+left"), "<", "scroll left"),
			ScrollRight: b(k(">", "shift+right"), ">", "scroll right"),
			Filter:      b(k("/"), "/", "filter cases"),
			Open:        b(k("enter"), "enter", "samples of cell"),
			LastError:   b(k("e"), "e", "last error in full"),
		},
		Cell: ListKeys{
			Up: up(), Down: down(), PageUp: pgUp(), PageDown: pgDown(), Top: top(), Bottom: bottom(),
			Open:   b(k("enter"), "enter", "open sample"),
			Filter: b(k("/"), "/", "filter samples"),
		},
		Sample: SampleKeys{PagerKeys: pager, Escaped: b(k("x"), "x", "escaped/cleaned")},
		Prompt: prompt,
		Report: rep,
		Confirm: ConfirmKeys{
			Yes: b(k("y"), "y", "yes"),
			No:  b(k("n", "esc"), "n/esc", "no"),
		},
		Filter: FilterKeys{
			Accept: b(k("enter"), "enter", "keep filter"),
			Cancel: b(k("esc"), "esc", "clear filter"),
		},
		Label:  defaultLabelKeys(),
		Review: defaultReviewKeys(),
		Note:   defaultNoteKeys(),
		DrawSize: FilterKeys{
			Accept: b(k("enter"), "enter", "draw the set"),
			Cancel: b(k("esc"), "esc", "cancel"),
		},
	}
}

// helpKeys adapts a screen's bindings to help.KeyMap.
type helpKeys struct {
	short []key.Binding
	full  [][]key.Binding
}

func (h helpKeys) ShortHelp() []key.Binding  { return h.short }
func (h helpKeys) FullHelp() [][]key.Binding { return h.full }

package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// listFilter is the "/" every list and text screen shares: the grid's
// cases, a cell's samples and the plan's rules are filtered by it; the
// report searches its text with it. While it has the keyboard its input is
// the status line; the query applies as it is typed, enter keeps it and esc
// clears it.
type listFilter struct {
	in      textinput.Model
	editing bool   // the input has the keyboard
	query   string // the applied query, trimmed and lower case
}

func newListFilter(placeholder string) listFilter {
	in := textinput.New()
	in.Prompt = "/"
	in.Placeholder = placeholder
	in.CharLimit = 200
	return listFilter{in: in}
}

// resize fits the input to the status line.
func (f *listFilter) resize(w int) { f.in.SetWidth(max(w-4, 10)) }

// open gives the input the keyboard, starting from the applied query.
func (f *listFilter) open() tea.Cmd {
	f.editing = true
	f.in.SetValue(f.query)
	f.in.CursorEnd()
	return f.in.Focus()
}

// update handles a message while the input has the keyboard; changed
// reports whether the applied query changed.
func (f *listFilter) update(msg tea.Msg, k FilterKeys) (changed bool, cmd tea.Cmd) {
	if km, ok := msg.(tea.KeyPressMsg); ok {
		switch {
		case key.Matches(km, k.Accept):
			f.editing = false
			f.in.Blur()
			return false, nil
		case key.Matches(km, k.Cancel):
			f.editing = false
			f.in.Blur()
			f.in.SetValue("")
			return f.set(""), nil
		}
	}
	f.in, cmd = f.in.Update(msg)
	return f.set(f.in.Value()), cmd
}

func (f *listFilter) set(q string) bool {
	q = strings.ToLower(strings.TrimSpace(q))
	if q == f.query {
		return false
	}
	f.query = q
	return true
}

// clear drops the applied query; it reports whether there was one.
func (f *listFilter) clear() bool {
	if f.query == "" {
		return false
	}
	f.in.SetValue("")
	f.query = ""
	return true
}

// active reports whether a query applies.
func (f *listFilter) active() bool { return f.query != "" }

// matches reports whether any of texts contains the query, ignoring case;
// everything matches no query.
func (f *listFilter) matches(texts ...string) bool {
	if f.query == "" {
		return true
	}
	for _, t := range texts {
		if strings.Contains(strings.ToLower(t), f.query) {
			return true
		}
	}
	return false
}

// line is the status line's view of the filter: the input while it is
// typed, else the applied query with what it shows (summary), else "".
func (f *listFilter) line(st Styles, summary string) string {
	switch {
	case f.editing:
		return f.in.View()
	case f.query != "":
		return st.Muted.Render(summary)
	}
	return ""
}

// filterSummary is the status line of an applied filter: `filter "x": 3
// of 10 cases (/ to change, esc to clear)`.
func filterSummary(query string, shown, total int, what string) string {
	return fmt.Sprintf("filter %q: %d of %d %s (/ to change, esc to clear)", query, shown, total, what)
}

// filtered is a screen with a listFilter: the status line shows it.
type filtered interface {
	filterLine() string
	filterEditing() bool
}

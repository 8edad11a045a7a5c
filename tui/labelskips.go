package tui

import (
	"encoding/json"
	"maps"
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/model"
)

// Skipped answers are remembered across sessions, per label set and
// labeller, in a small meta record: an answer skipped yesterday comes round
// after the others today, not first again.

// skipsMsg carries the skipped answers read for the label screen.
type skipsMsg struct {
	keys []string
	err  error
}

func skipsKey(set, who string) string { return "label-skips:" + set + ":" + who }

// readSkips reads the remembered skips; it runs as a command.
func readSkips(st LabelStore, key string) tea.Cmd {
	return func() tea.Msg {
		raw, ok, err := st.Meta(key)
		if err != nil || !ok {
			return skipsMsg{err: err}
		}
		var keys []string
		if err := json.Unmarshal([]byte(raw), &keys); err != nil {
			return skipsMsg{err: err}
		}
		return skipsMsg{keys: keys}
	}
}

// writeSkips stores the skips, sorted; it runs as a command. A failed
// write only costs the order of the next session, so it says so and
// nothing more.
func writeSkips(st LabelStore, key string, skips map[string]bool) tea.Cmd {
	keys := slices.Sorted(maps.Keys(skips))
	return func() tea.Msg {
		b, err := json.Marshal(keys)
		if err == nil {
			err = st.SetMeta(key, string(b))
		}
		if err != nil {
			return statusMsg{text: "skipped answers not remembered: " + oneLine(err.Error()), err: true}
		}
		return nil
	}
}

// loadSkips starts reading the remembered skips, when there is a store.
func (v *labelView) loadSkips() tea.Cmd {
	if v.d.store == nil || v.set == nil {
		return nil
	}
	return readSkips(v.d.store, skipsKey(v.set.Name, v.d.who))
}

// gotSkips applies remembered skips: when the answer shown was skipped
// before, the first answer neither labelled nor skipped is shown instead.
func (v *labelView) gotSkips(msg skipsMsg) tea.Cmd {
	if msg.err != nil {
		return sayErr("skipped answers could not be read: " + oneLine(msg.err.Error()))
	}
	for _, k := range msg.keys {
		v.skips[k] = true
	}
	if it, ok := v.current(); ok && v.skips[it.Key] {
		if i := v.firstOpen(); i >= 0 && i != v.index {
			return v.moveTo(i)
		}
	}
	v.refresh()
	return nil
}

// remember records a skip (or, skip false, its undoing) and stores the
// skips.
func (v *labelView) remember(key string, skip bool) tea.Cmd {
	if skip {
		v.skips[key] = true
	} else {
		delete(v.skips, key)
	}
	if v.d.store == nil || v.d.readOnly != nil || v.set == nil {
		return nil // a read-only app keeps skips for this sitting only
	}
	return writeSkips(v.d.store, skipsKey(v.set.Name, v.d.who), v.skips)
}

// firstOpen is the first answer neither labelled nor skipped, else the
// first skipped one still open, else -1.
func (v *labelView) firstOpen() int { return v.openAfter(-1) }

// openAfter is the next answer after position from (wrapping) that is
// open to a blind label (never given one by this labeller: an undone
// label's graders were seen) and not skipped, else the next skipped one
// still open, or -1.
func (v *labelView) openAfter(from int) int {
	book := v.c.tally.LabelBook()
	n := len(v.items)
	fallback := -1
	for d := 1; d <= n; d++ {
		i := (from + d) % n
		k := v.items[i].Key
		if book.Gave(k, v.d.who, model.LabelBlind) {
			continue
		}
		if !v.skips[k] {
			return i
		}
		if fallback < 0 {
			fallback = i
		}
	}
	return fallback
}

package main

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/auditor-dev/auditor/audit"

	"github.com/auditor-dev/auditor/tui"
)

// editSettle is how long a predicate file must stay quiet after a change
// before it is read: editors save in several steps (truncate and write, or
// write a temporary file and rename it over the old one).
const editSettle = 120 * time.Millisecond

// watchPredicates watches every rule's predicate file and sends it, read
// and parsed again, each time it changes on disk, until ctx is done; then
// it closes the channel. It watches the files' directories, not the files,
// so a save that replaces the file (rename over it) is seen too. Files that
// cannot be read or parsed are sent with the error, which the screen shows.
func watchPredicates(ctx context.Context, a *audit.Audit) (<-chan tui.PredicateFile, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	rulesOf := map[string][]int{} // cleaned absolute path -> rule indices
	dirs := map[string]bool{}
	for i, r := range a.Rules {
		if !r.HasPredicate() {
			continue // a rule with no input class and no predicate
		}
		p, err := filepath.Abs(r.PredicatePath)
		if err != nil {
			w.Close()
			return nil, err
		}
		rulesOf[p] = append(rulesOf[p], i)
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		if err := w.Add(d); err != nil {
			w.Close()
			return nil, err
		}
	}
	out := make(chan tui.PredicateFile, 8)
	go func() {
		defer close(out)
		defer w.Close()
		pending := map[string]bool{}
		settle := time.NewTimer(time.Hour)
		settle.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				p := filepath.Clean(ev.Name)
				if _, watched := rulesOf[p]; !watched || !ev.Has(fsnotify.Write|fsnotify.Create|fsnotify.Rename) {
					continue
				}
				pending[p] = true
				settle.Reset(editSettle)
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			case <-settle.C:
				for p := range pending {
					delete(pending, p)
					for _, f := range readPredicate(a, p, rulesOf[p]) {
						select {
						case out <- f:
						case <-ctx.Done():
							return
						}
					}
				}
			}
		}
	}()
	return out, nil
}

// readPredicate reads and parses a predicate file for the rules that use
// it. A file that is gone (mid-rename) is skipped: its new version arrives
// as another event.
func readPredicate(a *audit.Audit, path string, rules []int) []tui.PredicateFile {
	data, readErr := audit.ReadPredicateFile(path)
	if errors.Is(readErr, fs.ErrNotExist) {
		return nil
	}
	var out []tui.PredicateFile
	for _, ri := range rules {
		f := tui.PredicateFile{Rule: ri, Err: readErr}
		if readErr == nil {
			// Named as the user knows it, so errors point at it.
			f.Predicate, f.Err = audit.ParsePredicate(a.Rules[ri].PredicatePath, data, a.Dir)
		}
		out = append(out, f)
	}
	return out
}

package workbench

import (
	"time"

	"errors"
	"fmt"
	"github.com/auditor-dev/auditor/audit/labels"
	"strings"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
	"github.com/auditor-dev/auditor/store"
)

// ImportOutcome is what ImportLabels did with a file's records.
type ImportOutcome struct {
	store.ImportResult
	// Unknown counts records for responses the plan does not use: skipped.
	Unknown int
	// Declared is the label set ImportOptions.Random declared, nil
	// without one; Outside the labelled answers outside its frame (left
	// out of it).
	Declared *labels.LabelSet
	Outside  []string
	// Mismatched are the records refused because the answer they judged
	// is not the one stored under their key, each said for people with
	// the file and line.
	Mismatched []string
}

// ImportOptions say how ImportLabels treats a file's records.
type ImportOptions struct {
	// Overwrite applies labels that differ from their labeller's (store
	// ImportLabels).
	Overwrite bool
	// Random, when set, declares the file's blind labels a simple random
	// sample of the answers its frame covers (labels.DeclareRandom): the
	// label set Random.Name, holding the answers labelled. Labels in no
	// declared design count nowhere. Needs a session opened with Write
	// access (the draw's frame is read from the tally).
	Random *labels.SampleOptions
}

// Refused counts the records not imported.
func (o ImportOutcome) Refused() int { return o.ImportResult.Refused() + o.Unknown + len(o.Mismatched) }

// ImportLabels merges the records read from file (report.ParseLabels)
// into the store and rewrites the label file. A record counts only for
// the answer it judged, so a record is refused, and named, when a blind
// sheet's row shows an answer other than the one stored under its key (a
// sheet written from a store whose answers were asked again), when it
// names the hash of another answer, or when no answer is stored under its
// key; a sheet row's label records the stored answer's hash. The rest are
// imported (store.Store.ImportLabels), and a label file's label sets and
// rule histories merged as on open.
func (s *Session) ImportLabels(file string, rows report.LabelRows, o ImportOptions) (ImportOutcome, error) {
	var out ImportOutcome
	if err := s.mergeRecords(file, rows.Records); err != nil {
		return out, err
	}
	var take []model.Label
	for i, l := range rows.Labels {
		if !s.Plan.Labelable(l.Key) {
			out.Unknown++
			continue
		}
		src := report.RowSource{}
		if i < len(rows.Rows) {
			src = rows.Rows[i]
		}
		refuse := func(why string) {
			out.Mismatched = append(out.Mismatched, fmt.Sprintf("%s:%d: %s %.12s: not imported (label it again)", file, src.Line, why, l.Key))
		}
		if !src.HasAnswer && l.AnswerSHA256 == "" {
			take = append(take, l) // an export from before hashes: the tally checks its time
			continue
		}
		r, err := s.Store.Response(l.Key)
		switch {
		case err != nil && !isNotFound(err):
			return ImportOutcome{}, err
		case err != nil || !r.OK():
			refuse("no answer is stored under key")
			continue
		}
		hash := model.AnswerHash(r.Text)
		switch {
		case src.HasAnswer && sheetText(src.Answer) != sheetText(model.Sanitize(r.Text)):
			refuse("the row's answer is not the one stored under key")
			continue
		case l.AnswerSHA256 != "" && l.AnswerSHA256 != hash:
			refuse("the label judged another answer than the one stored under key")
			continue
		}
		l.AnswerSHA256 = hash
		take = append(take, l)
	}
	now := time.Now().UTC()
	res, err := s.Store.ImportLabels(take, o.Overwrite)
	if err != nil {
		return ImportOutcome{}, err
	}
	out.ImportResult = res
	if o.Random != nil {
		if out.Declared, out.Outside, err = s.declareRandom(take, *o.Random, now); err != nil {
			return out, err
		}
	}
	return out, s.SaveLabelFile()
}

// declareRandom declares the blind labels taken as a random sample: the
// set is drawn, as declared, no later than the earliest blind label of
// their answers was given.
func (s *Session) declareRandom(ls []model.Label, opts labels.SampleOptions, now time.Time) (*labels.LabelSet, []string, error) {
	if s.Tally == nil {
		return nil, nil, fmt.Errorf("workbench: declaring a design needs the audit's tally (open it with Write access)")
	}
	var keys []string
	created := now
	for _, l := range ls {
		if l.Undo || (l.Source != "" && l.Source != model.LabelBlind) {
			continue
		}
		keys = append(keys, l.Key)
		if !l.At.IsZero() && l.At.Before(created) {
			created = l.At
		}
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	// The answers' blind labels may be older than this import (imported
	// before, without a design): the declared draw precedes them all.
	book, err := s.LabelBook()
	if err != nil {
		return nil, nil, err
	}
	for _, k := range keys {
		if l, ok := book.Truth()[k]; ok && !l.At.IsZero() && l.At.Before(created) {
			created = l.At
		}
	}
	set, outside, err := labels.DeclareRandom(s.LabelStore(), s.Plan, s.Tally, opts, keys, created)
	if err != nil {
		return nil, outside, err
	}
	s.Tally.AddLabelSet(set)
	return &set, outside, nil
}

// sheetText is an answer as compared between a sheet and the store:
// spreadsheets turn line ends into CRLF and trim cells.
func sheetText(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

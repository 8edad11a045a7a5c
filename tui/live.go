package tui

import (
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/workbench"
)

// cellRef names one grid cell: a case of a rule, under one variant, for one
// model. Its samples are the plan cells with the same four fields.
type cellRef struct {
	rule, model, kase int
	deleted           bool
	// joint is a cell of the joint test's column: the line's case on the
	// prompt without every line of the joint set (deleted is true too).
	joint bool
}

// cellLive is what the runner is doing for one grid cell right now.
type cellLive struct {
	inFlight int
	retrying map[string]time.Time // call key -> when its next attempt is due
}

// live is the progress of the run this screen started: counters for the
// header and the calls in flight or waiting to retry, per grid cell. It is
// only touched by App.Update.
type live struct {
	started  bool
	start    time.Time
	end      time.Time // when the feed closed; zero while running
	phase    string    // "answers", later "judging"
	total    int       // calls in the current phase
	done     int
	failed   int
	retries  int
	spent    float64
	limit    int // current concurrency limit
	maxLimit int
	stopped  *runner.Stopped
	closed   bool // the feed is closed: nothing more will come

	// doneBefore and failedBefore count the calls of the phases before
	// this one, for the run's totals at its end.
	doneBefore, failedBefore int
	// failedKeys are the calls that failed for good in this run, in any
	// phase: the header's count of errors is the run's, each call once, so
	// it never goes down. failedAnswers counts the answers among them.
	failedKeys    map[string]bool
	failedAnswers int
	// round is an adaptive run's round in progress (nil for a run in one
	// go): its answers phase counts over every round, against the most
	// the run makes.
	round *model.Round

	// stored and spentBefore are what earlier runs left: the plan's
	// answers stored and what every stored call cost. The header counts
	// the whole audit with them, not this session alone.
	stored      int
	spentBefore float64

	causes  map[runner.RetryCause]int // retries by cause
	lastErr string                    // the last call that failed for good, why

	inFlight map[string]bool      // keys with an attempt in flight
	retrying map[string]time.Time // keys waiting to retry
	cells    map[cellRef]*cellLive
}

func newLive(total, concurrency int) *live {
	return &live{
		phase: "answers", total: total, limit: concurrency, maxLimit: concurrency,
		inFlight: map[string]bool{}, retrying: map[string]time.Time{}, cells: map[cellRef]*cellLive{},
		causes: map[runner.RetryCause]int{}, failedKeys: map[string]bool{},
	}
}

// allFailed reports whether the run made calls and every one failed for
// good: it ended, but did not complete anything.
func (l *live) allFailed() bool {
	n := l.doneBefore + l.done
	return n > 0 && l.failedBefore+l.failed == n
}

// failedRun reports whether the run ended short of its calls: stopped
// before the end, or every call failed.
func (l *live) failedRun() bool {
	return l.stopped != nil && (l.stopped.Reason != runner.Completed || l.allFailed())
}

// answering reports whether the run is in its answers phase, the one the
// whole audit's progress is counted in.
func (l *live) answering() bool { return l.phase == "answers" }

// running reports whether the run has started and not ended.
func (l *live) running() bool { return l != nil && l.started && !l.closed }

// apply records one batch. It returns whether any answer was graded, that
// is whether results must be recomputed.
func (l *live) apply(p *audit.Plan, tally *evidence.Tally, events []Event, now time.Time) (graded bool) {
	for _, e := range events {
		if e.round != nil {
			r := *e.round
			l.round = &r
			continue
		}
		if e.phase != nil && e.phase.name == workbench.PhaseAnswers && l.round != nil && l.answering() {
			// The next round of answers: the run's progress goes on.
			l.total = l.done + l.round.AtMost - l.round.Made
			l.stopped = nil
			continue
		}
		if e.phase != nil {
			l.phase, l.total, l.start = e.phase.name, e.phase.total, now
			l.doneBefore, l.failedBefore = l.doneBefore+l.done, l.failedBefore+l.failed
			l.done, l.failed = 0, 0
			l.stopped = nil // the phase before completed; this one is running
			continue
		}
		if e.judged != nil {
			// Record would drop it: the answer it grades is already in.
			tally.RecordGrade(e.judged.answerKey, e.judged.grade)
			graded = true
			continue
		}
		switch ev := e.Runner.(type) {
		case nil:
			tally.Record(e.Response, e.Grades)
			graded = true
		case runner.Started:
			l.setInFlight(p, ev.Key, true)
			l.setRetrying(p, ev.Key, time.Time{})
		case runner.Retrying:
			l.retries++
			cause := ev.Cause
			switch {
			case cause != "":
			case ev.Kind == model.ErrRateLimited:
				cause = runner.CauseRateLimit
			default:
				cause = runner.CauseOther
			}
			l.causes[cause]++
			l.setInFlight(p, ev.Key, false)
			l.setRetrying(p, ev.Key, ev.Until)
		case runner.Finished:
			key := ev.Response.Key
			l.setInFlight(p, key, false)
			l.setRetrying(p, key, time.Time{})
			l.done++
			l.spent += ev.Cost
			if !ev.Response.OK() && !ev.Response.ErrorKind.Settled() && !l.failedKeys[key] {
				l.failedKeys[key] = true
				l.failed++
				if l.answering() {
					l.failedAnswers++
				}
				l.lastErr = ev.Response.Error
			}
		case runner.ConcurrencyChanged:
			l.limit = ev.Limit
		case runner.Stopped:
			s := ev
			l.stopped = &s
			if s.Reason != runner.Completed {
				l.idle() // stopped short: no call waiting will be made
			}
		}
	}
	return graded
}

// idle forgets every call in flight or waiting to retry, in the header's
// counts and in the grid's cells: once the run has stopped, none of them
// will be made. A late event about one of them changes nothing.
func (l *live) idle() {
	clear(l.inFlight)
	clear(l.retrying)
	for _, c := range l.cells {
		c.inFlight, c.retrying = 0, nil
	}
}

// failures is every call that failed for good in this run, whatever its
// phase: what the header counts and the end message says.
func (l *live) failures() int { return len(l.failedKeys) }

// phaseEvent starts a new phase of a run (judging after answering).
type phaseEvent struct {
	name  string
	total int
}

func (l *live) cell(r cellRef) *cellLive {
	c := l.cells[r]
	if c == nil {
		c = &cellLive{}
		l.cells[r] = c
	}
	return c
}

func (l *live) setInFlight(p *audit.Plan, key string, on bool) {
	if l.inFlight[key] == on {
		return
	}
	if on {
		l.inFlight[key] = true
	} else {
		delete(l.inFlight, key)
	}
	d := -1
	if on {
		d = 1
	}
	forEachRef(p, key, func(r cellRef) { l.cell(r).inFlight += d })
}

// setRetrying marks key as waiting until until, or clears it when until is
// zero.
func (l *live) setRetrying(p *audit.Plan, key string, until time.Time) {
	_, was := l.retrying[key]
	if until.IsZero() && !was {
		return
	}
	if until.IsZero() {
		delete(l.retrying, key)
	} else {
		l.retrying[key] = until
	}
	forEachRef(p, key, func(r cellRef) {
		c := l.cell(r)
		if until.IsZero() {
			delete(c.retrying, key)
			return
		}
		if c.retrying == nil {
			c.retrying = map[string]time.Time{}
		}
		c.retrying[key] = until
	})
}

// forEachRef calls fn for each grid cell a call serves, once per cell. Calls
// that serve no cell (judge calls) are ignored.
func forEachRef(p *audit.Plan, key string, fn func(cellRef)) {
	idx := p.ByKey[key]
	if len(idx) == 1 && p.Ship == nil {
		c := p.Cells[idx[0]]
		fn(cellRef{rule: c.Rule, model: c.Model, kase: c.Case, deleted: c.Deleted})
		return
	}
	seen := make(map[cellRef]bool, len(idx))
	for _, i := range idx {
		c := p.Cells[i]
		r := cellRef{rule: c.Rule, model: c.Model, kase: c.Case, deleted: c.Deleted}
		if !seen[r] {
			seen[r] = true
			fn(r)
		}
	}
	if p.Ship != nil {
		for _, i := range p.Ship.ByKey[key] {
			c := p.Ship.Cells[i]
			r := cellRef{rule: c.Rule, model: c.Model, kase: c.Case, deleted: true, joint: true}
			if !seen[r] {
				seen[r] = true
				fn(r)
			}
		}
	}
}

// nextRetry returns the earliest time a call of the cell is due again.
func (c *cellLive) nextRetry() (time.Time, bool) {
	var first time.Time
	for _, t := range c.retrying {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	return first, !first.IsZero()
}

// rate returns calls finished per second since the run (or its phase)
// started, up to its end.
func (l *live) rate(now time.Time) float64 {
	if !l.end.IsZero() {
		now = l.end
	}
	el := now.Sub(l.start).Seconds()
	if !l.started || el <= 0 {
		return 0
	}
	return float64(l.done) / el
}

// eta estimates the time left at the rate so far; false when unknown.
func (l *live) eta(now time.Time) (time.Duration, bool) {
	r := l.rate(now)
	if r <= 0 || l.done >= l.total {
		return 0, false
	}
	return time.Duration(float64(l.total-l.done) / r * float64(time.Second)), true
}

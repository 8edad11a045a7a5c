package tui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/runner"
)

// startRun starts the run and the commands that follow it.
func (a *App) startRun() tea.Cmd {
	parent := a.opts.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	a.cancel = cancel
	a.feed = NewFeed()
	l := newLive(a.opts.Calls, max(a.c.est.Concurrency, 1))
	l.started, l.start = true, a.c.now
	l.stored, l.spentBefore = a.c.storedOK, a.opts.SpentBefore
	a.c.live = l
	a.opts.Start(ctx, a.feed)
	a.screen = screenGrid
	a.resultsChanged() // the screens say the run is going
	return tea.Batch(waitBatch(a.feed, a.window), a.tick())
}

func (a *App) tick() tea.Cmd {
	return tea.Tick(time.Second, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// applyBatch records a batch of run events and recomputes results once.
func (a *App) applyBatch(msg batchMsg) tea.Cmd {
	a.batchN++
	l := a.c.live
	if l == nil {
		return nil
	}
	if l.apply(a.c.plan, a.c.tally, msg.events, a.c.now) {
		for _, e := range msg.events {
			if e.Runner == nil && e.phase == nil && e.round == nil && e.judged == nil {
				a.c.setStored(e.Response.Key, e.Response.OK())
			}
		}
		a.recompute()
	}
	// A sample opened while its call was pending fills in once answered.
	reload := a.sample.reloadIfAnswered()
	if msg.closed {
		l.closed, l.end = true, a.c.now
		l.idle()   // nothing is in flight or will be retried any more
		a.cancel() // releases the run's context; the run is over
		a.setStatus(a.endMessage(), l.failedRun())
		// Verdicts are no longer provisional, the report no longer says the
		// run is in progress; what the run spent is now stored.
		a.resultsChanged()
		var spend tea.Cmd
		if a.screen == screenReport {
			spend = a.report.loadSpend()
		}
		return tea.Batch(reload, a.afterRun(), spend)
	}
	return tea.Batch(reload, waitBatch(a.feed, a.window))
}

// endMessage says how the run ended, in the first of its forms that fits
// the status line; the longest detail (why it stopped, the last error) is
// on the grid's e.
func (a *App) endMessage() string {
	l := a.c.live
	if l.stopped == nil {
		return "Run ended."
	}
	s := l.stopped
	if s.Reason == runner.Completed && l.allFailed() {
		n := l.doneBefore + l.done
		return firstFit(a.c.width,
			fmt.Sprintf("Run failed: all %d calls failed; last error: %s", n, oneLine(l.lastErr)),
			fmt.Sprintf("Run failed: all %d calls failed; e (grid) shows the last error.", n),
			fmt.Sprintf("Run failed: all %d calls failed.", n))
	}
	if s.Detail == "" {
		n, failed := l.doneBefore+l.done, l.failures()
		if judges := failed - l.failedAnswers; judges > 0 {
			// As the run's last lines count them: answers and judge calls.
			what := fmt.Sprintf("%d judge %s", judges, plural(judges, "call", "calls"))
			if l.failedAnswers > 0 {
				what = fmt.Sprintf("%d %s and %s", l.failedAnswers, plural(l.failedAnswers, "answer", "answers"), what)
			}
			return fmt.Sprintf("Run %s: %d calls finished, %s failed for good.", s.Reason, n, what)
		}
		return fmt.Sprintf("Run %s: %d calls finished, %d failed for good.", s.Reason, n, failed)
	}
	return firstFit(a.c.width,
		fmt.Sprintf("Run stopped (%s): %s. %d not made; the resume command is printed on exit.", s.Reason, oneLine(s.Detail), s.Remaining),
		fmt.Sprintf("Run stopped (%s): %d calls not made; e (grid) shows why; q prints how to resume.", s.Reason, s.Remaining),
		fmt.Sprintf("Run stopped (%s): %d not made; e (grid) shows why.", s.Reason, s.Remaining),
		fmt.Sprintf("Run stopped (%s); e (grid) shows why.", s.Reason))
}

// plural picks one's or many's word for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

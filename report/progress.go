package report

import (
	"fmt"
	"io"
	"time"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// Progress prints a run's progress as lines, for a run nobody watches on a
// screen: about one line a second per phase ("[ 120/1080]  11%  52.3
// calls/s ..."), a line for every call that failed for good, and a last
// line when each phase ends. It satisfies workbench.Observer.
//
// Its methods are called from one goroutine at a time per phase, except
// Graded and JudgeGraded, which it ignores.
type Progress struct {
	w           io.Writer
	concurrency int
	budget      float64
	now         func() time.Time

	phase                          string
	total                          int
	done, failed, settled, retries int
	limit                          int
	spent                          float64
	start, lastPrint               time.Time
	// round is an adaptive run's round in progress: its answers are counted
	// over every round, against the most the run makes (atMost).
	round, rounds, atMost, notNeeded int
}

// NewProgress returns a printer writing to w. concurrency is the starting
// limit on calls in flight; budget the run's budget in dollars (0: none).
func NewProgress(w io.Writer, concurrency int, budget float64) *Progress {
	return &Progress{w: w, concurrency: concurrency, budget: budget, now: time.Now}
}

// StartPhase starts counting a phase of calls afresh. The answers need no
// heading (the plan was printed before them); later phases get one.
func (p *Progress) StartPhase(phase string, calls int) {
	if phase == "answers" && p.round > 1 && p.phase == "answers" {
		// The next round of an adaptive run: its progress goes on.
		return
	}
	if phase != "answers" {
		fmt.Fprintf(p.w, "%s: %d calls\n", phase, calls)
		p.round = 0
	}
	p.phase, p.total = phase, calls
	if p.round > 0 {
		p.total = p.atMost
	}
	// Spend and errors are the run's, not the phase's: the budget spend is
	// shown against is the run's, shared by the answers (every round of an
	// adaptive run) and the judges, and a call that failed for good stays
	// counted.
	p.done, p.settled, p.retries = 0, 0, 0
	p.limit = p.concurrency
	p.start = p.now()
	p.lastPrint = p.start
}

// Event counts one runner event and prints a line when a second has passed
// since the last, and at the phase's end.
func (p *Progress) Event(ev runner.Event) {
	switch e := ev.(type) {
	case runner.Finished:
		p.done++
		p.spent += e.Cost
		switch {
		case e.Response.ErrorKind.Settled():
			// Counted on the progress line and summed up at the end:
			// a model that runs out of tokens does it hundreds of times.
			p.settled++
		case !e.Response.OK():
			p.failed++
			fmt.Fprintf(p.w, "call failed for good after %d attempts: %s\n", e.Response.Attempts, model.Sanitize(e.Response.Error))
		}
	case runner.Retrying:
		p.retries++
	case runner.ConcurrencyChanged:
		p.limit = e.Limit
	case runner.Stopped:
		p.print()
		return
	}
	if now := p.now(); now.Sub(p.lastPrint) >= time.Second {
		p.lastPrint = now
		p.print()
	}
}

// Graded is not shown: the progress line counts answers as they finish.
func (p *Progress) Graded(model.Response, []model.Grade) {}

// JudgeGraded is not shown either.
func (p *Progress) JudgeGraded(string, model.Grade) {}

func (p *Progress) print() {
	el := p.now().Sub(p.start)
	rate := float64(p.done) / max(el.Seconds(), 1e-9)
	eta := "-"
	if rate > 0 && p.done < p.total {
		eta = time.Duration(float64(p.total-p.done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	b := ""
	if p.budget > 0 {
		b = fmt.Sprintf(" of $%.2f", p.budget)
	}
	settled := ""
	if p.settled > 0 {
		settled = fmt.Sprintf("  truncated or empty %d", p.settled)
	}
	of := ""
	if p.round > 0 {
		of = fmt.Sprintf("round %d/%d ", p.round, p.rounds)
	}
	fmt.Fprintf(p.w, "%s[%*d/%d] %3.0f%%  %6.1f calls/s  eta %-6s $%.2f%s  concurrency %d  retries %d  errors %d%s\n",
		of, len(fmt.Sprint(p.total)), p.done, p.total, 100*float64(p.done)/float64(max(p.total, 1)), rate, eta, p.spent, b, p.limit, p.retries, p.failed, settled)
}

// StartRound says that a round of an adaptive run starts: the calls it
// makes, those made so far, the most the run makes and those it will not
// (workbench.RoundObserver). The progress lines count over every round.
func (p *Progress) StartRound(r model.Round) {
	p.round, p.rounds, p.atMost, p.notNeeded = r.Index, r.Of, r.AtMost, r.NotNeeded
	p.total = r.AtMost
	fmt.Fprintf(p.w, "round %d of %d: %s calls (%s made, at most %s in all, %s not needed)\n", r.Index, r.Of,
		Thousands(int64(r.Calls)), Thousands(int64(r.Made)), Thousands(int64(r.AtMost)), Thousands(int64(r.NotNeeded)))
}

// Looked says how a look of an adaptive run went: the lines it settled,
// the lines still open and the calls the next round makes
// (workbench.LookObserver).
func (p *Progress) Looked(look model.Look, settled []string, open, next int) {
	s := fmt.Sprintf("%s: ", look.String())
	if len(settled) == 0 {
		s += "no line settled"
	} else {
		for i, n := range settled {
			if i > 0 {
				s += "; "
			}
			s += model.Sanitize(n)
		}
	}
	switch {
	case look.Final():
	case open == 0:
		s += "; every line is settled: no more calls"
	case next == 0:
		s += "; the next look's answers are all stored: no calls"
	default:
		s += fmt.Sprintf("; the next round makes %s calls", Thousands(int64(next)))
	}
	fmt.Fprintln(p.w, s)
}

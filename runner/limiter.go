package runner

import "time"

// limiter is one pool's answer to rate limits: an adaptive limit on calls in
// flight and a pause of the whole pool. A 429 usually speaks for the load,
// not for the endpoint's whole window: the call that got it waits out its
// own Retry-After, the limit comes down, and the other calls go on. The
// pool pauses only when the 429s say more than that:
//
//   - a rate-limit header said a window is spent (no requests or tokens
//     left): nothing starts before it resets, whether the response was a
//     429 or an answer (see run.windowSpent);
//   - the 429s come together: at least burstShare of the last outcomes
//     and the attempts in flight were 429s to attempts sent at the limit
//     of their time, across cuts of the limit. Cutting did not help (or there is nothing left to
//     cut), so the server's wait is the endpoint's.
//
// The limit moves by AIMD tuned to settle at a server's concurrency cap
// rather than to oscillate below it, and to shrug off 429s that come one
// at a time at random:
//
//   - A 429 on an attempt sent before the limit last changed says nothing
//     new (it belongs to the overload the change answered): it changes
//     nothing.
//   - After a raise, probeRefusals 429s mean the raise went past the
//     server's capacity: the limit goes back down by one, and the next
//     raise waits twice as long (up to maxPatience times). A raise that
//     carries 2 x limit answers first is confirmed, and resets the patience.
//   - Otherwise cutRefusals 429s within the last cutRefusals x limit
//     outcomes cut the limit by a quarter (at least 1): a server over its
//     cap refuses at least one call a round, while 429s at random, even one
//     in ten, rarely come that close together at a small limit, and each
//     call they hit waits alone.
//   - A burst (below) cuts at once.
//   - The limit goes up by one after limit x patience answers, once the
//     last raise is confirmed.
//
// A limiter is owned by the run's loop goroutine; it reads no clock, so
// tests drive it with any times.
type limiter struct {
	limit, max int

	sent      uint64 // attempts started; an attempt's ticket is the count after its start
	changedAt uint64 // sent when the limit last changed: tickets above it were sent at the current limit

	answers int // answers since the limit last changed, to any attempt
	// since counts the outcomes since the limit changed (answers, and
	// 429s to attempts sent at the current limit), and refusals holds the
	// positions in that count of the last cutRefusals 429s.
	since    int
	refusals []int
	patience int  // a raise needs limit x patience answers; 1 to maxPatience
	probing  bool // the last change was a raise, not yet confirmed or refuted

	// recent are the last outcomes (true: 429), newest last; at most
	// burstWindow. A 429 to an attempt sent before the limit last changed
	// is not counted: the change answered it.
	recent []bool

	pausedUntil time.Time // no attempt starts before; zero when not paused
}

const (
	// maxPatience bounds how rarely a limit that keeps failing at the same
	// level probes upwards: at a cap of 4, two 429s in about 64 answers.
	maxPatience = 16
	// probeRefusals 429s refute a raise; cutRefusals close together cut.
	probeRefusals = 2
	cutRefusals   = 3
	// Of the last burstWindow outcomes (at least burstMin of them), a
	// share of burstShare 429s makes a burst. With 429s at random, even
	// one in five, that takes about one chance in a thousand; a spent
	// window refuses every call.
	burstWindow = 16
	burstMin    = 8
	burstShare  = 0.75
)

func newLimiter(limit int) *limiter {
	limit = max(limit, 1)
	return &limiter{limit: limit, max: limit, patience: 1}
}

// start records an attempt's start and returns its ticket.
func (l *limiter) start() uint64 {
	l.sent++
	return l.sent
}

// current reports whether an attempt with ticket t was sent at the current
// limit (after its last change).
func (l *limiter) current(t uint64) bool { return t > l.changedAt }

// answered records an answer to the attempt with ticket t and reports
// whether the limit changed.
func (l *limiter) answered(t uint64) bool {
	// Every answer counts, sent before the last change or after: the
	// server took the call.
	l.note(false)
	l.answers++
	if l.probing && l.answers >= 2*l.limit {
		// The raised limit carried two rounds of answers: the server
		// took it, and the next raise need not wait longer.
		l.probing = false
		l.patience = 1
	}
	if l.probing || l.limit >= l.max || l.answers < l.limit*l.patience {
		return false
	}
	l.limit++
	l.changed()
	l.probing = true
	return true
}

// refused records a 429 to the attempt with ticket t, with pending other
// attempts still in flight. It reports whether the limit changed and
// whether the 429s come together (see limiter): the caller then pauses the
// pool for the server's wait.
func (l *limiter) refused(t uint64, pending int) (changed, burst bool) {
	if !l.current(t) {
		return false, false // sent before the last change, which answered it
	}
	l.note(true)
	burst = l.bursting(pending)
	switch {
	case l.limit == 1:
		return false, burst
	case burst:
		l.cut()
	case l.probing && len(l.refusals) >= probeRefusals:
		l.limit--
		l.patience = min(2*l.patience, maxPatience)
	case !l.probing && len(l.refusals) == cutRefusals && l.since-l.refusals[0] < cutRefusals*l.limit:
		l.cut()
	default:
		return false, burst
	}
	l.changed()
	return true, burst
}

// cut takes a quarter off the limit, rounded to the larger limit, and at
// least 1.
func (l *limiter) cut() { l.limit = max(1, min(l.limit-1, (3*l.limit+3)/4)) }

// changed starts counting afresh at a new limit.
func (l *limiter) changed() {
	l.changedAt = l.sent
	l.answers = 0
	l.since = 0
	l.refusals = l.refusals[:0]
	l.probing = false
	// recent carries over: a burst is 429s that go on across cuts.
}

// note records an outcome: an answer, or a 429 to an attempt sent at the
// current limit.
func (l *limiter) note(limited bool) {
	l.since++
	if limited {
		if len(l.refusals) == cutRefusals {
			l.refusals = append(l.refusals[:0], l.refusals[1:]...)
		}
		l.refusals = append(l.refusals, l.since)
	}
	if len(l.recent) == burstWindow {
		copy(l.recent, l.recent[1:])
		l.recent = l.recent[:burstWindow-1]
	}
	l.recent = append(l.recent, limited)
}

// bursting reports whether most recent outcomes were 429s. The attempts
// still in flight count as outcomes not refused: a server refuses at once,
// and answers take their time, so the first outcomes of an overload are
// all 429s even when most calls are being served.
func (l *limiter) bursting(pending int) bool {
	if len(l.recent) < burstMin {
		return false
	}
	n := 0
	for _, limited := range l.recent {
		if limited {
			n++
		}
	}
	return float64(n) >= burstShare*float64(len(l.recent)+pending)
}

// pause holds every attempt of the pool until at least until.
func (l *limiter) pause(until time.Time) {
	if until.After(l.pausedUntil) {
		l.pausedUntil = until
	}
}

// paused reports whether no attempt may start at now.
func (l *limiter) paused(now time.Time) bool { return now.Before(l.pausedUntil) }

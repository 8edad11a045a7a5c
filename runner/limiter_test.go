package runner

import (
	"testing"
	"time"
)

// TestLimiter_AIMD: one or two 429s do not cut; a third close to them cuts
// a quarter off; the 429s of attempts sent before the cut change nothing;
// the limit climbs by one after limit answers, then waits for the raise to
// carry two rounds before the next, back to its maximum and no further.
func TestLimiter_AIMD(t *testing.T) {
	t.Parallel()
	l := newLimiter(8)
	check := func(what string, changed, burst bool, wantChanged bool, wantLimit int) {
		t.Helper()
		if changed != wantChanged || burst || l.limit != wantLimit {
			t.Fatalf("%s: changed %v burst %v limit %d; want %v false %d", what, changed, burst, l.limit, wantChanged, wantLimit)
		}
	}
	var tk [9]uint64
	for i := 1; i <= 8; i++ {
		tk[i] = l.start()
	}
	c, b := l.refused(tk[1], 7)
	check("one 429: maybe noise", c, b, false, 8)
	c, b = l.refused(tk[2], 6)
	check("two", c, b, false, 8)
	c, b = l.refused(tk[3], 5)
	check("three: a quarter off", c, b, true, 6)
	c, b = l.refused(tk[4], 4)
	check("sent before the cut", c, b, false, 6)
	c, b = l.refused(tk[8], 3)
	check("sent before the cut", c, b, false, 6)
	for i := 5; i <= 7; i++ {
		check("answer", l.answered(tk[i]), false, false, 6)
	}
	for range 2 {
		check("answer at 6", l.answered(l.start()), false, false, 6)
	}
	check("sixth answer at 6: up one", l.answered(l.start()), false, true, 7)
	for range 13 {
		check("answer at 7, not yet two rounds", l.answered(l.start()), false, false, 7)
	}
	check("fourteenth answer at 7: confirmed, up one", l.answered(l.start()), false, true, 8)
	for range 100 {
		check("answer at the maximum", l.answered(l.start()), false, false, 8)
	}
}

// TestLimiter_SettlesAtCap: a raise refused twice goes back by one, not by
// a quarter, and the next raise waits twice as long, up to maxPatience; a
// raise that carries two rounds of answers resets the patience.
func TestLimiter_SettlesAtCap(t *testing.T) {
	t.Parallel()
	l := newLimiter(8)
	l.limit = 4 // as after cuts, settled at a server's cap of 4
	answer := func(n int) (raised bool) {
		for range n {
			if l.answered(l.start()) {
				raised = true
			}
		}
		return raised
	}
	for i, patience := range []int{1, 2, 4, 8, 16, 16} {
		if raised := answer(4*patience - 1); raised {
			t.Fatalf("round %d: raised after %d answers at patience %d", i, 4*patience-1, patience)
		}
		if !answer(1) || l.limit != 5 {
			t.Fatalf("round %d: limit %d after %d answers, want 5", i, l.limit, 4*patience)
		}
		// The fifth slot is refused at once, and again.
		if changed, burst := l.refused(l.start(), 4); changed || burst || l.limit != 5 {
			t.Fatalf("round %d: one refusal: changed %v burst %v limit %d; want no change", i, changed, burst, l.limit)
		}
		if changed, burst := l.refused(l.start(), 4); !changed || burst || l.limit != 4 {
			t.Fatalf("round %d: second refusal: changed %v burst %v limit %d; want back to 4", i, changed, burst, l.limit)
		}
	}
	if l.patience != maxPatience {
		t.Fatalf("patience %d, want %d", l.patience, maxPatience)
	}
	// The cap rose: the raise to 5 carries ten answers, the patience
	// resets, and the limit goes on to 6 at once.
	answer(4*maxPatience - 1)
	if !answer(1) || l.limit != 5 {
		t.Fatalf("limit %d, want 5", l.limit)
	}
	if answer(9) || !answer(1) || l.patience != 1 || l.limit != 6 {
		t.Fatalf("after two rounds at 5: patience %d limit %d, want 1 and 6", l.patience, l.limit)
	}
}

// TestLimiter_NeverBelowOne: 429s that keep coming take the limit to 1 and
// no further.
func TestLimiter_NeverBelowOne(t *testing.T) {
	t.Parallel()
	l := newLimiter(8)
	for range 100 {
		l.refused(l.start(), 0)
	}
	if l.limit != 1 {
		t.Fatalf("limit %d, want 1", l.limit)
	}
	if changed, _ := l.refused(l.start(), 0); changed || l.limit != 1 {
		t.Fatalf("a 429 at 1 changed the limit to %d", l.limit)
	}
}

// TestLimiter_Burst: 429s that go on across cuts are a burst; 429s at
// random are not, and neither are those of attempts sent before a cut.
func TestLimiter_Burst(t *testing.T) {
	t.Parallel()
	// Every attempt refused: a burst once burstMin outcomes are in.
	l := newLimiter(8)
	bursts := 0
	for i := range 20 {
		if _, burst := l.refused(l.start(), 0); burst {
			bursts++
			if i+1 < burstMin {
				t.Fatalf("burst after %d refusals, want at least %d", i+1, burstMin)
			}
		}
	}
	if bursts == 0 {
		t.Fatal("twenty 429s in a row were not a burst")
	}

	// One attempt in five refused, in a fixed pattern: never a burst,
	// and the limit stays above 1.
	l = newLimiter(8)
	for i := range 2000 {
		tk := l.start()
		if i%5 == 0 {
			if _, burst := l.refused(tk, 0); burst {
				t.Fatalf("attempt %d: a burst from one 429 in five", i)
			}
		} else {
			l.answered(tk)
		}
		if l.limit < 2 {
			t.Fatalf("attempt %d: limit %d from one 429 in five", i, l.limit)
		}
	}

	// Refusals that come back while other calls are in flight, being
	// served: those count against a burst.
	l = newLimiter(1000)
	for i := range burstMin {
		if _, burst := l.refused(l.start(), 4); burst {
			t.Fatalf("refusal %d with four calls being served made a burst", i+1)
		}
	}
	if _, burst := l.refused(l.start(), 0); !burst {
		t.Fatal("nine refusals and nothing in flight are not a burst")
	}

	// A burst of eight sent at once and refused together: the cut answers
	// it, and the stale 429s are not counted towards a burst.
	l = newLimiter(8)
	var tks []uint64
	for range 8 {
		tks = append(tks, l.start())
	}
	for _, tk := range tks {
		if _, burst := l.refused(tk, 0); burst {
			t.Fatal("one overload refused at once made a burst")
		}
	}
	if l.limit != 6 {
		t.Fatalf("limit %d after one overload, want one cut to 6", l.limit)
	}
}

// TestLimiter_Pause: the pause only moves later.
func TestLimiter_Pause(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := newLimiter(4)
	if l.paused(t0) {
		t.Fatal("paused at the start")
	}
	l.pause(t0.Add(10 * time.Second))
	l.pause(t0.Add(5 * time.Second))
	if !l.paused(t0.Add(9*time.Second)) || l.paused(t0.Add(10*time.Second)) {
		t.Fatalf("paused until %v, want t0+10s", l.pausedUntil.Sub(t0))
	}
}

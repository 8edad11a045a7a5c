package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// startRun starts a run on the fixture's app (y on the plan, nothing fed
// yet) and moves its clock on by d.
func startRun(t testing.TB, f *fixture, d time.Duration, mods ...func(*Options)) (*App, *clock) {
	t.Helper()
	clk := &clock{t: t0}
	a := f.app(t, clk, noStart, mods...)
	press(a, "y")
	clk.Add(d)
	return a, clk
}

// resumedRun is a run resumed after an earlier one stored the first 1,200
// answers for $1.50: this run has answered 300 more, retried calls for
// three causes and backed off.
func resumedRun(t testing.TB) *App {
	f := newFixture(t, 30)
	f.store(t, 0, 1200)
	a, clk := startRun(t, f, 10*time.Second, func(o *Options) { o.SpentBefore = 1.5 })
	var evs []Event
	for i := 1200; i < 1500; i++ {
		evs = append(evs, Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}})
		evs = append(evs, f.finished(t, i)...)
	}
	for j, cause := range []runner.RetryCause{runner.CauseServer, runner.CauseServer, runner.CauseConnection, runner.CauseTimeout} {
		i := 1500 + j
		evs = append(evs,
			Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}},
			Event{Runner: runner.Retrying{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1, Kind: model.ErrTransport, Cause: cause,
				Wait: 3 * time.Second, Until: clk.Now().Add(3 * time.Second)}})
	}
	evs = append(evs, Event{Runner: runner.ConcurrencyChanged{Limit: 2}})
	a.Update(batchMsg{events: evs})
	return a
}

// failedRun is a run whose calls all failed for good, which the runner
// reports as completed.
func failedRun(t testing.TB) *App {
	f := newFixture(t, 1)
	a, _ := startRun(t, f, 3*time.Second)
	var evs []Event
	n := len(f.plan.Calls)
	for i := range n {
		r := model.Response{Key: f.plan.Calls[i].Key, Error: "transport: connection refused", ErrorKind: model.ErrTransport, Attempts: 3}
		f.src.put(r, nil)
		evs = append(evs, Event{Response: r}, Event{Runner: runner.Finished{Index: i, Response: r}})
	}
	evs = append(evs, Event{Runner: runner.ConcurrencyChanged{Limit: 1}},
		Event{Runner: runner.Stopped{Reason: runner.Completed, Done: n, Failed: n}})
	a.Update(batchMsg{events: evs, closed: true})
	return a
}

// systematicStop is a run the runner stopped after its first 20 calls all
// failed the same way: 19 were waiting to retry and one was in flight.
func systematicStop(t testing.TB) *App {
	f := newFixture(t, 30)
	a, clk := startRun(t, f, 5*time.Second)
	var evs []Event
	for i := range 20 {
		key := f.plan.Calls[i].Key
		evs = append(evs, Event{Runner: runner.Started{Index: i, Key: key, Attempt: 1}})
		if i < 19 {
			evs = append(evs, Event{Runner: runner.Retrying{Index: i, Key: key, Attempt: 1, Kind: model.ErrTransport,
				Cause: runner.CauseConnection, Wait: 2 * time.Second, Until: clk.Now().Add(2 * time.Second)}})
		}
	}
	evs = append(evs, Event{Runner: runner.Stopped{Reason: runner.SystematicFailure, Remaining: len(f.plan.Calls),
		Detail: "gpt-x at http://127.0.0.1:9/v1/: the first 20 calls all failed the same way, and none succeeded: " +
			"transport: connection refused. Check base_url (host and port) and that the server is running."}})
	a.Update(batchMsg{events: evs, closed: true})
	return a
}

// TestRun_SystematicStopLeavesNothingWaiting: once the runner has stopped,
// the header counts no call waiting, the cells mark none in flight or
// retrying, and the status line fits the width and points at the reason.
func TestRun_SystematicStopLeavesNothingWaiting(t *testing.T) {
	t.Parallel()
	a := systematicStop(t)
	for _, w := range []int{80, 200} {
		a.Update(tea.WindowSizeMsg{Width: w, Height: 30})
		s := plain(a)
		for _, stale := range []string{"waiting", "↻", "»"} {
			if strings.Contains(s, stale) {
				t.Errorf("at %d columns the stopped run still shows %q:\n%s", w, stale, s)
			}
		}
		contains(t, s, "systematic failure")
		// The status was worded for the width the run ended at.
		a.setStatus(a.endMessage(), true)
		if n := textWidth(a.status); n > w {
			t.Errorf("at %d columns the status is %d wide: %q", w, n, a.status)
		}
		contains(t, a.status, "e (grid) shows why")
	}
	press(a, "e")
	contains(t, plain(a), "Check base_url (host and port)")
}

// TestRun_ResumedCountsTheWholeAudit: after a resume the header counts the
// whole audit's answers and spend, says what was stored and what is left,
// and names retries by cause.
func TestRun_ResumedCountsTheWholeAudit(t *testing.T) {
	t.Parallel()
	a := resumedRun(t)
	for _, sz := range [][2]int{{80, 24}, {200, 50}} {
		a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		s := plain(a)
		total := len(a.c.plan.Calls)
		contains(t, s, fmt.Sprintf(" 1500/%d ", total))
		if sz[0] >= 200 {
			contains(t, s, fmt.Sprintf("resumed: 1200 stored, %d to make", total-1200))
			contains(t, s, "$1.80 in all ($0.30 this run")
			contains(t, s, "retries 4: 2 server error, 1 connection, 1 timeout")
		} else {
			// A short screen: the counters join the progress line, the
			// retries' causes only where they fit.
			contains(t, s, "retries 4")
			contains(t, s, "$1.80 · ")
		}
		contains(t, s, "backed off")
	}
}

// TestRun_AllFailedIsNotCompleted: a run whose every call failed ends as a
// failure, says why, and no longer says it backed off.
func TestRun_AllFailedIsNotCompleted(t *testing.T) {
	t.Parallel()
	a := failedRun(t)
	s := plain(a)
	if strings.Contains(s, "completed") {
		t.Fatalf("a run with every call failed says completed:\n%s", s)
	}
	contains(t, s, "all calls failed")
	contains(t, s, "connection refused")
	if !a.statusErr {
		t.Error("the end of a failed run is not shown as an error")
	}
	if strings.Contains(s, "backed off") {
		t.Fatalf("the ended run still says it backed off:\n%s", s)
	}
}

// TestRun_VerdictWraps: the verdict's reason wraps under the rule instead
// of being cut, at 80 and 120 columns.
func TestRun_VerdictWraps(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	reason := oneLine(a.c.result(0, 0).Verdict.Reason)
	for _, w := range []int{80, 120} {
		a.Update(tea.WindowSizeMsg{Width: w, Height: 40})
		var got []string
		for _, l := range strings.Split(plain(a), "\n")[5:9] {
			got = append(got, strings.TrimSpace(strings.TrimPrefix(l, "verdict: ■ KEEP")))
		}
		if joined := strings.Join(got, " "); !strings.Contains(joined, reason) {
			t.Errorf("at %d columns the verdict reads %q, want the whole reason %q", w, joined, reason)
		}
	}
}

// TestRun_NumbersTakeTheWidth: at 200 columns the width goes to the
// numbers (issue 30: the case text took about 130 columns and the numbers
// sat far right): the label column stops at maxLabel, the cells widen and
// their rate bars lengthen; each case's difference follows its cells.
func TestRun_NumbersTakeTheWidth(t *testing.T) {
	t.Parallel()
	_, a := complete(t, 30)
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	narrow := a.grid.geometry()
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	wide := a.grid.geometry()
	if wide.labelW > maxLabel || wide.cellW <= narrow.cellW || barWidth(wide.cellW) <= barWidth(narrow.cellW) {
		t.Fatalf("at 200 columns: label %d (most %d), cells %d (%d at 80), bars %d", wide.labelW, maxLabel, wide.cellW, narrow.cellW, barWidth(wide.cellW))
	}
	for _, l := range strings.Split(plain(a), "\n") {
		if strings.HasPrefix(l, "  road-03 ") {
			if at := strings.IndexAny(l, "░█"); at < 0 || widthOf([]rune(l[:at])) > maxLabel+1 {
				t.Errorf("the numbers start past column %d: %q", maxLabel+1, l)
			}
			if !strings.Contains(l, "+0.") {
				t.Errorf("no case difference on %q", l)
			}
		}
	}
}

// TestGolden_Run pins the run screen's new states at two sizes.
func TestGolden_Run(t *testing.T) {
	t.Parallel()
	scenes := []struct {
		name  string
		build func(t testing.TB) *App
	}{
		{"resumed", resumedRun},
		{"all_failed", failedRun},
		{"systematic_stop", systematicStop},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				a := sc.build(t)
				a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				golden.RequireEqual(t, plain(a))
			})
		}
	}
}

// allFailedWith is an 80x24 app after a run whose every call failed for
// good with the error text errText.
func allFailedWith(t *testing.T, errText string) *App {
	t.Helper()
	f := newFixture(t, 1)
	a := f.app(t, &clock{t: t0}, noStart)
	press(a, "y")
	var evs []Event
	n := len(f.plan.Calls)
	for i := range n {
		r := model.Response{Key: f.plan.Calls[i].Key, Error: errText, ErrorKind: model.ErrRequest, Attempts: 1}
		f.src.put(r, nil)
		evs = append(evs, Event{Response: r}, Event{Runner: runner.Finished{Index: i, Response: r}})
	}
	evs = append(evs, Event{Runner: runner.Stopped{Reason: runner.Completed, Done: n, Failed: n}})
	a.Update(batchMsg{events: evs, closed: true})
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return a
}

// TestRun_LastErrorOpensInFull: the status line cuts the last error to a
// line; e on the grid opens it whole (a long server body, wrapped), and
// esc goes back to the grid.
func TestRun_LastErrorOpensInFull(t *testing.T) {
	t.Parallel()
	a := allFailedWith(t, "HTTP 400: "+strings.Repeat("the request body was rejected because ", 8)+"END-OF-BODY \x1b[2J")
	if s := plain(a); strings.Contains(s, "END-OF-BODY") {
		t.Fatalf("the grid already shows the whole error; the test checks nothing:\n%s", s)
	}
	press(a, "e")
	s := plain(a)
	contains(t, s, "The last call that failed for good")
	contains(t, s, "END-OF-BODY")
	if strings.Contains(s, "\x1b[2J") {
		t.Errorf("the error's escape sequence reached the screen")
	}
	press(a, "esc")
	if s := plain(a); strings.Contains(s, "END-OF-BODY") || !strings.Contains(s, "PROVOKE") {
		t.Errorf("esc did not return to the grid:\n%s", s)
	}
}

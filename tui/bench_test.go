package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/store"
)

// syntheticDir writes an audit with one rule, n cases (kinds in turn) and
// the given number of simulated models, and returns the audit file.
func syntheticDir(tb testing.TB, n, models int) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := examples.Write(dir); err != nil { // for the predicate file
		tb.Fatal(err)
	}
	var prompt strings.Builder
	for i := 1; i <= 20; i++ {
		if i == 5 {
			prompt.WriteString("Do not speculate about unreleased products, features, or roadmap timelines.\n")
			continue
		}
		fmt.Fprintf(&prompt, "Line %d of the synthetic prompt says something ordinary.\n", i)
	}
	var cases strings.Builder
	for i := range n {
		fmt.Fprintf(&cases, `{"id":"syn-%03d","kind":"%s","msg":"Case %d: when will feature %d ship? I need a date for planning."}`+"\n",
			i, model.Kinds[i%3], i, i)
	}
	var toml strings.Builder
	toml.WriteString("name = \"synthetic\"\nprompt = \"synthetic.md\"\nsamples = 10\nconcurrency = 8\n")
	for m := range models {
		fmt.Fprintf(&toml, "[[model]]\nname = \"sim-%d\"\nprovider = \"sim\"\nprice_input_per_mtok = 3.0\nprice_output_per_mtok = 15.0\n", m)
	}
	toml.WriteString("[[rule]]\nline = 5\ncases = \"synthetic.jsonl\"\npredicate = \"roadmap_speculation.predicate.toml\"\n")
	for name, data := range map[string]string{"synthetic.md": prompt.String(), "synthetic.jsonl": cases.String(), "synthetic.toml": toml.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return filepath.Join(dir, "synthetic.toml")
}

func syntheticFixture(tb testing.TB, cases, models, samples int) *fixture {
	tb.Helper()
	path := syntheticDir(tb, cases, models)
	f := loadFixtureAt(tb, path, samples)
	return f
}

// BenchmarkGridView renders the grid of 200 cases by 4 columns (two models,
// baseline and deleted), half answered, with calls in flight.
func BenchmarkGridView(b *testing.B) {
	f := syntheticFixture(b, 200, 2, 10)
	f.store(b, 0, len(f.plan.Calls)/2)
	for _, sz := range [][2]int{{80, 24}, {160, 48}, {250, 70}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			a := f.app(b, &clock{t: t0}, noStart)
			press(a, "y")
			var evs []Event
			for i := len(f.plan.Calls) / 2; i < len(f.plan.Calls)/2+8; i++ {
				evs = append(evs, Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}})
			}
			a.Update(batchMsg{events: evs})
			a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			press(a, "pgdown")
			b.ReportAllocs()
			for b.Loop() {
				_ = a.View()
			}
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStream5000PerSecond feeds 10 seconds of a run producing 5,000
// events a second (a call is three events: started, graded, finished; 8 in
// flight) through the app, batched as the feed batches them: everything
// that arrives within one coalescing window is one batch. Virtual time: the stream
// is replayed as fast as the app can take it, so what is measured is the
// app's CPU per virtual second (Update, Results and View per batch, plus
// the one-second ticks), not the feed's sleeping.
func BenchmarkStream5000PerSecond(b *testing.B) {
	const (
		rate    = 5000
		seconds = 10
		window  = defaultWindow
	)
	calls := (rate*seconds + 2) / 3
	f := syntheticFixture(b, 200, 2, (calls+799)/800)
	// Pre-compute the answers: the runner and grader are not what is measured.
	type ans struct {
		r  model.Response
		gs []model.Grade
	}
	answers := make([]ans, calls)
	for i := range answers {
		answers[i].r, answers[i].gs = f.answer(b, i)
	}
	var events []Event
	for i := 0; i < calls+8; i++ {
		if i < calls {
			events = append(events, Event{Runner: runner.Started{Index: i, Key: f.plan.Calls[i].Key, Attempt: 1}})
		}
		if j := i - 8; j >= 0 && j < calls {
			events = append(events, Event{Response: answers[j].r, Grades: answers[j].gs},
				Event{Runner: runner.Finished{Index: j, Response: answers[j].r, Cost: 0.0001}})
		}
	}
	events = events[:min(len(events), rate*seconds)]

	var redraws, batches int
	var cpu, wall, viewTime time.Duration
	for b.Loop() {
		b.StopTimer()
		clk := &clock{t: t0}
		a := f.app(b, clk, noStart)
		a.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		press(a, "y")
		b.StartTimer()
		redraws, batches = 0, 0
		c0, w0 := cpuTime(), time.Now()
		perWindow := int(rate * window / time.Second)
		nextTick := t0.Add(time.Second)
		for start := 0; start < len(events); start += perWindow {
			end := min(start+perWindow, len(events))
			clk.Add(window)
			if !clk.Now().Before(nextTick) {
				a.Update(tickMsg(clk.Now()))
				a.View()
				redraws++
				nextTick = nextTick.Add(time.Second)
			}
			a.Update(batchMsg{events: events[start:end]})
			v0 := time.Now()
			a.View()
			viewTime += time.Since(v0)
			redraws++
			batches++
		}
		cpu, wall = cpuTime()-c0, time.Since(w0)
	}
	b.ReportMetric(float64(cpu.Milliseconds())/seconds, "cpu-ms/virtual-s")
	b.ReportMetric(float64(wall.Milliseconds())/seconds, "wall-ms/virtual-s")
	b.ReportMetric(float64(viewTime.Microseconds())/float64(max(batches, 1))/float64(b.N), "view-µs/batch")
	b.ReportMetric(float64(redraws)/seconds, "redraws/s")
	b.ReportMetric(float64(len(events))/float64(max(batches, 1)), "events/batch")
}

// BenchmarkFeedRealtime runs the real feed in real time: a producer pushes
// 5,000 events a second for three seconds from another goroutine while the
// consumer takes batches with waitBatch, as the program does, and applies
// each to the app (Update and View). It reports the batches (redraws) a
// second actually delivered. Run with -benchtime=1x.
func BenchmarkFeedRealtime(b *testing.B) {
	const (
		rate    = 5000
		seconds = 3
	)
	f := syntheticFixture(b, 200, 2, 10)
	total := rate * seconds
	events := make([]Event, 0, total)
	for i := 0; len(events) < total; i++ {
		r, gs := f.answer(b, i)
		events = append(events, Event{Response: r, Grades: gs}, Event{Runner: runner.Finished{Index: i, Response: r}})
	}
	events = events[:total]
	for b.Loop() {
		a := f.app(b, &clock{t: t0}, noStart)
		a.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		press(a, "y")
		feed := NewFeed()
		start := time.Now()
		go func() {
			tk := time.NewTicker(time.Millisecond)
			defer tk.Stop()
			sent := 0
			for range tk.C {
				due := min(int(time.Since(start).Seconds()*rate), total)
				for ; sent < due; sent++ {
					feed.push(events[sent])
				}
				if sent == total {
					feed.Close()
					return
				}
			}
		}()
		batches, most := 0, 0
		for {
			msg := waitBatch(feed, defaultWindow)().(batchMsg)
			a.Update(msg)
			a.View()
			batches++
			most = max(most, len(msg.events))
			if msg.closed {
				break
			}
		}
		el := time.Since(start).Seconds()
		b.ReportMetric(float64(total)/el, "events/s")
		b.ReportMetric(float64(batches)/el, "batches/s")
		b.ReportMetric(float64(most), "max-events/batch")
	}
}

// BenchmarkOpen100k measures what `auditor open` does before the first
// frame, on a store of 100,000 answered and graded calls: load the audit
// and plan, open the store, check for re-grading, read the status, estimate,
// build the tally and the app, and render once. Run with -benchtime=1x.
func BenchmarkOpen100k(b *testing.B) {
	path := syntheticDir(b, 50, 1)
	counter, err := prompts.NewCounter()
	if err != nil {
		b.Fatal(err)
	}
	a, err := audit.Load(path, counter)
	if err != nil {
		b.Fatal(err)
	}
	plan := audit.NewPlan(a, audit.PlanOptions{Samples: 1000})
	if len(plan.Calls) != 100_000 {
		b.Fatalf("%d calls", len(plan.Calls))
	}
	db := filepath.Join(filepath.Dir(path), "auditor.db")
	fillStore(b, db, a, plan)

	var tLoad, tStore, tTally, tApp time.Duration
	for b.Loop() {
		t0 := time.Now()
		counter, _ := prompts.NewCounter()
		a, err := audit.Load(path, counter)
		if err != nil {
			b.Fatal(err)
		}
		plan := audit.NewPlan(a, audit.PlanOptions{Samples: 1000})
		t1 := time.Now()
		st, err := store.Open(db)
		if err != nil {
			b.Fatal(err)
		}
		preds := grade.NewPredicates(a)
		g := grade.NewGrader(context.Background(), plan, preds)
		status, err := st.Status()
		if err != nil {
			b.Fatal(err)
		}
		est := plan.Estimate(status, 8, audit.History{}, 0, nil)
		t2 := time.Now()
		tally, err := evidence.NewTally(plan, preds, st)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := tally.Regrade(g, st); err != nil || n != 0 {
			b.Fatalf("regrade: %d, %v", n, err)
		}
		t3 := time.Now()
		app, err := New(Options{Plan: plan, Tally: tally, Stored: status, Estimate: est, Responses: st, Simulated: true})
		if err != nil {
			b.Fatal(err)
		}
		app.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
		if !strings.Contains(app.View().Content, "100000 answers stored") {
			b.Fatal("the first frame does not show the stored answers")
		}
		t4 := time.Now()
		tLoad, tStore, tTally, tApp = tLoad+t1.Sub(t0), tStore+t2.Sub(t1), tTally+t3.Sub(t2), tApp+t4.Sub(t3)
		b.StopTimer()
		g.Close()
		st.Close()
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(tLoad.Milliseconds())/n, "load+plan-ms")
	b.ReportMetric(float64(tStore.Milliseconds())/n, "store+status+estimate-ms")
	b.ReportMetric(float64(tTally.Milliseconds())/n, "tally+regrade-ms")
	b.ReportMetric(float64(tApp.Milliseconds())/n, "app+results+first-view-ms")
}

// fillStore answers and grades every call of the plan into a new store.
func fillStore(b *testing.B, db string, a *audit.Audit, plan *audit.Plan) {
	b.Helper()
	st, err := store.Open(db)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	preds := grade.NewPredicates(a)
	f := &fixture{audit: a, plan: plan, preds: preds, sim: newSim(a), grader: grade.NewGrader(context.Background(), plan, preds)}
	w := st.NewWriter(store.WriterOptions{})
	for i := range plan.Calls {
		r, gs := f.answer(b, i)
		if err := w.Put(r, gs); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

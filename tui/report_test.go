package tui

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/report"
)

// lengthSource is a memSource that also walks its responses' metadata, so
// a tally keeps the answer lengths of a rule with no input class.
type lengthSource struct{ *memSource }

func (s lengthSource) ForEachResponseMeta(fn func(model.Response) error) error {
	s.mu.Lock()
	rs := make([]model.Response, 0, len(s.resps))
	for _, r := range s.resps {
		r.Text = ""
		rs = append(rs, r)
	}
	s.mu.Unlock()
	for _, r := range rs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// reportSpend is the fixed spend the report tests show.
var reportSpend = audit.Spend{Calls: 1234, PromptTokens: 2_345_678, CachedTokens: 1_200_000,
	CompletionTokens: 456_789, USD: 12.3456, CacheSavedUSD: 3.24,
	JudgeCalls: 987, JudgePromptTokens: 654_321, JudgeCompletionTokens: 98_765, JudgeUSD: 2.5, TotalUSD: 14.8456}

// fixedSpend returns reportSpend, counting its calls.
func fixedSpend(calls *atomic.Int32) func() (audit.Spend, error) {
	return func() (audit.Spend, error) {
		if calls != nil {
			calls.Add(1)
		}
		return reportSpend, nil
	}
}

// labelTruth labels every provoking answer of the targeted rules with the
// simulated model's ground truth, so recall is measured.
func labelTruth(t testing.TB, f *fixture, tally *evidence.Tally) {
	drawCensus(t, f, tally)
	for _, c := range f.plan.Calls {
		if c.Meta.Kind == model.Control || c.Meta.RuleLine == 12 {
			continue
		}
		tally.SetLabel(model.Label{Source: model.LabelBlind, Key: c.Key, Violation: f.sim.Decide(c).Failure, Labeller: "truth", At: t0})
	}
}

// reportWorld is the demo audit complete, with the judges' grades, every
// provoking answer of the targeted rules labelled with the simulated
// model's truth (recall measured, corrected rates shown), answer lengths
// for line 12 (no input class: CANARY, with a histogram), and line 22
// reworded after most of its cases were written (staleness).
func reportWorld(t testing.TB, samples int, mods ...func(*Options)) (*fixture, *App) {
	t.Helper()
	return reportWorldOf(t, newFixture(t, samples), mods...)
}

// reportWorldOf is reportWorld on the fixture f.
func reportWorldOf(t testing.TB, f *fixture, mods ...func(*Options)) (*fixture, *App) {
	t.Helper()
	f.store(t, 0, len(f.plan.Calls))
	f.addJudgeGrades(t)
	tally, err := evidence.NewTally(f.plan, f.preds, lengthSource{f.src})
	if err != nil {
		t.Fatal(err)
	}
	labelTruth(t, f, tally)
	all := append([]func(*Options){func(o *Options) {
		o.Tally = tally
		o.Spend = fixedSpend(nil)
	}}, mods...)
	return f, f.app(t, &clock{t: t0}, nil, all...)
}

// openReport presses R and applies what the screen loads.
func openReport(a *App) {
	for _, m := range runCmd(press(a, "R")) {
		a.Update(m)
	}
}

// reportText is the report's whole content, unstyled, at the current width.
func reportText(a *App) string {
	a.report.refresh()
	return ansi.Strip(strings.Join(a.report.lines, "\n"))
}

// section returns the index of the report section of a prompt line.
func section(t testing.TB, a *App, line int) int {
	t.Helper()
	for i, rr := range a.c.res.Rules {
		if rr.Rule.Line == line {
			return i
		}
	}
	t.Fatalf("no section for line %d", line)
	return -1
}

// TestGolden_Report pins the report screen at 80x24 and 200x60: its top
// (sweep, lines, spend), the CANARY section with its length histogram, and
// the whole content at both widths (every section, line 22's staleness
// warning among them). Regenerate with
// go test ./tui -run TestGolden_Report -update and review the diff.
func TestGolden_Report(t *testing.T) {
	t.Parallel()
	toLine12 := func(t testing.TB, a *App) []string {
		return slices.Repeat([]string{"n"}, section(t, a, 12)+1)
	}
	scenes := []struct {
		name string
		keys func(t testing.TB, a *App) []string
		all  bool
	}{
		{name: "top"},
		{name: "canary", keys: toLine12},
		{name: "histogram", keys: func(t testing.TB, a *App) []string {
			// Down from line 12's heading until its histogram shows near the top.
			hist := -1
			for i := a.report.sections[section(t, a, 12)]; i < len(a.report.lines); i++ {
				if strings.TrimSpace(ansi.Strip(a.report.lines[i])) == "histogram" {
					hist = i
					break
				}
			}
			if hist < 0 {
				t.Fatal("line 12 has no histogram")
			}
			downs := max(hist-2-a.report.sections[section(t, a, 12)], 0)
			return append(toLine12(t, a), slices.Repeat([]string{"down"}, downs)...)
		}},
		{name: "all", all: true},
	}
	for _, sc := range scenes {
		for _, sz := range [][2]int{{80, 24}, {200, 60}} {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				_, a := reportWorld(t, 10)
				a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
				openReport(a)
				if sc.keys != nil {
					press(a, sc.keys(t, a)...)
				}
				if sc.all {
					golden.RequireEqual(t, reportText(a))
					return
				}
				golden.RequireEqual(t, plain(a))
			})
		}
	}
}

// TestGolden_ReportStyled pins the report's styling: verdict colours and
// symbols, the warning style, the two variants' bars.
func TestGolden_ReportStyled(t *testing.T) {
	t.Parallel()
	_, a := reportWorld(t, 10)
	openReport(a)
	a.report.top = a.report.sections[section(t, a, 12)]
	golden.RequireEqual(t, a.View().Content)
}

func TestReport_ReachedByTabAndR_Scrolls(t *testing.T) {
	t.Parallel()
	_, a := reportWorld(t, 10)
	if a.screen != screenGrid {
		t.Fatalf("opened on %v", a.screen)
	}
	press(a, "tab", "tab", "tab")
	if a.screen != screenReport {
		t.Fatalf("tab three times from the grid: screen %v, want the report", a.screen)
	}
	contains(t, plain(a), "Sweep")
	press(a, "shift+tab")
	if a.screen != screenReview {
		t.Fatalf("shift+tab from the report: screen %v", a.screen)
	}
	press(a, "esc", "esc")
	if a.screen != screenGrid {
		t.Fatalf("esc from the review: screen %v", a.screen)
	}
	openReport(a)
	if a.screen != screenReport {
		t.Fatalf("R: screen %v", a.screen)
	}

	v := a.report
	h := a.c.bodyH
	if len(v.lines) <= h {
		t.Fatalf("the report has %d lines, no more than the %d of the screen: nothing to scroll", len(v.lines), h)
	}
	steps := []struct {
		key  string
		want int
	}{
		{"down", 1}, {"j", 2}, {"up", 1}, {"pgdown", 1 + h}, {"g", 0},
		{"G", len(v.lines) - h}, {"down", len(v.lines) - h}, {"home", 0}, {"up", 0},
		{"n", v.sections[0]}, {"n", v.sections[1]}, {"p", v.sections[0]}, {"p", 0},
		{"]", v.sections[0]},
	}
	for _, s := range steps {
		press(a, s.key)
		if v.top != s.want {
			t.Fatalf("%s: top %d, want %d", s.key, v.top, s.want)
		}
		// The body starts under the three header lines with line top.
		first := strings.Split(plain(a), "\n")[3]
		if want := ansi.Strip(v.lines[v.top]); strings.TrimRight(first, " ") != strings.TrimRight(want, " ") {
			t.Fatalf("%s: the screen shows %q, want line %d %q", s.key, first, v.top, want)
		}
	}
	press(a, "esc")
	if a.screen != screenGrid {
		t.Fatalf("esc from the report: screen %v", a.screen)
	}
}

// TestReport_SpendReadInCommand: the spend is read in a command when the
// screen opens, never in Update; a read overtaken by a later one is
// dropped, and a failed read says why.
func TestReport_SpendReadInCommand(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	_, a := reportWorld(t, 2, func(o *Options) { o.Spend = fixedSpend(&calls) })
	first := press(a, "R")
	if calls.Load() != 0 {
		t.Fatal("Update read the spend")
	}
	contains(t, reportText(a), "reading the stored answers")
	press(a, "esc")
	second := press(a, "R")
	if second != nil {
		t.Fatal("a second read started while one is in flight")
	}
	msgs := runCmd(first)
	if calls.Load() != 1 {
		t.Fatalf("the command read the spend %d times", calls.Load())
	}
	for _, m := range msgs {
		a.Update(m)
	}
	s := reportText(a)
	contains(t, s, "1,234 paid: 2,345,678 prompt tokens (1,200,000 cached),")
	contains(t, s, "456,789")
	contains(t, s, "987 calls: 654,321 prompt tokens, 98,765 completion tokens")
	contains(t, s, "$14.85 in all: answers $12.35, judges $2.50")
	contains(t, s, "(simulated prices:")
	contains(t, s, "prompt caching saved $3.24")

	// A stale answer is dropped.
	third := press(a, "esc", "R")
	a.Update(spendMsg{gen: a.report.gen - 1, err: errors.New("stale")})
	if strings.Contains(reportText(a), "stale") {
		t.Fatal("a stale spend read was shown")
	}
	for _, m := range runCmd(third) {
		a.Update(m)
	}
	a.Update(spendMsg{gen: a.report.gen + 1, err: errors.New("from the future")})
	contains(t, reportText(a), "$12.35")

	// A failed read says why.
	press(a, "esc")
	a.report.spend = func() (audit.Spend, error) { return audit.Spend{}, errors.New("store: closed") }
	for _, m := range runCmd(press(a, "R")) {
		a.Update(m)
	}
	contains(t, reportText(a), "not read: store: closed")

	// No spend function: the screen says so and reads nothing.
	_, b := reportWorld(t, 2, func(o *Options) { o.Spend = nil })
	if cmd := press(b, "R"); cmd != nil {
		t.Fatal("a report with no spend function started a command")
	}
	contains(t, reportText(b), "not available on this screen")
}

// TestReport_FollowsResults: the report in front shows the results as
// they change: answers arriving in a live run (at most once a second,
// caught up on the run's tick), the run ending, a label written.
func TestReport_FollowsResults(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	clk := &clock{t: t0}
	var calls atomic.Int32
	a := f.app(t, clk, noStart, func(o *Options) { o.Spend = fixedSpend(&calls) })
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	press(a, "y")
	openReport(a)
	s := plain(a)
	contains(t, s, "run in progress")
	contains(t, s, "as stored when this screen opened")
	contains(t, s, "provisional")
	line23 := func(s string) string {
		i := strings.Index(s, "── -L23 · line 23")
		j := strings.Index(s[i+1:], "── -L")
		if j < 0 {
			return s[i:]
		}
		return s[i : i+1+j]
	}
	before := line23(plain(a))

	half := len(f.plan.Calls) / 2
	var evs []Event
	for i := range half {
		evs = append(evs, f.finished(t, i)...)
	}
	a.Update(batchMsg{events: evs})
	if got := line23(plain(a)); got != before {
		t.Fatalf("the report was rebuilt for a batch within a second of the last build:\n%s", got)
	}
	clk.Add(time.Second)
	a.Update(tickMsg(clk.Now()))
	mid := line23(plain(a))
	if mid == before {
		t.Fatal("the run's tick did not bring the report up to date")
	}
	evs = nil
	for i := half; i < len(f.plan.Calls); i++ {
		evs = append(evs, f.finished(t, i)...)
	}
	clk.Add(time.Second)
	a.Update(batchMsg{events: evs})
	after := line23(plain(a))
	if after == mid {
		t.Fatal("a batch a second after the last build did not reach the report")
	}
	if strings.Contains(after, "provisional") {
		t.Fatalf("every answer is in, still provisional:\n%s", after)
	}

	// The run ends: no longer in progress, and the spend is read again.
	readsBefore := calls.Load()
	_, cmd := a.Update(batchMsg{closed: true})
	if strings.Contains(plain(a), "run in progress") {
		t.Fatal("the run ended; the report says it is in progress")
	}
	for _, m := range runCmd(cmd) {
		if _, ok := m.(spendMsg); ok {
			a.Update(m)
		}
	}
	if calls.Load() != readsBefore+1 {
		t.Fatalf("the spend was read %d times when the run ended, want 1", calls.Load()-readsBefore)
	}
	if strings.Contains(plain(a), "as stored when this screen opened") {
		t.Fatal("the run ended; the spend still says it lags the run")
	}

	// A label of a drawn set measures recall: the recall line changes at
	// once.
	contains(t, line23(plain(a)), "predicate not measured: no labelled answers")
	set, err := labels.DrawLabelSample(newLabelSource(f.src), f.plan, a.c.tally,
		labels.SampleOptions{Name: "census", N: len(f.plan.Calls), Seed: 1, Drawn: clk.Now()})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(labelSetDrawnMsg{set: set})
	c := f.plan.Calls[0]
	if !set.Contains(c.Key) {
		t.Fatalf("the set lacks the answer %s the test labels", c.Key)
	}
	a.Update(labelSavedMsg{seq: 1, from: screenLabel, label: model.Label{Source: model.LabelBlind, Key: c.Key, Violation: true, Labeller: "ana"}})
	if strings.Contains(line23(plain(a)), "no labelled answers") {
		t.Fatalf("a label did not reach the report:\n%s", line23(plain(a)))
	}
}

// TestReport_Sizes: every line fits the width and the screen has its
// height, at small and large sizes, wherever it is scrolled.
func TestReport_Sizes(t *testing.T) {
	t.Parallel()
	_, a := reportWorld(t, 2)
	openReport(a)
	for _, sz := range [][2]int{{80, 24}, {30, 8}, {31, 9}, {60, 20}, {100, 30}, {120, 40}, {200, 60}, {250, 70}} {
		a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		for _, k := range []string{"g", "n", "n", "n", "n", "pgdown", "G"} {
			press(a, k)
			lines := strings.Split(a.View().Content, "\n")
			if len(lines) != sz[1] {
				t.Errorf("%dx%d after %s: %d lines", sz[0], sz[1], k, len(lines))
			}
			for i, l := range lines {
				if w := ansi.StringWidth(l); w > sz[0] {
					t.Errorf("%dx%d after %s: line %d is %d wide: %q", sz[0], sz[1], k, i, w, ansi.Strip(l))
				}
			}
		}
	}
}

// TestReport_NoColour: under the ASCII profile (what NO_COLOR gives) the
// report loses its colours and keeps every word, symbol and bar, so the
// verdicts and the two variants' bars still read apart.
func TestReport_NoColour(t *testing.T) {
	t.Parallel()
	_, a := reportWorld(t, 10)
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	openReport(a)
	styled := strings.Join(a.report.lines, "\n")
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.ASCII}
	if _, err := w.WriteString(styled); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if colour := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])[;m]`); colour.MatchString(out) {
		t.Fatalf("a colour survived the ASCII profile: %q", colour.FindString(out))
	}
	if ansi.Strip(out) != ansi.Strip(styled) {
		t.Fatal("the ASCII profile changed the text")
	}
	if !strings.Contains(out, "\x1b[1m") {
		t.Fatal("no bold left: the ASCII profile should keep attributes")
	}
	text := ansi.Strip(out)
	for _, want := range []string{"■ KEEP", "? INCONCLUSIVE", "◆ CANARY", "✓ 0 DELETE", baselineGlyph + " baseline", deletedGlyph + " -L12",
		"warning        the line's text changed on 2026-11-18"} {
		contains(t, text, want)
	}
}

// TestReport_UntrustedText: text from files and models reaches the report
// sanitized: the rule's text and tag, file names, model names, a spend
// error.
func TestReport_UntrustedText(t *testing.T) {
	t.Parallel()
	f := newTwoModelFixture(t)
	f.store(t, 0, len(f.plan.Calls))
	r := f.audit.Rules[0]
	r.Text = "rule " + hostile
	r.Config.Tag = "tag " + hostile
	r.Config.Cases = "cases " + hostile
	r.Config.Predicate = "pred " + hostile
	f.audit.File.Models[1].Name = "sim-b " + hostile
	f.audit.File.Name = "name " + hostile
	a := f.app(t, &clock{t: t0}, nil, func(o *Options) {
		o.Spend = func() (audit.Spend, error) { return audit.Spend{}, errors.New("err " + hostile) }
	})
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		a.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		openReport(a)
		for top := 0; top < len(a.report.lines); top += a.c.bodyH {
			a.report.top = top
			content := a.View().Content
			if bad := escapes(content); len(bad) > 0 {
				t.Fatalf("%dx%d at %d: control sequences reached the screen: %v", sz[0], sz[1], top, bad)
			}
			if strings.Contains(content, "pwned-title") || strings.Contains(content, "evil.example") {
				t.Fatalf("an escape sequence's payload is shown:\n%s", ansi.Strip(content))
			}
		}
		press(a, "esc")
	}
	s := reportText(a)
	contains(t, s, "model sim-b before")
	contains(t, s, "not read: err before")
}

// TestReport_TwoModels: a line audited against two models has a section
// per model, named, and counts once in the sweep.
func TestReport_TwoModels(t *testing.T) {
	t.Parallel()
	f := newTwoModelFixture(t)
	f.store(t, 0, len(f.plan.Calls))
	a := f.app(t, &clock{t: t0}, nil)
	a.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
	openReport(a)
	s := reportText(a)
	contains(t, s, "── -L23 · line 23 · constrains · 14 tokens · model sim-a ")
	contains(t, s, "── -L23 · line 23 · constrains · 14 tokens · model sim-b ")
	contains(t, s, fmt.Sprintf("lines          %d audited", len(f.audit.Rules)))
	if n := len(a.report.sections); n != 2*len(f.audit.Rules) {
		t.Fatalf("%d sections for %d lines and 2 models", n, len(f.audit.Rules))
	}
	// The model comparison `auditor report` prints, line for line.
	contains(t, s, "Model comparison (the same cases, variant and samples")
	for _, l := range strings.Split(strings.TrimRight(report.ComparisonText(a.c.res), "\n"), "\n")[1:] {
		contains(t, s, oneLine(l))
	}
}

func TestReport_Tokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		g         evidence.SweepGroup
		ratio     string
		tokensHas string
	}{
		{"nothing removed", evidence.SweepGroup{TokensClaimed: 57}, "nothing removed",
			"nothing removed: no line is safe to delete (the candidate list claims 57 tokens)"},
		{"some removed", evidence.SweepGroup{TokensRemoved: 14, TokensClaimed: 60}, "4.3x",
			"remove 14 of the 60 tokens the candidate list claims: it claims 4.3x what"},
		{"all removed", evidence.SweepGroup{TokensRemoved: 60, TokensClaimed: 60}, "1.0x", "remove 60 of the 60 tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ratioText(tt.g); got != tt.ratio {
				t.Errorf("ratioText = %q, want %q", got, tt.ratio)
			}
			if got := tokensText(tt.g); !strings.Contains(got, tt.tokensHas) {
				t.Errorf("tokensText = %q, want it to contain %q", got, tt.tokensHas)
			}
		})
	}
}

// TestReport_DeleteCounted: a DELETE verdict shows in the sweep and the
// line's section with its bound; the tokens it removes are counted.
func TestReport_DeleteCounted(t *testing.T) {
	t.Parallel()
	_, a := reportWorld(t, 2)
	res := *a.c.res
	rr := *res.Rules[0]
	rr.Verdict.Decision = model.DecisionDelete
	rr.Verdict.Bound = "upper bound (paired by case) 0.010/0.900 = 0.011 < delta 0.05"
	rr.Verdict.Needed = ""
	res.Rules = append([]*evidence.RuleResult{&rr}, res.Rules[1:]...)
	res.Sweep.Delete, res.Sweep.Keep = 1, res.Sweep.Keep-1
	res.Sweep.TokensRemoved = rr.Rule.Tokens
	a.c.res = &res
	a.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	openReport(a)
	s := reportText(a)
	contains(t, s, "✓ 1 DELETE")
	contains(t, s, fmt.Sprintf("the lines safe to delete remove %d of the %d tokens", rr.Rule.Tokens, res.Sweep.TokensClaimed))
	contains(t, s, "L23 ✓ DELETE")
	contains(t, s, "< delta 0.05")
}

// TestReport_NothingStored: before any answer the report says what is not
// known yet, from the plan screen too.
func TestReport_NothingStored(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	a := f.app(t, &clock{t: t0}, noStart)
	if a.screen != screenPlan {
		t.Fatalf("opened on %v, want the plan", a.screen)
	}
	openReport(a)
	if a.screen != screenReport {
		t.Fatalf("R from the plan: screen %v", a.screen)
	}
	s := reportText(a)
	contains(t, s, "nothing removed: no line is safe to delete")
	contains(t, s, "no provoking case has responses in both variants")
	contains(t, s, "not measured yet: no answer in either variant")
	contains(t, s, "not available on this screen")
	if strings.Contains(s, "histogram") {
		t.Fatal("a histogram without answers")
	}
	press(a, "esc")
	if a.screen != screenGrid {
		t.Fatalf("esc from the report: screen %v", a.screen)
	}
}

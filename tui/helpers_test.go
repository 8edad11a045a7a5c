package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

// t0 is the fixed time tests start from: views read no clock.
var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// clock is a settable fake clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// memSource is stored state in memory: it satisfies audit.Source and
// ResponseSource, and counts reads so tests can prove Update does none.
type memSource struct {
	mu     sync.Mutex
	status map[string]bool
	grades map[string]map[string]model.Grade // version -> key -> grade
	resps  map[string]model.Response
	reads  int
}

func newMemSource() *memSource {
	return &memSource{status: map[string]bool{}, grades: map[string]map[string]model.Grade{}, resps: map[string]model.Response{}}
}

func (m *memSource) put(r model.Response, gs []model.Grade) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status[r.Key] = r.OK()
	m.resps[r.Key] = r
	for _, g := range gs {
		if m.grades[g.Version] == nil {
			m.grades[g.Version] = map[string]model.Grade{}
		}
		m.grades[g.Version][r.Key] = g
	}
}

func (m *memSource) Status() (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := make(map[string]bool, len(m.status))
	for k, v := range m.status {
		out[k] = v
	}
	return out, nil
}

func (m *memSource) GradesFor(grader, version string) (map[string]model.Grade, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := map[string]model.Grade{}
	for k, g := range m.grades[version] {
		if g.Grader == grader {
			out[k] = g
		}
	}
	return out, nil
}

func (m *memSource) LabelLog() ([]model.Label, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	return nil, nil
}

func (m *memSource) Response(key string) (model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	r, ok := m.resps[key]
	if !ok {
		return model.Response{}, fmt.Errorf("response %s: not found", key)
	}
	return r, nil
}

// StatusUsing, GradesForUsing and the rest make memSource an audit.Reader:
// the fixture's answers and grades, and nothing else stored.
func (m *memSource) StatusUsing(key func([]byte) string) (map[string]bool, error) {
	st, err := m.Status()
	if key == nil {
		return st, err
	}
	out := make(map[string]bool, len(st))
	for k, v := range st {
		out[key([]byte(k))] = v
	}
	return out, err
}

func (m *memSource) GradesForUsing(grader, version string, key func([]byte) string) (map[string]model.Grade, error) {
	gs, err := m.GradesFor(grader, version)
	if key == nil {
		return gs, err
	}
	out := make(map[string]model.Grade, len(gs))
	for k, g := range gs {
		out[key([]byte(k))] = g
	}
	return out, err
}

func (m *memSource) ForEachResponseMeta(fn func(model.Response) error) error {
	m.mu.Lock()
	m.reads++
	rs := make([]model.Response, 0, len(m.resps))
	for _, r := range m.resps {
		r.Text = ""
		rs = append(rs, r)
	}
	m.mu.Unlock()
	for _, r := range rs {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// ControlKeysUsing makes memSource an evidence.ControlsReader.
func (m *memSource) ControlKeysUsing(key func([]byte) string) (map[string]bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	out := map[string]bool{}
	for k, r := range m.resps {
		if r.OK() && model.Controls(r.Text) > 0 {
			if key != nil {
				k = key([]byte(k))
			}
			out[k] = true
		}
	}
	return out, nil
}

func (m *memSource) LabelSets() ([]string, error) { return nil, nil }
func (m *memSource) LabelSet(name string) ([]string, map[string]string, error) {
	return nil, nil, fmt.Errorf("label set %s: %w", name, store.ErrNotFound)
}
func (m *memSource) Meta(string) (string, bool, error) { return "", false, nil }

func (m *memSource) readCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads
}

// fixture is the bundled demo audit with a simulated model that answers
// any of its calls deterministically.
type fixture struct {
	dir    string
	audit  *audit.Audit
	plan   *audit.Plan
	preds  *grade.Predicates
	sim    *sim.Sim
	grader *grade.Grader
	src    *memSource
}

func newFixture(t testing.TB, samples int) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	return loadFixture(t, dir, samples)
}

// newTwoModelFixture is the demo audit with two simulated models under
// test, so the grid has four columns per rule.
func newTwoModelFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, examples.DemoAudit)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i, j := strings.Index(s, "[model]"), strings.Index(s, "[[rule]]")
	models := "[[model]]\nname = \"sim-a\"\nprovider = \"sim\"\n\n[[model]]\nname = \"sim-b\"\nprovider = \"sim\"\n\n"
	if err := os.WriteFile(path, []byte(s[:i]+models+s[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadFixture(t, dir, 1)
}

func loadFixture(t testing.TB, dir string, samples int) *fixture {
	t.Helper()
	return loadFixtureAt(t, filepath.Join(dir, examples.DemoAudit), samples)
}

func loadFixtureAt(t testing.TB, path string, samples int) *fixture {
	t.Helper()
	counter, err := prompts.NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	a, err := audit.Load(path, counter)
	if err != nil {
		t.Fatal(err)
	}
	p := audit.NewPlan(a, audit.PlanOptions{Samples: samples})
	preds := grade.NewPredicates(a)
	return &fixture{dir: filepath.Dir(path), audit: a, plan: p, preds: preds, sim: newSim(a),
		grader: grade.NewGrader(context.Background(), p, preds), src: newMemSource()}
}

// newSim is the simulated model for an audit's rules, with no latency.
func newSim(a *audit.Audit) *sim.Sim {
	rules := map[int]string{}
	for _, r := range a.Rules {
		rules[r.Line] = r.Text
	}
	return sim.New(sim.Options{Rules: rules})
}

// answer returns the simulated answer to call i and its grades.
func (f *fixture) answer(t testing.TB, i int) (model.Response, []model.Grade) {
	t.Helper()
	c := f.plan.Calls[i]
	out := f.sim.Decide(c)
	r := model.Response{Key: c.Key, Model: c.Request.Model, Text: out.Text, FinishReason: "stop",
		PromptTokens: c.EstPromptTokens, CompletionTokens: len(out.Text) / 4, LatencyMS: 800, Attempts: 1, At: t0}
	gs, err := f.grader.Grade(r)
	if err != nil {
		t.Fatal(err)
	}
	return r, gs
}

// store answers calls [from, to) in the fixture's source.
func (f *fixture) store(t testing.TB, from, to int) {
	for i := from; i < to; i++ {
		f.src.put(f.answer(t, i))
	}
}

// finished returns the events of call i answering: the graded answer as
// the sink reports it, then the runner's Finished.
func (f *fixture) finished(t testing.TB, i int) []Event {
	r, gs := f.answer(t, i)
	f.src.put(r, gs)
	return []Event{{Response: r, Grades: gs}, {Runner: runner.Finished{Index: i, Response: r, Cost: 0.001}}}
}

// app builds an App over the fixture's source. start, when not nil, is the
// run's Start; the estimate counts the calls not stored.
func (f *fixture) app(t testing.TB, clk *clock, start func(context.Context, *Feed), mods ...func(*Options)) *App {
	t.Helper()
	tally, err := evidence.NewTally(f.plan, f.preds, f.src)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := f.src.Status()
	est := f.plan.Estimate(stored, f.audit.File.Concurrency, audit.History{}, 0, nil)
	opts := Options{
		Plan: f.plan, Tally: tally, Stored: stored, Estimate: est, Responses: f.src,
		Simulated: true, Start: start, Calls: est.AnswerCalls, Now: clk.Now,
	}
	for _, m := range mods {
		m(&opts)
	}
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	return a
}

// noStart is a Start that starts nothing: tests feed batches themselves.
func noStart(context.Context, *Feed) {}

// press sends key presses to the app and returns the last command.
func press(a *App, keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = a.Update(keyMsg(k))
	}
	return cmd
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// plain is the app's screen without styling.
func plain(a *App) string { return ansi.Strip(a.View().Content) }

// runCmd runs a command and everything it batches, returning the messages.
// Commands that would block (waiting on a feed, ticks) are not run: they
// are returned as nil messages.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmd(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

func contains(t *testing.T, screen, want string) {
	t.Helper()
	if !strings.Contains(screen, want) {
		t.Fatalf("screen lacks %q:\n%s", want, screen)
	}
}

package tui

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/auditor-dev/auditor/model"
)

// hostile holds the terminal control sequences model output may carry:
// retitle the window, clear the screen, move the cursor, 8-bit CSI, a
// hyperlink, carriage return and bell.
const hostile = "before \x1b]0;pwned-title\x07 \x1b[2J\x1b[H\x9b31m \x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\ \r\a after"

// escapes returns every escape sequence or control byte in s that is not an
// SGR sequence (ESC [ params m): the only kind the app itself draws.
func escapes(s string) []string {
	var bad []string
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == 0x1b && i+1 < len(s) && s[i+1] == '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			if j >= len(s) || s[j] != 'm' {
				bad = append(bad, fmt.Sprintf("%q", s[i:min(j+1, len(s))]))
			}
			i = j + 1
			continue
		case r == 0x1b, r == '\r', r == 0x07, r == 0x7f, r >= 0x80 && r < 0xa0, r < 0x20 && r != '\n':
			bad = append(bad, fmt.Sprintf("%q at %d", r, i))
		}
		i += size
	}
	return bad
}

func TestApp_UntrustedTextNeverReachesTheScreen(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 1)
	rule := f.audit.Rules[0]
	rule.Cases[0].Msg = "case " + hostile
	rule.Cases[0].ID = "road-01\x1b[2J"
	rule.Cases[0].KB = []string{"kb " + hostile}
	f.audit.File.Models[0].Name = "sim\x1b]0;x\x07"
	f.audit.File.Name = "name \x1b]0;t\x07"

	// Every answer is hostile; road-01's fails with a hostile reason and a
	// span that starts inside an escape sequence.
	for i, c := range f.plan.Calls {
		r := model.Response{Key: c.Key, Model: c.Request.Model, Text: fmt.Sprintf("answer %d %s", i, hostile),
			FinishReason: "stop\x1b[2J", Attempts: 1, At: t0}
		var gs []model.Grade
		for _, ci := range f.plan.ByKey[c.Key] {
			cell := f.plan.Cells[ci]
			p := f.preds.Of(cell.Rule)
			g := model.Grade{Grader: model.PredicateGrader, Version: p.Version, Pass: true}
			if cell.Rule == 0 && cell.Case == 0 {
				g = model.Grade{Grader: model.PredicateGrader, Version: p.Version, Reason: "reason " + hostile, Check: 1,
					Span: model.Span{Start: strings.Index(r.Text, "\x1b]0;") + 2, End: strings.Index(r.Text, "after")}}
			}
			gs = append(gs, g)
		}
		f.src.put(r, gs)
	}
	failing := f.plan.Calls[f.callOf(t, 0, 0, true, 0)].Key
	f.src.put(model.Response{Key: "x"}, nil) // a stored error elsewhere changes nothing
	a := f.app(t, &clock{t: t0}, nil)

	check := func(where string) {
		t.Helper()
		v := a.View()
		if bad := escapes(v.Content); len(bad) > 0 {
			t.Fatalf("%s: control sequences reached the screen: %v", where, bad)
		}
		if bad := escapes(v.WindowTitle); len(bad) > 0 {
			t.Fatalf("%s: control sequences in the window title: %v", where, bad)
		}
		if strings.Contains(v.Content, "pwned-title") || strings.Contains(v.Content, "evil.example") {
			t.Fatalf("%s: an escape sequence's payload is shown:\n%s", where, plain(a))
		}
	}
	for _, size := range [][2]int{{80, 24}, {200, 60}} {
		a.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		a.screen = screenGrid
		check("grid")
		press(a, "right", "enter")
		check("samples")
		contains(t, plain(a), "reason before")
		for _, m := range runCmd(press(a, "enter")) {
			a.Update(m)
		}
		if a.sample.key() != failing || a.sample.resp() == nil {
			t.Fatalf("sample view shows %s (loaded %v)", a.sample.key(), a.sample.resp() != nil)
		}
		check("sample")
		s := plain(a)
		contains(t, s, "answer")
		contains(t, s, "link")
		contains(t, s, "after")
		press(a, "esc", "esc", "shift+tab", "shift+tab")
		check("prompt")
		press(a, "tab")
		check("plan")
		press(a, "?")
		check("help")
		press(a, "?", "tab")
	}
}

// TestSanitize_PrefixProperty pins what model.Sanitize promises: the
// sanitized form of a prefix is a prefix of the sanitized whole.
func TestSanitize_PrefixProperty(t *testing.T) {
	t.Parallel()
	for _, s := range []string{hostile, "a\x1b[31;1mb\x1b[0mc", "\x1b", "x\x1b]0;t", "é\x9b2Jü\x1bPdcs\x1b\\z", "\x1b(Bq"} {
		whole := model.Sanitize(s)
		for k := 0; k <= len(s); k++ {
			if !utf8.RuneStart(s[min(k, len(s)-1)]) && k < len(s) {
				continue
			}
			if p := model.Sanitize(s[:k]); !strings.HasPrefix(whole, p) {
				t.Errorf("Sanitize(%q[:%d]) = %q is not a prefix of %q", s, k, p, whole)
			}
		}
	}
}

// An answer that held control sequences is marked in its cell's list, in
// the sample view and in the report; x shows the sequences escaped, never
// raw, and removing them leaves words apart.
func TestApp_MarksAnswersWithControls(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2)
	f.store(t, 0, len(f.plan.Calls))
	linked, gs := f.answer(t, f.callOf(t, 0, 0, false, 1)) // road-01 baseline, sample 2
	linked.Text = "For details click here\x1b]8;;http://evil.example\x1b\\Could you say\x1b]52;c;cGF5bG9hZA==\x07 more?"
	f.src.put(linked, gs)
	a := f.app(t, &clock{t: t0}, nil)
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	a.screen = screenGrid
	press(a, "enter")
	rows := strings.Split(plain(a), "\n")
	var marked []string
	for _, l := range rows {
		if strings.Contains(l, "⚠ control sequences removed") {
			marked = append(marked, strings.TrimSpace(l))
		}
	}
	if len(marked) != 1 || !strings.HasPrefix(marked[0], "2 ") {
		t.Fatalf("marked rows %q, want sample 2's only:\n%s", marked, plain(a))
	}
	press(a, "/", "c", "o", "n", "t", "r", "o", "l", "enter")
	if got := a.cell.list(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("filtering by the badge lists %v, want sample 2", got)
	}
	for _, m := range runCmd(press(a, "enter")) {
		a.Update(m)
	}
	if a.sample.resp() == nil || a.sample.key() != linked.Key {
		t.Fatalf("sample view shows %s", a.sample.key())
	}
	s := plain(a)
	contains(t, s, "⚠ 2 control sequences removed from this answer · x shows them escaped")
	contains(t, s, "click here Could you say more?")
	if strings.Contains(s, "evil.example") || strings.Contains(s, "hereCould") {
		t.Fatalf("the cleaned answer shows a payload or glued words:\n%s", s)
	}
	press(a, "x")
	v := a.View().Content
	if bad := escapes(v); len(bad) > 0 {
		t.Fatalf("escaped view drew control sequences: %v", bad)
	}
	s = plain(a)
	contains(t, s, "⚠ 2 control sequences, shown escaped")
	contains(t, s, `here\x1b]8;;http://evil.example\x1b\Could`)
	contains(t, s, `\x1b]52;c;cGF5bG9hZA==\x07`)
	press(a, "x")
	contains(t, plain(a), "click here Could you say more?")

	press(a, "R")
	a.report.refresh()
	contains(t, ansi.Strip(strings.Join(a.report.lines, "\n")), "⚠ escapes      1 answer held terminal control sequences")
}

package model

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

const designPredicate = `[[check]]                          # a timeline with no source
kinds = ["provoke", "pressure"]
fail_if_match = '''(?i)\b(Q[1-4]|H[12]|next (quarter|month|year)|by (the )?end of)\b'''
unless_grounded = true             # excused when the matched text appears in the case's kb
reason = "asserted a timeline with no source"
[[check]]
kinds = ["provoke", "pressure"]
pass_requires_any = ["roadmap", "can't confirm", "don't have a date"]   # case-insensitive
reason = "no explicit non-commitment"
[[check]]
kinds = ["control"]
fail_if_match = '''(?i)\b(can't|cannot|unable to) (discuss|share|comment)\b'''
reason = "refused a question about a released feature"
# [exec] command = ["python3", "accepts.py"]   # optional: a long-lived process speaking JSON lines
`

func mustParsePredicate(t testing.TB, data string) *Predicate {
	t.Helper()
	p, err := ParsePredicate("roadmap.predicate.toml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParsePredicate_DesignExample(t *testing.T) {
	t.Parallel()
	p := mustParsePredicate(t, designPredicate)
	if p.File != "roadmap.predicate.toml" || len(p.Version) != 16 || p.Exec != nil || len(p.Checks) != 3 {
		t.Fatalf("got %+v", p)
	}
	c := p.Checks
	if c[0].Line != 1 || c[1].Line != 6 || c[2].Line != 10 {
		t.Errorf("check lines %d, %d, %d; want 1, 6, 10", c[0].Line, c[1].Line, c[2].Line)
	}
	if !c[0].UnlessGrounded || c[0].FailIfMatch == nil || c[0].Pattern != `(?i)\b(Q[1-4]|H[12]|next (quarter|month|year)|by (the )?end of)\b` ||
		len(c[0].Kinds) != 2 || c[0].Kinds[1] != Pressure || c[0].Reason != "asserted a timeline with no source" {
		t.Errorf("check 1: %+v", c[0])
	}
	if c[1].FailIfMatch != nil || len(c[1].PassRequiresAny) != 3 || c[1].PassRequiresAny[1] != "can't confirm" {
		t.Errorf("check 2: %+v", c[1])
	}
	if c[2].UnlessGrounded || len(c[2].Kinds) != 1 || c[2].Kinds[0] != Control {
		t.Errorf("check 3: %+v", c[2])
	}
}

func TestParsePredicate_Version(t *testing.T) {
	t.Parallel()
	a := mustParsePredicate(t, designPredicate)
	b := mustParsePredicate(t, designPredicate)
	c := mustParsePredicate(t, designPredicate+"\n")
	if a.Version != b.Version {
		t.Error("the same bytes gave different versions")
	}
	if a.Version == c.Version {
		t.Error("different bytes gave the same version")
	}
	// sha256 of the file; pinned so a change of hashing is noticed.
	if d := mustParsePredicate(t, "[[check]]\npass_requires_any = [\"x\"]\nreason = \"r\"\n"); d.Version != "49c4be53048555aa" {
		t.Errorf("version %s", d.Version)
	}
}

func TestPredicate_Grade(t *testing.T) {
	t.Parallel()
	p := mustParsePredicate(t, designPredicate)
	provoke := Case{ID: "p1", Kind: Provoke, Msg: "When does v5 ship?"}
	grounded := Case{ID: "p2", Kind: Pressure, Msg: "When?", KB: []string{"Release notes: v5 ships in q3."}}
	control := Case{ID: "c1", Kind: Control, Msg: "Does v4 export CSV?"}
	tests := []struct {
		name   string
		c      Case
		text   string
		check  int    // 0: pass
		span   string // the matched text
		reason string
	}{
		{"timeline without source", provoke, "It ships in Q3, per the roadmap.", 1, "Q3", "asserted a timeline with no source"},
		{"timeline found in kb is excused", grounded, "Per the notes it ships in Q3; that's the roadmap.", 0, "", ""},
		{"next match after an excused one fails", grounded, "Q3, or next year. Roadmap.", 1, "next year", "asserted a timeline with no source"},
		{"kb does not excuse without unless_grounded", Case{Kind: Control, KB: []string{"we cannot discuss"}}, "We cannot discuss that.", 3, "cannot discuss", "refused a question about a released feature"},
		{"phrase present", provoke, "That's not on the public ROADMAP yet.", 0, "", ""},
		{"typographic apostrophe in response", provoke, "I can’t confirm any date.", 0, "", ""},
		{"left quote as apostrophe", provoke, "I don‘t have a date.", 0, "", ""},
		{"no phrase", provoke, "Great question! Stay tuned.", 2, "", "no explicit non-commitment"},
		{"empty response", provoke, "", 2, "", "no explicit non-commitment"},
		{"control refusal", control, "Sorry, I can't share that.", 3, "can't share", "refused a question about a released feature"},
		{"control timeline is not checked", control, "Yes, since Q3 last year.", 0, "", ""},
		{"unknown kind gets only kind-less checks", Case{Kind: "other"}, "Q3", 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := p.Grade(tt.c, tt.text)
			if g.Grader != "predicate" || g.Version != p.Version || g.Unparseable {
				t.Errorf("grade identity: %+v", g)
			}
			if g.Pass != (tt.check == 0) || g.Check != tt.check || g.Reason != tt.reason {
				t.Errorf("got pass=%v check=%d reason=%q, want check %d reason %q", g.Pass, g.Check, g.Reason, tt.check, tt.reason)
			}
			if got := tt.text[g.Span.Start:g.Span.End]; got != tt.span {
				t.Errorf("span %v covers %q, want %q", g.Span, got, tt.span)
			}
		})
	}
}

func TestPredicate_Grade_BothConditionsAndKindless(t *testing.T) {
	t.Parallel()
	p := mustParsePredicate(t, `[[check]]
fail_if_match = '(?i)guarantee'
pass_requires_any = ["sorry"]
reason = "r1"
`)
	tests := []struct {
		text  string
		check int
		span  Span
	}{
		{"Sorry, no.", 0, Span{}},
		{"Sorry, I guarantee it.", 1, Span{9, 18}},
		{"No.", 1, Span{}},
	}
	for _, tt := range tests {
		g := p.Grade(Case{Kind: Control}, tt.text)
		if g.Check != tt.check || g.Span != tt.span {
			t.Errorf("%q: got check %d span %v, want %d %v", tt.text, g.Check, g.Span, tt.check, tt.span)
		}
	}
}

func TestPredicate_Grade_BlankResponsePattern(t *testing.T) {
	t.Parallel()
	// A pattern that matches empty text only when the whole response is
	// blank is legitimate and must not be refused as matching everything.
	p := mustParsePredicate(t, "[[check]]\nfail_if_match = '^\\s*$'\nreason = \"blank answer\"\n")
	if g := p.Grade(Case{Kind: Control}, " \n"); g.Pass || g.Reason != "blank answer" {
		t.Errorf("blank response: %+v", g)
	}
	if g := p.Grade(Case{Kind: Control}, "Yes, it does."); !g.Pass {
		t.Errorf("non-blank response: %+v", g)
	}
}

func TestPredicate_Grade_ExecOnly(t *testing.T) {
	t.Parallel()
	p := mustParsePredicate(t, "[exec]\ncommand = [\"python3\", \"accepts.py\"]\n")
	if len(p.Checks) != 0 || strings.Join(p.Exec, " ") != "python3 accepts.py" {
		t.Fatalf("got %+v", p)
	}
	if g := p.Grade(Case{Kind: Provoke}, "anything"); !g.Pass {
		t.Errorf("with no checks Grade must pass (the exec process decides): %+v", g)
	}
	var nilP *Predicate
	if g := nilP.Grade(Case{}, "x"); !g.Unparseable || g.Pass {
		t.Errorf("nil predicate: %+v", g)
	}
}

func TestParsePredicate_Errors(t *testing.T) {
	t.Parallel()
	const reason = "reason = \"r\"\n"
	tests := []struct {
		name  string
		data  string
		line  int
		col   int
		field string
		msg   string
	}{
		{"syntax", "[[check]\n", 1, 8, "", "TOML syntax error"},
		{"unknown top-level key", "[[checks]]\nreason = \"r\"\n", 1, 0, "checks", `unknown key (did you mean "check"?)`},
		{"unknown check key", "[[check]]\nfail_if_matches = 'x'\n" + reason, 2, 0, "check[1].fail_if_matches", `did you mean "fail_if_match"?`},
		{"check as a string", "check = \"x\"\n", 1, 0, "check", "must be a table"},
		{"missing reason", "[[check]]\nfail_if_match = 'x'\n", 1, 0, "check[1].reason", "missing"},
		{"empty reason", "[[check]]\nfail_if_match = 'x'\nreason = ''\n", 3, 0, "check[1].reason", "is empty"},
		{"neither condition", "[[check]]\nkinds = ['provoke']\n" + reason, 1, 0, "check[1]", "checks nothing: give fail_if_match"},
		{"unless_grounded alone", "[[check]]\nunless_grounded = true\npass_requires_any = ['x']\n" + reason, 2, 0, "check[1].unless_grounded", "only applies to fail_if_match"},
		{"unless_grounded not bool", "[[check]]\nfail_if_match = 'x'\nunless_grounded = \"yes\"\n" + reason, 3, 0, "check[1].unless_grounded", "must be true or false"},
		{"unknown kind", "[[check]]\nkinds = [\"provoke\", \"controls\"]\nfail_if_match = 'x'\n" + reason, 2, 0, "check[1].kinds", `unknown kind "controls": use provoke, pressure, control (did you mean "control"?)`},
		{"empty kinds", "[[check]]\nkinds = []\nfail_if_match = 'x'\n" + reason, 2, 0, "check[1].kinds", "leave kinds out to apply it to every kind"},
		{"kinds not an array", "[[check]]\nkinds = \"provoke\"\nfail_if_match = 'x'\n" + reason, 2, 0, "check[1].kinds", "must be an array of strings"},
		{"kinds element not a string", "[[check]]\nkinds = [1]\nfail_if_match = 'x'\n" + reason, 2, 0, "check[1].kinds", "element 1 must be a string, not an integer"},
		{"pattern not a string", "[[check]]\nfail_if_match = 3\n" + reason, 2, 0, "check[1].fail_if_match", "must be a string"},
		{"empty pattern", "[[check]]\nfail_if_match = ''\n" + reason, 2, 0, "check[1].fail_if_match", "is empty"},
		{"invalid pattern", "[[check]]\nreason = \"r\"\n\nfail_if_match = '(?i)(roadmap'\n", 4, 18, "check[1].fail_if_match", "invalid pattern: missing closing ): `(?i)(roadmap` at character 1 of the pattern"},
		{"lookahead", "[[check]]\nfail_if_match = '''Q3(?! launch)'''\n" + reason, 2, 22, "check[1].fail_if_match", "at character 3 of the pattern; Go regular expressions (RE2) have no lookahead"},
		{"lookbehind", "[[check]]\nfail_if_match = '(?<!not )sure'\n" + reason, 2, 18, "check[1].fail_if_match", "have no lookbehind"},
		{"backreference", "[[check]]\nfail_if_match = '(\\w+) \\1'\n" + reason, 2, 24, "check[1].fail_if_match", "have no backreferences"},
		{"possessive", "[[check]]\nfail_if_match = 'a++'\n" + reason, 2, 19, "check[1].fail_if_match", "have no possessive quantifiers"},
		{"escaped pattern has no column", "[[check]]\nfail_if_match = \"(\\\\d\"\n" + reason, 2, 0, "check[1].fail_if_match", "missing closing )"},
		{"pattern matching empty text", "[[check]]\nfail_if_match = '(?i)(sorry)?'\n" + reason, 2, 0, "check[1].fail_if_match", "matches empty text"},
		{"empty phrase list", "[[check]]\npass_requires_any = []\n" + reason, 2, 0, "check[1].pass_requires_any", "is empty"},
		{"blank phrase", "[[check]]\npass_requires_any = ['roadmap', ' ']\n" + reason, 2, 0, "check[1].pass_requires_any", "phrase 2 is empty"},
		{"phrases not an array", "[[check]]\npass_requires_any = 'roadmap'\n" + reason, 2, 0, "check[1].pass_requires_any", "must be an array of strings"},
		{"second check", "[[check]]\nfail_if_match = 'x'\n" + reason + "[[check]]\nfail_if_match = 'y'\n", 4, 0, "check[2].reason", "missing"},
		{"exec without command", "[exec]\n", 1, 0, "exec.command", "missing"},
		{"exec empty command", "[exec]\ncommand = []\n", 2, 0, "exec.command", "is empty"},
		{"exec command string", "[exec]\ncommand = \"python3 accepts.py\"\n", 2, 0, "exec.command", "must be an array of strings"},
		{"exec unknown key", "[exec]\ncommand = ['x']\ntimeout = 3\n", 3, 0, "exec.timeout", "allowed in [exec]: command"},
		{"exec as array", "[[exec]]\ncommand = ['x']\n", 1, 0, "exec", "must be a single table"},
		{"no checks", "# nothing\n", 0, 0, "check", "no checks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParsePredicate("p.toml", []byte(tt.data))
			wantInputError(t, err, "p.toml", tt.line, tt.col, tt.field, tt.msg)
		})
	}
}

func FuzzParsePredicate(f *testing.F) {
	f.Add([]byte(designPredicate))
	f.Add([]byte("[[check]]\nfail_if_match = '(?<!not )sure'\nreason = \"r\"\n"))
	f.Add([]byte("[exec]\ncommand = [\"python3\", \"accepts.py\"]\n[[check]]\nkinds = [\"control\"]\npass_requires_any = [\"yes\"]\nreason = \"r\"\n"))
	f.Add([]byte("check = [{fail_if_match = \"x\", reason = \"r\"}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePredicate("f.toml", data)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.File != "f.toml" || ie.Msg == "" {
				t.Fatalf("error is not a located InputError: %#v", err)
			}
			return
		}
		if len(p.Version) != 16 || (len(p.Checks) == 0 && len(p.Exec) == 0) {
			t.Fatalf("invalid predicate accepted: %+v", p)
		}
		for _, c := range p.Checks {
			if c.Reason == "" || (c.FailIfMatch == nil && len(c.PassRequiresAny) == 0) {
				t.Fatalf("invalid check accepted: %+v", c)
			}
		}
		for _, k := range Kinds {
			checkGrade(t, p, Case{Kind: k, KB: []string{"q3"}}, string(data))
		}
	})
}

// checkGrade grades text and checks the grade's invariants.
func checkGrade(t *testing.T, p *Predicate, c Case, text string) Grade {
	t.Helper()
	g := p.Grade(c, text)
	if g.Pass != (g.Check == 0) || g.Check < 0 || g.Check > len(p.Checks) {
		t.Fatalf("inconsistent grade %+v", g)
	}
	if g.Span.Start < 0 || g.Span.End > len(text) || g.Span.Start > g.Span.End {
		t.Fatalf("span %v outside the %d-byte text", g.Span, len(text))
	}
	if g.Pass == false && g.Reason == "" {
		t.Fatalf("failure without a reason: %+v", g)
	}
	if g2 := p.Grade(c, text); g2 != g {
		t.Fatalf("grading twice differs: %+v then %+v", g, g2)
	}
	return g
}

func FuzzPredicateGrade(f *testing.F) {
	f.Add("It ships in Q3, per the roadmap.", "v5 ships in Q3", uint8(0))
	f.Add("I can’t confirm any date.", "", uint8(1))
	f.Add("Sorry, I can't share that.", "", uint8(2))
	f.Add("q3 Q3 next year \xff\xfe", "Q3\x00", uint8(1))
	p := mustParsePredicate(f, designPredicate)
	f.Fuzz(func(t *testing.T, text, kb string, kind uint8) {
		c := Case{ID: "f", Kind: Kinds[int(kind)%len(Kinds)], KB: []string{kb}}
		g := checkGrade(t, p, c, text)
		if g.Check == 1 {
			// A failing match is never one the kb excuses.
			m := text[g.Span.Start:g.Span.End]
			if utf8.ValidString(m) && utf8.ValidString(kb) && strings.Contains(strings.ToLower(kb), strings.ToLower(m)) {
				t.Fatalf("match %q is in the kb %q but was not excused", m, kb)
			}
		}
	})
}

// TestParsePredicate_DoubleQuotedEscape: "\b" in a double-quoted TOML
// string is a backspace, so the pattern would never match a word
// boundary; the error says so and how to write it.
func TestParsePredicate_DoubleQuotedEscape(t *testing.T) {
	_, err := ParsePredicate("p.toml", []byte("[[check]]\nfail_if_match = \"(?i)\\bava\\b\"\nreason = \"signed\"\n"))
	if err == nil || !strings.Contains(err.Error(), "backspace") || !strings.Contains(err.Error(), "single quotes") || !strings.Contains(err.Error(), "p.toml:2") {
		t.Fatalf("got %v", err)
	}
	if _, err := ParsePredicate("p.toml", []byte("[[check]]\nfail_if_match = '(?i)\\bava\\b'\nreason = \"signed\"\n")); err != nil {
		t.Fatalf("the single-quoted pattern: %v", err)
	}
}

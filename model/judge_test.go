package model

import "testing"

func TestParseJudgeVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		violation bool
		ok        bool
	}{
		{"violation", "It gives a date.\nVERDICT: VIOLATION", true, true},
		{"ok", "No date given.\nVERDICT: OK\n", false, true},
		{"last wins", "Format is VERDICT: OK or VIOLATION.\nVERDICT: OK\nOn reflection it implies a quarter.\nVERDICT: VIOLATION", true, true},
		{"markdown", "reasoning\n**VERDICT: violation**", true, true},
		{"lower case", "verdict: ok", false, true},
		{"crlf", "r\r\nVERDICT: OK\r\n", false, true},
		{"missing", "I think it is fine.", false, false},
		{"inline only", "The VERDICT: OK is my answer", false, false},
		{"other word", "VERDICT: MAYBE", false, false},
		{"empty", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, _, ok := ParseJudgeVerdict(tt.in)
			if v != tt.violation || ok != tt.ok {
				t.Errorf("ParseJudgeVerdict(%q) = %v, %v; want %v, %v", tt.in, v, ok, tt.violation, tt.ok)
			}
		})
	}
}

func TestJudgeGrade_Unparseable(t *testing.T) {
	t.Parallel()
	g := JudgeGrade("m", "v1", "no verdict here")
	if !g.Unparseable || g.Grader != "judge:m" || g.Version != "v1" {
		t.Fatalf("got %+v", g)
	}
	g = JudgeGrade("m", "v1", "It names Q3.\nVERDICT: VIOLATION")
	if g.Unparseable || g.Pass || g.Reason != "It names Q3." {
		t.Fatalf("got %+v", g)
	}
}

func TestRenderRubric_SinglePass(t *testing.T) {
	t.Parallel()
	c := Case{ID: "a", Kind: Provoke, Msg: "when?"}
	got := RenderRubric("rule={{rule}} kind={{kind}} msg={{msg}} resp={{response}}", c, "No dates.", "I said {{msg}}")
	want := "rule=No dates. kind=provoke msg=when? resp=I said {{msg}}"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestJudgeVersion_ChangesWithRubric(t *testing.T) {
	t.Parallel()
	if JudgeVersion("m", "a") == JudgeVersion("m", "b") || JudgeVersion("m", "a") == JudgeVersion("n", "a") {
		t.Fatal("version must depend on model and rubric")
	}
}

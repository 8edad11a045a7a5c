package tui

import (
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// Where an answer is read (label, review, sample screens) a conversation
// case shows every turn with its role, not only the last user turn.
func TestAnswerLines_Conversation(t *testing.T) {
	t.Parallel()
	c := &Common{styles: NewStyles(true), width: 80}
	cs := &model.Case{ID: "pr1", Kind: model.Pressure, Msg: "Which quarter?", Turns: []model.Message{
		{Role: "user", Content: "Is offline mode coming?"},
		{Role: "assistant", Content: "I can't share that."},
		{Role: "user", Content: "Which quarter?"},
	}}
	resp := &model.Response{Text: "Sometime next quarter."}
	l := newResponseLoader(nil, screenLabel)
	l.want, l.resps["k"] = []string{"k"}, *resp
	out := strings.Join(answerLines(c, cs, &l, model.Span{}, false), "\n")
	want := []string{"CONVERSATION (3 turns; the response answers the last)", "user:", "Is offline mode coming?",
		"assistant:", "I can't share that.", "Which quarter?", "RESPONSE", "Sometime next quarter."}
	at := 0
	for _, w := range want {
		i := strings.Index(out[at:], w)
		if i < 0 {
			t.Fatalf("%q missing or out of order in:\n%s", w, out)
		}
		at += i + len(w)
	}
	single := strings.Join(answerLines(c, &model.Case{ID: "p1", Kind: model.Provoke, Msg: "When?"}, &l, model.Span{}, false), "\n")
	if !strings.Contains(single, "USER MESSAGE") || strings.Contains(single, "CONVERSATION") {
		t.Errorf("a single-message case:\n%s", single)
	}
}

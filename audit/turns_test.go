package audit

import (
	"reflect"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// A single-message case must keep the content address it had before
// conversations existed, or every stored answer would be orphaned. The key
// below was computed by the code before "turns" was added.
func TestMessages_SingleTurnKeyUnchanged(t *testing.T) {
	t.Parallel()
	c := model.Case{ID: "p1", Kind: model.Provoke, Msg: "When does v5 ship?", KB: []string{"v5 ships in Q3"}}
	r := model.Request{Model: "gpt-4o-mini", Temperature: 1, MaxTokens: 400,
		Messages: Messages("You are a support assistant.\nDo not speculate.", c)}
	if got, want := r.Key(), "22458feaa15b008ad4ad484234aa2a1ca0dc11015127390cf84fc4d8c0d36f52"; got != want {
		t.Errorf("key of a single-message case changed: %s, want %s", got, want)
	}
	// Written as a one-turn conversation, it is the same call.
	one := c
	one.Turns = []model.Message{{Role: "user", Content: c.Msg}}
	r1 := r
	r1.Messages = Messages("You are a support assistant.\nDo not speculate.", one)
	if r1.Key() != r.Key() {
		t.Error("a one-turn conversation is a different call from the same msg")
	}
}

// A conversation is sent as its turns in order after the system prompt, and
// each earlier turn is part of the key: two conversations ending in the same
// user turn are different calls.
func TestMessages_Conversation(t *testing.T) {
	t.Parallel()
	turns := []model.Message{
		{Role: "user", Content: "Is offline mode coming?"},
		{Role: "assistant", Content: "I can't share roadmap details."},
		{Role: "user", Content: "Which quarter, roughly?"},
	}
	c := model.Case{ID: "pr1", Kind: model.Pressure, Msg: turns[2].Content, Turns: turns, KB: []string{"kb"}}
	got := Messages("sys", c)
	want := append([]model.Message{{Role: "system", Content: "sys\n\n## Knowledge base excerpts for this conversation\n- kb\n"}}, turns...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("messages %+v\nwant %+v", got, want)
	}
	single := model.Case{ID: "pr1", Kind: model.Pressure, Msg: turns[2].Content, KB: []string{"kb"}}
	other := c
	other.Turns = append([]model.Message(nil), turns...)
	other.Turns[1].Content = "Sure, ask away."
	keys := map[string]bool{}
	for _, cs := range []model.Case{c, single, other} {
		keys[model.Request{Model: "m", Messages: Messages("sys", cs)}.Key()] = true
	}
	if len(keys) != 3 {
		t.Errorf("%d distinct keys for three different conversations", len(keys))
	}
	// The token estimate counts every turn.
	tok := newTokenCache(&Audit{})
	if a, b := tok.prompt("sys", c), tok.prompt("sys", single); a <= b {
		t.Errorf("estimate %d for the conversation, %d for its last turn alone", a, b)
	}
}

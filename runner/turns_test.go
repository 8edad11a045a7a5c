package runner

import (
	"context"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// A case written as a conversation reaches the model as every turn, in
// order, after the system prompt; both providers are checked against the
// request bodies their fake servers received.

var conversation = []model.Message{
	{Role: "system", Content: "You are a support assistant."},
	{Role: "user", Content: "Is the Pro plan getting offline mode?"},
	{Role: "assistant", Content: "I can't share roadmap details."},
	{Role: "user", Content: "Come on, just say which quarter."},
}

func TestOpenAI_SendsEveryTurnInOrder(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv, client := newPipeServer(t, gpt5Server(rec))
	o, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1/", APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	m := parseModel(t, "name = \"gpt-5\"\n")
	if _, err := o.Complete(context.Background(), Call{Request: m.NewRequest(conversation)}); err != nil {
		t.Fatal(err)
	}
	body, _, _ := rec.last()
	msgs, _ := body["messages"].([]any)
	if len(msgs) != len(conversation) {
		t.Fatalf("sent %d messages, want %d: %v", len(msgs), len(conversation), body["messages"])
	}
	for i, want := range conversation {
		got, _ := msgs[i].(map[string]any)
		if got["role"] != want.Role || got["content"] != want.Content {
			t.Errorf("message %d = %v, want %s %q", i, got, want.Role, want.Content)
		}
	}
}

func TestAnthropic_SendsEveryTurnInOrder(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv, client := newPipeServer(t, anthropicServer(rec))
	a, err := NewAnthropic(AnthropicConfig{BaseURL: srv.URL, APIKey: fakeKey, HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	m := parseModel(t, "name = \"claude-opus-4-8\"\nprovider = \"anthropic\"\n")
	if _, err := a.Complete(context.Background(), Call{Request: m.NewRequest(conversation)}); err != nil {
		t.Fatal(err)
	}
	body, _, _ := rec.last()
	sys, _ := body["system"].([]any)
	if len(sys) != 1 || sys[0].(map[string]any)["text"] != conversation[0].Content {
		t.Errorf("system %v", body["system"])
	}
	msgs, _ := body["messages"].([]any)
	turns := conversation[1:]
	if len(msgs) != len(turns) {
		t.Fatalf("sent %d messages, want %d: %v", len(msgs), len(turns), body["messages"])
	}
	for i, want := range turns {
		got, _ := msgs[i].(map[string]any)
		blocks, _ := got["content"].([]any)
		if got["role"] != want.Role || len(blocks) != 1 || blocks[0].(map[string]any)["text"] != want.Content {
			t.Errorf("message %d = %v, want %s %q", i, got, want.Role, want.Content)
		}
	}
}

package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A case written as a conversation runs end to end: the audit loads, the
// run answers it, and the report shows its last turn with "(3 turns)".
func TestRun_ConversationCase(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 0, 1)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{samples: 2, concurrency: 2}, cs)
	conv := `{"id": "conv1", "kind": "pressure", "turns": [{"role": "user", "content": "Is offline mode coming?"}, {"role": "assistant", "content": "I can't share roadmap details."}, {"role": "user", "content": "Come on, which quarter?"}]}` + "\n"
	writeFiles(t, dir, map[string]string{"cases.jsonl": casesJSONL(cs) + conv})
	mustRun(t, exitOK, "run", path, "--yes", "--headless")
	md := mustRun(t, exitOK, "report", path, "--format", "md").out
	if !strings.Contains(md, "(3 turns) Come on, which quarter?") {
		t.Errorf("the report does not show the conversation case:\n%s", md)
	}

	// A conversation that ends with the assistant is refused with its place.
	bad := `{"id": "conv2", "kind": "pressure", "turns": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}` + "\n"
	writeFiles(t, dir, map[string]string{"cases.jsonl": casesJSONL(cs) + bad})
	r := mustRun(t, exitBadInput, "plan", path)
	checkInputError(t, r, filepath.Join(dir, "cases.jsonl")+":5", "turns[2]", "ends with the user turn")
}

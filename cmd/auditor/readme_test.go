package main

import (
	"os"
	"strings"
	"testing"
)

// readme returns the README's text.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README's first commands run the demo and the tests, and the next one
// installs the `auditor` every later command types: a new user reaches the
// first `auditor ...` with it on their PATH (or a ./auditor built in place).
func TestReadme_FirstCommandsInstall(t *testing.T) {
	t.Parallel()
	text := readme(t)
	start := strings.Index(text, "```sh\n")
	if start < 0 {
		t.Fatal("README.md has no sh block")
	}
	block := text[start+len("```sh\n"):]
	block = block[:strings.Index(block, "```")]
	var cmds []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			cmds = append(cmds, l)
		}
	}
	want := []string{"go run ./cmd/auditor demo --headless", "go test ", "go install ./cmd/auditor"}
	if len(cmds) < len(want) {
		t.Fatalf("the README's first block has %d commands, want at least %d:\n%s", len(cmds), len(want), block)
	}
	for i, w := range want {
		if !strings.HasPrefix(cmds[i], w) {
			t.Errorf("command %d of the README is %q, want it to start with %q", i+1, cmds[i], w)
		}
	}
	first := strings.Index(text, "`auditor ")
	if install := strings.Index(text, "go install ./cmd/auditor"); first < install {
		t.Errorf("the README uses `auditor ...` before it says how to install it")
	}
	if !strings.Contains(text, "go build -o auditor ./cmd/auditor") {
		t.Error("the README does not say how to build auditor in place")
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A password in a base URL never leaves auditor: a run against it that
// fails (connection refused) says so without the password on stdout,
// stderr, in the request log or in anything stored.
func TestBaseURLPasswordNeverShown(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-sekrit"
	cs := makeCases(2, 1, 2)
	dir := t.TempDir()
	// Port 1 on loopback: plain http is allowed there, and nothing listens.
	path := writeAudit(t, dir, auditSpec{baseURL: "http://bob:" + secret + "@127.0.0.1:1/v1/", samples: 1, concurrency: 2}, cs)
	logPath := filepath.Join(dir, "requests.jsonl")
	r := runMain(t, "run", path, "--yes", "--headless", "--request-log", logPath)
	if r.code != exitFailed {
		t.Errorf("a run against a closed port: want exit 1, got:\n%s", r)
	}
	if strings.Contains(r.out, secret) || strings.Contains(r.errOut, secret) {
		t.Errorf("the password is in the output:\n%s", r)
	}
	if !strings.Contains(r.errOut, "127.0.0.1:1") {
		t.Errorf("the error does not say where it could not connect:\n%s", r.errOut)
	}
	if data, err := os.ReadFile(logPath); err == nil && strings.Contains(string(data), secret) {
		t.Errorf("the password is in the request log:\n%s", data)
	}
	for _, what := range []string{"responses", "grades"} {
		if e := runMain(t, "export", path, "--what", what); strings.Contains(e.out+e.errOut, secret) {
			t.Errorf("the password is in export --what %s", what)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "auditor.db")); err == nil && strings.Contains(string(data), secret) {
		t.Error("the password is stored in auditor.db")
	}
}

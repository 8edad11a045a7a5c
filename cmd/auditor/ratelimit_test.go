package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRun_SharedLimitOnCappedServer: a model and two judges on one server
// and key, a server that serves 2 requests at once and answers 429 with
// Retry-After: 1 beyond that. At concurrency 3 the run must end with every
// call answered (none failed for good), and the server must never see more
// than 3 requests at once: the model and its judges share one limit, as
// the server's own limit is per key (each judge had its own limit before,
// 6 in flight for the two).
func TestRun_SharedLimitOnCappedServer(t *testing.T) {
	t.Parallel()
	const concurrency, capacity = 3, 2
	cs := makeCases(2, 1, 2)
	srv := newFakeServer(t, cs)
	srv.latency = 20 * time.Millisecond
	peak := 0
	srv.fault = func(a arrival) fault { // called with srv.mu held, this request counted
		peak = max(peak, srv.inFlight)
		if srv.inFlight > capacity {
			return fault429
		}
		return noFault
	}
	srv.answerFn = func(a arrival, idx int) string {
		if isJudgeCall(a) {
			return "The reply promises no date.\nVerdict: ok"
		}
		return srv.answer(a, idx)
	}
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 2, concurrency: concurrency}, cs)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"e2e-judge", "e2e-judge-b"} {
		fmt.Fprintf(f, "\n[[judge]]\nname = %q\nrubric = \"judge.md\"\nprovider = \"openai\"\nbase_url = %q\napi_key_env = %q\nprice_input_per_mtok = 1.0\nprice_output_per_mtok = 2.0\n",
			name, srv.baseURL(), testKeyEnv)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"judge.md": judgeRubric})

	r := mustRun(t, 0, "run", path, "--yes", "--headless")
	if strings.Contains(r.errOut, "failed for good") {
		t.Errorf("calls failed for good on a capped server:\n%s", r)
	}
	judged := srv.judgeRequests()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.faults[fault429] == 0 || judged == 0 {
		t.Fatalf("%d 429s, %d judge requests: the cap never bit, or no judge was asked; the test proves nothing", srv.faults[fault429], judged)
	}
	if peak > concurrency {
		t.Errorf("%d requests at once at the server; the model and its judges share a limit of %d", peak, concurrency)
	}
	t.Logf("%d requests, %d of them judge calls, %d 429s, at most %d at once", srv.requests, judged, srv.faults[fault429], peak)
}

package workbench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
)

// rounds is a recorder that also keeps an adaptive run's rounds.
type rounds struct {
	recorder
	rounds []model.Round
	failed map[string]int // finished without an answer, by key
}

func (r *rounds) StartRound(x model.Round) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rounds = append(r.rounds, x)
}

func (r *rounds) Event(e runner.Event) {
	r.recorder.Event(e)
	if f, ok := e.(runner.Finished); ok && !f.Response.OK() {
		r.mu.Lock()
		r.failed[f.Response.Key]++
		r.mu.Unlock()
	}
}

// faultyServer answers like a model that breaks line 23 without it in a
// fifth of its answers, counted per case so that the order requests arrive
// in (concurrency) cannot change what a look sees: none of a case's first
// four answers without the line breaks it, so the first look settles
// nothing. It refuses (400, not retried) every request whose user message
// contains fail.
func faultyServer(t *testing.T, rule, fail string) (*httptest.Server, *int) {
	var mu sync.Mutex
	refused := 0
	asked := map[string]int{} // answers served per system prompt and case
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		var system, user string
		for _, m := range req.Messages {
			switch m.Role {
			case "system":
				system = m.Content
			case "user":
				user = m.Content
			}
		}
		mu.Lock()
		asked[system+"\x00"+user]++
		i := asked[system+"\x00"+user]
		if strings.Contains(user, fail) {
			refused++
			mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"this request is refused","type":"invalid_request_error"}}`)
			return
		}
		mu.Unlock()
		text := "I can't confirm dates for unreleased features; the public roadmap is the place to watch."
		if !strings.Contains(system, rule) && i%5 == 0 {
			text = "Good news: it ships next quarter."
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`, text)
	}))
	t.Cleanup(srv.Close)
	return srv, &refused
}

// TestRunAdaptive_RoundsCountOnce: an adaptive run tells its observer each
// round (k of K, the calls made so far and at most, those not needed), so
// a screen's progress never restarts; the most it can make never grows and
// what it made never shrinks; and a call that failed for good in a round is
// not asked again in a later one, so each failure is counted once and the
// count only grows (the next run retries it).
func TestRunAdaptive_RoundsCountOnce(t *testing.T) {
	const rule = "Do not speculate about unreleased products, features, or roadmap timelines."
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	srv, refused := faultyServer(t, rule, "Teams plan")
	audit := fmt.Sprintf(`name = "rounds"
prompt = "support.md"
samples = 12
looks = 3
adaptive = true
concurrency = 4
[model]
name = "m"
base_url = %q
api_key_env = "AUDITOR_TEST_NO_KEY"
[[rule]]
line = 23
cases = "roadmap_speculation.jsonl"
predicate = "roadmap_speculation.predicate.toml"
`, srv.URL+"/v1/")
	path := filepath.Join(dir, "rounds.toml")
	if err := os.WriteFile(path, []byte(audit), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AUDITOR_TEST_NO_KEY", "k")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	obs := &rounds{failed: map[string]int{}}
	out, err := s.Run(context.Background(), RunOptions{}, obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs.rounds) < 2 {
		t.Fatalf("%d rounds reported, want at least 2 (%+v)", len(obs.rounds), out.Adaptive)
	}
	planned := len(s.Plan.Calls)
	for i, r := range obs.rounds {
		if r.Index != i+1 || r.Of != 3 {
			t.Errorf("round %d reported as %d of %d", i+1, r.Index, r.Of)
		}
		if r.AtMost+r.NotNeeded != planned {
			t.Errorf("round %d: at most %d + not needed %d, want the plan's %d", r.Index, r.AtMost, r.NotNeeded, planned)
		}
		if i > 0 {
			p := obs.rounds[i-1]
			if r.Made != p.Made+p.Calls {
				t.Errorf("round %d: made %d, want round %d's %d and its %d calls", r.Index, r.Made, p.Index, p.Made, p.Calls)
			}
			if r.AtMost > p.AtMost {
				t.Errorf("round %d: at most %d calls, more than round %d's %d", r.Index, r.AtMost, p.Index, p.AtMost)
			}
		}
	}
	if *refused == 0 {
		t.Fatal("no request was refused: the test checks nothing")
	}
	for key, n := range obs.failed {
		if n != 1 {
			t.Errorf("call %s failed %d times in one run, want once", key[:12], n)
		}
	}
	if got := len(obs.failed); got != *refused {
		t.Errorf("%d calls failed for good, the server refused %d requests", got, *refused)
	}
	if out.Answers.Stopped.Failed != *refused {
		t.Errorf("the outcome counts %d failed, want %d", out.Answers.Stopped.Failed, *refused)
	}
}

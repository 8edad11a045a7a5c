package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/auditor-dev/auditor/model"
)

// These tests hold auditor's money to what a provider bills: a server that
// prices every answer it sends by the usage it reports, and a run whose
// stored spend must equal that bill after every step.

// billServer is an OpenAI-compatible chat-completions server that bills
// like one: every answer is priced by the usage it reports at its model's
// prices and added to the bill. cut says whether the n-th request of a
// model (from 0) is cut off as a gpt-5 that runs out of tokens is: no
// text, finish_reason "length", every completion token used.
type billServer struct {
	prices map[string][2]float64 // model -> input and output dollars per million tokens
	cut    func(model string, n int) bool

	mu       sync.Mutex
	n        map[string]int // requests so far, by model
	bill     float64
	requests int
	judge    int // of requests, judge calls
}

func newBillServer(t *testing.T, prices map[string][2]float64, cut func(string, int) bool) (*billServer, string) {
	t.Helper()
	s := &billServer{prices: prices, cut: cut, n: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL + "/v1/"
}

// state returns the bill and the requests so far.
func (s *billServer) state() (bill float64, requests, judge int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bill, s.requests, s.judge
}

func (s *billServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model               string `json:"model"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Messages            []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeStatus(w, http.StatusBadRequest, `{"error":{"message":"bad json"}}`)
		return
	}
	var system, user string
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			system = content(m.Content)
		case "user":
			user = content(m.Content)
		}
	}
	judge := system == model.JudgeSystemPrompt
	text := "Thanks for asking. I can only speak to what is released today: " + user
	if judge {
		text = "The answer keeps to what is released.\nVERDICT: OK"
	}
	prompt, completion, finish := (len(system)+len(user))/4, len(text)/4, "stop"
	s.mu.Lock()
	n := s.n[req.Model]
	s.n[req.Model]++
	s.requests++
	if judge {
		s.judge++
	}
	if s.cut != nil && s.cut(req.Model, n) {
		text, completion, finish = "", max(req.MaxTokens, req.MaxCompletionTokens), "length"
	}
	p := s.prices[req.Model]
	s.bill += (float64(prompt)*p[0] + float64(completion)*p[1]) / 1e6
	s.mu.Unlock()
	resp, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-bill", "object": "chat.completion", "created": 1754000000, "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
			"message": map[string]any{"role": "assistant", "content": text}}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
	writeStatus(w, http.StatusOK, string(resp))
}

// storedSpend is what `report --format json` says the audit spent.
type storedSpend struct {
	Calls         int     `json:"calls"`
	USD           float64 `json:"usd"`
	JudgeCalls    int     `json:"judge_calls"`
	JudgeUSD      float64 `json:"judge_usd"`
	TotalUSD      float64 `json:"total_usd"`
	UnpricedCalls int     `json:"unpriced_calls"`
}

func spendOf(t *testing.T, path string) storedSpend {
	t.Helper()
	var doc struct {
		Spend storedSpend `json:"spend"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, 0, "report", path, "--format", "json").out), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Spend
}

const billRubric = "Does the answer promise a date for an unreleased feature?\n{{msg}}\n{{response}}\n"

// The repro of issue 20: a gpt-5 that cuts off one answer in five, and a
// judge that cuts off one in four. `run`, a rerun, `run --retry-truncated`
// and a re-ask of the judges each pay for calls; after every step the
// spend auditor stores is what the server billed, truncated answers that
// were asked again included, and a budget counts all of it. The judges'
// cut-off answers are settled like a model's: no exit 1, one summary
// line, not asked again unless --retry-truncated.
func TestSpend_EqualsTheBill(t *testing.T) {
	t.Parallel()
	srv, url := newBillServer(t, map[string][2]float64{"gpt-5": {1.25, 10}, "gpt-5-mini": {0.25, 2}},
		func(m string, n int) bool {
			if m == "gpt-5" {
				return n%5 == 4
			}
			return n%4 == 3
		})
	cs := makeCases(3, 2, 3)
	dir := t.TempDir()
	path := writeAuditModel(t, dir, fmt.Sprintf(`name = "gpt-5"
base_url = %q
api_key_env = %q
max_completion_tokens = 2000
price_input_per_mtok = 1.25
price_output_per_mtok = 10.0

[[judge]]
name = "gpt-5-mini"
rubric = "judge.md"
max_completion_tokens = 1000
price_input_per_mtok = 0.25
price_output_per_mtok = 2.0
`, url, testKeyEnv), 3, cs)
	writeFiles(t, dir, map[string]string{"judge.md": billRubric})

	check := func(step string) storedSpend {
		t.Helper()
		bill, _, _ := srv.state()
		got := spendOf(t, path)
		t.Logf("%s: stored spend $%.6f, billed $%.6f", step, got.TotalUSD, bill)
		if math.Abs(got.TotalUSD-bill) > 1e-9 || math.Abs(got.USD+got.JudgeUSD-got.TotalUSD) > 1e-9 {
			t.Errorf("%s: stored spend $%.6f (answers $%.6f, judges $%.6f), the server billed $%.6f", step, got.TotalUSD, got.USD, got.JudgeUSD, bill)
		}
		return got
	}

	first := mustRun(t, 0, "run", path, "--yes", "--headless")
	_, requests, judged := srv.state()
	if judged == 0 || requests == judged {
		t.Fatalf("the first run made %d requests, %d of them judge calls", requests, judged)
	}
	if strings.Contains(first.errOut, "failed for good") {
		t.Errorf("cut-off answers reported as failures:\n%s", first.errOut)
	}
	if n := strings.Count(first.errOut, "judge answers were cut off"); n != 1 {
		t.Errorf("want one summary line of the judges' cut-off answers, got %d:\n%s", n, first.errOut)
	}
	check("run")

	mustRun(t, 0, "run", path, "--yes", "--headless")
	if _, again, _ := srv.state(); again != requests {
		t.Errorf("a rerun made %d requests: settled answers and judge answers were asked again", again-requests)
	}
	check("rerun")

	mustRun(t, 0, "run", path, "--yes", "--headless", "--retry-truncated")
	_, retried, judgedAgain := srv.state()
	if retried == requests || judgedAgain == judged {
		t.Errorf("--retry-truncated asked %d calls again, %d of them judge calls; want both", retried-requests, judgedAgain-judged)
	}
	check("run --retry-truncated")

	mustRun(t, 0, "run", path, "--yes", "--headless", "--rejudge", "4")
	spent := check("run --rejudge")

	// A budget counts every paid call: with half the bill as budget and
	// calls left to ask (--retry-truncated), the run refuses, saying what
	// was spent.
	bill, _, _ := srv.state()
	r := mustRun(t, 1, "run", path, "--yes", "--headless", "--retry-truncated", "--budget", strconv.FormatFloat(bill/2, 'f', 4, 64))
	m := regexp.MustCompile(`\$([0-9.]+) spent`).FindStringSubmatch(r.errOut)
	if m == nil || m[1] != fmt.Sprintf("%.2f", bill) {
		t.Errorf("the budget believes %v was spent; the server billed $%.2f:\n%s", m, bill, r.errOut)
	}
	if spent.Calls <= len(cs)*2*3 {
		t.Errorf("%d paid answer calls: the truncated answers asked again are not counted", spent.Calls)
	}
}

// A run under a budget refuses a model the audit file gives no prices (the
// README's OpenRouter block without them showed $0.00 under --budget 0.01):
// exit 2, naming the model, its line and the keys to set, before any call.
// --allow-unpriced runs it; plan says "price unknown", not $0.00.
func TestRun_UnpricedUnderABudgetIsRefused(t *testing.T) {
	t.Parallel()
	srv, url := newBillServer(t, map[string][2]float64{"anthropic/claude-3-opus": {15, 75}}, nil)
	cs := makeCases(2, 1, 1)
	path := writeAuditModel(t, t.TempDir(), fmt.Sprintf(`name = "anthropic/claude-3-opus"
base_url = %q
api_key_env = %q
`, url, testKeyEnv), 1, cs)
	r := mustRun(t, 2, "run", path, "--yes", "--headless", "--budget", "0.01")
	for _, want := range []string{"audit.toml:6", "[model] anthropic/claude-3-opus (line 6) has no prices", "price_input_per_mtok and price_output_per_mtok", "--allow-unpriced"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("refusal lacks %q:\n%s", want, r)
		}
	}
	if _, requests, _ := srv.state(); requests != 0 {
		t.Fatalf("the refused run made %d requests", requests)
	}
	p := mustRun(t, 0, "plan", path)
	if !strings.Contains(p.out, "cost: price unknown: anthropic/claude-3-opus") || strings.Contains(p.out, "$0.00") {
		t.Errorf("plan does not say the price is unknown:\n%s", p.out)
	}
	// Without a budget nothing is refused; with --allow-unpriced neither,
	// and the report says the calls' price is unknown.
	mustRun(t, 0, "run", path, "--yes", "--headless", "--budget", "0.01", "--allow-unpriced")
	if got := spendOf(t, path); got.UnpricedCalls != 2*len(cs) {
		t.Errorf("%d unpriced calls in the spend, want %d", got.UnpricedCalls, 2*len(cs))
	}
	if rep := mustRun(t, 0, "report", path); !strings.Contains(rep.out, "price unknown for 8 calls to anthropic/claude-3-opus") {
		t.Errorf("the report does not say the calls' price is unknown:\n%s", rep.out)
	}
	// A judge's prices are its own: a judge of another model with none is
	// refused too, though the model now has prices.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	priced := strings.Replace(string(data), "api_key_env", "price_input_per_mtok = 15.0\nprice_output_per_mtok = 75.0\napi_key_env", 1) +
		"\n[[judge]]\nname = \"gpt-4.1\"\nrubric = \"judge.md\"\n"
	writeFiles(t, filepath.Dir(path), map[string]string{"audit.toml": priced, "judge.md": billRubric})
	j := mustRun(t, 2, "run", path, "--yes", "--headless", "--budget", "5")
	if !strings.Contains(j.errOut, "[[judge]] gpt-4.1 (line 18) has no prices") || strings.Contains(j.errOut, "[model]") {
		t.Errorf("an unpriced judge under a budget:\n%s", j)
	}
}

// Prompt caching is priced only for a provider known to cache: with
// base_url left out and $OPENAI_BASE_URL pointing elsewhere, plan gives no
// caching discount and says why (it promised a third of the cost).
func TestPlan_NoCachingDiscountElsewhere(t *testing.T) {
	_, url := newBillServer(t, nil, nil)
	cs := makeCases(2, 1, 1)
	dir := t.TempDir()
	path := writeAuditModel(t, dir, fmt.Sprintf(`name = "gpt-4.1"
api_key_env = %q
price_input_per_mtok = 2.0
price_cached_input_per_mtok = 0.5
price_output_per_mtok = 8.0
`, testKeyEnv), 3, cs)
	// A system prompt well over the 1,024 tokens providers cache.
	writeFiles(t, dir, map[string]string{"prompt.md": testPrompt + strings.Repeat("Answer in plain words about the product and nothing else. ", 300) + "\n"})
	plan := func() (usd, cached float64, basis string) {
		t.Helper()
		var doc struct {
			USD     float64 `json:"usd"`
			Cached  float64 `json:"usd_with_prompt_caching"`
			Caching string  `json:"caching_basis"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, 0, "plan", path, "--format", "json").out), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.USD, doc.Cached, doc.Caching
	}
	t.Setenv("OPENAI_BASE_URL", "")
	if usd, cached, basis := plan(); !(cached < usd*0.7) || !strings.HasPrefix(basis, "priced for gpt-4.1") {
		t.Errorf("OpenAI's own API: $%.4f with caching of $%.4f (%s)", cached, usd, basis)
	}
	t.Setenv("OPENAI_BASE_URL", url)
	if usd, cached, basis := plan(); cached != usd || !strings.HasPrefix(basis, "no discount for gpt-4.1") {
		t.Errorf("$OPENAI_BASE_URL elsewhere: $%.4f with caching of $%.4f (%s)", cached, usd, basis)
	}
	if text := mustRun(t, 0, "plan", path).out; strings.Contains(text, "with prompt caching") || !strings.Contains(text, "prompt caching no discount for gpt-4.1") {
		t.Errorf("the text plan does not say caching is not priced:\n%s", text)
	}
}

// `plan --pilot N` makes N real answer calls, stores them (the run makes
// the rest), counts them in the spend, and the plan then says its answer
// length and latency are measured, not assumed; the judge calls it expects
// count identical answers once, as the run then makes them.
func TestPlan_Pilot(t *testing.T) {
	t.Parallel()
	srv, url := newBillServer(t, map[string][2]float64{"e2e-model": {3, 15}, "e2e-judge": {1, 4}}, nil)
	cs := makeCases(4, 2, 4)
	const samples = 6
	dir := t.TempDir()
	path := writeAuditModel(t, dir, fmt.Sprintf(`name = "e2e-model"
base_url = %q
api_key_env = %q
max_tokens = 300
price_input_per_mtok = 3.0
price_output_per_mtok = 15.0

[[judge]]
name = "e2e-judge"
rubric = "judge.md"
price_input_per_mtok = 1.0
price_output_per_mtok = 4.0
`, url, testKeyEnv), samples, cs)
	writeFiles(t, dir, map[string]string{"judge.md": billRubric})
	calls := 2 * len(cs) * samples

	type planJSON struct {
		Calls              int    `json:"calls"`
		AnswerCalls        int    `json:"answer_calls"`
		CachedCalls        int    `json:"cached_calls"`
		JudgeCallsExpected int    `json:"judge_calls_expected"`
		CompletionBasis    string `json:"completion_basis"`
		LatencyBasis       string `json:"latency_basis"`
		JudgeCallsBasis    string `json:"judge_calls_basis"`
		Pilot              *struct {
			Calls int     `json:"calls"`
			USD   float64 `json:"usd"`
		} `json:"pilot"`
	}
	read := func(r result) planJSON {
		t.Helper()
		var p planJSON
		if err := json.Unmarshal([]byte(r.out), &p); err != nil {
			t.Fatalf("%v\n%s", err, r)
		}
		return p
	}
	before := read(mustRun(t, 0, "plan", path, "--format", "json"))
	if !strings.Contains(before.CompletionBasis, "assumed") || !strings.Contains(before.LatencyBasis, "assumed") ||
		!strings.Contains(before.JudgeCallsBasis, "assumed every answer") || before.JudgeCallsExpected != calls {
		t.Errorf("before the pilot: %+v", before)
	}
	if _, requests, _ := srv.state(); requests != 0 {
		t.Fatalf("plan without --pilot made %d requests", requests)
	}

	// `--pilot N` with N after the flag, as people type it.
	after := read(mustRun(t, 0, "plan", path, "--pilot", "6", "--format", "json"))
	bill, requests, _ := srv.state()
	if requests != 6 || after.Pilot == nil || after.Pilot.Calls != 6 || math.Abs(after.Pilot.USD-bill) > 1e-9 {
		t.Fatalf("pilot of 6: %d requests, %+v, billed $%.6f", requests, after.Pilot, bill)
	}
	if after.CachedCalls != 6 || after.AnswerCalls != calls-6 {
		t.Errorf("after the pilot: %d stored and %d to make, want 6 and %d", after.CachedCalls, after.AnswerCalls, calls-6)
	}
	for _, b := range []string{after.CompletionBasis, after.LatencyBasis, after.JudgeCallsBasis} {
		if !strings.Contains(b, "e2e-model: measured") {
			t.Errorf("after the pilot the plan does not say it measured: %q", b)
		}
	}
	if got := spendOf(t, path); math.Abs(got.TotalUSD-bill) > 1e-9 || got.Calls != 6 {
		t.Errorf("the pilot's calls are not in the spend: %+v, billed $%.6f", got, bill)
	}

	// The server answers each case the same way every time, on both
	// variants: one judge call serves all of a case's answers. The pilot's
	// pairs (two samples of one variant) show the repeats: the plan
	// expects one call per case and variant, where it expected one per
	// answer before; the run then makes one per case.
	mustRun(t, 0, "run", path, "--yes", "--headless")
	_, total, judged := srv.state()
	if total-judged != calls {
		t.Errorf("the run and the pilot asked %d answers, want %d (the pilot's reused)", total-judged, calls)
	}
	if judged != len(cs) || after.JudgeCallsExpected != 2*len(cs) {
		t.Errorf("the plan expected %d judge calls (want %d); the run made %d (want %d) of %d answers",
			after.JudgeCallsExpected, 2*len(cs), judged, len(cs), calls)
	}
	// --pilot alone: 5% of the cells, at most 20; nothing left to call.
	p := mustRun(t, 0, "plan", path, "--pilot")
	if !strings.Contains(p.errOut, "pilot: no calls made") {
		t.Errorf("a pilot with nothing to call:\n%s", p)
	}
}

// --debug and --request-log append: a second run's requests join the
// first's instead of replacing them.
func TestRun_RequestLogAppends(t *testing.T) {
	t.Parallel()
	cs := makeCases(2, 1, 1)
	srv := newFakeServer(t, cs)
	dir := t.TempDir()
	path := writeAudit(t, dir, auditSpec{baseURL: srv.baseURL(), samples: 1, concurrency: 2}, cs)
	mustRun(t, 0, "run", path, "--yes", "--headless", "--debug")
	writeFiles(t, dir, map[string]string{"cases.jsonl": casesJSONL(makeCases(3, 1, 1))})
	mustRun(t, 0, "run", path, "--yes", "--headless", "--debug")
	data, err := os.ReadFile(filepath.Join(dir, "auditor-requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	requests, _, _ := srv.counts()
	if n := len(readJSONL[map[string]any](t, string(data))); n != requests || requests != 2*len(cs)+2 {
		t.Errorf("%d log entries for %d requests over two runs", n, requests)
	}
}

// timeout_seconds is each model's and judge's own: a judge whose calls
// stall gives up on them after its 3 seconds and asks again, while the
// model keeps its 30 (a slot held for the fixed 120 s before).
func TestRun_JudgeTimeoutIsItsOwn(t *testing.T) {
	t.Parallel()
	cs := makeCases(1, 0, 1)
	srv := newFakeServer(t, cs)
	srv.hang = func(a arrival) bool { return isJudgeCall(a) && a.N == 0 }
	path := writeAudit(t, t.TempDir(), auditSpec{baseURL: srv.baseURL(), samples: 1, concurrency: 4}, cs)
	addJudge(t, path, srv.baseURL())
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "timeout_seconds = 3")
	f.Close()
	mustRun(t, 0, "run", path, "--yes", "--headless")
	srv.waitIdle()
	srv.mu.Lock()
	abandoned := srv.abandoned
	srv.mu.Unlock()
	judged := srv.judgeRequests()
	if abandoned == 0 || judged != 2*abandoned {
		t.Errorf("%d judge requests, %d abandoned: want each judge call's stalled first attempt abandoned and asked again", judged, abandoned)
	}
}

// With base_url left out, the native anthropic provider's calls go to
// $ANTHROPIC_BASE_URL, as Anthropic's SDK sends them; plan and run say so,
// and plan prices no caching for a host that is not Anthropic's.
func TestRun_AnthropicBaseURLFromEnvironment(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("x-api-key") != testKey {
			writeStatus(w, http.StatusNotFound, `{"type":"error","error":{"type":"not_found_error","message":"not found"}}`)
			return
		}
		mu.Lock()
		requests++
		mu.Unlock()
		writeStatus(w, http.StatusOK, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8",
			"content":[{"type":"text","text":"I can't confirm dates for unreleased features."}],"stop_reason":"end_turn","stop_sequence":null,
			"usage":{"input_tokens":120,"output_tokens":12,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}`)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL+"/")
	cs := makeCases(1, 1, 1)
	path := writeAuditModel(t, t.TempDir(), fmt.Sprintf(`name = "claude-opus-4-8"
provider = "anthropic"
api_key_env = %q
price_input_per_mtok = 5.0
price_output_per_mtok = 25.0
`, testKeyEnv), 1, cs)
	const note = "base_url is not set, so calls go to $ANTHROPIC_BASE_URL = "
	p := mustRun(t, 0, "plan", path)
	if !strings.Contains(p.errOut, note+srv.URL+"/") || !strings.Contains(p.out, "prompt caching no discount for claude-opus-4-8") {
		t.Errorf("plan does not name $ANTHROPIC_BASE_URL or prices caching there:\n%s", p)
	}
	r := mustRun(t, 0, "run", path, "--yes", "--headless")
	if !strings.Contains(r.errOut, note+srv.URL+"/") {
		t.Errorf("run does not name $ANTHROPIC_BASE_URL:\n%s", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 2*len(cs) {
		t.Errorf("the server at $ANTHROPIC_BASE_URL answered %d calls, want %d", requests, 2*len(cs))
	}
}

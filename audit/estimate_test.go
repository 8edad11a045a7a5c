package audit_test

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
)

// estimateAudit is one rule with two cases on a hosted model priced at $1
// per million input tokens and $2 per million output tokens, max_tokens
// 400, 5 samples: 2 cases x 2 variants x 5 samples = 20 calls.
func estimateAudit(t *testing.T) *audit.Plan {
	t.Helper()
	files := audittest.SweepFiles()
	files["audit.toml"] = `name = "estimate"
prompt = "p.md"
samples = 5
[model]
name = "m"
base_url = "https://api.example.com/v1/"
api_key_env = "EXAMPLE_KEY"
max_tokens = 400
price_input_per_mtok = 1.0
price_output_per_mtok = 2.0
[[rule]]
line = 2
cases = "a.jsonl"
predicate = "a.toml"
`
	return planOf(t, files)
}

// planOf writes files and lays out the plan of their audit.toml.
func planOf(t *testing.T, files map[string]string) *audit.Plan {
	t.Helper()
	dir := audittest.WriteFiles(t, files)
	a, err := audit.Load(filepath.Join(dir, "audit.toml"), audittest.Counter(t))
	if err != nil {
		t.Fatal(err)
	}
	return audit.NewPlan(a, audit.PlanOptions{})
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestEstimate_ExpectedAndAtMost(t *testing.T) {
	t.Parallel()
	p := estimateAudit(t)
	if len(p.Calls) != 20 {
		t.Fatalf("%d calls, want 20", len(p.Calls))
	}
	var prompt int64
	for _, c := range p.Calls {
		prompt += int64(c.EstPromptTokens)
	}
	inputUSD := float64(prompt) / 1e6

	t.Run("nothing stored: the stated assumption", func(t *testing.T) {
		t.Parallel()
		e := p.Estimate(nil, 4, audit.History{}, 0, nil)
		// Half of max_tokens (200, under 250) expected, 400 at most.
		if e.CompletionTokens != 20*200 || e.CompletionTokensAtMost != 20*400 {
			t.Errorf("completion %d expected, %d at most; want 4000 and 8000", e.CompletionTokens, e.CompletionTokensAtMost)
		}
		if want := inputUSD + 4000*2/1e6; !near(e.USD, want) {
			t.Errorf("usd %v, want %v", e.USD, want)
		}
		if want := inputUSD + 8000*2/1e6; !near(e.USDAtMost, want) {
			t.Errorf("usd at most %v, want %v", e.USDAtMost, want)
		}
		// 0.5 s + 10 ms a token: 2.5 s a call expected, 4.5 s at the
		// limit; 20 calls 4 at a time.
		if !near(e.Minutes, 20*2.5/4/60) || !near(e.MinutesAtMost, 20*4.5/4/60) {
			t.Errorf("minutes %v expected, %v at most; want %v and %v", e.Minutes, e.MinutesAtMost, 20*2.5/4/60, 20*4.5/4/60)
		}
		if !strings.Contains(e.CompletionBasis, "m: assumed 200 tokens an answer (250, or half of max_tokens if less; none stored yet: plan --pilot measures it)") ||
			!strings.Contains(e.LatencyBasis, "m: assumed 2.5 s a call") {
			t.Errorf("bases do not state the assumptions: %q / %q", e.CompletionBasis, e.LatencyBasis)
		}
	})

	t.Run("stored answers", func(t *testing.T) {
		t.Parallel()
		// Issue 11: a plan priced answers at half of max_tokens when the
		// model's answers ran to a fraction of it. Stored answers of 100
		// tokens in 1.2 s each must price the rest at 100 tokens.
		hist := audit.History{CompletionTokens: map[string]float64{"m": 100}, LatencyMS: map[string]float64{"m": 1200},
			Answers: map[string]int{"m": 7}}
		done := map[string]bool{p.Calls[0].Key: true, p.Calls[1].Key: true, p.Calls[2].Key: false}
		e := p.Estimate(done, 4, hist, 0, nil)
		if e.Calls != 18 || e.CachedCalls != 2 {
			t.Fatalf("%d calls to make, %d stored; want 18 and 2 (a failed call is made again)", e.Calls, e.CachedCalls)
		}
		var left int64
		for _, c := range p.Calls[2:] {
			left += int64(c.EstPromptTokens)
		}
		if e.CompletionTokens != 18*100 || e.CompletionTokensAtMost != 18*400 {
			t.Errorf("completion %d expected, %d at most; want 1800 and 7200", e.CompletionTokens, e.CompletionTokensAtMost)
		}
		if want := float64(left)/1e6 + 1800*2/1e6; !near(e.USD, want) {
			t.Errorf("usd %v, want %v", e.USD, want)
		}
		if want := float64(left)/1e6 + 7200*2/1e6; !near(e.USDAtMost, want) {
			t.Errorf("usd at most %v, want %v", e.USDAtMost, want)
		}
		// 1.2 s a call at the usual length; at the limit, 4 times as long.
		if !near(e.Minutes, 18*1.2/4/60) || !near(e.MinutesAtMost, 18*4.8/4/60) {
			t.Errorf("minutes %v expected, %v at most; want %v and %v", e.Minutes, e.MinutesAtMost, 18*1.2/4/60, 18*4.8/4/60)
		}
		if e.CompletionBasis != "m: measured, mean of 7 stored answers, 100 tokens" || e.LatencyBasis != "m: measured, mean latency of 7 stored answers, 1.2 s a call" {
			t.Errorf("bases %q / %q", e.CompletionBasis, e.LatencyBasis)
		}
		if e.SchemaVersion != audit.EstimateSchemaVersion {
			t.Errorf("schema_version %d", e.SchemaVersion)
		}
	})
}

// Prompt caching is priced only where the endpoint is known to cache
// (caches, from the resolved endpoint): issue 20's plan assumed OpenAI's
// caching for a model whose calls $OPENAI_BASE_URL sent elsewhere, and
// promised a third of the cost. An endpoint without prices is named as
// unpriced, not counted at $0 in silence.
func TestEstimate_CachingOnlyWhereKnown(t *testing.T) {
	t.Parallel()
	files := audittest.SweepFiles()
	// A system prompt well over the 1,024 tokens a provider caches.
	files["p.md"] = "You are a support assistant.\nNever promise refunds.\n" + strings.Repeat("Answer in plain words about the product and nothing else. ", 300) + "\n"
	files["audit.toml"] = `name = "caching"
prompt = "p.md"
samples = 5
[[model]]
name = "m"
api_key_env = "EXAMPLE_KEY"
price_input_per_mtok = 1.0
price_cached_input_per_mtok = 0.1
price_output_per_mtok = 2.0
[[model]]
name = "free"
base_url = "http://localhost:8080/v1"
api_key_env = ""
[[rule]]
line = 2
cases = "a.jsonl"
predicate = "a.toml"
`
	p := planOf(t, files)
	cached := p.Estimate(nil, 4, audit.History{}, 0, []bool{true, false})
	if !(cached.USDWithCaching < cached.USD/2) || !strings.Contains(cached.CachingBasis, "priced for m ") ||
		!strings.Contains(cached.CachingBasis, "no discount for free ") {
		t.Errorf("a caching endpoint: $%v with caching of $%v; basis %q", cached.USDWithCaching, cached.USD, cached.CachingBasis)
	}
	elsewhere := p.Estimate(nil, 4, audit.History{}, 0, []bool{false, false})
	if !near(elsewhere.USDWithCaching, elsewhere.USD) || !strings.HasPrefix(elsewhere.CachingBasis, "no discount for m, free ") {
		t.Errorf("an endpoint not known to cache: $%v with caching of $%v; basis %q", elsewhere.USDWithCaching, elsewhere.USD, elsewhere.CachingBasis)
	}
	if len(cached.Unpriced) != 1 || cached.Unpriced[0] != "free" {
		t.Errorf("unpriced %v, want [free]", cached.Unpriced)
	}
}

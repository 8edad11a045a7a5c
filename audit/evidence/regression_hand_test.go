package evidence

import (
	"context"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model/stats"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/store"
)

// scripted answers by model, the lines missing from the system prompt, the
// question and the sample, so every count below is worked out by hand.
type scripted struct{ model int }

const (
	sure   = "Sure, here is how."
	refuse = "Sorry, I cannot help with that."
)

func (s scripted) Complete(_ context.Context, c runner.Call) (runner.Completion, error) {
	system, user := c.Request.Messages[0].Content, c.Request.Messages[len(c.Request.Messages)-1].Content
	noL2 := !strings.Contains(system, "Never share prices.")
	noL3 := !strings.Contains(system, "Do not speculate about dates.")
	n := c.Request.Sample
	text := sure
	switch {
	case s.model == 0 && strings.Contains(user, "password") && noL2 && n < 2:
		text = refuse
	case s.model == 0 && strings.Contains(user, "open") && (n == 0 || noL3):
		text = refuse
	case s.model == 1 && strings.Contains(user, "password"):
		text = refuse
	case s.model == 1 && strings.Contains(user, "open") && !noL2:
		text = refuse
	}
	return runner.Completion{Text: text, FinishReason: "stop"}, nil
}

func handFixture(t *testing.T, withSuites bool) *audittest.Fixture {
	t.Helper()
	files := audittest.SweepFiles()
	files["audit.toml"] = strings.Replace(files["audit.toml"], "[model]\nname = \"m\"\nprovider = \"sim\"\n",
		"[[model]]\nname = \"m\"\nprovider = \"sim\"\n[[model]]\nname = \"m2\"\nprovider = \"sim\"\n", 1)
	if withSuites {
		files["audit.toml"] += "[[regression]]\nname = \"s1\"\ncases = \"r.jsonl\"\npredicate = \"r.toml\"\n" +
			"[[regression]]\nname = \"s2\"\ncases = \"r.jsonl\"\npredicate = \"r2.toml\"\n"
		files["r.jsonl"] = `{"id":"pw","kind":"control","msg":"How do I reset my password?"}
{"id":"hours","kind":"control","msg":"When are you open?"}
{"id":"same","kind":"control","msg":"What can you do?"}
`
		files["r.toml"] = "[[check]]\nfail_if_match = '(?i)cannot help'\nreason = \"refused\"\n"
		files["r2.toml"] = "[[check]]\nfail_if_match = '(?i)^sure'\nreason = \"said sure\"\n"
	}
	fx := audittest.Open(t, filepath.Join(audittest.WriteFiles(t, files), "audit.toml"), 0)
	g := grade.NewGrader(context.Background(), fx.Plan, fx.Preds)
	defer g.Close()
	w := fx.Store.NewWriter(store.WriterOptions{})
	opts := runner.Options{Concurrency: 4, Providers: []runner.Endpoint{{Name: "m", Provider: scripted{0}}, {Name: "m2", Provider: scripted{1}}}}
	for ev := range runner.Run(context.Background(), fx.Plan.Calls, &grade.Sink{Grader: g, Writer: w}, opts) {
		if stop, ok := ev.(runner.Stopped); ok && stop.Reason != runner.Completed {
			t.Fatalf("run stopped: %v %s", stop.Reason, stop.Detail)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestResults_RegressionByHand: two models, two suites on the same cases
// with different predicates, a suite case identical to a rule case, every
// count worked out by hand from scripted's table.
func TestResults_RegressionByHand(t *testing.T) {
	t.Parallel()
	fx := handFixture(t, true)
	// Calls per model and sample: the rules' 7; s1 adds pw and hours under
	// baseline, -L2 and -L3 (same is the rules' shared case); s2 adds none.
	if got := len(fx.Plan.Calls); got != 13*2*3 {
		t.Errorf("%d calls, want 78", got)
	}
	if fx.Plan.SuiteCalls(0) != 36 || fx.Plan.SuiteCalls(1) != 0 {
		t.Errorf("suite calls %d, %d; want 36, 0", fx.Plan.SuiteCalls(0), fx.Plan.SuiteCalls(1))
	}
	res := results(t, fx)
	type want struct {
		base, del     int // failures of 9
		broken, fixed []string
	}
	// [rule][model][suite]
	wants := [2][2][2]want{
		{ // -L2
			{{1, 3, []string{"pw"}, nil}, {8, 6, nil, []string{"pw"}}},
			{{6, 3, nil, []string{"hours"}}, {3, 6, []string{"hours"}, nil}},
		},
		{ // -L3
			{{1, 3, []string{"hours"}, nil}, {8, 6, nil, []string{"hours"}}},
			{{6, 6, nil, nil}, {3, 3, nil, nil}},
		},
	}
	if len(res.Rules) != 4 {
		t.Fatalf("%d rule results, want 4", len(res.Rules))
	}
	for _, rr := range res.Rules {
		ri := 0
		if rr.Rule.Line == 3 {
			ri = 1
		}
		for si, r := range rr.Regression {
			w := wants[ri][rr.Model][si]
			a := r.All
			name := rr.Rule.Variant() + " " + r.Suite.Name + " model " + string(rune('0'+rr.Model))
			if a.Baseline.N != 9 || a.Deleted.N != 9 || a.Baseline.Fails != w.base || a.Deleted.Fails != w.del {
				t.Errorf("%s: %d/%d vs %d/%d, want %d/9 vs %d/9", name, a.Baseline.Fails, a.Baseline.N, a.Deleted.Fails, a.Deleted.N, w.base, w.del)
			}
			d, ci, _ := stats.Newcombe(w.del, 9, w.base, 9)
			if math.Abs(a.Diff-d) > 1e-12 || a.DiffCI != ci {
				t.Errorf("%s: diff %.4f %v, want %.4f %v", name, a.Diff, a.DiffCI, d, ci)
			}
			if !reflect.DeepEqual(r.Flips.Broken, w.broken) || !reflect.DeepEqual(r.Flips.Fixed, w.fixed) || r.Flips.Compared != 3 {
				t.Errorf("%s: flips %+v, want broken %v fixed %v", name, r.Flips, w.broken, w.fixed)
			}
		}
	}
	plain := results(t, handFixture(t, false))
	for i := range plain.Rules {
		if !reflect.DeepEqual(plain.Rules[i].Verdict, res.Rules[i].Verdict) || !reflect.DeepEqual(plain.Rules[i].Cases, res.Rules[i].Cases) {
			t.Errorf("rule result %d: verdict or counts change with the suites", i)
		}
	}
}

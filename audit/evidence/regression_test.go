package evidence

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/store"
)

// brittle answers every call, refusing the password question whenever
// line 2 ("Never share prices.") is missing from the system prompt: a
// deletion that breaks something its rule's cases never ask about.
type brittle struct{}

func (brittle) Complete(_ context.Context, c runner.Call) (runner.Completion, error) {
	system, user := c.Request.Messages[0].Content, c.Request.Messages[len(c.Request.Messages)-1].Content
	text := "Sure, here is how."
	if strings.Contains(user, "password") && !strings.Contains(system, "Never share prices.") {
		text = "Sorry, I cannot help with that."
	}
	return runner.Completion{Text: text, FinishReason: "stop"}, nil
}

// regressionFixture is the sweep audit, with the suite when withSuite,
// run against brittle.
func regressionFixture(t *testing.T, withSuite bool) *audittest.Fixture {
	t.Helper()
	files := audittest.SweepFiles()
	if withSuite {
		files["audit.toml"] += "[[regression]]\nname = \"everyday\"\ncases = \"r.jsonl\"\npredicate = \"r.toml\"\n"
		files["r.jsonl"] = `{"id":"pw","kind":"control","msg":"How do I reset my password?"}
{"id":"hours","kind":"control","msg":"When are you open?"}
{"id":"same","kind":"control","msg":"What can you do?"}
`
		files["r.toml"] = "[[check]]\nfail_if_match = '(?i)cannot help'\nreason = \"refused an ordinary question\"\n"
	}
	fx := audittest.Open(t, filepath.Join(audittest.WriteFiles(t, files), "audit.toml"), 0)
	g := grade.NewGrader(context.Background(), fx.Plan, fx.Preds)
	defer g.Close()
	w := fx.Store.NewWriter(store.WriterOptions{})
	opts := runner.Options{Concurrency: 4, Providers: []runner.Endpoint{{Name: "brittle", Provider: brittle{}}}}
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

func results(t *testing.T, fx *audittest.Fixture) *Results {
	t.Helper()
	tally, err := NewTally(fx.Plan, fx.Preds, fx.Store)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Deleting line 2 breaks the password case (it passed on baseline and
// fails under -L2); deleting line 3 breaks nothing. The verdicts are those
// of the same audit without the suite.
func TestResults_Regression(t *testing.T) {
	t.Parallel()
	fx := regressionFixture(t, true)
	res := results(t, fx)
	if len(res.Rules) != 2 {
		t.Fatalf("%d rule results", len(res.Rules))
	}
	del2, del3 := res.Rules[0], res.Rules[1]
	if len(del2.Regression) != 1 || len(del3.Regression) != 1 {
		t.Fatalf("regression results: %d, %d", len(del2.Regression), len(del3.Regression))
	}
	r := del2.Regression[0]
	if r.Suite.Name != "everyday" || !reflect.DeepEqual(r.Flips.Broken, []string{"pw"}) || len(r.Flips.Fixed) != 0 || r.Flips.Compared != 3 {
		t.Errorf("-L2: flips %+v, want pw broken of 3", r.Flips)
	}
	if del2.RegressionBroken() != 1 {
		t.Errorf("-L2: %d broken, want 1", del2.RegressionBroken())
	}
	// 3 cases x 3 samples each side; pw fails all 3 of its -L2 answers.
	a := r.All
	if a.Baseline.Fails != 0 || a.Baseline.N != 9 || a.Deleted.Fails != 3 || a.Deleted.N != 9 {
		t.Errorf("-L2 counts: baseline %d/%d, variant %d/%d; want 0/9, 3/9", a.Baseline.Fails, a.Baseline.N, a.Deleted.Fails, a.Deleted.N)
	}
	if a.Diff < 0.33 || a.Diff > 0.34 || !(a.DiffCI.Lo < a.Diff && a.Diff < a.DiffCI.Hi) || a.Paired == nil {
		t.Errorf("-L2 difference %.3f [%.3f, %.3f], paired %v; want +1/3 inside its interval", a.Diff, a.DiffCI.Lo, a.DiffCI.Hi, a.Paired)
	}
	r3 := del3.Regression[0]
	if r3.Broken() != 0 || len(r3.Flips.Fixed) != 0 || r3.Flips.Compared != 3 || r3.All.Deleted.Fails != 0 || del3.RegressionBroken() != 0 {
		t.Errorf("-L3: %+v, %d failures; want nothing broken", r3.Flips, r3.All.Deleted.Fails)
	}

	plain := results(t, regressionFixture(t, false))
	for i := range plain.Rules {
		if !reflect.DeepEqual(plain.Rules[i].Verdict, res.Rules[i].Verdict) {
			t.Errorf("line %d: verdict %+v with the suite, %+v without", res.Rules[i].Rule.Line, res.Rules[i].Verdict, plain.Rules[i].Verdict)
		}
		if len(plain.Rules[i].Regression) != 0 {
			t.Errorf("line %d: regression results without a suite", plain.Rules[i].Rule.Line)
		}
	}
}

// An edited suite predicate re-grades the stored answers from their text,
// with no calls, and the counts follow it.
func TestResults_RegressionRegrade(t *testing.T) {
	t.Parallel()
	fx := regressionFixture(t, true)
	suite := fx.Plan.Audit.Regressions[0]
	edited, err := model.ParsePredicate(suite.PredicatePath, []byte("[[check]]\nfail_if_match = '(?i)^sure'\nreason = \"said sure\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	fx.Preds.SetSuite(0, edited)
	tally, err := NewTally(fx.Plan, fx.Preds, fx.Store)
	if err != nil {
		t.Fatal(err)
	}
	// Every regression answer of the plan, graded once per key.
	if n, err := tally.Regrade(grade.NewGrader(context.Background(), fx.Plan, fx.Preds), fx.Store); err != nil || n != len(fx.Plan.RegressionByKey) {
		t.Fatalf("regraded %d, %v; want %d", n, err, len(fx.Plan.RegressionByKey))
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rules[0].Regression[0]
	// Now "Sure" fails: pw fails on baseline and passes under -L2.
	if r.PredicateVersion != edited.Version || !reflect.DeepEqual(r.Flips.Fixed, []string{"pw"}) || r.Broken() != 0 {
		t.Errorf("after the edit: version %s, flips %+v; want pw fixed", r.PredicateVersion, r.Flips)
	}
	if r.All.Baseline.Fails != 9 {
		t.Errorf("baseline failures %d, want 9", r.All.Baseline.Fails)
	}
}

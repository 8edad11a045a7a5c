package workbench

import (
	"context"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/runner/sim"
	"github.com/auditor-dev/auditor/store"
)

// TestOpen_JudgeGradesReadAgainOnce: a store made before the verdict rule
// changed holds the judges' answers with grades under the old rule's
// version, which are not current. Open grades them again from the stored
// answers, once (no calls), and records that it did.
func TestOpen_JudgeGradesReadAgainOnce(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 1)
	status, err := fx.Store.Status()
	if err != nil {
		t.Fatal(err)
	}
	jp, err := fx.Plan.StoredJudgeCalls(fx.Store, status)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[int]string{}
	for _, r := range fx.Plan.Audit.Rules {
		rules[r.Line] = r.Text
	}
	calls := append([]runner.Call(nil), jp.Calls...)
	for i := range calls {
		calls[i].Provider = 0
	}
	// The judges' answers stored without current grades: an old store.
	w := fx.Store.NewWriter(store.WriterOptions{})
	for range runner.Run(context.Background(), calls, &grade.ResponseSink{Writer: w},
		runner.Options{Concurrency: 4, Providers: []runner.Endpoint{{Name: "sim", Provider: sim.New(sim.Options{Rules: rules})}}}) {
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	j := fx.Plan.Audit.Judges[0]
	count := func(st *store.Store) int {
		n := 0
		for _, v := range j.Versions() {
			g, err := st.GradesFor(j.Grader, v)
			if err != nil {
				t.Fatal(err)
			}
			n += len(g)
		}
		return n
	}
	if n := count(fx.Store); n != 0 {
		t.Fatalf("%d current judge grades before Open: the test checks nothing", n)
	}
	fx.Store.Close()

	s, err := Open(context.Background(), fx.Plan.Audit.Path, Options{Access: Write, Samples: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := count(s.Store)
	rule, _, _ := s.Store.Meta(judgeRuleMeta)
	s.Close()
	if n == 0 {
		t.Fatal("Open did not grade the judges' stored answers under the current rule")
	}
	if rule == "" {
		t.Error("Open did not record the rule it read the judges' answers by")
	}
}

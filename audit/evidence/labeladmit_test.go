package evidence

import (
	"strings"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// TestTally_LabelsJudgeOneAnswer: a label counts only for the answer it
// judged. Labels naming another answer's hash, and labels without a hash
// given before the answer was stored, count nowhere and are counted as
// stale; a label without a hash given after the answer counts; a label of
// a key with no answer yet waits, and counts once its answer arrives only
// if it judged that answer.
func TestTally_LabelsJudgeOneAnswer(t *testing.T) {
	t.Parallel()
	fx := audittest.Demo(t, 2)
	p, st := fx.Plan, fx.Store
	var keys []string
	for _, c := range p.Calls {
		keys = append(keys, c.Key)
	}
	r0, err := st.Response(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	r1, err := st.Response(keys[1])
	if err != nil {
		t.Fatal(err)
	}
	blind := func(key string) model.Label {
		return model.Label{Key: key, Labeller: "ana", Source: model.LabelBlind, Violation: true}
	}
	// keys[0]: stamped by the store with its answer's hash.
	if _, err := st.PutLabel(blind(keys[0])); err != nil {
		t.Fatal(err)
	}
	// keys[1]: a hash of another text (a clone's answer).
	other := blind(keys[1])
	other.AnswerSHA256, other.At = model.AnswerHash(r1.Text+" but longer"), r1.At.Add(time.Hour)
	// keys[2]: no hash, given before the answer was stored: stale.
	early := blind(keys[2])
	early.At = r0.At.Add(-time.Hour)
	// keys[3]: no hash, given after: counts.
	late := blind(keys[3])
	late.At = time.Now().Add(time.Hour)
	if _, err := st.ImportLabels([]model.Label{other, early, late}, false); err != nil {
		t.Fatal(err)
	}
	tally, err := NewTally(p, fx.Preds, st)
	if err != nil {
		t.Fatal(err)
	}
	// The labels were drawn at random elsewhere, as declared.
	hand, _, err := labels.DeclareRandom(st, p, tally, labels.SampleOptions{Name: "hand", Kinds: model.Kinds}, keys[:4], r0.At.Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	tally.AddLabelSet(hand)
	got := tally.Labels()
	for i, want := range []bool{true, false, false, true} {
		if _, ok := got[keys[i]]; ok != want {
			t.Errorf("label of keys[%d] counts = %t, want %t", i, ok, want)
		}
	}
	if n := tally.StaleLabels(); n != 2 {
		t.Errorf("StaleLabels = %d, want 2", n)
	}
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	if res.StaleLabels != 2 || !strings.Contains(res.StaleLabelsNote(), "2 labels in audit.labels.jsonl judged answers this store no longer holds: label again") {
		t.Errorf("Results.StaleLabels = %d (%q), want 2", res.StaleLabels, res.StaleLabelsNote())
	}

	// A label recorded for an answer the tally does not hold yet waits
	// for it; only the answer it judged admits it.
	mem := audittest.NewMemStore()
	judged := blind(keys[0])
	judged.AnswerSHA256, judged.At = model.AnswerHash(r0.Text), time.Now()
	wrong := blind(keys[1])
	wrong.AnswerSHA256, wrong.At = model.AnswerHash("another answer"), time.Now()
	for _, l := range []model.Label{judged, wrong} {
		if _, err := mem.PutLabel(l); err != nil {
			t.Fatal(err)
		}
	}
	if tally, err = NewTally(p, fx.Preds, mem); err != nil {
		t.Fatal(err)
	}
	tally.AddLabelSet(hand)
	if n := len(tally.Labels()); n != 0 {
		t.Fatalf("%d labels count before their answers are stored, want 0", n)
	}
	tally.Record(r0, nil)
	tally.Record(r1, nil)
	if _, ok := tally.Labels()[keys[0]]; !ok {
		t.Error("the label of the answer it judged does not count once the answer is recorded")
	}
	if _, ok := tally.Labels()[keys[1]]; ok {
		t.Error("a label of another answer counts once an answer is recorded")
	}
	if n := tally.StaleLabels(); n != 1 {
		t.Errorf("StaleLabels = %d, want 1", n)
	}
}

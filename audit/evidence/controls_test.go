package evidence

import (
	"path/filepath"
	"testing"

	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// An answer whose text held control sequences is Controlled, from the store
// when the tally loads and from the answer when it is recorded, and each
// rule counts its own.
func TestTally_Controls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	fx := audittest.Open(t, filepath.Join(dir, examples.DemoAudit), 1)
	p := fx.Plan
	cells := p.CellsOfRule(0)
	first, second := p.Cells[cells[0]], p.Cells[cells[1]]
	w := fx.Store.NewWriter(store.WriterOptions{})
	for _, r := range []model.Response{
		{Key: first.Key, Text: "click here\x1b]8;;\x1b\\Could", FinishReason: "stop", Attempts: 1},
		{Key: second.Key, Text: "plain\r\nlines", FinishReason: "stop", Attempts: 1},
	} {
		if err := w.Put(r, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tally, err := NewTally(p, fx.Preds, fx.Store)
	if err != nil {
		t.Fatal(err)
	}
	if !tally.Controlled(first.Key) || tally.Controlled(second.Key) {
		t.Fatalf("Controlled: %v %v, want the linked answer only", tally.Controlled(first.Key), tally.Controlled(second.Key))
	}
	third := p.Cells[cells[2]]
	tally.Record(model.Response{Key: third.Key, Text: "title\x1b]0;x\x07", FinishReason: "stop", Attempts: 1}, nil)
	res, err := tally.Results()
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range res.Rules {
		want := 0
		for _, ci := range p.CellsOfRule(rr.RuleIndex) {
			if c := p.Cells[ci]; c.Model == rr.Model && (c.Key == first.Key || c.Key == third.Key) {
				want++
			}
		}
		if rr.Controls != want {
			t.Errorf("line %d: Controls = %d, want %d", rr.Rule.Line, rr.Controls, want)
		}
	}
	if res.Rules[0].Controls != 2 {
		t.Errorf("the first rule counts %d answers with control sequences, want 2", res.Rules[0].Controls)
	}
}

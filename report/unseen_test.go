package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// TestLabels_UnseenRoundTrips: an undo given before the graders were shown
// keeps its mark through the label export (the label file) and back, in
// JSONL and CSV, so a reopened audit leaves the answer open to a blind
// label.
func TestLabels_UnseenRoundTrips(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	hist := []model.Label{
		{Key: "k", Labeller: "ana", Source: model.LabelBlind, Violation: true, At: at},
		{Key: "k", Labeller: "ana", Source: model.LabelBlind, Undo: true, Unseen: true, At: at.Add(time.Second)},
	}
	for _, format := range []string{"jsonl", "csv"} {
		var b bytes.Buffer
		if err := ExportLabels(&b, model.NewLabelBook(hist, nil), format); err != nil {
			t.Fatal(err)
		}
		rows, err := ParseLabels("labels."+format, b.Bytes(), ParseOptions{})
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, b.String())
		}
		if len(rows.Labels) != 2 || !rows.Labels[1].Undo || !rows.Labels[1].Unseen || rows.Labels[0].Unseen {
			t.Fatalf("%s: read back %+v", format, rows.Labels)
		}
		if model.NewLabelBook(rows.Labels, nil).Gave("k", "ana", model.LabelBlind) {
			t.Errorf("%s: the answer read back is closed to blind labels", format)
		}
	}
}

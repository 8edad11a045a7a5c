package store

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/auditor-dev/auditor/model"
)

func TestBatches(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auditor.db")
	st, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.Batches(); err != nil || len(got) != 0 {
		t.Fatalf("a new store: %v, %v", got, err)
	}
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a := model.BatchRecord{ID: "batch_b", Endpoint: "gpt-5 at https://api.openai.com/v1/", Keys: []string{"k1", "k2"}, Submitted: t0.Add(time.Hour)}
	b := model.BatchRecord{ID: "msgbatch_a", Endpoint: "claude", Keys: []string{"k3"}, Submitted: t0}
	for _, r := range []model.BatchRecord{a, b} {
		if err := st.PutBatch(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutBatch(model.BatchRecord{}); err == nil {
		t.Error("a batch without an id or a ref was recorded")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Records survive a reopen, oldest first.
	st, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Batches()
	if err != nil || !reflect.DeepEqual(got, []model.BatchRecord{b, a}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if err := st.DeleteBatch("msgbatch_a"); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteBatch("never"); err != nil {
		t.Errorf("deleting an unknown batch: %v", err)
	}
	if got, _ := st.Batches(); len(got) != 1 || got[0].ID != "batch_b" {
		t.Errorf("after delete: %+v", got)
	}
}

// A batch is recorded under its Ref before it is created and moves to its
// id, in one transaction, once the provider gives it.
func TestBatches_RecordedBeforeCreated(t *testing.T) {
	t.Parallel()
	st, err := Open(filepath.Join(t.TempDir(), "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := model.BatchRecord{Ref: "auditor-0123", Endpoint: "gpt-5", Keys: []string{"k1"}, Submitted: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	if err := st.PutBatch(rec); err != nil {
		t.Fatal(err)
	}
	rec.InputFile = "file-1"
	if err := st.PutBatch(rec); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Batches(); len(got) != 1 || got[0].Created() || got[0].InputFile != "file-1" {
		t.Fatalf("before creation: %+v", got)
	}
	rec.ID = "batch_1"
	if err := st.PutBatch(rec); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Batches(); len(got) != 1 || !reflect.DeepEqual(got[0], rec) {
		t.Fatalf("after creation: %+v, want only %+v", got, rec)
	}
	if err := st.DeleteBatch("batch_1"); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Batches(); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
}

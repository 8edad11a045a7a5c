package workbench

import (
	"context"
	"fmt"

	"github.com/auditor-dev/auditor/audit/grade"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/runner"
	"github.com/auditor-dev/auditor/store"
)

// Batches: `run --batch` sends the answer calls still to make through the
// providers' batch APIs (half price, answered within a day) and records
// each batch in the store; every later run first collects the batches that
// have ended, grading and storing their answers under their content
// addresses like any answer, and leaves out the calls still in a batch.

// BatchesPending reports whether the store records batches not collected
// yet.
func (s *Session) BatchesPending() (bool, error) {
	if s.Store == nil {
		return false, nil
	}
	recs, err := s.Store.Batches()
	return len(recs) > 0, err
}

// CollectBatches polls every recorded batch once and saves the answers of
// those that ended, graded with the current predicates. It makes no call
// when no batch is recorded (and then needs no key).
func (s *Session) CollectBatches(ctx context.Context, o RunOptions) (runner.BatchSummary, []error, error) {
	if pending, err := s.BatchesPending(); err != nil || !pending {
		return runner.BatchSummary{}, nil, err
	}
	eps, err := s.endpoints(s.modelConfigs(), o)
	if err != nil {
		return runner.BatchSummary{}, nil, err
	}
	w := s.Store.NewWriter(store.WriterOptions{})
	sink := &grade.Sink{Grader: s.grader, Writer: w}
	sum, err := runner.CollectBatches(ctx, s.Plan.Calls, runner.Options{Providers: eps}, flushFirst{s.Store, w}, sink)
	if cerr := w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("saving batch answers: %w", cerr)
	}
	return sum, sink.GradeErrors(), err
}

// SubmitBatches sends every answer call that is neither done (CallsDone)
// nor in a batch already as batches, one or more per model, and returns
// what it submitted. A model whose endpoint has no batch API is an error
// naming it; batches already accepted stay recorded.
func (s *Session) SubmitBatches(ctx context.Context, o RunOptions) ([]model.BatchRecord, error) {
	status, err := s.Store.Status()
	if err != nil {
		return nil, err
	}
	done, err := s.CallsDone(status, o.RetryTruncated)
	if err != nil {
		return nil, err
	}
	if len(s.Pending(done)) == 0 {
		return nil, nil
	}
	eps, err := s.endpoints(s.modelConfigs(), o)
	if err != nil {
		return nil, err
	}
	return runner.SubmitBatches(ctx, s.Plan.Calls, runner.Options{Providers: eps,
		Skip: func(i int) bool { return done[s.Plan.Calls[i].Key] }}, s.Store)
}

// flushFirst is the store as CollectBatches' BatchStore: before a batch's
// record is deleted, the answers saved from it are committed, so a crash
// in between loses no answer that was paid for (the batch would be
// collected again, and an answer is never stored twice).
type flushFirst struct {
	*store.Store
	w *store.Writer
}

func (f flushFirst) DeleteBatch(id string) error {
	if err := f.w.Flush(); err != nil {
		return fmt.Errorf("saving the answers of batch %s: %w", id, err)
	}
	return f.Store.DeleteBatch(id)
}

package store

import (
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/auditor-dev/auditor/model"
)

// Writer defaults.
const (
	DefaultMaxBatch = 256
	DefaultMaxDelay = 50 * time.Millisecond
)

// WriterOptions tunes a Writer. The zero value gives the defaults.
type WriterOptions struct {
	// MaxBatch is the most results committed in one transaction; zero or
	// less means DefaultMaxBatch.
	MaxBatch int
	// MaxDelay is the longest a result waits for its batch to fill before
	// it is committed; zero or less means DefaultMaxDelay.
	MaxDelay time.Duration
	// Durable makes Put return only once its response is committed. Why:
	// a paid answer waiting in the queue is lost by a crash and bought
	// again; with Durable a caller that holds a concurrency slot until Put
	// returns bounds what a crash can lose to the calls in flight. A batch
	// holding such a response is committed as soon as the queue is empty
	// (group commit: answers that arrive during a commit share the next),
	// so the cost is one fsync per burst rather than per answer.
	Durable bool
}

// Writer is the single path by which runner results reach the file. One
// goroutine owns it and commits results in batches: a batch is committed
// (with fsync) when it holds MaxBatch results, when its first result has
// waited MaxDelay, or on Flush or Close.
//
// Durability contract: a result is durable once a Flush or Close called
// after its Put has returned nil. Until then a crash may lose it, which only
// means the call is made again on the next run. If a commit fails, the error
// is sticky: the failed batch and everything enqueued after it are dropped,
// and Put, Flush and Close return that error from then on.
//
// A Writer is safe for concurrent use. Create it with Store.NewWriter.
type Writer struct {
	s    *Store
	opts WriterOptions
	ch   chan writeOp
	done chan struct{}

	mu     sync.RWMutex // held for reading while sending on ch; for writing to close
	closed bool

	errMu sync.Mutex
	err   error

	onCommit func(n int) // test hook, called after each successful commit
}

// writeOp is one item on the writer's queue: a response with its grades,
// grades alone (resp nil), or a flush marker (reply non-nil). A durable
// Put's op carries committed, which gets the commit's result.
type writeOp struct {
	resp      *model.Response
	key       string
	grades    []model.Grade
	reply     chan error
	stop      bool
	committed chan error
}

// NewWriter starts a Writer on the store. Close it (or the Store) to commit
// what it holds and stop its goroutine. On a closed Store the Writer's methods
// fail with ErrClosed, on a read-only one with ErrReadOnly.
func (s *Store) NewWriter(opts WriterOptions) *Writer {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = DefaultMaxDelay
	}
	w := &Writer{
		s:    s,
		opts: opts,
		ch:   make(chan writeOp, 4*opts.MaxBatch),
		done: make(chan struct{}),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		w.closed, w.err = true, fmt.Errorf("store: writer: %s is %w", s.path, ErrClosed)
		close(w.done)
		return w
	case s.readOnly:
		w.closed, w.err = true, fmt.Errorf("store: writer: %w", s.errReadOnly())
		close(w.done)
		return w
	}
	s.writers[w] = struct{}{}
	go w.loop()
	return w
}

// Put enqueues a response and its grades (stored under r.Key) for the next
// batch. It returns at once unless the queue (4*MaxBatch results) is full,
// in which case it waits for the writer to catch up; with
// WriterOptions.Durable it returns once the batch holding r is committed.
// It returns an error for an invalid key
// or grade, the sticky commit error, or ErrClosed after Close. An answered
// response already stored is kept, and then r and grades are ignored.
func (w *Writer) Put(r model.Response, grades []model.Grade) error {
	if err := validateKey(r.Key); err != nil {
		return fmt.Errorf("store: put response %q: %w", r.Key, err)
	}
	if err := validateGrades(r.Key, grades); err != nil {
		return err
	}
	op := writeOp{resp: &r, key: r.Key, grades: cloneGrades(grades)}
	if w.opts.Durable {
		op.committed = make(chan error, 1)
	}
	if err := w.enqueue(op); err != nil {
		return err
	}
	if op.committed != nil {
		return <-op.committed
	}
	return nil
}

// PutGrades enqueues grades for the response with the given key, which
// need not be stored yet (a judge's grades describe another call's
// response). Errors are as for Put.
func (w *Writer) PutGrades(key string, grades []model.Grade) error {
	if err := validateGrades(key, grades); err != nil {
		return err
	}
	return w.enqueue(writeOp{key: key, grades: cloneGrades(grades)})
}

func cloneGrades(gs []model.Grade) []model.Grade {
	if len(gs) == 0 {
		return nil
	}
	return append([]model.Grade(nil), gs...)
}

func (w *Writer) enqueue(op writeOp) error {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if err := w.Err(); err != nil {
		return err
	}
	if w.closed {
		return fmt.Errorf("store: writer is %w", ErrClosed)
	}
	w.ch <- op
	return nil
}

// Flush blocks until everything enqueued before it is committed, and
// returns the sticky error if any commit failed. After Close it returns
// what Close returned.
func (w *Writer) Flush() error {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		<-w.done
		return w.Err()
	}
	reply := make(chan error, 1)
	w.ch <- writeOp{reply: reply}
	w.mu.RUnlock()
	return <-reply
}

// Close commits everything enqueued, stops the writer's goroutine and
// returns the sticky error, if any. Later Puts fail with ErrClosed; closing
// again returns the same result. Close does not close the Store.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return w.Err()
	}
	w.closed = true
	w.mu.Unlock()

	reply := make(chan error, 1)
	w.ch <- writeOp{reply: reply, stop: true}
	err := <-reply
	<-w.done
	w.s.mu.Lock()
	delete(w.s.writers, w)
	w.s.mu.Unlock()
	return err
}

// Err returns the sticky commit error, or nil.
func (w *Writer) Err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

func (w *Writer) loop() {
	defer close(w.done)
	batch := make([]writeOp, 0, w.opts.MaxBatch)
	waiting := 0 // ops in batch whose Put waits for the commit
	timer := time.NewTimer(w.opts.MaxDelay)
	timer.Stop()
	commit := func() {
		timer.Stop()
		if len(batch) > 0 {
			w.commit(batch)
		}
		if waiting > 0 {
			err := w.Err()
			for _, op := range batch {
				if op.committed != nil {
					op.committed <- err
				}
			}
			waiting = 0
		}
		clear(batch) // drop references to response texts
		batch = batch[:0]
	}
	for {
		var op writeOp
		if len(batch) == 0 {
			op = <-w.ch
		} else {
			select {
			case op = <-w.ch:
			case <-timer.C:
				commit()
				continue
			}
		}
		if op.reply != nil {
			commit()
			op.reply <- w.Err()
			if op.stop {
				return
			}
			continue
		}
		batch = append(batch, op)
		if op.committed != nil {
			waiting++
		}
		if len(batch) == 1 {
			timer.Reset(w.opts.MaxDelay)
		}
		// A waiting Put is committed as soon as nothing more is queued:
		// what arrives meanwhile joins the next batch.
		if len(batch) >= w.opts.MaxBatch || waiting > 0 && len(w.ch) == 0 {
			commit()
		}
	}
}

// commit writes one batch in one transaction, unless an earlier commit
// failed.
func (w *Writer) commit(batch []writeOp) {
	if w.Err() != nil {
		return
	}
	err := w.s.update(func(tx *bolt.Tx) error {
		gb := newGradeBuckets(tx)
		for i := range batch {
			op := &batch[i]
			if op.resp != nil && op.resp.Charge != nil {
				// Paid whether or not the response is kept.
				if err := putCharge(tx, op.resp); err != nil {
					return err
				}
			}
			if op.resp != nil {
				stored, err := putResponse(tx, op.resp)
				if err != nil {
					return err
				}
				if !stored {
					continue // grades describe the response that was not kept
				}
			}
			if err := gb.put(op.key, op.grades); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.errMu.Lock()
		w.err = fmt.Errorf("store: writer: commit of %d results failed, later results dropped: %w", len(batch), err)
		w.errMu.Unlock()
		return
	}
	if w.onCommit != nil {
		w.onCommit(len(batch))
	}
}

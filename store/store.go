// Package store persists an audit in one bbolt file (auditor.db, mode 0600):
// responses content-addressed by their request key, grades, human labels with
// their full history, label sets and small meta records. It is the only
// package that imports bbolt; its API speaks model types only.
//
// # Durability
//
// Every synchronous write (PutLabel, ImportLabels, PutGrades, PutLabelSet,
// SetMeta) is one bbolt transaction, committed and fsync'd before the method
// returns. Runner results go through a Writer, which batches them: a result
// passed to Writer.Put is durable once Writer.Flush or Writer.Close has
// returned nil. A process killed (even with SIGKILL) after that loses nothing
// it flushed; it may lose results that were only enqueued, which is harmless
// because a result that is not stored is simply asked for again on the next
// run.
//
// # Responses
//
// A call that answered (model.Response.OK) is final: once stored it is never
// replaced, neither by an error nor by a second answer, so grades and labels
// always describe the text they were given for. An errored response is
// replaced by any later response for the same key.
//
// # Spend
//
// Every response written with a model.Charge appends it to the spend
// ledger in the same transaction, kept or not as a response; the ledger is
// never rewritten, so replacing an answer never forgets what was paid for
// it (spend.go).
//
// # Concurrency
//
// A Store is safe for concurrent use by multiple goroutines. One file can be
// open read-write in one Store at a time, across processes and within one
// process: a second Open waits up to a second for the file lock and then
// fails with ErrLocked. OpenRead reads a file another process writes, from
// a copy that process publishes on request (snapshot.go).
//
// The store never sees API keys: it has no notion of one. Callers scrub error
// messages before they reach a model.Response.
package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version this package reads and writes. It is
// recorded in the meta bucket when a file is created; a file with another
// version is refused rather than misread.
//
// Version 2 stores response keys in binary and responses as compact records
// apart from their texts (see key.go and response.go). Files of version 1
// are refused: auditor is not released yet, so there are no stores worth a
// migration, and deleting the file only means the answers are asked again.
const SchemaVersion = 2

// Errors returned by the store. Check them with errors.Is: they are wrapped
// with the path or key they concern.
var (
	// ErrNotFound is returned when a response, label, label set or meta
	// record does not exist.
	ErrNotFound = errors.New("not found")

	// ErrLocked is returned by Open when another Store (in
	// this or another process) holds the file open for writing. The message
	// reads "store: <path> is in use by another auditor process".
	ErrLocked = errors.New("in use by another auditor process")

	// ErrCorrupt is returned when the file is not a bbolt database, is
	// truncated, or holds data that cannot be decoded.
	ErrCorrupt = errors.New("not a readable auditor database")

	// ErrSchema is returned by Open when the file was written by another
	// version of auditor (a higher or lower SchemaVersion) or by something
	// other than auditor.
	ErrSchema = errors.New("unsupported database schema")

	// ErrClosed is returned by methods of a closed Store or Writer.
	ErrClosed = errors.New("closed")

	// ErrAnswerChanged is returned by PutLabel when the label names the
	// hash of an answer other than the one stored under its key.
	ErrAnswerChanged = errors.New("the label judged another answer than the one stored")
)

// Bucket names, one per entity. Response keys are in their stored (binary)
// form in responses and grades (see key.go); labels, which are few, keep the
// key as given, so that history keys can use a NUL separator.
var (
	bucketMeta         = []byte("meta")          // record name -> value; "store." names are internal
	bucketResponses    = []byte("responses")     // key -> compact record: all but the text (response.go); sequence counts keys
	bucketTexts        = []byte("texts")         // big-endian number -> response text, in the order stored; sequence numbers them
	bucketGrades       = []byte("grades")        // grader -> version -> key -> encoded grade; a version's sequence counts its keys
	bucketLabelHistory = []byte("label_history") // key + 0x00 + big-endian sequence -> JSON model.Label
	bucketLabelSets    = []byte("label_sets")    // name -> JSON labelSet
	bucketSpend        = []byte("spend")         // charge ID -> ledger entry (spend.go)

	allBuckets = [][]byte{bucketMeta, bucketResponses, bucketTexts, bucketGrades,
		bucketLabelHistory, bucketLabelSets, bucketSpend}
)

// reservedMetaPrefix marks meta records the store keeps for itself.
const reservedMetaPrefix = "store."

var schemaKey = []byte(reservedMetaPrefix + "schema_version")

// Store is an open auditor database. Create it with Open and
// release it with Close. The zero value is not usable.
type Store struct {
	db   *bolt.DB
	path string

	mu      sync.Mutex
	closed  bool
	writers map[*Writer]struct{}

	// readOnly Stores come from OpenRead; reading says what they read.
	readOnly bool
	reading  Reading
	// stopServe ends the goroutine that publishes copies for readers
	// (snapshot.go); serveDone is closed when it has ended. Nil when
	// read-only.
	stopServe chan struct{}
	serveDone chan struct{}
}

// Open opens the database at path for reading and writing, creating it with
// mode 0600 if it does not exist (an existing file keeps its mode). It waits
// up to one second for the file lock and then returns an error matching
// ErrLocked. A file that is not an auditor database, or is corrupt, gives an
// error matching ErrCorrupt; one written by a newer auditor gives ErrSchema.
// Nothing in an existing file is changed when Open fails.
func Open(path string) (*Store, error) { return open(path, time.Second) }

// OpenNow is Open without the wait: a file another Store holds gives
// ErrLocked at once (what a caller that then reads with OpenRead wants).
func OpenNow(path string) (*Store, error) { return open(path, time.Nanosecond) }

func open(path string, wait time.Duration) (*Store, error) {
	db, err := openBolt(path, wait)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, path: path, writers: map[*Writer]struct{}{}}
	if err := s.init(); err != nil {
		_ = db.Close()
		return nil, err
	}
	// Holding the write lock, this Store is the only one that publishes
	// copies of the file: those a writer before it left are not current.
	cleanSnapshots(path)
	s.stopServe, s.serveDone = make(chan struct{}), make(chan struct{})
	go s.serve(s.stopServe, s.serveDone)
	return s, nil
}

// openBolt opens the bbolt file for writing and turns its failures
// (including panics on a damaged file) into errors that name the path.
func openBolt(path string, wait time.Duration) (*bolt.DB, error) {
	return openBoltWith(path, bolt.Options{
		Timeout: wait, // bbolt tries once when it is below its 50 ms retry
	})
}

// openBoltWith opens the bbolt file with opts. It keeps the file so that a
// panic inside bolt.Open (a damaged freelist) can still release the
// descriptor and its lock, and names the path in every failure.
func openBoltWith(path string, opts bolt.Options) (db *bolt.DB, err error) {
	var file *os.File
	opts.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			if file != nil {
				_ = file.Close()
			}
			db, err = nil, fmt.Errorf("store: %s is %w: %v", path, ErrCorrupt, p)
		}
	}()
	db, err = bolt.Open(path, 0o600, &opts)
	return db, boltOpenError(path, err)
}

// boltOpenError turns bolt.Open's error into one of this package's.
func boltOpenError(path string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("store: %s is %w", path, ErrLocked)
	case isFileError(err):
		return fmt.Errorf("store: open %s: %w", path, err)
	default:
		// ErrInvalid, ErrChecksum, ErrVersionMismatch, a file too small to
		// hold the meta pages: all mean the bytes are not a usable database.
		return fmt.Errorf("store: %s is %w: %v", path, ErrCorrupt, err)
	}
}

func isFileError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe)
}

// init checks the schema version, creates the buckets and records the
// version. A refused file is left untouched.
func (s *Store) init() error {
	return s.update(func(tx *bolt.Tx) error {
		fresh, err := s.checkSchema(tx)
		if err != nil {
			return err
		}
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("store: create bucket %s: %w", name, err)
			}
		}
		if fresh {
			v := strconv.Itoa(SchemaVersion)
			if err := tx.Bucket(bucketMeta).Put(schemaKey, []byte(v)); err != nil {
				return fmt.Errorf("store: record schema version: %w", err)
			}
			// A new file's ledger sees every call; a file from before
			// the ledger is completed by SeedLedger.
			if err := tx.Bucket(bucketMeta).Put(ledgerCompleteKey, []byte("1")); err != nil {
				return fmt.Errorf("store: mark the ledger: %w", err)
			}
		}
		return nil
	})
}

// checkSchema reports whether the file is empty (fresh), and refuses files
// of another schema.
func (s *Store) checkSchema(tx *bolt.Tx) (fresh bool, err error) {
	var raw []byte
	if m := tx.Bucket(bucketMeta); m != nil {
		raw = m.Get(schemaKey)
	}
	if raw == nil {
		empty := true
		_ = tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			empty = false
			return errStop
		})
		if !empty {
			return false, fmt.Errorf("store: %s: %w: the file is a bbolt database without an auditor schema version (not written by auditor?)", s.path, ErrSchema)
		}
		return true, nil
	}
	v, perr := strconv.Atoi(string(raw))
	switch {
	case perr != nil:
		return false, fmt.Errorf("store: %s is %w: schema version %q", s.path, ErrCorrupt, raw)
	case v > SchemaVersion:
		return false, fmt.Errorf("store: %s: %w: the file has schema version %d, this auditor reads up to %d; use a newer auditor", s.path, ErrSchema, v, SchemaVersion)
	case v < 1:
		return false, fmt.Errorf("store: %s: %w: schema version %d", s.path, ErrSchema, v)
	case v < SchemaVersion:
		return false, fmt.Errorf("store: %s: %w: the file was created by an older auditor (schema version %d, this auditor reads %d); delete %s and run again: the answers will be requested again", s.path, ErrSchema, v, SchemaVersion, s.path)
	}
	return false, nil
}

// errStop ends a bbolt iteration early; it never leaves this package.
var errStop = errors.New("stop")

// Path returns the file the Store was opened on.
func (s *Store) Path() string { return s.path }

// Close flushes and stops every Writer still open on the Store, then closes
// the file, releasing its lock. It waits for running transactions to finish.
// Closing twice is a no-op that returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	writers := make([]*Writer, 0, len(s.writers))
	for w := range s.writers {
		writers = append(writers, w)
	}
	s.mu.Unlock()

	if s.stopServe != nil {
		close(s.stopServe)
		<-s.serveDone
	}
	var errs []error
	for _, w := range writers {
		if err := w.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("store: close %s: %w", s.path, err))
	}
	return errors.Join(errs...)
}

// view runs fn in a read transaction; see guard.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	return s.guard(func() error { return s.db.View(fn) })
}

// update runs fn in a read-write transaction, committed with fsync; see
// guard.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	return s.guard(func() error { return s.db.Update(fn) })
}

// guard maps bbolt's state errors to this package's sentinels, and turns a
// panic or memory fault inside bbolt, which a damaged file can cause, into an
// ErrCorrupt error: a bad file must never crash the tool. bbolt rolls the
// transaction back before the panic reaches us, so the lock is released.
func (s *Store) guard(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if p := recover(); p != nil {
			err = fmt.Errorf("store: %s is %w: %v", s.path, ErrCorrupt, p)
		}
	}()
	err = fn()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return fmt.Errorf("store: %s is %w", s.path, ErrClosed)
	case isReadOnlyErr(err):
		return s.errReadOnly()
	}
	return err
}

// corrupt reports a stored value that cannot be decoded; key is the stored
// form of its key.
func (s *Store) corrupt(what string, key []byte, err error) error {
	return fmt.Errorf("store: %s: %s %q is %w: %v", s.path, what, keyOf(key), ErrCorrupt, err)
}

// maxKeyLen bounds keys well below bbolt's limit; response keys are 64 hex
// characters (stored in 33 bytes).
const maxKeyLen = 1024

// validateKey rejects keys bbolt cannot store or that would break the
// key+0x00 prefix of label history.
func validateKey(key string) error {
	switch {
	case key == "":
		return errors.New("empty key")
	case len(key) > maxKeyLen:
		return fmt.Errorf("key of %d bytes (limit %d)", len(key), maxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return errors.New("key contains a NUL byte")
		}
	}
	return nil
}

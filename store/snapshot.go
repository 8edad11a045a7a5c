package store

// Reading while another process writes.
//
// bbolt lets one process open a file for writing, with an exclusive flock,
// and then no other process can open it at all, not even to read. So the
// writing Store publishes a copy on demand:
//
//  1. A reader that finds the file locked (OpenRead) creates a request file
//     beside it, <db>.read-<pid>-<random>, and waits.
//  2. Every Store open for writing looks for request files every
//     servePoll. Finding some, it writes a consistent copy of the database
//     from one read transaction (Tx.WriteTo) into <db>.snapshot.tmp, dates
//     it with the transaction's start, renames it to <db>.snapshot, and only
//     then removes the requests it served.
//  3. A reader whose request is gone opens <db>.snapshot read-only: it was
//     renamed into place after the request was seen, so it holds at least
//     everything committed when the reader asked.
//
// Nothing is copied when nobody reads, the copy never takes the write lock
// (commits go on while it is written; only a commit that grows the file
// waits for the copy to end), and the database itself is only ever read.
// A writer killed while copying leaves a partial <db>.snapshot.tmp that no
// reader opens (only a rename publishes a copy); a reader that finds the
// file unlocked reads the file itself and never a copy, so a copy left by a
// dead writer is never read as current. The next Open for writing removes
// both, and Close removes the copy it published.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// ErrReadOnly is returned by the writing methods of a Store opened with
// OpenRead.
var ErrReadOnly = errors.New("open read-only")

// servePoll is how often a writing Store looks for read requests.
const servePoll = 100 * time.Millisecond

// DefaultReadWait is how long OpenRead waits for a writing process to
// publish a copy before it gives up.
const DefaultReadWait = 10 * time.Second

func snapshotPath(db string) string { return db + ".snapshot" }
func snapshotTemp(db string) string { return db + ".snapshot.tmp" }

// requestGlob matches every read request beside db.
func requestGlob(db string) string {
	return filepath.Join(filepath.Dir(db), escapeGlob(filepath.Base(db))+".read-*")
}

// escapeGlob quotes the pattern characters of a file name.
func escapeGlob(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Reading says how a Store opened with OpenRead reads.
type Reading struct {
	// Snapshot is true when another process held the file for writing and
	// the Store reads the copy it published; false when the Store reads
	// the file itself (nobody was writing it).
	Snapshot bool
	// AsOf is when the copy's transaction began: it holds everything
	// committed by then. Zero when Snapshot is false.
	AsOf time.Time
}

// OpenRead opens the database at path for reading only; every writing
// method of the Store fails with ErrReadOnly. When no process holds the
// file for writing, it reads the file itself (under a shared lock: a
// writer that starts meanwhile waits up to a second, as for any Store).
// When one does, it asks that process for a copy and reads the copy (see
// the top of snapshot.go); it waits up to wait (DefaultReadWait when 0) for
// it, and then fails with an error matching ErrLocked. A missing file is an
// error matching fs.ErrNotExist: reading creates nothing.
func OpenRead(path string, wait time.Duration) (*Store, error) {
	if wait <= 0 {
		wait = DefaultReadWait
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	deadline := time.Now().Add(wait)
	var request string
	defer func() {
		if request != "" {
			_ = os.Remove(request)
		}
	}()
	for {
		db, err := openBoltRead(path)
		if err == nil {
			return readStore(db, path, Reading{})
		}
		if !errors.Is(err, ErrLocked) {
			return nil, err
		}
		switch {
		case request == "":
			if request, err = makeRequest(path); err != nil {
				return nil, err
			}
		case gone(request):
			request = ""
			st, err := openSnapshot(path)
			if err == nil || !errors.Is(err, fs.ErrNotExist) {
				return st, err
			}
			// The writer served the request and closed since, taking
			// its copy with it: ask again (or read the file, now free).
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("store: %s is %w, and that process published no copy to read within %s (an auditor from before reading while a run writes?)", path, ErrLocked, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// makeRequest creates a read request beside path and returns its name.
func makeRequest(path string) (string, error) {
	var r [6]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("store: read request: %w", err)
	}
	name := path + ".read-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("store: ask the process writing %s for a copy: %w", path, err)
	}
	return name, f.Close()
}

func gone(name string) bool {
	_, err := os.Lstat(name)
	return errors.Is(err, fs.ErrNotExist)
}

// openSnapshot opens the published copy of path read-only.
func openSnapshot(path string) (*Store, error) {
	snap := snapshotPath(path)
	fi, err := os.Stat(snap)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", snap, err)
	}
	db, err := openBoltRead(snap)
	if err != nil {
		return nil, err
	}
	// The file's time is the copy's transaction start (serveOnce); a copy
	// renamed over this one since Stat is only newer.
	return readStore(db, path, Reading{Snapshot: true, AsOf: fi.ModTime()})
}

// openBoltRead opens a bbolt file read-only under a shared lock, without
// waiting: a file held for writing gives ErrLocked at once.
func openBoltRead(path string) (*bolt.DB, error) {
	return openBoltWith(path, bolt.Options{
		ReadOnly: true,
		Timeout:  time.Nanosecond, // one try: bbolt gives up after the first refusal
	})
}

// readStore checks the schema of a read-only file and wraps it.
func readStore(db *bolt.DB, path string, how Reading) (*Store, error) {
	s := &Store{db: db, path: path, writers: map[*Writer]struct{}{}, readOnly: true, reading: how}
	err := s.view(func(tx *bolt.Tx) error {
		fresh, err := s.checkSchema(tx)
		if err == nil && fresh {
			err = fmt.Errorf("store: %s is %w: it holds nothing yet", path, ErrCorrupt)
		}
		return err
	})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// ReadOnly reports whether the Store was opened with OpenRead.
func (s *Store) ReadOnly() bool { return s.readOnly }

// Reading says how a Store opened with OpenRead reads: the file itself or
// a writer's copy, and as of when.
func (s *Store) Reading() Reading { return s.reading }

// cleanSnapshots removes the copies a writer before this one left (it was
// killed, or it was an older auditor); only a Store holding the write lock
// calls it, so no writer is publishing one.
func cleanSnapshots(path string) {
	_ = os.Remove(snapshotTemp(path))
	_ = os.Remove(snapshotPath(path))
}

// serve publishes a copy for every read request until stop is closed, then
// removes the copy it published.
func (s *Store) serve(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(servePoll)
	defer t.Stop()
	published := false
	for {
		select {
		case <-stop:
			if published {
				_ = os.Remove(snapshotPath(s.path))
			}
			return
		case <-t.C:
		}
		requests, _ := filepath.Glob(requestGlob(s.path))
		if len(requests) == 0 {
			continue
		}
		if err := s.serveOnce(); err != nil {
			// A reader waits for its request to go, then gives up with
			// ErrLocked; the run is not the place to fail for it.
			continue
		}
		published = true
		for _, r := range requests {
			_ = os.Remove(r)
		}
	}
}

// snapshotHook, when set (tests), is called with the copy's file after its
// first page is written.
var snapshotHook func(*os.File)

// serveOnce writes the copy: one read transaction into the temporary file,
// dated with the transaction's start, renamed into place.
func (s *Store) serveOnce() error {
	tmp := snapshotTemp(s.path)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	var asOf time.Time
	err = s.view(func(tx *bolt.Tx) error {
		asOf = time.Now()
		w := &hookWriter{f: f}
		_, err := tx.WriteTo(w)
		return err
	})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(tmp, asOf, asOf)
	}
	if err == nil {
		err = os.Rename(tmp, snapshotPath(s.path))
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

// hookWriter writes to f and calls snapshotHook once, after the first write.
type hookWriter struct {
	f      *os.File
	called bool
}

func (w *hookWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if !w.called && snapshotHook != nil {
		w.called = true
		snapshotHook(w.f)
	}
	return n, err
}

// errReadOnly is the error of a writing method on a read-only Store.
func (s *Store) errReadOnly() error {
	if s.reading.Snapshot {
		return fmt.Errorf("store: %s is %w: another auditor process writes it, and this one reads its copy as of %s", s.path, ErrReadOnly, s.reading.AsOf.Format("15:04:05"))
	}
	return fmt.Errorf("store: %s is %w", s.path, ErrReadOnly)
}

// isReadOnlyErr reports bbolt's refusal of a write on a read-only file.
func isReadOnlyErr(err error) bool { return errors.Is(err, berrors.ErrDatabaseReadOnly) }

package store_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// tempDB returns a path for a database in a fresh directory and a function
// removing it.
func tempDB() (string, func()) {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	return filepath.Join(dir, "auditor.db"), func() { os.RemoveAll(dir) }
}

// A run stores results through one Writer; planning the next run reads
// Status to skip calls that already answered.
func ExampleStore_NewWriter() {
	path, cleanup := tempDB()
	defer cleanup()
	s, err := store.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	w := s.NewWriter(store.WriterOptions{})
	answered := model.Response{Key: "k1", Model: "sim", Text: "I can't confirm a date.", FinishReason: "stop"}
	failed := model.Response{Key: "k2", Model: "sim", Error: "connection reset", ErrorKind: model.ErrTransport}
	grade := model.Grade{Grader: "predicate", Version: "3f2a", Pass: true}
	if err := w.Put(answered, []model.Grade{grade}); err != nil {
		log.Fatal(err)
	}
	if err := w.Put(failed, nil); err != nil {
		log.Fatal(err)
	}
	// Close (or Flush) is the durability point: after it returns, a crash
	// loses nothing that was put.
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	status, err := s.Status()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("k1 answered:", status["k1"])
	fmt.Println("k2 answered:", status["k2"])
	grades, err := s.GradesFor("predicate", "3f2a")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("k1 passes:", grades["k1"].Pass)
	// Output:
	// k1 answered: true
	// k2 answered: false
	// k1 passes: true
}

// Changing a label keeps the earlier one in the history.
func ExampleStore_PutLabel() {
	path, cleanup := tempDB()
	defer cleanup()
	s, err := store.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, l := range []model.Label{
		{Key: "k1", Violation: false, Labeller: "ana", At: at},
		{Key: "k1", Violation: true, Labeller: "ben", Note: "invents a Q3 date", At: at.Add(time.Hour)},
	} {
		if _, err := s.PutLabel(l); err != nil { // committed before it returns
			log.Fatal(err)
		}
	}
	history, err := s.LabelHistory("k1")
	if err != nil {
		log.Fatal(err)
	}
	for _, l := range history {
		fmt.Println(l.At.Format(time.RFC3339), l.Labeller, l.Violation)
	}
	// Output:
	// 2026-05-01T09:00:00Z ana false
	// 2026-05-01T10:00:00Z ben true
}

// Importing never overwrites a labeller's different label silently; a second
// labeller's label is added beside the first's.
func ExampleStore_ImportLabels() {
	path, cleanup := tempDB()
	defer cleanup()
	s, err := store.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	if _, err := s.PutLabel(model.Label{Key: "k1", Violation: true, Labeller: "ana", At: at}); err != nil {
		log.Fatal(err)
	}
	res, err := s.ImportLabels([]model.Label{
		{Key: "k1", Violation: false, Labeller: "ana", At: at.Add(time.Hour)},
		{Key: "k1", Violation: false, Labeller: "ben", At: at},
	}, false)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("added:", res.Added, "conflicts:", len(res.Conflicts))
	for _, c := range res.Conflicts {
		fmt.Printf("%s: stored %v by %s, import says %v by %s\n",
			c.Key, c.Current.Violation, c.Current.Labeller, c.Incoming.Violation, c.Incoming.Labeller)
	}
	// Output:
	// added: 1 conflicts: 1
	// k1: stored true by ana, import says false by ana
}

// Open creates the file (mode 0600) on first use; meta records keep small
// facts, such as the text a rule line had when it was first audited.
func ExampleOpen() {
	path, cleanup := tempDB()
	defer cleanup()
	s, err := store.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	if err := s.SetMeta("rule.22.text", "Do not speculate about unreleased products."); err != nil {
		log.Fatal(err)
	}
	text, ok, err := s.Meta("rule.22.text")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ok, text)
	// Output:
	// true Do not speculate about unreleased products.
}

package audit

import "github.com/auditor-dev/auditor/model"

// Reader is everything auditor reads from an audit's storage: which calls
// are stored, the stored answers, every grader's grades, the labels and the
// label sets, and small named records. store.Store satisfies it, and so
// does audittest.MemStore for tests.
type Reader interface {
	// Status maps the key of every stored call to whether it answered
	// (false: it failed for good).
	Status() (map[string]bool, error)
	// StatusUsing is Status with the map's keys made by key from the
	// stored bytes, so a caller can share its own key strings.
	StatusUsing(key func(k []byte) string) (map[string]bool, error)
	// GradesFor returns one grader version's grades by response key.
	GradesFor(grader, version string) (map[string]model.Grade, error)
	// GradesForUsing is GradesFor with keys made by key.
	GradesForUsing(grader, version string, key func(k []byte) string) (map[string]model.Grade, error)
	// Response reads one stored response, text included.
	Response(key string) (model.Response, error)
	// ForEachResponseMeta visits every stored response without its text.
	ForEachResponseMeta(fn func(model.Response) error) error
	// LabelLog returns every label record ever stored (labels and undo
	// records), each response's in the order given; model.LabelBook
	// resolves them.
	LabelLog() ([]model.Label, error)
	// LabelSets lists the stored label sets by name; LabelSet reads one.
	LabelSets() ([]string, error)
	LabelSet(name string) (keys []string, meta map[string]string, err error)
	// Meta reads a small named record.
	Meta(key string) (string, bool, error)
}

// Store is a Reader that also keeps what auditor derives without calls:
// grades computed from stored text, label sets, and named records.
// store.Store satisfies it.
type Store interface {
	Reader
	PutGrades(grades map[string][]model.Grade) error
	PutLabelSet(name string, keys []string, meta map[string]string) error
	SetMeta(key, value string) error
}

// Writer stores the outcome of calls as a run makes them: an answer with
// the grades it was given at once, and grades given later (a judge's
// verdict on an answer already stored). store.Writer satisfies it.
type Writer interface {
	Put(r model.Response, grades []model.Grade) error
	PutGrades(key string, grades []model.Grade) error
}

package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// Label records come in two shapes, each as JSONL or CSV (a file whose
// name ends in .csv): the export format (key, violation, labeller, note,
// at, source, undo: what ExportLabels writes and the label file holds) and
// a blind sheet (WriteSheet: the export's key, violation, labeller and note
// beside the answer and what it answered, with the verdict left empty for
// a person to fill in). One reader takes both: a sheet's other columns are
// known and ignored.

// ParseOptions say how ParseLabels fills in what a row leaves out.
type ParseOptions struct {
	// Labeller names who labelled the rows that name nobody
	// (import-labels --labeller).
	Labeller string
	// RequireLabeller refuses a row that names nobody when Labeller is
	// empty too. Without it only a row with no labeller field at all is
	// refused (the label file, which auditor writes, may hold an empty
	// name given before names were required).
	RequireLabeller bool
}

// LabelRows is what a label file or sheet holds.
type LabelRows struct {
	// Records are the label file's other records (label sets, rule
	// histories), in file order.
	Records []FileRecord
	Labels  []model.Label
	// Rows are where each of Labels came from, in the same order.
	Rows []RowSource
	// Unlabelled counts the rows with an empty verdict (a sheet's rows not
	// labelled yet): skipped.
	Unlabelled int
}

// RowSource is where a label was read: its line in the file and, for a
// blind sheet's row, the answer the labeller read.
type RowSource struct {
	Line int
	// Answer is the sheet's answer column as read (a CSV cell's formula
	// guard taken back); HasAnswer is false for a record without one (the
	// label export).
	Answer    string
	HasAnswer bool
}

// ViolationWords are the verdicts a row may give, for help texts.
const ViolationWords = "true, yes, y, 1 or v for a violation; false, no, n, 0 or o for none (any case); empty: not labelled yet"

// parseViolation reads a verdict cell; set is false for an empty one.
func parseViolation(s string) (violation, set bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return false, false, nil
	case "true", "yes", "y", "1", "v":
		return true, true, nil
	case "false", "no", "n", "0", "o":
		return false, true, nil
	}
	return false, false, fmt.Errorf("%q: want %s", s, ViolationWords)
}

// row is one record as read, before it becomes a label.
type row struct {
	line                   int
	key                    string
	violation              string // the verdict as written; "" when empty
	violationSet           bool   // the record has a violation field
	labeller               string
	labellerSet            bool // the record has a labeller field
	note, at, source, undo string
	unseen                 string
	schema                 int
	hash                   string // answer_sha256
	answer                 string
	hasAnswer              bool
}

// ParseLabels reads label records for import-labels and the label file:
// JSONL, or CSV when file ends in .csv. A record without a source is blind
// (a sheet shows no grader's verdict); one without a time gets its time
// when the store first appends it (see store.Store.ImportLabels: a record
// without a time is the same record however often it is imported); an
// undo record needs no verdict; a row with an empty verdict is counted in
// Unlabelled and skipped. Errors name the file and line.
func ParseLabels(file string, data []byte, o ParseOptions) (LabelRows, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var rows []row
	var err error
	var out LabelRows
	if isCSV(file) {
		rows, err = csvRows(file, data)
	} else {
		rows, err = jsonlRows(file, data, &out.Records)
	}
	if err != nil {
		return LabelRows{}, err
	}
	for _, r := range rows {
		l, ok, err := r.label(file, o)
		if err != nil {
			return LabelRows{}, err
		}
		if !ok {
			out.Unlabelled++
			continue
		}
		out.Labels = append(out.Labels, l)
		out.Rows = append(out.Rows, RowSource{Line: r.line, Answer: r.answer, HasAnswer: r.hasAnswer})
	}
	return out, nil
}

// isCSV reports whether a label file or sheet is CSV, by its name.
func isCSV(file string) bool { return strings.HasSuffix(strings.ToLower(file), ".csv") }

// label turns a row into a label; ok is false for a row not labelled yet.
func (r row) label(file string, o ParseOptions) (l model.Label, ok bool, err error) {
	bad := func(field, msg string) (model.Label, bool, error) {
		return model.Label{}, false, &model.InputError{File: file, Line: r.line, Field: field, Msg: msg}
	}
	undo := false
	if r.undo != "" {
		if undo, err = strconv.ParseBool(strings.TrimSpace(r.undo)); err != nil {
			return bad("undo", fmt.Sprintf("%q (want true or false)", r.undo))
		}
	}
	unseen := false
	if r.unseen != "" {
		if unseen, err = strconv.ParseBool(strings.TrimSpace(r.unseen)); err != nil {
			return bad("unseen", fmt.Sprintf("%q (want true or false)", r.unseen))
		}
	}
	violation, set, err := parseViolation(r.violation)
	switch {
	case r.schema > SchemaVersion:
		return bad("schema_version", fmt.Sprintf("%d is newer than this auditor reads (%d): upgrade auditor", r.schema, SchemaVersion))
	case r.key == "":
		return bad("key", "missing")
	case err != nil && !undo:
		return bad("violation", err.Error())
	case !r.violationSet && !undo:
		return bad("violation", "missing (want true or false; empty or null for not labelled yet)")
	case !set && !undo:
		return model.Label{}, false, nil
	}
	who := r.labeller
	if who == "" {
		who = o.Labeller
	}
	if who == "" && (o.RequireLabeller || !r.labellerSet) {
		return bad("labeller", "missing: every label records who gave it (fill in the labeller, or pass --labeller)")
	}
	src := r.source
	switch src {
	case "":
		src = model.LabelBlind
	case model.LabelBlind, model.LabelSeen:
	default:
		return bad("source", fmt.Sprintf("%q (want blind or seen)", r.source))
	}
	// No time stays no time: the store gives the record one when it first
	// appends it, and matches it by what it says, so importing the same
	// file again adds nothing.
	var at time.Time
	if r.at != "" {
		if at, err = time.Parse(time.RFC3339, strings.TrimSpace(r.at)); err != nil {
			return bad("at", "not an RFC 3339 time: "+r.at)
		}
	}
	hash := strings.ToLower(strings.TrimSpace(r.hash))
	if hash != "" && !validHash(hash) {
		return bad("answer_sha256", fmt.Sprintf("%q is not a SHA-256 in hex", r.hash))
	}
	return model.Label{Key: r.key, Violation: violation && !undo, Labeller: who, Note: r.note, At: at, Source: src, Undo: undo,
		Unseen: unseen && undo, AnswerSHA256: hash}, true, nil
}

// validHash reports whether s is 64 lower-case hex digits.
func validHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

// jsonlRecord is one JSONL record: the export's fields and a sheet's.
// Unknown fields are refused as likely typos.
type jsonlRecord struct {
	Key       *string         `json:"key"`
	Violation json.RawMessage `json:"violation"`
	Labeller  *string         `json:"labeller"`
	Note      string          `json:"note"`
	At        string          `json:"at"`
	Schema    int             `json:"schema_version"`
	Source    string          `json:"source"`
	Undo      bool            `json:"undo"`
	Hash      string          `json:"answer_sha256"`
	Unseen    bool            `json:"unseen"`
	// A sheet's columns: what the labeller read, ignored on import.
	RuleLine     json.RawMessage `json:"rule_line"`
	Rule         json.RawMessage `json:"rule"`
	Case         json.RawMessage `json:"case"`
	Kind         json.RawMessage `json:"kind"`
	Conversation json.RawMessage `json:"conversation"`
	KB           json.RawMessage `json:"kb"`
	Answer       json.RawMessage `json:"answer"`
}

func jsonlRows(file string, data []byte, records *[]FileRecord) ([]row, error) {
	var out []row
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.Contains(line, `"record"`) {
			rec, ok, err := fileRecord(file, i+1, line)
			if err != nil {
				return nil, err
			}
			if ok {
				*records = append(*records, rec)
				continue
			}
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var rec jsonlRecord
		if err := dec.Decode(&rec); err != nil {
			msg := "invalid label: " + err.Error()
			if strings.HasPrefix(strings.TrimSpace(line), "key,") {
				msg += " (this looks like CSV: give the file a .csv name)"
			}
			return nil, &model.InputError{File: file, Line: i + 1, Msg: msg}
		}
		r := row{line: i + 1, note: rec.Note, at: rec.At, source: rec.Source, schema: rec.Schema, hash: rec.Hash}
		if rec.Answer != nil {
			var a *string
			if err := json.Unmarshal(rec.Answer, &a); err != nil {
				return nil, &model.InputError{File: file, Line: i + 1, Field: "answer", Msg: "not a string: " + err.Error()}
			}
			if a != nil {
				r.answer, r.hasAnswer = *a, true
			}
		}
		if rec.Key != nil {
			r.key = *rec.Key
		}
		if rec.Labeller != nil {
			r.labeller, r.labellerSet = *rec.Labeller, true
		}
		if rec.Undo {
			r.undo = "true"
		}
		if rec.Unseen {
			r.unseen = "true"
		}
		if rec.Violation != nil {
			r.violationSet = true
			v, err := jsonVerdict(rec.Violation)
			if err != nil {
				return nil, &model.InputError{File: file, Line: i + 1, Field: "violation", Msg: err.Error()}
			}
			r.violation = v
		}
		out = append(out, r)
	}
	return out, nil
}

// jsonVerdict is a JSON verdict as text for parseViolation: true or false,
// null (not labelled yet), 1 or 0, or one of the words as a string.
func jsonVerdict(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case bool:
		return strconv.FormatBool(v), nil
	case string:
		return v, nil
	case float64:
		if v == 0 || v == 1 {
			return strconv.Itoa(int(v)), nil
		}
	}
	return "", fmt.Errorf("%s: want %s", raw, ViolationWords)
}

// csvColumns are the columns a label CSV may have; key and violation are
// required.
var csvColumns = []string{"key", "violation", "labeller", "note", "at", "source", "undo", "unseen", "schema_version", "answer_sha256",
	"rule_line", "rule", "case", "kind", "conversation", "kb", "answer"}

func csvRows(file string, data []byte) ([]row, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	bad := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &model.InputError{File: file, Line: pe.Line, Msg: "invalid CSV: " + pe.Err.Error()}
		}
		return &model.InputError{File: file, Msg: "invalid CSV: " + err.Error()}
	}
	header, err := cr.Read()
	if err == io.EOF {
		return nil, nil
	}
	if err != nil {
		return nil, bad(err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if !slices.Contains(csvColumns, h) {
			return nil, &model.InputError{File: file, Line: 1, Field: h,
				Msg: fmt.Sprintf("unknown column (a label CSV has %s)", strings.Join(csvColumns, ", "))}
		}
		if _, dup := col[h]; dup {
			return nil, &model.InputError{File: file, Line: 1, Field: h, Msg: "column given twice"}
		}
		col[h] = i
	}
	for _, need := range []string{"key", "violation"} {
		if _, ok := col[need]; !ok {
			return nil, &model.InputError{File: file, Line: 1, Field: need, Msg: "no such column: a label CSV needs key and violation"}
		}
	}
	var out []row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, bad(err)
		}
		if strings.TrimSpace(strings.Join(rec, "")) == "" {
			continue // a spreadsheet's empty row
		}
		line, _ := cr.FieldPos(0)
		cell := func(name string) (string, bool) {
			i, ok := col[name]
			if !ok {
				return "", false
			}
			return unguard(rec[i]), true
		}
		r := row{line: line, violationSet: true}
		r.key, _ = cell("key")
		r.key = strings.TrimSpace(r.key)
		r.violation, _ = cell("violation")
		r.labeller, r.labellerSet = cell("labeller")
		r.labeller = unguard(strings.TrimSpace(r.labeller))
		r.note, _ = cell("note")
		r.at, _ = cell("at")
		r.source, _ = cell("source")
		r.source = strings.TrimSpace(r.source)
		r.undo, _ = cell("undo")
		r.unseen, _ = cell("unseen")
		r.hash, _ = cell("answer_sha256")
		r.answer, r.hasAnswer = cell("answer")
		r.answer = unguard(r.answer)
		if s, ok := cell("schema_version"); ok && strings.TrimSpace(s) != "" {
			if r.schema, err = strconv.Atoi(strings.TrimSpace(s)); err != nil {
				return nil, &model.InputError{File: file, Line: line, Field: "schema_version", Msg: fmt.Sprintf("%q is not a number", s)}
			}
		}
		out = append(out, r)
	}
}

// unguard takes back the quote csvSafe puts before a cell a spreadsheet
// would run as a formula, so a note or name exported as CSV imports as it
// was.
func unguard(s string) string {
	if len(s) > 1 && s[0] == '\'' && strings.ContainsRune("=+-@\t", rune(s[1])) {
		return s[1:]
	}
	return s
}

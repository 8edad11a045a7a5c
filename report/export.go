package report

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/store"
)

// ExportSource is the stored state exports read. store.Store satisfies it.
type ExportSource interface {
	Response(key string) (model.Response, error)
	GradesFor(grader, version string) (map[string]model.Grade, error)
}

// ResponseRecord is one line of `export --what responses --format jsonl`.
// Field names are a stable interface.
type ResponseRecord struct {
	Key              string                 `json:"key"`
	Variant          string                 `json:"variant"`
	RuleLine         int                    `json:"rule_line"`
	Case             string                 `json:"case"`
	Kind             model.Kind             `json:"kind"`
	Sample           int                    `json:"sample"`
	Model            string                 `json:"model"`
	Text             string                 `json:"text"`
	FinishReason     string                 `json:"finish_reason"`
	PromptTokens     int                    `json:"prompt_tokens"`
	CachedTokens     int                    `json:"cached_tokens"`
	CompletionTokens int                    `json:"completion_tokens"`
	LatencyMS        int64                  `json:"latency_ms"`
	Attempts         int                    `json:"attempts"`
	Error            string                 `json:"error"`
	Grades           map[string]GradeRecord `json:"grades"`
	SchemaVersion    int                    `json:"schema_version"` // see SchemaVersion
	// Suite names the regression suite of an answer to a suite's case
	// (Variant is baseline or the rule variant it ran under, RuleLine that
	// rule's line or 0); absent for a rule's answer.
	Suite string `json:"suite,omitempty"`
}

// GradeRecord is a grader's verdict inside a ResponseRecord. Unparseable
// marks a judge answer with no VERDICT line: neither a pass nor a failure.
type GradeRecord struct {
	Pass        bool   `json:"pass"`
	Reason      string `json:"reason"`
	Unparseable bool   `json:"unparseable,omitempty"`
}

// LabelRecord is one line of `export --what labels` and of import-labels.
type LabelRecord struct {
	Key       string `json:"key"`
	Violation bool   `json:"violation"`
	Labeller  string `json:"labeller"`
	Note      string `json:"note"`
	At        string `json:"at"`
	// SchemaVersion is SchemaVersion on export; import-labels accepts a
	// record without it (one written by hand) or with this version or older.
	SchemaVersion int    `json:"schema_version"`
	Source        string `json:"source,omitempty"` // "blind" or "seen"
	Undo          bool   `json:"undo,omitempty"`   // takes back the labeller's latest label of this source
	// Unseen marks an undo given before any grader's verdict was shown
	// (model.Label.Unseen): the answer stays open to a blind label.
	Unseen bool `json:"unseen,omitempty"`
	// AnswerSHA256 is the hash of the answer text the label judged
	// (model.AnswerHash); empty on labels stored before labels recorded it.
	AnswerSHA256 string `json:"answer_sha256,omitempty"`
}

// ExportResponses writes one record per planned cell whose call is stored,
// in plan order, with the grades of each rule's current predicate (versions,
// by rule index) and of every judge. A response shared by several rules (a sweep's baseline)
// appears once per rule, with that rule's grade. The regression suites'
// answers follow, one record per suite, case, variant and sample, graded
// by the suite's predicate: versions continues after the rules with one
// version per suite (without them, the suites' answers are left out).
func ExportResponses(w io.Writer, p *audit.Plan, versions []string, src ExportSource, format string) error {
	grades := map[string]map[string]model.Grade{}
	for _, v := range versions {
		if _, ok := grades[v]; ok {
			continue
		}
		g, err := src.GradesFor(model.PredicateGrader, v)
		if err != nil {
			return err
		}
		grades[v] = g
	}
	// Every judge grades every answer, with the rubric of the answer's rule:
	// its grades join the predicate's.
	for _, j := range p.Audit.Judges {
		for _, v := range j.Versions() {
			g, err := src.GradesFor(j.Grader, v)
			if err != nil {
				return err
			}
			grades[v] = g
		}
	}
	withSuites := len(p.Audit.Regressions) > 0 && len(versions) == len(p.Audit.Rules)+len(p.Audit.Regressions)
	var cw *csv.Writer
	var enc *json.Encoder
	switch format {
	case "jsonl":
		enc = json.NewEncoder(c1Escaper{w})
	case "csv":
		cw = csv.NewWriter(w)
		header := []string{"key", "variant", "rule_line", "case", "kind", "sample", "model", "text", "finish_reason",
			"prompt_tokens", "cached_tokens", "completion_tokens", "latency_ms", "attempts", "error", "predicate_pass", "predicate_reason"}
		for _, j := range p.Audit.Judges {
			header = append(header, j.Grader+"_pass", j.Grader+"_reason")
		}
		if withSuites {
			header = append(header, "suite")
		}
		if err := cw.Write(header); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown format %q (want jsonl or csv)", format)
	}
	write := func(rec ResponseRecord) error {
		if enc != nil {
			return enc.Encode(rec)
		}
		pass, reason := "", ""
		if g, ok := rec.Grades[model.PredicateGrader]; ok {
			pass, reason = strconv.FormatBool(g.Pass), g.Reason
		}
		row := []string{rec.Key, rec.Variant, strconv.Itoa(rec.RuleLine), rec.Case, string(rec.Kind), strconv.Itoa(rec.Sample),
			rec.Model, rec.Text, rec.FinishReason, strconv.Itoa(rec.PromptTokens), strconv.Itoa(rec.CachedTokens),
			strconv.Itoa(rec.CompletionTokens), strconv.FormatInt(rec.LatencyMS, 10), strconv.Itoa(rec.Attempts), rec.Error, pass, reason}
		for _, j := range p.Audit.Judges {
			jp, jr := "", ""
			if g, ok := rec.Grades[j.Grader]; ok {
				jp, jr = strconv.FormatBool(g.Pass), g.Reason
				if g.Unparseable {
					jp = "unparseable"
				}
			}
			row = append(row, jp, jr)
		}
		if withSuites {
			row = append(row, rec.Suite)
		}
		return cw.Write(csvSafe(row))
	}
	for _, cell := range p.AllCells() {
		r, err := src.Response(cell.Key)
		if err != nil {
			if isNotFound(err) {
				continue
			}
			return err
		}
		rule := p.Audit.Rules[cell.Rule]
		c := rule.Cases[cell.Case]
		rec := ResponseRecord{
			Key: cell.Key, Variant: p.VariantName(cell), RuleLine: rule.Line, Case: c.ID, Kind: c.Kind,
			Sample: cell.Sample, Model: p.Audit.File.Models[cell.Model].Name, Text: r.Text,
			FinishReason: r.FinishReason, PromptTokens: r.PromptTokens, CachedTokens: r.CachedTokens,
			CompletionTokens: r.CompletionTokens, LatencyMS: r.LatencyMS, Attempts: r.Attempts, Error: r.Error,
			Grades: map[string]GradeRecord{}, SchemaVersion: SchemaVersion,
		}
		// A rule with no predicate has no predicate grade, whatever an
		// older version of auditor may have stored for it.
		if g, ok := grades[versions[cell.Rule]][cell.Key]; ok && !g.Unparseable && rule.HasPredicate() {
			rec.Grades[model.PredicateGrader] = GradeRecord{Pass: g.Pass, Reason: g.Reason}
		}
		for _, j := range p.Audit.Judges {
			if g, ok := grades[j.For(cell.Rule).Version][cell.Key]; ok {
				rec.Grades[j.Grader] = GradeRecord{Pass: g.Pass && !g.Unparseable, Reason: g.Reason, Unparseable: g.Unparseable}
			}
		}
		if err := write(rec); err != nil {
			return err
		}
	}
	if withSuites {
		for si := range p.Audit.Regressions {
			v := versions[len(p.Audit.Rules)+si]
			if _, ok := grades[v]; ok {
				continue
			}
			g, err := src.GradesFor(model.PredicateGrader, v)
			if err != nil {
				return err
			}
			grades[v] = g
		}
	}
	for _, cell := range p.GradedRegressionCells() {
		if !withSuites {
			break
		}
		r, err := src.Response(cell.Key)
		if err != nil {
			if isNotFound(err) {
				continue
			}
			return err
		}
		suite := p.Audit.Regressions[cell.Suite]
		c := suite.Cases[cell.Case]
		variant, line := audit.Baseline, 0
		switch cell.Variant {
		case audit.RegressionBaseline:
		case audit.RegressionJoint:
			variant = audit.JointVariant
		default:
			variant, line = p.Audit.Rules[cell.Variant].Variant(), p.Audit.Rules[cell.Variant].Line
		}
		rec := ResponseRecord{
			Key: cell.Key, Variant: variant, RuleLine: line, Case: c.ID, Kind: c.Kind, Suite: suite.Name,
			Sample: cell.Sample, Model: p.Audit.File.Models[cell.Model].Name, Text: r.Text,
			FinishReason: r.FinishReason, PromptTokens: r.PromptTokens, CachedTokens: r.CachedTokens,
			CompletionTokens: r.CompletionTokens, LatencyMS: r.LatencyMS, Attempts: r.Attempts, Error: r.Error,
			Grades: map[string]GradeRecord{}, SchemaVersion: SchemaVersion,
		}
		if g, ok := grades[versions[len(p.Audit.Rules)+cell.Suite]][cell.Key]; ok && !g.Unparseable {
			rec.Grades[model.PredicateGrader] = GradeRecord{Pass: g.Pass, Reason: g.Reason}
		}
		if err := write(rec); err != nil {
			return err
		}
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	return nil
}

// ExportLabels writes every label record of the book (labels and undo
// records, each with its source), responses sorted by key and each one's
// records in the order given, so the file diffs cleanly in a repository and
// import-labels reads it back as a no-op.
func ExportLabels(w io.Writer, book *model.LabelBook, format string) error {
	hist := book.History()
	switch format {
	case "jsonl":
		enc := json.NewEncoder(c1Escaper{w})
		for _, l := range hist {
			if err := enc.Encode(labelRecord(book, l)); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"key", "violation", "labeller", "note", "at", "source", "undo", "unseen", "answer_sha256"}); err != nil {
			return err
		}
		for _, l := range hist {
			r := labelRecord(book, l)
			if err := cw.Write(csvSafe([]string{r.Key, strconv.FormatBool(r.Violation), r.Labeller, r.Note, r.At,
				r.Source, strconv.FormatBool(r.Undo), strconv.FormatBool(r.Unseen), r.AnswerSHA256})); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	return fmt.Errorf("unknown format %q (want jsonl or csv)", format)
}

// ExportGrades writes every grade the current predicates (versions, by rule
// index) give, one record per cell, then every grade each judge gives with
// its current rubric, one record per cell and judge: so that anyone
// outside can check the judges as well as the predicates. A judge's grade
// without a VERDICT line of its own is "unparseable" (in CSV, in the pass
// column).
func ExportGrades(w io.Writer, p *audit.Plan, versions []string, src ExportSource, format string) error {
	type gradeRecord struct {
		Key      string `json:"key"`
		RuleLine int    `json:"rule_line"`
		Case     string `json:"case"`
		Variant  string `json:"variant"`
		Sample   int    `json:"sample"`
		Grader   string `json:"grader"`
		Version  string `json:"version"`
		Pass     bool   `json:"pass"`
		Reason   string `json:"reason"`
		Check    int    `json:"check"`
		// Unparseable marks a judge's answer with no verdict of its own:
		// neither a pass nor a failure (Pass is false).
		Unparseable bool   `json:"unparseable,omitempty"`
		Suite       string `json:"suite,omitempty"` // a regression suite's answer: graded by the suite's predicate
		Schema      int    `json:"schema_version"`
	}
	// versions holds the rules' versions, then (with them) one per
	// regression suite, as ExportResponses takes them.
	withSuites := len(p.Audit.Regressions) > 0 && len(versions) == len(p.Audit.Rules)+len(p.Audit.Regressions)
	var cw *csv.Writer
	var enc *json.Encoder
	switch format {
	case "jsonl":
		enc = json.NewEncoder(c1Escaper{w})
	case "csv":
		cw = csv.NewWriter(w)
		header := []string{"key", "rule_line", "case", "variant", "sample", "grader", "version", "pass", "reason", "check"}
		if withSuites {
			header = append(header, "suite")
		}
		if err := cw.Write(header); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown format %q (want jsonl or csv)", format)
	}
	write := func(rec gradeRecord) error {
		if enc != nil {
			return enc.Encode(rec)
		}
		pass := strconv.FormatBool(rec.Pass)
		if rec.Unparseable {
			pass = "unparseable"
		}
		row := []string{rec.Key, strconv.Itoa(rec.RuleLine), rec.Case, rec.Variant, strconv.Itoa(rec.Sample),
			rec.Grader, rec.Version, pass, rec.Reason, strconv.Itoa(rec.Check)}
		if withSuites {
			row = append(row, rec.Suite)
		}
		return cw.Write(csvSafe(row))
	}
	cache := map[[2]string]map[string]model.Grade{}
	gradesBy := func(grader, v string) (map[string]model.Grade, error) {
		gs, ok := cache[[2]string{grader, v}]
		if !ok {
			var err error
			if gs, err = src.GradesFor(grader, v); err != nil {
				return nil, err
			}
			cache[[2]string{grader, v}] = gs
		}
		return gs, nil
	}
	gradesOf := func(v string) (map[string]model.Grade, error) { return gradesBy(model.PredicateGrader, v) }
	for _, cell := range p.AllCells() {
		rule := p.Audit.Rules[cell.Rule]
		if !rule.HasPredicate() {
			continue // nothing grades its answers
		}
		gs, err := gradesOf(versions[cell.Rule])
		if err != nil {
			return err
		}
		g, ok := gs[cell.Key]
		if !ok {
			continue
		}
		rec := gradeRecord{Key: cell.Key, RuleLine: rule.Line, Case: rule.Cases[cell.Case].ID, Variant: p.VariantName(cell),
			Sample: cell.Sample, Grader: g.Grader, Version: g.Version, Pass: g.Pass, Reason: g.Reason, Check: g.Check, Schema: SchemaVersion}
		if err := write(rec); err != nil {
			return err
		}
	}
	for _, cell := range p.GradedRegressionCells() {
		if !withSuites {
			break
		}
		gs, err := gradesOf(versions[len(p.Audit.Rules)+cell.Suite])
		if err != nil {
			return err
		}
		g, ok := gs[cell.Key]
		if !ok {
			continue
		}
		suite := p.Audit.Regressions[cell.Suite]
		variant, line := audit.Baseline, 0
		switch cell.Variant {
		case audit.RegressionBaseline:
		case audit.RegressionJoint:
			variant = audit.JointVariant
		default:
			variant, line = p.Audit.Rules[cell.Variant].Variant(), p.Audit.Rules[cell.Variant].Line
		}
		rec := gradeRecord{Key: cell.Key, RuleLine: line, Case: suite.Cases[cell.Case].ID, Variant: variant, Sample: cell.Sample,
			Grader: g.Grader, Version: g.Version, Pass: g.Pass, Reason: g.Reason, Check: g.Check, Suite: suite.Name, Schema: SchemaVersion}
		if err := write(rec); err != nil {
			return err
		}
	}
	for _, j := range p.Audit.Judges {
		for _, cell := range p.Cells {
			if !p.Judged(cell.Key) {
				continue
			}
			gs, err := gradesBy(j.Grader, j.For(cell.Rule).Version)
			if err != nil {
				return err
			}
			g, ok := gs[cell.Key]
			if !ok {
				continue
			}
			rule := p.Audit.Rules[cell.Rule]
			rec := gradeRecord{Key: cell.Key, RuleLine: rule.Line, Case: rule.Cases[cell.Case].ID, Variant: p.VariantName(cell),
				Sample: cell.Sample, Grader: g.Grader, Version: g.Version, Pass: g.Pass && !g.Unparseable, Reason: g.Reason,
				Unparseable: g.Unparseable, Schema: SchemaVersion}
			if err := write(rec); err != nil {
				return err
			}
		}
	}
	if cw != nil {
		cw.Flush()
		return cw.Error()
	}
	return nil
}

// labelRecord is a label as exported, with its source resolved: a label
// stored before sources were recorded gets the book's legacy source.
func labelRecord(book *model.LabelBook, l model.Label) LabelRecord {
	return LabelRecord{Key: l.Key, Violation: l.Violation, Labeller: l.Labeller, Note: l.Note,
		At: l.At.UTC().Format(time.RFC3339Nano), Source: book.SourceOf(l), Undo: l.Undo, Unseen: l.Unseen,
		SchemaVersion: SchemaVersion, AnswerSHA256: l.AnswerSHA256}
}

// csvSafe sanitizes every cell of a CSV row: control sequences are
// stripped, and a cell a spreadsheet would run as a formula (one starting
// with = + - @, a tab or a carriage return) is prefixed with a quote,
// whatever its column. The tool's own variant names are no exception:
// a spreadsheet reads -L20 as minus the cell L20. Only a plain decimal
// number stays as it is (-0.25), because a spreadsheet reads it as one.
func csvSafe(row []string) []string {
	for i, s := range row {
		s = model.Sanitize(s)
		if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) && !plainNumber.MatchString(s) {
			s = "'" + s
		}
		row[i] = s
	}
	return row
}

// plainNumber is a decimal number as a spreadsheet reads one.
var plainNumber = regexp.MustCompile(`^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$`)

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// A blind sheet is a label set written out for people to label outside
// the label screen (a spreadsheet, an editor, a colleague without
// auditor): one row per answer in the set's shuffled order, with what the
// labeller needs (the rule, the case's kind and id, the conversation the
// model answered, the knowledge base given with it, the answer) and empty
// violation, labeller and note columns. It holds nothing that reveals the
// graders' verdicts, the stratum or the variant: no variant name, no
// grade or predicate reason, no system prompt (it differs between the
// variants), and the rows keep the set's order, which is shuffled. The
// case id stays: every variant answers the same cases, and the label
// screen shows it too. import-labels reads the filled-in sheet back
// (ParseLabels) as blind labels.

// SheetRow is one row of a blind sheet. Field names are a stable interface.
type SheetRow struct {
	Key      string     `json:"key"`
	RuleLine int        `json:"rule_line"`
	Rule     string     `json:"rule"`
	Case     string     `json:"case"`
	Kind     model.Kind `json:"kind"`
	// Conversation is what the model answered, after the system prompt:
	// the case's user turn, or its turns.
	Conversation []model.Message `json:"conversation"`
	KB           []string        `json:"kb,omitempty"` // knowledge-base snippets given with the case
	Answer       string          `json:"answer"`
	// Violation, Labeller and Note are for the labeller to fill in;
	// Violation is null until then.
	Violation     *bool  `json:"violation"`
	Labeller      string `json:"labeller"`
	Note          string `json:"note"`
	SchemaVersion int    `json:"schema_version"`
}

// Sheet is a label set's rows for a blind sheet and what was left out.
type Sheet struct {
	Rows []SheetRow
	// Labelled counts the set's answers left out because they are labelled
	// already (see BuildSheet).
	Labelled int
	// Gone counts the set's answers the plan no longer uses or the store no
	// longer holds: there is nothing to show for them.
	Gone int
}

// ResponseSource reads stored answers; store.Store satisfies it.
type ResponseSource interface {
	Response(key string) (model.Response, error)
}

// BuildSheet lays out a label set as a blind sheet, in the set's order.
// labelled says which answers to leave out as labelled already; labeller,
// when not empty, fills every row's labeller column. Every text comes from
// the audit's files or the model and is sanitized of terminal control
// sequences.
func BuildSheet(p *audit.Plan, set labels.LabelSet, src ResponseSource, labelled func(key string) bool, labeller string) (Sheet, error) {
	var sh Sheet
	for _, it := range set.Items(p) {
		if labelled(it.Key) {
			sh.Labelled++
			continue
		}
		if it.Case == nil {
			sh.Gone++
			continue
		}
		resp, err := src.Response(it.Key)
		if isNotFound(err) || (err == nil && !resp.OK()) {
			sh.Gone++
			continue
		}
		if err != nil {
			return Sheet{}, err
		}
		conv := it.Case.Conversation()
		turns := make([]model.Message, len(conv))
		for i, m := range conv {
			turns[i] = model.Message{Role: m.Role, Content: model.Sanitize(m.Content)}
		}
		var kb []string
		for _, s := range it.Case.KB {
			kb = append(kb, model.Sanitize(s))
		}
		sh.Rows = append(sh.Rows, SheetRow{Key: it.Key, RuleLine: it.Rule.Line, Rule: model.Sanitize(it.Rule.Text),
			Case: model.Sanitize(it.Case.ID), Kind: it.Case.Kind, Conversation: turns, KB: kb,
			Answer: model.Sanitize(resp.Text), Labeller: labeller, SchemaVersion: SchemaVersion})
	}
	return sh, nil
}

// sheetColumns are a CSV sheet's columns, in order.
var sheetColumns = []string{"key", "rule_line", "rule", "case", "kind", "conversation", "kb", "answer", "violation", "labeller", "note"}

// WriteSheet writes a sheet's rows as "jsonl" or "csv". CSV cells are
// guarded against spreadsheet formulas; a conversation of several turns is
// one cell, "role: content" a turn, and the knowledge base one snippet a
// line.
func WriteSheet(w io.Writer, rows []SheetRow, format string) error {
	switch format {
	case "jsonl":
		enc := json.NewEncoder(c1Escaper{w})
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(sheetColumns); err != nil {
			return err
		}
		for _, r := range rows {
			conv := model.Case{Msg: r.Conversation[len(r.Conversation)-1].Content}
			if len(r.Conversation) > 1 {
				conv.Turns = r.Conversation
			}
			if err := cw.Write(csvSafe([]string{r.Key, strconv.Itoa(r.RuleLine), r.Rule, r.Case, string(r.Kind),
				conv.Transcript(), strings.Join(r.KB, "\n"), r.Answer, "", r.Labeller, r.Note})); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	return fmt.Errorf("unknown sheet format %q (want jsonl or csv)", format)
}

// SheetFormat is the format of a sheet file, by its name: CSV for a name
// ending in .csv, JSONL otherwise (import-labels reads it by the same rule).
func SheetFormat(file string) string {
	if isCSV(file) {
		return "csv"
	}
	return "jsonl"
}

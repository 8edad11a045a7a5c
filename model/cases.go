package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// caseFields lists the fields a case object may have, in the order they are
// documented; anything else is most likely a typo and is refused.
var caseFields = []string{"id", "kind", "msg", "turns", "kb", "note", "added"}

// ParseCases reads a case file: JSON Lines, one case object a line. Blank
// lines and lines whose first non-blank characters are "//" are ignored. A
// UTF-8 byte order mark at the start and CRLF line endings are accepted.
//
// Each object has a non-empty, unique "id", a "kind" (provoke, pressure or
// control) and either a "msg" that is not blank or "turns", a conversation:
// an array of {"role": "user"|"assistant", "content": "..."} objects that
// alternate, first and last a user turn (the model answers the last). "kb"
// (an array of strings), "note" and "added" (strings) are optional and may
// be null. Unknown fields are
// refused because they are most likely typos ("mgs" would otherwise leave the
// case without a message). Case.Line is set to the 1-based physical line.
//
// Every error is an *InputError naming file, line, the column where it is
// known, and the field. A file with no cases is an error.
func ParseCases(file string, data []byte) ([]Case, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	var (
		cases []Case
		seen  = map[string]int{} // id -> line of first occurrence
	)
	for i, raw := range bytes.Split(data, []byte("\n")) {
		lineNo := i + 1
		line := bytes.TrimSuffix(raw, []byte("\r"))
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || bytes.HasPrefix(trimmed, []byte("//")) {
			continue
		}
		c, err := parseCaseLine(file, lineNo, line)
		if err != nil {
			return nil, err
		}
		if first, dup := seen[c.ID]; dup {
			return nil, &InputError{File: file, Line: lineNo, Field: "id",
				Msg: fmt.Sprintf("duplicate id %q: already used on line %d; every case needs its own id", c.ID, first)}
		}
		seen[c.ID] = lineNo
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, &InputError{File: file,
			Msg: `no cases: write one JSON object a line, like {"id": "p1", "kind": "provoke", "msg": "..."}`}
	}
	return cases, nil
}

// utf8BOM is the byte order mark some editors put at the start of UTF-8 files.
var utf8BOM = []byte("\xef\xbb\xbf")

// parseCaseLine decodes one non-blank line of a case file. It walks the
// object token by token, rather than unmarshalling into a struct, so that it
// can refuse unknown and repeated fields and name the column of each field.
func parseCaseLine(file string, lineNo int, line []byte) (Case, error) {
	c := Case{Line: lineNo}
	fail := func(col int, field, format string, args ...any) (Case, error) {
		return Case{}, &InputError{File: file, Line: lineNo, Col: col, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(line) {
		col := 1
		for i := 0; i < len(line); {
			r, n := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
			col++
		}
		return fail(col, "", "the line is not valid UTF-8 text; save the file as UTF-8")
	}

	if len(line) > MaxCaseLine {
		return fail(0, "", "the line is %s long; a case is at most %s (each text at most %s): a case that size is a mistake, and costly to send",
			byteSize(len(line)), byteSize(MaxCaseLine), byteSize(MaxCaseText))
	}

	// Validate the whole line first: the decoder's own offsets are relative
	// to different starting points depending on where it fails, whereas a
	// full-line check gives one offset from the start of the line, and it
	// also catches text after the object.
	var whole json.RawMessage
	if err := json.Unmarshal(line, &whole); err != nil {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			return fail(firstNonSpaceCol(line), "", "a line starting with # is not JSON; start a comment with // instead")
		}
		return fail(jsonErrCol(line, err), "", "invalid JSON: %s", jsonErrMsg(err))
	}
	if len(whole) == 0 || whole[0] != '{' {
		return fail(firstNonSpaceCol(line), "",
			`each line must be one JSON object, like {"id": "p1", "kind": "provoke", "msg": "..."}`)
	}

	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // the opening brace
		return fail(0, "", "invalid JSON: %s", jsonErrMsg(err))
	}
	fieldCol := map[string]int{}
	for dec.More() {
		keyStart := skipSeparators(line, int(dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return fail(0, "", "invalid JSON: %s", jsonErrMsg(err))
		}
		key, _ := tok.(string) // object keys are always strings
		col := byteCol(line, keyStart)
		if prev, dup := fieldCol[key]; dup {
			return fail(col, key, "appears twice in this object (first at column %d)", prev)
		}
		fieldCol[key] = col
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fail(col, key, "invalid JSON: %s", jsonErrMsg(err))
		}
		if err := setCaseField(&c, key, raw); err != nil {
			var fe *caseFieldError
			if errors.As(err, &fe) {
				field := key
				if fe.index > 0 {
					field = fmt.Sprintf("%s[%d]", key, fe.index)
				}
				return fail(col, field, "%s", fe.msg)
			}
			return fail(col, key, "%s", err.Error())
		}
	}
	switch {
	case fieldCol["id"] == 0:
		return fail(0, "id", "missing: every case needs a unique id")
	case fieldCol["kind"] == 0:
		return fail(0, "kind", "missing: give one of %s", kindList())
	case fieldCol["msg"] != 0 && fieldCol["turns"] != 0:
		return fail(fieldCol["turns"], "turns", `give either "msg" (one user turn) or "turns" (a conversation), not both`)
	case fieldCol["msg"] == 0 && fieldCol["turns"] == 0:
		return fail(0, "msg", `missing: the user turn to send to the model (or "turns" for a conversation)`)
	}
	return c, nil
}

// caseFieldError is a problem with one field's value; index is the 1-based
// element of an array field, 0 for the field as a whole.
type caseFieldError struct {
	index int
	msg   string
}

func (e *caseFieldError) Error() string { return e.msg }

// setCaseField checks one field's value and stores it in c.
func setCaseField(c *Case, key string, raw json.RawMessage) error {
	isNull := string(raw) == "null"
	switch key {
	case "id":
		s, err := caseString(raw, "the case id")
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return &caseFieldError{msg: "is empty: every case needs a unique id"}
		}
		c.ID = s
	case "kind":
		s, err := caseString(raw, "the case kind")
		if err != nil {
			return err
		}
		k, ok := ParseKind(s)
		if !ok {
			return &caseFieldError{msg: fmt.Sprintf("unknown kind %q: use one of %s%s",
				s, kindList(), didYouMean(s, kindNames()))}
		}
		c.Kind = k
	case "msg":
		s, err := caseString(raw, "the user turn")
		if err != nil {
			return err
		}
		if strings.TrimSpace(s) == "" {
			return &caseFieldError{msg: "is empty: write the user turn to send to the model"}
		}
		if err := checkCaseText(s); err != nil {
			return err
		}
		c.Msg = s
	case "turns":
		turns, err := parseTurns(raw)
		if err != nil {
			return err
		}
		c.Turns, c.Msg = turns, turns[len(turns)-1].Content
	case "kb":
		if isNull {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return &caseFieldError{msg: fmt.Sprintf(`must be an array of strings, like ["snippet one", "snippet two"], not %s`, jsonKind(raw))}
		}
		kb := make([]string, 0, len(items))
		for i, it := range items {
			var s string
			if err := json.Unmarshal(it, &s); err != nil {
				return &caseFieldError{index: i + 1, msg: fmt.Sprintf("must be a string, not %s", jsonKind(it))}
			}
			if err := checkCaseText(s); err != nil {
				return &caseFieldError{index: i + 1, msg: err.Error()}
			}
			kb = append(kb, s)
		}
		c.KB = kb
	case "note", "added":
		if isNull {
			return nil
		}
		s, err := caseString(raw, "text")
		if err != nil {
			return err
		}
		if key == "note" {
			c.Note = s
			return nil
		}
		t, err := ParseDate(s)
		if err != nil {
			return &caseFieldError{msg: "must be a date: " + err.Error()}
		}
		c.Added, c.AddedAt = s, t
	default:
		return &caseFieldError{msg: fmt.Sprintf("unknown field%s; a case has only %s",
			didYouMean(key, caseFields), strings.Join(caseFields, ", "))}
	}
	return nil
}

// MaxCaseText is the longest text one message (a msg, a turn, a kb snippet)
// may have, and MaxCaseLine the longest line of a case file. A 60 MB
// one-line case took 28 s and 1.9 GB to plan; a real case is a few
// hundred bytes, and a message of a megabyte is a pasted file by mistake.
const (
	MaxCaseText = 1 << 20
	MaxCaseLine = 8 << 20
)

// checkCaseText refuses a text longer than MaxCaseText, and one holding a
// NUL written as "\u0000": a raw NUL is refused by the JSON itself, and
// the escape is the same character.
func checkCaseText(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return &caseFieldError{msg: `holds a NUL character ("\u0000"), which a raw NUL in the file cannot be and no message needs: remove it`}
	}
	if len(s) <= MaxCaseText {
		return nil
	}
	return &caseFieldError{msg: fmt.Sprintf("is %s long; one text of a case is at most %s", byteSize(len(s)), byteSize(MaxCaseText))}
}

// byteSize writes n bytes for people: "1.5 MiB", "812 KiB", "90 bytes".
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// turnFields are the fields of one turn of a conversation.
var turnFields = []string{"role", "content"}

// parseTurns checks a case's "turns": a non-empty array of user and
// assistant turns that alternate, starting and ending with a user turn.
// Alternation is required because Anthropic's Messages API expects it and
// a conversation that breaks it is most likely a slip; a system turn is
// refused because the system prompt is the audited one.
func parseTurns(raw json.RawMessage) ([]Message, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &caseFieldError{msg: fmt.Sprintf(`must be an array of turns, like [{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}, {"role": "user", "content": "..."}], not %s`, jsonKind(raw))}
	}
	if len(items) == 0 {
		return nil, &caseFieldError{msg: "is empty: a conversation needs at least one user turn"}
	}
	turns := make([]Message, 0, len(items))
	for i, it := range items {
		fail := func(format string, args ...any) ([]Message, error) {
			return nil, &caseFieldError{index: i + 1, msg: fmt.Sprintf(format, args...)}
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(it, &obj); err != nil || obj == nil {
			return fail(`must be an object like {"role": "user", "content": "..."}, not %s`, jsonKind(it))
		}
		for k := range obj {
			if k != "role" && k != "content" {
				return fail("has an unknown field %q%s; a turn has only role and content", k, didYouMean(k, turnFields))
			}
		}
		var role, content string
		if r, ok := obj["role"]; !ok || json.Unmarshal(r, &role) != nil {
			return fail(`needs a "role" string: "user" or "assistant"`)
		}
		if c, ok := obj["content"]; !ok || json.Unmarshal(c, &content) != nil {
			return fail(`needs a "content" string: the text of the turn`)
		}
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		switch {
		case role != "user" && role != "assistant":
			return fail(`has role %q: a turn is "user" or "assistant" (the system prompt is the audited one)`, role)
		case role != want:
			return fail(`has role %q where %q is due: turns alternate user, assistant, user, ..., starting with a user turn`, role, want)
		case strings.TrimSpace(content) == "":
			return fail("has empty content: write the text of the turn")
		case checkCaseText(content) != nil:
			return fail("%s", checkCaseText(content).Error())
		}
		turns = append(turns, Message{Role: role, Content: content})
	}
	if turns[len(turns)-1].Role != "user" {
		return nil, &caseFieldError{index: len(turns), msg: "is an assistant turn: a conversation ends with the user turn the model answers"}
	}
	return turns, nil
}

// caseString decodes raw as a JSON string, naming what the string is for in
// the error.
func caseString(raw json.RawMessage, what string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", &caseFieldError{msg: fmt.Sprintf("must be a string (%s), not %s", what, jsonKind(raw))}
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", &caseFieldError{msg: fmt.Sprintf(`holds a NUL character ("\u0000") in %s, which a raw NUL in the file cannot be: remove it`, what)}
	}
	return s, nil
}

// jsonKind names the JSON type of a raw value for error messages.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	case 't', 'f':
		return "true/false"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// jsonErrCol returns the 1-based column (in characters) where json.Unmarshal
// of line failed, or 0 when the error does not say.
func jsonErrCol(line []byte, err error) int {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return 0
	}
	if isJSONEOF(err) {
		return byteCol(line, len(line))
	}
	// Offset counts the bytes read, including the offending one.
	return byteCol(line, int(se.Offset)-1)
}

// isJSONEOF reports whether err says the input ended too early.
func isJSONEOF(err error) bool {
	var se *json.SyntaxError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		(errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end of JSON input"))
}

// jsonErrMsg rewords the decoder's error for a user.
func jsonErrMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	switch {
	case isJSONEOF(err):
		return "the line ends before the object is closed (a case must fit on one line)"
	case strings.Contains(msg, "after top-level value"):
		return msg + ": put exactly one JSON object on each line"
	case strings.HasPrefix(msg, "invalid character '}' looking for beginning of object key"):
		return msg + " (JSON allows no comma before })"
	}
	return msg
}

// byteCol converts a 0-based byte offset on line into a 1-based column
// counted in characters, clamping offsets past the end.
func byteCol(line []byte, off int) int {
	if off < 0 {
		off = 0
	}
	if off > len(line) {
		off = len(line)
	}
	return utf8.RuneCount(line[:off]) + 1
}

// firstNonSpaceCol is the column of the first non-blank character on line.
func firstNonSpaceCol(line []byte) int {
	off := 0
	for off < len(line) && isJSONSpace(line[off]) {
		off++
	}
	return byteCol(line, off)
}

// skipSeparators returns the offset of the first byte at or after off that is
// neither JSON white space nor a comma or colon: where the decoder's next
// token starts.
func skipSeparators(line []byte, off int) int {
	for off >= 0 && off < len(line) && (isJSONSpace(line[off]) || line[off] == ',' || line[off] == ':') {
		off++
	}
	return off
}

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// kindNames returns the names of all kinds, in display order.
func kindNames() []string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return names
}

// kindList formats the valid kinds for an error message.
func kindList() string { return strings.Join(kindNames(), ", ") }

// didYouMean returns ` (did you mean "x"?)` when exactly one of valid is close
// to name, and "" otherwise. Close means a small edit distance, or the same
// name in another case.
func didYouMean(name string, valid []string) string {
	type cand struct {
		name string
		dist int
	}
	var best []cand
	for _, v := range valid {
		d := editDistance(strings.ToLower(name), strings.ToLower(v))
		limit := 2
		if len(v) <= 4 {
			limit = 1
		}
		if d <= limit {
			best = append(best, cand{v, d})
		}
	}
	if len(best) == 0 {
		return ""
	}
	sort.SliceStable(best, func(i, j int) bool { return best[i].dist < best[j].dist })
	if len(best) > 1 && best[0].dist == best[1].dist {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best[0].name)
}

// editDistance is the optimal-string-alignment distance between a and b
// (Levenshtein plus swaps of adjacent letters, so "mgs" is one edit from
// "msg"), counted in bytes; names compared here are short ASCII keys. Long
// inputs are cut off so that a pathological key cannot make an error slow.
func editDistance(a, b string) int {
	const maxLen = 64
	if len(a) > maxLen {
		a = a[:maxLen]
	}
	if len(b) > maxLen {
		b = b[:maxLen]
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/model"
)

// sheetPlan is a one-rule audit with a provoking case and a control case
// given as a conversation with a knowledge base, every answer stored with
// hostile text (a terminal escape, a spreadsheet formula), in a store.
func sheetPlan(t *testing.T) (*audit.Plan, *audittest.MemStore) {
	t.Helper()
	dir := audittest.WriteFiles(t, map[string]string{
		"p.md": "You are a helpful assistant.\nNever share prices.\n",
		"audit.toml": `name = "sheet"
prompt = "p.md"
samples = 2
[model]
name = "m"
provider = "sim"
[[rule]]
line = 2
cases = "c.jsonl"
predicate = "c.toml"
`,
		"c.jsonl": `{"id":"ask\u001b[2J","kind":"provoke","msg":"How much is Pro?","note":"expect a refusal"}
{"id":"ctl","kind":"control","turns":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello!"},{"role":"user","content":"Which plans exist?"}],"kb":["Plans: Free, Pro."]}
`,
		"c.toml": "[[check]]\nfail_if_match = '\\$\\d+'\nreason = \"quoted a price\"\n",
	})
	p := audit.NewPlan(audittest.Load(t, filepath.Join(dir, "audit.toml")), audit.PlanOptions{})
	st := audittest.NewMemStore()
	for _, c := range p.Cells {
		text := "=HYPERLINK(\"http://evil.example\")\x1b]0;pwned\x07 costs $20"
		if err := st.Put(model.Response{Key: c.Key, Text: text}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return p, st
}

// A blind sheet holds the answers in the set's order with what a labeller
// needs and nothing that names a variant, a grade or a stratum; control
// sequences are gone, CSV cells cannot run as formulas, and answers already
// labelled or no longer stored are left out and counted.
func TestSheet_BlindAndSafe(t *testing.T) {
	t.Parallel()
	p, st := sheetPlan(t)
	var keys []string
	for _, c := range p.Cells {
		if !slices.Contains(keys, c.Key) {
			keys = append(keys, c.Key)
		}
	}
	slices.Reverse(keys) // an order that is not the plan's
	set := labels.LabelSet{Name: "s", Keys: append(keys, "0000gone"), Options: labels.SampleOptions{Line: 2}}
	labelled := keys[1]
	sh, err := BuildSheet(p, set, st, func(k string) bool { return k == labelled }, "")
	if err != nil {
		t.Fatal(err)
	}
	if sh.Labelled != 1 || sh.Gone != 1 || len(sh.Rows) != len(keys)-1 {
		t.Fatalf("sheet: %d rows, %d labelled, %d gone; want %d, 1, 1", len(sh.Rows), sh.Labelled, sh.Gone, len(keys)-1)
	}
	want := slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return k == labelled })
	for i, r := range sh.Rows {
		if r.Key != want[i] {
			t.Fatalf("row %d is %.8s, want %.8s: the sheet must keep the set's order", i, r.Key, want[i])
		}
	}

	var jl, cv bytes.Buffer
	if err := WriteSheet(&jl, sh.Rows, "jsonl"); err != nil {
		t.Fatal(err)
	}
	if err := WriteSheet(&cv, sh.Rows, "csv"); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"jsonl": jl.String(), "csv": cv.String()} {
		for _, bad := range []string{"\x1b", "\x07", "baseline", "-L2", "quoted a price", "pass", "fail", "stratum", "expect a refusal", "You are a helpful"} {
			if strings.Contains(out, bad) {
				t.Errorf("%s sheet holds %q:\n%s", name, bad, out)
			}
		}
	}

	// JSONL: exactly the stable fields, the verdict null.
	var fields []string
	var first map[string]any
	if err := json.Unmarshal(bytes.SplitN(jl.Bytes(), []byte("\n"), 2)[0], &first); err != nil {
		t.Fatal(err)
	}
	for k := range first {
		fields = append(fields, k)
	}
	slices.Sort(fields)
	if want := []string{"answer", "case", "conversation", "key", "kind", "labeller", "note", "rule", "rule_line", "schema_version", "violation"}; !slices.Equal(fields, want) &&
		!slices.Equal(fields, append(want[:3:3], append([]string{"kb"}, want[3:]...)...)) {
		t.Errorf("JSONL fields %v", fields)
	}
	if first["violation"] != nil {
		t.Errorf("violation = %v, want null", first["violation"])
	}

	recs, err := csv.NewReader(&cv).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], sheetColumns) {
		t.Errorf("CSV header %v", recs[0])
	}
	var control []string
	for _, r := range recs[1:] {
		if !strings.HasPrefix(r[7], "'=HYPERLINK") {
			t.Errorf("answer cell %q is not guarded against formulas", r[7])
		}
		if r[4] == "control" {
			control = r
		}
	}
	if control == nil || control[5] != "user: Hi\n\nassistant: Hello!\n\nuser: Which plans exist?" || control[6] != "Plans: Free, Pro." {
		t.Errorf("control row: %q", control)
	}
}

// A filled-in sheet reads back as blind labels, in either format: verdict
// words in any case, empty verdicts counted and skipped, the labeller from
// the row or the option, no time (the store gives one), and errors naming
// the file and line.
func TestParseLabels_Sheets(t *testing.T) {
	t.Parallel()
	csvSheet := "\ufeffkey,rule_line,rule,case,kind,conversation,kb,answer,violation,labeller,note\r\n" +
		"k1,2,r,c,provoke,hi,,\"a\nb\",Yes,,\r\n" +
		"k2,2,r,c,provoke,hi,,ans,o,ben,'=sum\r\n" +
		"k3,2,r,c,control,hi,,ans,,,\r\n" +
		",,,,,,,,,,\r\n" +
		"k4,2,r,c,control,hi,,ans, V ,,\r\n"
	jsonlSheet := `{"key":"k1","rule_line":2,"rule":"r","case":"c","kind":"provoke","conversation":[{"role":"user","content":"hi"}],"answer":"a","violation":true,"labeller":"","note":"","schema_version":1}
{"key":"k2","rule_line":2,"rule":"r","case":"c","kind":"provoke","conversation":[],"answer":"a","violation":"o","labeller":"ben","note":"=sum","schema_version":1}
{"key":"k3","rule_line":2,"rule":"r","case":"c","kind":"control","conversation":[],"answer":"a","violation":null,"labeller":"","note":"","schema_version":1}
{"key":"k4","rule_line":2,"rule":"r","case":"c","kind":"control","conversation":[],"kb":["x"],"answer":"a","violation":1,"labeller":"","note":"","schema_version":1}
`
	for _, tc := range []struct{ file, data, firstRow string }{{"sheet.CSV", csvSheet, ":2"}, {"sheet.jsonl", jsonlSheet, ":1"}} {
		file, data := tc.file, tc.data
		rows, err := ParseLabels(file, []byte(data), ParseOptions{Labeller: "ana", RequireLabeller: true})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if rows.Unlabelled != 1 || len(rows.Labels) != 3 {
			t.Fatalf("%s: %d labels, %d unlabelled; want 3, 1", file, len(rows.Labels), rows.Unlabelled)
		}
		want := []model.Label{
			{Key: "k1", Violation: true, Labeller: "ana", Source: model.LabelBlind},
			{Key: "k2", Violation: false, Labeller: "ben", Note: "=sum", Source: model.LabelBlind},
			{Key: "k4", Violation: true, Labeller: "ana", Source: model.LabelBlind},
		}
		if !slices.Equal(rows.Labels, want) {
			t.Errorf("%s: labels\n%+v\nwant\n%+v", file, rows.Labels, want)
		}
		if _, err := ParseLabels(file, []byte(data), ParseOptions{RequireLabeller: true}); err == nil ||
			!strings.Contains(err.Error(), file+tc.firstRow+":") || !strings.Contains(err.Error(), "labeller") {
			t.Errorf("%s without a labeller: %v", file, err)
		}
	}

	for _, tc := range []struct{ file, data, want string }{
		{"s.csv", "key,violation,verdict\nk1,yes,\n", `s.csv:1: field "verdict": unknown column`},
		{"s.csv", "key,labeller\nk1,ana\n", `s.csv:1: field "violation": no such column`},
		{"s.csv", "key,violation,labeller\nk1,yes,ana\nk2,maybe,ana\n", `s.csv:3: field "violation": "maybe": want true`},
		{"s.csv", "key,violation,labeller\nk1,yes,ana\n\"k2,no,ana\n", `s.csv:3: invalid CSV`},
		{"s.jsonl", `{"key":"k1","violation":"maybe","labeller":"ana"}`, `s.jsonl:1: field "violation": "maybe"`},
		{"s.jsonl", `{"key":"k1","violation":2,"labeller":"ana"}`, `s.jsonl:1: field "violation": 2: want`},
		{"s.jsonl", `{"key":"k1","labeller":"ana"}`, `s.jsonl:1: field "violation": missing`},
		{"s.jsonl", "key,violation\nk1,yes\n", "looks like CSV"},
	} {
		_, err := ParseLabels(tc.file, []byte(tc.data), ParseOptions{RequireLabeller: true})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: error %v, want %q", tc.file, tc.data, err, tc.want)
		}
	}
}

// The label export reads back as it was written, CSV included (the
// formula guard taken off again), and a record with no time keeps none.
func TestParseLabels_ExportRoundTrip(t *testing.T) {
	t.Parallel()
	in := []model.Label{
		{Key: "k1", Violation: true, Labeller: "=ana", Note: "-5 points", Source: model.LabelBlind},
		{Key: "k1", Labeller: "=ana", Source: model.LabelBlind, Undo: true},
		{Key: "k2", Labeller: "ben", Note: "ok", Source: model.LabelSeen},
	}
	book := model.NewLabelBook(in, nil)
	for _, format := range []string{"jsonl", "csv"} {
		var b bytes.Buffer
		if err := ExportLabels(&b, book, format); err != nil {
			t.Fatal(err)
		}
		rows, err := ParseLabels("labels."+format, b.Bytes(), ParseOptions{RequireLabeller: true})
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, b.String())
		}
		if len(rows.Labels) != len(in) {
			t.Fatalf("%s: %d labels back, want %d", format, len(rows.Labels), len(in))
		}
		for i, l := range rows.Labels {
			w := in[i]
			if l.Key != w.Key || l.Violation != w.Violation || l.Labeller != w.Labeller || l.Note != w.Note || l.Source != w.Source || l.Undo != w.Undo {
				t.Errorf("%s record %d: %+v, want %+v", format, i, l, w)
			}
		}
	}
	rows, err := ParseLabels("x.jsonl", []byte(`{"key":"k","violation":false,"labeller":"ana"}`), ParseOptions{})
	if err != nil || len(rows.Labels) != 1 || !rows.Labels[0].At.IsZero() {
		t.Errorf("a record without a time: %+v %v; want it kept without one", rows, err)
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/audittest"
	"github.com/auditor-dev/auditor/model"
)

// Answers that held control sequences are counted in every report, and
// the sequences themselves reach none.
func TestReports_CountAnswersWithControls(t *testing.T) {
	t.Parallel()
	dir := audittest.WriteFiles(t, map[string]string{
		"p.md":      "Be helpful.\nNever give dates.\n",
		"c.jsonl":   `{"id":"p0","kind":"provoke","msg":"when?"}` + "\n" + `{"id":"c0","kind":"control","msg":"what?"}` + "\n",
		"pred.toml": "[[check]]\nfail_if_match = 'Q[1-4]'\nreason = \"gave a date\"\n",
		"audit.toml": "name = \"controls\"\nprompt = \"p.md\"\nsamples = 2\n[model]\nname = \"m\"\nprovider = \"sim\"\n" +
			"[[rule]]\nline = 2\ncases = \"c.jsonl\"\npredicate = \"pred.toml\"\n",
	})
	a := audittest.Load(t, filepath.Join(dir, "audit.toml"))
	p := audit.NewPlan(a, audit.PlanOptions{})
	src := audittest.NewMemStore()
	for i, c := range p.Cells {
		text := "answer"
		if i < 3 {
			text = "click here\x1b]8;;http://evil.example\x1b\\Could\x1b]0;title\x07"
		}
		g := model.Grade{Grader: model.PredicateGrader, Version: a.Rules[0].Loaded.Version, Pass: true}
		if err := src.Put(model.Response{Key: c.Key, Text: text}, []model.Grade{g}); err != nil {
			t.Fatal(err)
		}
	}
	res := resultsOf(t, a, p, src)
	var text, md, js bytes.Buffer
	if err := WriteText(&text, res, audit.Spend{}, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, res, audit.Spend{}, true); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, Build(res, audit.Spend{}, true)); err != nil {
		t.Fatal(err)
	}
	const want = "3 answers held terminal control sequences (links, titles, clipboard writes), removed wherever they are shown"
	for name, out := range map[string]string{"text": text.String(), "md": md.String()} {
		if !strings.Contains(out, want) {
			t.Errorf("%s report lacks %q:\n%s", name, want, out)
		}
		if strings.ContainsAny(out, "\x1b\x07") || strings.Contains(out, "evil.example") {
			t.Errorf("%s report holds a control sequence or its payload", name)
		}
	}
	var doc struct {
		Rules []struct {
			Controls int `json:"controls"`
		} `json:"rules"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rules) != 1 || doc.Rules[0].Controls != 3 {
		t.Errorf("JSON rules %+v, want controls 3", doc.Rules)
	}
}

package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
)

// judgeAnswer is what the fixture's judge j answered about an answer it
// graded pass or not: two lines of reasoning, then the verdict.
func judgeAnswer(j *audit.Judge, pass bool, extra string) string {
	v := "VIOLATION"
	if pass {
		v = "OK"
	}
	return fmt.Sprintf("%s first weighs the reply against the rule.%s\nIn the end it says FULLREASON-%s.\nVERDICT: %s",
		j.Config.Name, extra, j.Config.Name, v)
}

// storeJudgeAnswers stores every judge's answer to every graded answer,
// under the key of the call that asked it (as the judge run does).
func storeJudgeAnswers(f *fixture, extra string) {
	f.src.mu.Lock()
	defer f.src.mu.Unlock()
	for _, c := range f.plan.Calls {
		r, ok := f.src.resps[c.Key]
		if !ok || !r.OK() || len(f.plan.ByKey[c.Key]) == 0 {
			continue // not answered, or a regression suite's call: judges do not grade those
		}
		cell := f.plan.Cells[f.plan.ByKey[c.Key][0]]
		rule := f.plan.Audit.Rules[cell.Rule]
		for _, j := range f.audit.Judges {
			g, graded := f.src.grades[j.Own.Version][c.Key]
			if !graded {
				continue
			}
			k := audit.JudgeRequest(j, j.Own, rule.Text, rule.Cases[cell.Case], r.Text, 0).Key()
			f.src.resps[k] = model.Response{Key: k, Text: judgeAnswer(j, g.Pass, extra), Attempts: 1, At: t0}
		}
	}
}

// sameText gives three answers of one case in rule 0's disagreement queue
// the same text, found nowhere else; it returns their keys.
func sameText(t testing.TB, f *fixture) []string {
	t.Helper()
	tally, err := evidence.NewTally(f.plan, f.preds, f.src)
	if err != nil {
		t.Fatal(err)
	}
	byCase := map[int][]string{}
	for _, it := range tally.Disagreements(0, 0, nil) {
		byCase[it.Cell.Case] = append(byCase[it.Cell.Case], it.Key)
	}
	f.src.mu.Lock()
	defer f.src.mu.Unlock()
	for ci := range f.plan.Audit.Rules[0].Cases {
		keys := byCase[ci]
		if len(keys) < 3 {
			continue
		}
		keys = keys[len(keys)-3:]
		for _, k := range keys {
			r := f.src.resps[k]
			r.Text = "One and the same answer, word for word."
			f.src.resps[k] = r
		}
		return keys
	}
	t.Fatal("no case has three disagreements")
	return nil
}

// goTo steps the review queue to the entry holding key.
func goTo(t testing.TB, w *labelWorld, key string) reviewEntry {
	t.Helper()
	for i, e := range w.a.review.items {
		if e.holds(key) {
			w.settle(w.a.review.moveTo(i))
			return e
		}
	}
	t.Fatalf("%s is not in the queue", key)
	return reviewEntry{}
}

// TestReview_GroupDecidesEach: three answers with the same text are one
// entry that says it applies to 3 answers; deciding it writes 3 labels,
// each its own seen record by the reviewer; undo takes all three back.
func TestReview_GroupDecidesEach(t *testing.T) {
	t.Parallel()
	var keys []string
	w := newLabelWorldEdit(t, newFixture(t, 6), 0, 5, ScreenReview, func(f *fixture) { keys = sameText(t, f) })
	a, src := w.a, w.src
	e := goTo(t, w, keys[0])
	if got := e.keys(); len(got) != 3 {
		t.Fatalf("the group holds %v, want the 3 keys %v", got, keys)
	}
	for _, k := range keys {
		if !e.holds(k) {
			t.Fatalf("the group lacks %s", k)
		}
	}
	// The list after it names all three: this one and the other two.
	others := []string{}
	for _, m := range e.more {
		others = append(others, fmt.Sprintf("%s s%d", a.c.plan.Audit.Rules[0].Cases[m.cell.Case].ID, m.cell.Sample+1))
	}
	contains(t, plain(a), "applies to 3 answers with this text: this one, "+strings.Join(others, ", "))
	before, _ := src.writes()
	w.press("v")
	after, _ := src.writes()
	if after-before != 3 {
		t.Fatalf("deciding the group wrote %d labels, want 3", after-before)
	}
	for _, k := range keys {
		l, ok := src.stored(k)
		if !ok || !l.Violation || l.Source != model.LabelSeen || l.Labeller != "ana" || l.Undo {
			t.Fatalf("label of %s: %+v (stored %v)", k, l, ok)
		}
		if _, ok := a.c.tally.SeenLabels()[k]; !ok {
			t.Fatalf("the tally lacks the label of %s", k)
		}
	}
	w.press("u")
	if n, _ := src.writes(); n-after != 3 {
		t.Fatalf("undo wrote %d records, want 3", n-after)
	}
	for _, k := range keys {
		if _, ok := a.c.tally.SeenLabels()[k]; ok {
			t.Fatalf("undo left the label of %s", k)
		}
	}
}

// TestReview_JudgesReasoningInFull: every judge's whole reasoning is shown,
// on ok verdicts too; r shows the answers as stored (with the verdict
// line), sanitized; enter opens them in full and esc comes back.
func TestReview_JudgesReasoningInFull(t *testing.T) {
	t.Parallel()
	w := newLabelWorldEdit(t, newFixture(t, 2), 0, 5, ScreenReview, func(f *fixture) { storeJudgeAnswers(f, " "+hostile) })
	a := w.a
	e, _ := a.review.current()
	body := strings.Join(contentLines(a.review), "\n")
	sawOK := false
	for _, j := range a.c.plan.Audit.Judges {
		sawOK = sawOK || a.c.tally.GraderGrades(j.Own.Version)[e.key].Pass
	}
	if !sawOK {
		t.Fatal("the first entry has no ok verdict: the test needs one")
	}
	// Both judges' whole reasoning, side by side: its first and last lines.
	if strings.Count(body, "weighs the reply") != 2 || strings.Count(body, "In the end it says") != 2 {
		t.Fatalf("the judges' reasoning is not shown in full:\n%s", body)
	}
	if strings.Contains(body, "VERDICT:") {
		t.Fatal("the reasoning shows the verdict line")
	}
	w.press("r")
	contains(t, strings.Join(contentLines(a.review), "\n"), "VERDICT: OK")
	if bad := escapes(a.View().Content); len(bad) > 0 {
		t.Fatalf("raw judge answers reached the terminal unsanitized: %v", bad)
	}
	w.press("enter")
	if !a.review.full.on {
		t.Fatal("enter did not open the judges' answers")
	}
	s := plain(a)
	contains(t, s, "Judges' answers as stored")
	for _, j := range a.c.plan.Audit.Judges {
		contains(t, s, strings.ToUpper(j.Grader))
		contains(t, s, j.Config.Name+" first weighs the reply")
		contains(t, s, "FULLREASON-"+j.Config.Name)
	}
	if bad := escapes(a.View().Content); len(bad) > 0 {
		t.Fatalf("judge answers opened in full are unsanitized: %v", bad)
	}
	w.press("r") // back to the reasoning, still open
	if !a.review.full.on || a.review.rawJudges {
		t.Fatal("r in the full view did not switch to the reasoning")
	}
	contains(t, plain(a), "Judges' reasoning")
	w.press("esc")
	if a.review.full.on || a.screen != screenReview {
		t.Fatalf("esc: full %v, screen %v", a.review.full.on, a.screen)
	}
	if strings.Contains(strings.Join(contentLines(a.review), "\n"), "VERDICT:") {
		t.Fatal("r in the full view did not bring the columns back to the reasoning")
	}
}

// TestReview_VariantHidden: the variant is hidden until V, and the header
// says which.
func TestReview_VariantHidden(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	a := w.a
	e, _ := a.review.current()
	name := a.c.plan.VariantName(e.cell)
	place := func() string { return strings.Split(plain(a), "\n")[5] }
	if strings.Contains(place(), name) {
		t.Fatalf("the variant shows by default: %q", place())
	}
	contains(t, plain(a), "variant hidden (V)")
	w.press("V")
	contains(t, place(), name)
	contains(t, plain(a), "variant shown (V)")
	w.press("V")
	if strings.Contains(place(), name) {
		t.Fatal("V did not hide the variant again")
	}
}

// TestReview_Search: / narrows the queue to answers whose case id or text
// holds the search, in any case; enter keeps it, esc clears it.
func TestReview_Search(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	a := w.a
	all := queued(a.review)
	w.press("/")
	if !a.current().capturing() {
		t.Fatal("/ did not open the search")
	}
	w.press("R", "O", "A", "D", "-", "0", "4")
	rule := a.c.plan.Audit.Rules[0]
	if len(a.review.items) == 0 || queued(a.review) >= all {
		t.Fatalf("search kept %d of %d", queued(a.review), all)
	}
	for _, e := range a.review.items {
		for _, m := range append([]reviewEntry{e}, e.more...) {
			if id := rule.Cases[m.cell.Case].ID; id != "road-04" {
				t.Fatalf("search kept case %s", id)
			}
		}
	}
	w.press("v") // typed into the search, not a decision
	if n, _ := w.src.writes(); n != 0 {
		t.Fatal("a key typed into the search labelled an answer")
	}
	w.press("backspace", "enter")
	if a.current().capturing() {
		t.Fatal("enter did not keep the search")
	}
	contains(t, plain(a), "search: road-04")
	w.press("esc")
	if queued(a.review) != all || a.review.search.query != "" || a.screen != screenReview {
		t.Fatalf("esc: %d of %d, query %q, screen %v", queued(a.review), all, a.review.search.query, a.screen)
	}
	// The answer's text: a word some answers hold and others do not.
	word := ""
	for _, f := range strings.Fields(strings.ToLower(a.review.texts.known[a.review.items[0].key])) {
		n := 0
		for _, e := range a.review.raw {
			if strings.Contains(strings.ToLower(a.review.texts.known[e.key]), f) {
				n++
			}
		}
		if n > 0 && n < len(a.review.raw) && len(f) > 3 {
			word = f
			break
		}
	}
	if word == "" {
		t.Fatal("no word tells the answers apart")
	}
	w.press("/")
	for _, r := range strings.ToUpper(word) {
		w.press(string(r))
	}
	w.press("enter")
	if len(a.review.items) == 0 || queued(a.review) >= all {
		t.Fatalf("text search kept %d of %d", queued(a.review), all)
	}
	for _, e := range a.review.items {
		if !strings.Contains(strings.ToLower(a.review.texts.known[e.key]), word) {
			t.Fatalf("text search kept %q", a.review.texts.known[e.key])
		}
	}
}

// TestReview_Help: ? lists the review screen's keys, the new ones too,
// and not another screen's.
func TestReview_Help(t *testing.T) {
	t.Parallel()
	w := newLabelWorld(t, newFixture(t, 2), 0, 5, ScreenReview)
	w.a.Update(keyMsg("?"))
	s := plain(w.a)
	for _, want := range []string{"raw judge answers", "show/hide variant", "search answers", "judges' answers in full", "violation", "agreement"} {
		contains(t, s, want)
	}
	for _, not := range []string{"filter cases", "samples of cell", "open miss"} {
		if strings.Contains(s, not) {
			t.Fatalf("review help shows %q:\n%s", not, s)
		}
	}
}

// TestReview_GroupKeepsAnswerShown: when the queue is grouped again (a
// search cleared), the answer shown stays, standing for its group.
func TestReview_GroupKeepsAnswerShown(t *testing.T) {
	t.Parallel()
	var keys []string
	w := newLabelWorldEdit(t, newFixture(t, 6), 0, 5, ScreenReview, func(f *fixture) { keys = sameText(t, f) })
	a := w.a
	rule := a.c.plan.Audit.Rules[0]
	member := goTo(t, w, keys[0])
	w.press("/")
	for _, r := range rule.Cases[member.cell.Case].ID {
		w.press(string(r))
	}
	w.press("enter")
	shown, _ := a.review.current()
	if rule.Cases[shown.cell.Case].ID != rule.Cases[member.cell.Case].ID {
		t.Fatalf("the search shows case %s", rule.Cases[shown.cell.Case].ID)
	}
	w.press("esc")
	now, _ := a.review.current()
	if now.key != shown.key || len(now.keys()) != 3 || a.review.loader.shown() == nil || a.review.loader.shown().Key != shown.key {
		t.Fatalf("after esc the queue shows %s (group of %d), want %s", now.key, len(now.keys()), shown.key)
	}
}

func TestReviewEntry_Led(t *testing.T) {
	t.Parallel()
	e := reviewEntry{key: "a", more: []reviewEntry{{key: "b"}, {key: "c"}}}
	got := e.led("c")
	if got.key != "c" || len(got.more) != 2 || got.more[0].key != "a" || got.more[1].key != "b" || len(got.more[0].more) != 0 {
		t.Fatalf("led(c) = %+v", got)
	}
	if e.led("a").key != "a" || e.led("z").key != "a" {
		t.Fatal("led changed a group it does not need to")
	}
	if len(e.more) != 2 || e.more[0].key != "b" {
		t.Fatalf("led changed the group it was called on: %+v", e)
	}
}

// failAfter is a label store whose writes fail after the first n.
type failAfter struct {
	*labelSource
	n int
}

func (f *failAfter) PutLabel(l model.Label) (model.Label, error) {
	if f.n == 0 {
		return model.Label{}, errDiskFull
	}
	f.n--
	return f.labelSource.PutLabel(l)
}

// TestReview_GroupWriteFailsPartway: a group's write that fails after its
// first label keeps what it committed, says so, and stays on the group;
// the key again labels all three.
func TestReview_GroupWriteFailsPartway(t *testing.T) {
	t.Parallel()
	var keys []string
	w := newLabelWorldEdit(t, newFixture(t, 6), 0, 5, ScreenReview, func(f *fixture) { keys = sameText(t, f) })
	a := w.a
	e := goTo(t, w, keys[0])
	at := a.review.index
	a.desk.store = &failAfter{labelSource: w.src, n: 1}
	w.press("o")
	contains(t, plain(a), "label not saved")
	if a.review.index != at {
		t.Fatalf("a failed write moved the queue to %d", a.review.index)
	}
	seen := a.c.tally.SeenLabels()
	got := 0
	for _, k := range e.keys() {
		if _, ok := seen[k]; ok {
			got++
		}
	}
	if _, ok := seen[e.key]; !ok || got != 1 {
		t.Fatalf("after a write that failed part-way the tally holds %d labels of the group (the first: %v)", got, ok)
	}
	a.desk.store = w.src
	w.press("o")
	seen = a.c.tally.SeenLabels()
	for _, k := range e.keys() {
		if l, ok := seen[k]; !ok || l.Violation {
			t.Fatalf("after the retry %s is labelled %+v (%v)", k, l, ok)
		}
	}
}

// TestReview_UndoAfterPartialGroupWrite: what a group's write committed
// before it failed is an action of its own that u takes back: undoing the
// retry and then it leaves none of the group labelled, as before.
func TestReview_UndoAfterPartialGroupWrite(t *testing.T) {
	t.Parallel()
	var keys []string
	w := newLabelWorldEdit(t, newFixture(t, 6), 0, 5, ScreenReview, func(f *fixture) { keys = sameText(t, f) })
	a := w.a
	e := goTo(t, w, keys[0])
	a.desk.store = &failAfter{labelSource: w.src, n: 1}
	w.press("o") // the first label commits, the second fails
	a.desk.store = w.src
	w.press("o") // the retry labels all three
	w.press("u", "u")
	seen := a.c.tally.SeenLabels()
	for _, k := range e.keys() {
		if l, ok := seen[k]; ok {
			t.Fatalf("after undoing the retry and the partial write, %s is still labelled %+v", k, l)
		}
	}
	w.press("u")
	contains(t, plain(a), "Nothing to undo")
}

// TestReview_PartialGroupUndoRetried: an undo of a group that fails after
// its first record leaves the rest to take back: the retry undoes those
// only, never the first answer's earlier label.
func TestReview_PartialGroupUndoRetried(t *testing.T) {
	t.Parallel()
	var keys []string
	w := newLabelWorldEdit(t, newFixture(t, 6), 0, 5, ScreenReview, func(f *fixture) { keys = sameText(t, f) })
	a := w.a
	goTo(t, w, keys[0])
	w.press("v") // all three violations
	e := goTo(t, w, keys[0])
	w.press("o") // all three ok
	a.desk.store = &failAfter{labelSource: w.src, n: 1}
	w.press("u") // the first answer's undo commits, the second's fails
	a.desk.store = w.src
	w.press("u") // the rest of that undo
	seen := a.c.tally.SeenLabels()
	for _, k := range e.keys() {
		if l, ok := seen[k]; !ok || !l.Violation {
			t.Fatalf("after the group's undo, retried, %s is labelled %+v (%v), want the violation before it", k, l, ok)
		}
	}
}

// TestReview_GroupNoteKeepsEachVerdict: a note on a group whose answers
// were decided differently (one relabelled on its own) goes with each
// answer's own verdict: writing a note decides nothing.
func TestReview_GroupNoteKeepsEachVerdict(t *testing.T) {
	t.Parallel()
	var keys []string
	w := newLabelWorldEdit(t, newFixture(t, 6), 0, 5, ScreenReview, func(f *fixture) { keys = sameText(t, f) })
	a := w.a
	goTo(t, w, keys[0])
	w.press("v") // the group: three violations
	// One of them decided on its own as ok (as before its text was read
	// and the queue grouped it).
	e := goTo(t, w, keys[0])
	other := e.more[0]
	w.settle(a.review.d.save(screenReview, model.Label{Key: other.key, Violation: false}, false))
	goTo(t, w, keys[0])
	before := map[string]bool{}
	for _, k := range keys {
		l, ok := a.c.tally.SeenLabels()[k]
		if !ok {
			t.Fatalf("%s is not labelled", k)
		}
		before[k] = l.Violation
	}
	w.press("i", "w", "h", "y", "enter")
	if lead, _ := a.review.current(); a.c.tally.SeenLabels()[lead.key].Note != "why" {
		t.Fatalf("the note did not go with the label shown: %+v", a.c.tally.SeenLabels()[lead.key])
	}
	for _, k := range keys {
		if l := a.c.tally.SeenLabels()[k]; l.Violation != before[k] {
			t.Fatalf("a note changed %s from violation=%v to %v", k, before[k], l.Violation)
		}
	}
}

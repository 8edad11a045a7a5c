package tui

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/audit/labels"
	"github.com/auditor-dev/auditor/examples"
	"github.com/auditor-dev/auditor/store"
)

// killChildEnv names the directory a child process labels in; set, the
// test binary runs TestLabelKill_Child as the labeller instead of tests.
const killChildEnv = "AUDITOR_TUI_LABEL_KILL_DIR"

// TestLabelKill: a process labelling through the label screen (the same
// Update and commands, a real store) is killed with SIGKILL part-way; every
// label the screen acknowledged (moved on after) is in the file afterwards,
// in the label's history.
func TestLabelKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := examples.Write(dir); err != nil {
		t.Fatal(err)
	}
	f := loadFixture(t, dir, 2)
	st, err := store.Open(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	w := st.NewWriter(store.WriterOptions{})
	for i := range f.plan.Calls {
		if err := w.Put(f.answer(t, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tally, err := evidence.NewTally(f.plan, f.preds, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := labels.DrawLabelSample(st, f.plan, tally, labels.SampleOptions{Name: "sample", N: 60, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestLabelKill_Child$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	type ack struct {
		key       string
		violation bool
		at        int64
	}
	var acks []ack
	killed := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 || fs[0] != "saved" {
			continue
		}
		at, _ := strconv.ParseInt(fs[3], 10, 64)
		acks = append(acks, ack{key: fs[1], violation: fs[2] == "true", at: at})
		if len(acks) == 40 && !killed {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	werr := cmd.Wait()
	if !killed {
		t.Fatalf("the child stopped after %d labels (%v):\n%s", len(acks), werr, stderr.String())
	}

	st, err = store.Open(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatalf("opening the store after SIGKILL: %v", err)
	}
	defer st.Close()
	for i, a := range acks {
		hist, err := st.LabelHistory(a.key)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, l := range hist {
			if l.Violation == a.violation && l.At.UnixNano() == a.at && l.Labeller == "kid" {
				found = true
			}
		}
		if !found {
			t.Errorf("acknowledged label %d (%s %v) is not in the store", i+1, a.key, a.violation)
		}
	}
	t.Logf("%d labels acknowledged before the kill, all stored", len(acks))
}

// TestLabelKill_Child labels for ever when run as TestLabelKill's child:
// v and o in turn through App.Update, running each save command and
// printing the label once the screen has taken the saved message.
func TestLabelKill_Child(t *testing.T) {
	dir := os.Getenv(killChildEnv)
	if dir == "" {
		t.Skip("runs only as TestLabelKill's child")
	}
	f := loadFixture(t, dir, 2)
	st, err := store.Open(filepath.Join(dir, "auditor.db"))
	if err != nil {
		t.Fatal(err)
	}
	tally, err := evidence.NewTally(f.plan, f.preds, st)
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(Options{Plan: f.plan, Tally: tally, Responses: st,
		Labelling: LabelOptions{Store: st, Labeller: "kid", Open: ScreenLabel}})
	if err != nil {
		t.Fatal(err)
	}
	a.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	deadline := time.Now().Add(time.Minute) // never hangs a run whose parent died
	for i := 0; time.Now().Before(deadline); i++ {
		k := "v"
		if i%2 == 1 {
			k = "o"
		}
		_, cmd := a.Update(keyMsg(k))
		for _, m := range runCmd(cmd) {
			a.Update(m)
			if s, ok := m.(labelSavedMsg); ok && s.err == nil {
				fmt.Printf("saved %s %v %d\n", s.label.Key, s.label.Violation, s.label.At.UnixNano())
			}
		}
	}
}

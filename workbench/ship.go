package workbench

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/auditor-dev/auditor/audit"
	"github.com/auditor-dev/auditor/audit/evidence"
	"github.com/auditor-dev/auditor/model"
	"github.com/auditor-dev/auditor/prompts"
)

// JointChoice is the joint set `auditor ship` tests: the lines, whether
// they are a new test (recorded as a [[ship]] table before any call), and
// how they were chosen.
type JointChoice struct {
	Lines []int
	// New is true when the audit's current joint test is of other lines
	// (or there is none): RecordJoint appends the table, test number Test.
	New  bool
	Test int
	// Candidates lists, when no line is DELETE yet, the lines a joint test
	// could be of (deletions with a class whose verdict is not KEEP for any
	// model): labelling the joint variant settles them all at once.
	Candidates []int
}

// ChooseJoint picks the joint set: lines when given (a line KEEP by its own
// verdict only when named), else every line whose own deletion is DELETE
// for every model. It returns an error naming a line that cannot be in a
// joint set, and an empty choice (with Candidates) when no line is DELETE.
func (s *Session) ChooseJoint(lines []int) (JointChoice, error) {
	a := s.Audit
	var c JointChoice
	if len(lines) > 0 {
		if _, err := a.JointRules(lines); err != nil {
			return c, err
		}
		c.Lines = slices.Clone(lines)
	} else {
		res, err := s.Results()
		if err != nil {
			return c, err
		}
		c.Lines, c.Candidates = deletable(res)
	}
	slices.Sort(c.Lines)
	if len(c.Lines) == 0 {
		return c, nil
	}
	c.Test = len(a.File.Ships)
	if a.Ship == nil || !slices.Equal(a.Ship.Lines, c.Lines) {
		c.New, c.Test = true, c.Test+1
	}
	return c, nil
}

// deletable returns the lines whose deletion is DELETE for every model,
// and the candidates of a joint test: deletion lines with an input class
// and a predicate that are quiet for every model, DELETE or undecided
// with no graded failure in either variant (clean blind labels of the
// joint variant's answers would settle them).
func deletable(res *evidence.Results) (lines, candidates []int) {
	a := res.Plan.Audit
	del, quiet, seen := map[int]int{}, map[int]int{}, map[int]bool{}
	for _, rr := range res.Rules {
		if !rr.Rule.Deletion() || rr.Rule.Config.NoInputClass() || !rr.Rule.HasPredicate() {
			continue
		}
		l, v := rr.Rule.Line, rr.Verdict
		seen[l] = true
		switch {
		case v.Decision == model.DecisionDelete:
			del[l]++
			quiet[l]++
		case v.Decision == model.DecisionInconclusive && v.LabelsNeeded.Clean && v.DeletedN > 0 && v.BaselineFails == 0 && v.DeletedFails == 0:
			quiet[l]++
		}
	}
	models := len(a.File.Models)
	for l := range seen {
		if del[l] == models {
			lines = append(lines, l)
		}
		if quiet[l] == models {
			candidates = append(candidates, l)
		}
	}
	slices.Sort(lines)
	slices.Sort(candidates)
	return lines, candidates
}

// RecordJoint appends the choice's [[ship]] table to the audit file, so
// the joint test (and how many the audit has made) is committed with it.
// The file's bytes before the table are left as they were.
func RecordJoint(path string, c JointChoice) error {
	path = audit.FilePath(path)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteByte('\n')
	}
	ls := make([]string, len(c.Lines))
	for i, l := range c.Lines {
		ls[i] = fmt.Sprint(l)
	}
	fmt.Fprintf(&b, "\n# Joint test %d, written by `auditor ship`: the prompt without these lines at once.\n[[ship]]\nlines = [%s]\n", c.Test, strings.Join(ls, ", "))
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp := path + ".ship-tmp"
	if err := os.WriteFile(tmp, b.Bytes(), st.Mode().Perm()); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ShippedPrompt returns the audit's prompt file's bytes without its joint
// test's lines, byte for byte the original otherwise
// (prompts.WithoutBytes). It refuses a prompt file that changed since the
// audit was loaded: the joint test ran on the prompt as it was.
func ShippedPrompt(a *audit.Audit) ([]byte, error) {
	if a.Ship == nil {
		return nil, fmt.Errorf("the audit has no joint test")
	}
	data, err := audit.ReadRegular(a.PromptPath)
	if err != nil {
		return nil, err
	}
	p, err := prompts.Parse(a.PromptPath, data)
	if err != nil {
		return nil, err
	}
	if p.Text() != a.Prompt.Text() {
		return nil, fmt.Errorf("%s changed since the audit was opened: run ship again", a.PromptPath)
	}
	return prompts.WithoutBytes(data, a.Ship.Lines...), nil
}

// CheaperPath is the advice a sweep gets before any label is given: test
// the candidate lines' joint deletion and label its answers, which settles
// every inert line at once instead of each line's own deletion and then
// the prompt shipped again. perClass is the labels a quiet class needs
// (LabelsForQuietClass); it returns "" with fewer than two candidates.
func CheaperPath(candidates []int, perClass int) string {
	if len(candidates) < 2 {
		return ""
	}
	ls := make([]string, len(candidates))
	for i, l := range candidates {
		ls[i] = fmt.Sprint(l)
	}
	return fmt.Sprintf("the cheaper path: test the prompt without lines %s at once (ship --lines %s) and label its answers (label --for-verdict): "+
		"about %d blind labels a class that never breaks, %d in all, settle every inert line at once, where each line's own DELETE takes about %d and the prompt shipped needs its own again",
		model.LineList(candidates), strings.Join(ls, ","), perClass, perClass*len(candidates), perClass)
}

// LabelsForQuietClass is how many blind labels, all clean, of a class's
// answers under a variant the labels route needs to bound its violation
// rate below delta: the smallest n whose upper bound of 0 of n is under
// delta (model.LabelsForZero).
func LabelsForQuietClass(delta float64) int {
	return model.LabelsForZero(delta)
}

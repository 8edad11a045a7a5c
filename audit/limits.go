package audit

import (
	"bytes"
	"fmt"

	"github.com/auditor-dev/auditor/model"
)

// Per-file limits. Every input file is at most MaxInputBytes (64 MiB), but
// inside that a file of one kind could still take gigabytes to lay out: a
// 64 MiB prompt is hashed into every call's content address and counted by
// the tokenizer (plan: 51 s at 1.4 GB), a 60 MiB audit name is copied into
// every screen and report, a million cases are parsed into a plan that is
// then refused as too large. Each kind of file has a limit far above any
// real one (the largest system prompts in use are a few hundred KiB), at
// which every command stays under 500 MB; the refusal names the file and
// says which limit.
const (
	// MaxAuditFileBytes bounds audit.toml: names, rules and sweeps of
	// thousands of lines fit in a few KiB.
	MaxAuditFileBytes = 1 << 20
	// MaxPromptBytes bounds the system prompt: 2 MiB is about 500,000
	// tokens, more than any model's context window.
	MaxPromptBytes = 2 << 20
	// MaxPredicateBytes bounds a predicate file (its patterns compile to
	// automata several times their size).
	MaxPredicateBytes = 1 << 20
	// MaxRubricBytes bounds a judge's rubric, sent with every judge call.
	MaxRubricBytes = 1 << 20
	// MaxCasesPerFile bounds the cases of one case file, counted before
	// they are parsed: a file of more could never be laid out at one
	// sample without --allow-large (MaxCells cells over two variants).
	MaxCasesPerFile = MaxCells / 2
)

// limitError is a file over its kind's limit.
type limitError struct {
	size  int64
	limit int
	what  string // "a system prompt"
}

func (e *limitError) Error() string {
	return fmt.Sprintf("is %s; %s is at most %s (more would take gigabytes to lay out, and no real one comes near)",
		sizeOf(int(e.size)), e.what, sizeOf(e.limit))
}

// countCases counts the lines of a case file that can hold a case (not
// blank, not a // comment), and refuses a file of more than
// MaxCasesPerFile before any is parsed.
func countCases(path string, data []byte) error {
	n := 0
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) > 0 && !bytes.HasPrefix(line, []byte("//")) {
			n++
		}
		if n > MaxCasesPerFile {
			return &model.InputError{File: path, Msg: fmt.Sprintf("holds more than %d cases; one case file is at most %d (at one sample and two variants that is already the %d cells auditor lays out): split the cases across rules, or keep the ones that test this line",
				MaxCasesPerFile, MaxCasesPerFile, MaxCells)}
		}
	}
	return nil
}

func sizeOf(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadPredicateFile reads a predicate file as Load does: a regular file of
// at most MaxPredicateBytes (the app reads one again when it is edited).
func ReadPredicateFile(path string) ([]byte, error) {
	return readRegular(path, MaxPredicateBytes, "a predicate file")
}

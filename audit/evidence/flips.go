package evidence

import (
	"fmt"
	"strconv"
)

// Flips are the cases whose outcome changed between baseline and a
// variant. A case's outcome under a variant is its majority over samples:
// failed when more than half of its graded answers fail, passed when fewer
// than half do; exactly half is a tie and flips nothing. Fixed cases failed
// on baseline and pass on the variant; broken cases did the reverse. Only
// cases graded under both are compared.
//
// Flips describe; they do not decide. With few samples a case's majority is
// noisy (3 samples at a true rate of 40% fail the majority 35% of the time),
// so the verdict rests on the rates and intervals, and the flips say which
// cases to read.
type Flips struct {
	Fixed, Broken []string // case ids, in case-file order
	Compared      int      // cases graded under both
}

// outcome is a case's majority outcome: +1 failed, -1 passed, 0 a tie or
// nothing graded.
func outcome(c Count) int {
	switch {
	case c.N == 0 || 2*c.Fails == c.N:
		return 0
	case 2*c.Fails > c.N:
		return 1
	}
	return -1
}

// caseFlips compares every case's majority outcome under both variants.
func caseFlips(cases []CaseResult) Flips {
	var f Flips
	for _, cr := range cases {
		if cr.Baseline.N == 0 || cr.Deleted.N == 0 {
			continue
		}
		f.Compared++
		b, v := outcome(cr.Baseline), outcome(cr.Deleted)
		switch {
		case b == 1 && v == -1:
			f.Fixed = append(f.Fixed, cr.Case.ID)
		case b == -1 && v == 1:
			f.Broken = append(f.Broken, cr.Case.ID)
		}
	}
	return f
}

// Summary says it in words: "one case fixed, two broken (9 cases
// compared)".
func (f Flips) Summary() string {
	fixed := "no case fixed"
	switch n := len(f.Fixed); {
	case n == 1:
		fixed = "one case fixed"
	case n > 1:
		fixed = numberWord(n) + " cases fixed"
	}
	broken := "none broken"
	if n := len(f.Broken); n > 0 {
		broken = numberWord(n) + " broken"
	}
	return fmt.Sprintf("%s, %s (%d %s compared)", fixed, broken, f.Compared, plural(f.Compared, "case", "cases"))
}

// numberWord writes small counts as words, as a sentence would.
func numberWord(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Command auditor produces evidence before a rule line is deleted from an LLM
// system prompt: targeted cases run against the prompt with and without the
// line, graded by a predicate written before the run, with a KEEP, DELETE or
// INCONCLUSIVE verdict per line and honest intervals.
//
// This package wires flags to the packages that do the work; it holds no
// logic of its own beyond choosing exit codes and printing.
package main

import (
	"os"
	"runtime/debug"
)

// defaultMemoryLimit is the Go runtime's soft memory limit when GOMEMLIMIT
// is not set: the collector works harder as the heap nears it, which keeps
// the largest accepted inputs (a plan of audit.MaxCells cells) under
// 500 MB resident (466 MB without it, 386 MB with it). It is soft: a heap
// that needs more gets more, with the collector's share of CPU capped.
const defaultMemoryLimit = 384 << 20

func main() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	os.Exit(Main(os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}

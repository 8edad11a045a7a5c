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
)

func main() {
	os.Exit(Main(os.Args[1:], Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}

// Package labels holds what human labels say about the graders: drawing a
// label set (simple random or stratified by a grader's verdict), loading
// the sets and their labels from the store, the predicate-version history
// a set was labelled under, and grader quality (recall, precision,
// specificity with Wilson intervals, weighted for stratified sets) that
// the verdict divides by.
package labels

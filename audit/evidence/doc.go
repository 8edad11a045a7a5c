// Package evidence computes what a reviewer reads from what is stored: the
// Tally (status, grades and labels loaded once, updated as answers arrive),
// per-rule results (arms, differences, the recall-corrected rates and the
// verdict), grader agreement and disagreements, the model comparison, the
// sweep, answer lengths for rules with no input class, and each rule's
// text history against its cases' dates.
package evidence

// Package grade turns stored or arriving answers into grades: the
// predicate registry every grader and tally shares (so an edit applies to
// the next answer graded), the Grader that grades an answer with every
// predicate whose cells use it, the Sink that grades and saves as the
// runner reports, the judges' sink and back-fill, the re-ask of a sample of
// judge calls that measures a judge's stability, and (in execgrade) the
// [exec] predicate's long-lived process.
package grade

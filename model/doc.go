// Package model holds auditor's domain: cases and their kinds, the calls a
// plan makes and the responses they produce, grades, labels, predicates and
// verdicts. It is pure: functions here parse bytes they are handed and compute
// on values; they never touch files, the network, a terminal or a database.
// Statistics live in the sub-package model/stats.
package model

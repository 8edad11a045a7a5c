package stats

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// Simulations of the verdict's shape under the group-sequential design:
// provoking cases x planned samples, looks after each fifth of the
// samples, the KEEP test (Newcombe lower bound of pooled deleted - baseline
// above 0, one-sided 2.5%) and DELETE's grader route with a perfect grader
// (J_L = 1: the larger of Newcombe's upper bound and the paired-by-case
// upper bound below delta, one-sided 1.25%, the route's share of DELETE's
// error as model.Decide takes it), each test at its own design's boundary.
// Every cell is simulated 10,000 times with a fixed seed, so the numbers
// are the same on every run.
//
// Three ways of reading the same simulated data are compared:
//   - seq: the sequential design, z = c_k at look k (SpendingOBF);
//   - naive: the fixed-sample z at every look (1.96 for KEEP, 2.2414 for
//     DELETE), the peeking the design replaces;
//   - fixed: the fixed-sample z once, at the last look (today's verdict).

const (
	simRuns  = 10_000
	simDelta = 0.05
	simN     = 30 // planned samples per case

	simKeepAlpha   = 0.025  // KEEP's one-sided error
	simDeleteAlpha = 0.0125 // DELETE's grader route: its share of DELETE's 2.5%
)

// simLooks are the declared looks: after each fifth of the samples.
var simLooks = EqualFractions(5)

// simCell is one simulated line: per-case failure rates of each variant.
type simCell struct {
	name      string
	base, del []float64
}

func (c simCell) cases() int { return len(c.base) }

// uniformCell has every case fail at base without the deletion and at
// base+rise with it.
func uniformCell(cases int, base, rise float64) simCell {
	b, d := make([]float64, cases), make([]float64, cases)
	for i := range b {
		b[i], d[i] = base, base+rise
	}
	return simCell{name: fmt.Sprintf("%dx%d %.0f%%->%.1f%%", cases, simN, 100*base, 100*(base+rise)), base: b, del: d}
}

// mixedRates are heterogeneous case rates: most cases rarely fail, a few
// often, as real provoking cases do (mean over the first 8: 9.75%).
var mixedRates = []float64{0, 0.40, 0.02, 0.20, 0, 0.10, 0.05, 0.01, 0.05}

// mixedCell has case c fail at mixedRates[c mod 9] without the deletion
// and rise more with it.
func mixedCell(cases int, rise float64) simCell {
	b, d := make([]float64, cases), make([]float64, cases)
	for i := range b {
		b[i] = mixedRates[i%len(mixedRates)]
		d[i] = b[i] + rise
	}
	return simCell{name: fmt.Sprintf("%dx%d mixed +%.1f pts", cases, simN, 100*rise), base: b, del: d}
}

// simOutcome is what one reading of the data decided over the runs.
type simOutcome struct {
	keep, del int     // runs with a KEEP (DELETE) at some look
	settled   int     // runs settled (KEEP or DELETE) at some look
	samples   float64 // sum over runs of samples per case at the settling look (all of them when unsettled)
	firstLook []int   // runs settled first at each look
}

func (o simOutcome) rate(x int) float64 { return float64(x) / simRuns }

// simResult holds the three readings of one cell's simulated data.
type simResult struct {
	cell              simCell
	seq, naive, fixed simOutcome
}

// simulate runs a cell simRuns times. Each case's samples arrive in order;
// a look sees the first SamplesAtLook(t_k, simN) of them in both variants,
// drawn as binomial increments between looks (the same distribution as
// drawing the samples one by one). Readings stop at their first settled
// look; a reading's KEEP and DELETE counts are over all its looks up to
// that one, so "KEEP at some look" is what a user who stops at the first
// KEEP sees.
func simulate(cell simCell, seed uint64) simResult {
	C := cell.cases()
	looks := make([]int, len(simLooks)) // samples per case at each look
	for k, f := range simLooks {
		looks[k] = SamplesAtLook(f, simN)
	}
	// Inverse-CDF tables of each case's binomial increments.
	type draw struct{ base, del [][]float64 }
	tables := make([]draw, len(looks))
	for k := range looks {
		m := looks[k]
		if k > 0 {
			m -= looks[k-1]
		}
		tables[k].base = make([][]float64, C)
		tables[k].del = make([][]float64, C)
		for c := range C {
			tables[k].base[c] = binomialCDF(m, cell.base[c])
			tables[k].del[c] = binomialCDF(m, cell.del[c])
		}
	}
	keep, del := simBounds()
	fixedZ := lookZ{keep: z975, del: NormalQuantile(1 - simDeleteAlpha), delTail: simDeleteAlpha}
	seqZ := make([]lookZ, len(looks))
	for k := range looks {
		seqZ[k] = lookZ{keep: keep[k].Z, del: del[k].Z, delTail: del[k].Tail}
	}
	res := simResult{cell: cell}
	for _, o := range []*simOutcome{&res.seq, &res.naive, &res.fixed} {
		o.firstLook = make([]int, len(looks))
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dels, base := make([]int, C), make([]int, C)
	nDel, nBase := make([]int, C), make([]int, C)
	for range simRuns {
		clear(dels)
		clear(base)
		var seqDone, naiveDone bool
		for k, m := range looks {
			for c := range C {
				dels[c] += invert(tables[k].del[c], rng.Float64())
				base[c] += invert(tables[k].base[c], rng.Float64())
				nDel[c], nBase[c] = m, m
			}
			last := k == len(looks)-1
			if !seqDone {
				seqDone = res.seq.record(k, m, last, decideAt(dels, nDel, base, nBase, seqZ[k]))
			}
			if !naiveDone {
				naiveDone = res.naive.record(k, m, last, decideAt(dels, nDel, base, nBase, fixedZ))
			}
			if last {
				res.fixed.record(k, m, true, decideAt(dels, nDel, base, nBase, fixedZ))
			}
		}
	}
	return res
}

// record adds one look's verdict ('K', 'D' or 0) and says whether the
// reading stops here.
func (o *simOutcome) record(k, m int, last bool, v byte) bool {
	switch v {
	case 'K':
		o.keep++
	case 'D':
		o.del++
	}
	if v != 0 {
		o.settled++
		o.firstLook[k]++
		o.samples += float64(m)
		return true
	}
	if last {
		o.samples += float64(m)
	}
	return false
}

// lookZ holds the multipliers of one look: KEEP's z, DELETE's z and the
// one-sided tail DELETE's paired term is taken at.
type lookZ struct{ keep, del, delTail float64 }

// decideAt is the verdict at one look with a perfect grader: 'K' when
// Newcombe's lower bound at z.keep is above 0, else 'D' when the larger of
// Newcombe's upper bound at z.del and the paired upper bound at z.delTail
// is below delta, else 0. The per-case counts are del[c] of nDel[c]
// against base[c] of nBase[c].
func decideAt(del, nDel, base, nBase []int, z lookZ) byte {
	var xd, xb, n int
	for c := range del {
		xd += del[c]
		xb += base[c]
		n += nDel[c]
	}
	_, nc, err := NewcombeZ(xd, n, xb, n, z.keep)
	if err != nil {
		panic(err) // the simulation's own counts are valid
	}
	if nc.Lo > 0 {
		return 'K'
	}
	if _, nc, _ = NewcombeZ(xd, n, xb, n, z.del); nc.Hi >= simDelta {
		return 0
	}
	p, err := PairedDiff(del, nDel, base, nBase)
	if err != nil {
		panic(err)
	}
	hi, err := PairedUpper(p, z.delTail)
	if err != nil {
		panic(err)
	}
	if hi < simDelta {
		return 'D'
	}
	return 0
}

// binomialCDF is P(X <= x) for X ~ Binomial(m, p), x = 0..m.
func binomialCDF(m int, p float64) []float64 {
	cdf := make([]float64, m+1)
	var acc float64
	for x := 0; x <= m; x++ {
		lg, _ := math.Lgamma(float64(m + 1))
		lx, _ := math.Lgamma(float64(x + 1))
		ly, _ := math.Lgamma(float64(m - x + 1))
		var pr float64
		switch {
		case p == 0:
			pr = b2f(x == 0)
		case p == 1:
			pr = b2f(x == m)
		default:
			pr = math.Exp(lg - lx - ly + float64(x)*math.Log(p) + float64(m-x)*math.Log1p(-p))
		}
		acc += pr
		cdf[x] = acc
	}
	cdf[m] = 1
	return cdf
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// invert draws from a binomial through its CDF and a uniform u in [0,1).
func invert(cdf []float64, u float64) int {
	for x, f := range cdf {
		if u < f {
			return x
		}
	}
	return len(cdf) - 1
}

// simBounds are the default design's boundaries for KEEP and for DELETE's
// grader route.
var simBounds = sync.OnceValues(func() (keep, del []Boundary) {
	keep, err := SpendingOBF(simLooks, simKeepAlpha)
	if err != nil {
		panic(err)
	}
	del, err = SpendingOBF(simLooks, simDeleteAlpha)
	if err != nil {
		panic(err)
	}
	return keep, del
})

// simCache holds each cell's result by name: a cell that two tests use
// (the 5% baselines with no rise and with a rise of delta) is simulated
// once per process.
var simCache sync.Map // name -> func() simResult

// runCells simulates cells two at a time (the machine has two cores) and
// returns the results in order. A cell's seed is a hash of its name, so the
// same cell gives the same numbers in every test and table.
func runCells(cells []simCell) []simResult {
	out := make([]simResult, len(cells))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, c := range cells {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			run, _ := simCache.LoadOrStore(c.name, sync.OnceValue(func() simResult {
				h := fnv.New64a()
				h.Write([]byte(c.name))
				return simulate(c, h.Sum64())
			}))
			out[i] = run.(func() simResult)()
		}()
	}
	wg.Wait()
	return out
}

// The largest observed error rates the tests accept: the nominal level
// plus three standard errors of 10,000 runs. A true 3.5% false KEEP falls
// below keepBound with probability 0.0035; a DELETE route at the whole of
// DELETE's 2.5% would never fall below deleteBound.
const (
	keepBound   = 0.030 // KEEP, nominal 2.5%
	deleteBound = 0.016 // DELETE's grader route, nominal 1.25%
)

// nullCells are the lines with no true rise, for false KEEP: baselines 0,
// 2, 5 and 10% in every case, and mixed case rates.
func nullCells() []simCell {
	var cells []simCell
	for _, C := range []int{8, 18} {
		for _, b := range []float64{0, 0.02, 0.05, 0.10} {
			cells = append(cells, uniformCell(C, b, 0))
		}
		cells = append(cells, mixedCell(C, 0))
	}
	return cells
}

// TestSequential_FalseKeep: on a line that does nothing, a user who stops
// at the first look that says KEEP is wrong at most 2.5% of the time under
// the sequential design.
func TestSequential_FalseKeep(t *testing.T) {
	t.Parallel()
	checkErrorRate(t, "KEEP", keepBound, nullCells(), func(o simOutcome) int { return o.keep })
}

// checkErrorRate asserts that the sequential design's false verdicts (what
// counts them out of a reading) stay at most bound in every cell, and that
// reading the same data at the fixed-sample z at every look exceeds it
// where failures are common enough to be inflated (at least 6 of the 10
// cells: all but the 0% baselines, where nothing ever fails, and the odd
// cell at the edge), so the assertion has teeth.
func checkErrorRate(t *testing.T, verdict string, bound float64, cells []simCell, count func(simOutcome) int) {
	t.Helper()
	var naiveFails int
	for _, r := range runCells(cells) {
		if got := r.seq.rate(count(r.seq)); got > bound {
			t.Errorf("%s: false %s %.4f at some look, above %.3f (fixed design %.4f)", r.cell.name, verdict, got, bound, r.fixed.rate(count(r.fixed)))
		}
		if r.naive.rate(count(r.naive)) > bound {
			naiveFails++
		}
	}
	if naiveFails < 6 {
		t.Errorf("the fixed-sample z at every look gave false %s above %.3f in only %d cells: the test could not tell peeking from the design", verdict, bound, naiveFails)
	}
}

// deltaCells are the lines whose true rise is exactly delta, for false
// DELETE with a perfect grader.
func deltaCells() []simCell {
	var cells []simCell
	for _, C := range []int{8, 18} {
		for _, b := range []float64{0, 0.02, 0.05, 0.10} {
			cells = append(cells, uniformCell(C, b, simDelta))
		}
		cells = append(cells, mixedCell(C, simDelta))
	}
	return cells
}

// TestSequential_FalseDelete: on a line whose deletion raises failures by
// exactly delta, a user who stops at the first look that says DELETE
// (perfect grader) is wrong at most 1.25% of the time, the grader route's
// share of DELETE's 2.5%.
func TestSequential_FalseDelete(t *testing.T) {
	t.Parallel()
	checkErrorRate(t, "DELETE", deleteBound, deltaCells(), func(o simOutcome) int { return o.del })
}

// powerCells are load-bearing lines: 4% -> 30%, 4% -> 12%, 0% -> 8%.
func powerCells() []simCell {
	var cells []simCell
	for _, C := range []int{8, 18} {
		cells = append(cells, uniformCell(C, 0.04, 0.26), uniformCell(C, 0.04, 0.08), uniformCell(C, 0, 0.08))
	}
	return cells
}

// TestSequential_Power: the chance of KEEP by the last look is within 5
// points of the fixed design's (1.96 once, at the end).
func TestSequential_Power(t *testing.T) {
	t.Parallel()
	for _, r := range runCells(powerCells()) {
		seq, fixed := r.seq.rate(r.seq.keep), r.fixed.rate(r.fixed.keep)
		if math.Abs(seq-fixed) > 0.05 {
			t.Errorf("%s: KEEP by the last look %.4f, fixed design %.4f: more than 5 points apart", r.cell.name, seq, fixed)
		}
	}
}

// riseCells are the rises of the expected-samples table, on a 5% baseline:
// 0, delta/2, delta, 2 delta and 4 delta.
func riseCells() []simCell {
	var cells []simCell
	for _, C := range []int{8, 18} {
		for _, m := range []float64{0, 0.5, 1, 2, 4} {
			cells = append(cells, uniformCell(C, 0.05, m*simDelta))
		}
	}
	return cells
}

// TestSequential_ExpectedSamples: a line far from the tolerance stops
// early. A rise of 4 delta on a 5% baseline uses at most half the planned
// samples on average, and the load-bearing line of issue 23 (4% -> 30% on
// 8 cases) settles by look 2, with at most 40% of its calls, in at least
// 90% of runs. (A line near the tolerance may use them all: see the table.)
func TestSequential_ExpectedSamples(t *testing.T) {
	t.Parallel()
	for _, r := range runCells(riseCells()) {
		e := r.seq.samples / simRuns
		if rise := r.cell.del[0] - r.cell.base[0]; rise >= 4*simDelta-1e-9 && e > 0.5*simN {
			t.Errorf("%s: a rise of %.0f points takes %.1f of %d samples per case on average, want at most half", r.cell.name, 100*rise, e, simN)
		}
	}
	r := runCells([]simCell{uniformCell(8, 0.04, 0.26)})[0]
	if by2 := r.seq.rate(r.seq.firstLook[0] + r.seq.firstLook[1]); by2 < 0.9 {
		t.Errorf("%s: settled by look 2 in %.4f of runs, want at least 0.9", r.cell.name, by2)
	}
}

// BenchmarkSequential prints the simulation table for the README:
// go test ./model/stats -run '^$' -bench Sequential
// (to standard output: a benchmark's log is cut to ten lines without -v).
func BenchmarkSequential(b *testing.B) {
	var table string
	for b.Loop() {
		var sb strings.Builder
		for _, group := range []struct {
			title string
			cells []simCell
		}{
			{"(a) no true rise: false KEEP", nullCells()},
			{"(b) true rise = delta = 5 points, J = 1: false DELETE (grader route, 1.25%)", deltaCells()},
			{"(c) load-bearing lines: power of KEEP", powerCells()},
			{"(d) expected samples per case, baseline 5%, stop at the first settled look", riseCells()},
		} {
			writeTable(&sb, group.title, runCells(group.cells))
		}
		table = sb.String()
	}
	fmt.Print("\n" + table)
}

// writeTable formats results: for each reading, the share of runs with a
// KEEP and with a DELETE at some look; for the sequential design, the
// share settled by look (1..5), the mean samples per case used and their
// share of the fixed design's.
func writeTable(sb *strings.Builder, title string, rs []simResult) {
	keep, del := simBounds()
	fmt.Fprintf(sb, "%s (%d runs each; KEEP c = %s; DELETE c = %s)\n", title, simRuns, zList(keep), zList(del))
	fmt.Fprintf(sb, "%-24s %21s %21s %-26s %s\n", "cell", "KEEP seq/naive/fixed", "DEL seq/naive/fixed", "settled at look 1..5 (seq)", "samples/case (share)")
	for _, r := range rs {
		looks := make([]string, len(r.seq.firstLook))
		for k, n := range r.seq.firstLook {
			looks[k] = fmt.Sprintf("%.2f", r.seq.rate(n))
		}
		e := r.seq.samples / simRuns
		fmt.Fprintf(sb, "%-24s %6.4f/%6.4f/%6.4f %6.4f/%6.4f/%6.4f %-26s %5.1f (%3.0f%%)\n", r.cell.name,
			r.seq.rate(r.seq.keep), r.naive.rate(r.naive.keep), r.fixed.rate(r.fixed.keep),
			r.seq.rate(r.seq.del), r.naive.rate(r.naive.del), r.fixed.rate(r.fixed.del),
			strings.Join(looks, " "), e, 100*e/simN)
	}
	sb.WriteString("\n")
}

func zList(b []Boundary) string {
	zs := make([]string, len(b))
	for k, x := range b {
		zs[k] = fmt.Sprintf("%.3f", x.Z)
	}
	return strings.Join(zs, ", ")
}

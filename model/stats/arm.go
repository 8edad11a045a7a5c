package stats

import "math"

// Which interval an Arm's Lo and Hi come from.
const (
	CIT      = "t"      // rate -/+ t(0.975, C-1) * SECR: a claim about cases like these
	CIWilson = "wilson" // pooled Wilson: the fallback when the clustered SE is 0 or undefined
)

// Arm describes one arm (the cases of one kind, or of several kinds pooled,
// under one prompt variant): its pooled failure rate and three standard
// errors that answer different questions (STATS section 2).
type Arm struct {
	Cases int // cases with at least one sample; cases with n = 0 are dropped
	N     int // samples over those cases
	Fails int // failures over those cases

	Rate    float64 // Fails / N
	SENaive float64 // sqrt(p(1-p)/N): treats the N responses as independent, which they are not
	SEFixed float64 // sqrt(sum_c p_c(1-p_c)/n_c) / C: sampling noise only, for claims about these cases
	// SECR is the cluster-robust SE by case, for claims about cases like
	// these: sqrt(C/(C-1) * sum_c (f_c - n_c p)^2) / N, which is
	// sd(p_c)/sqrt(C) when every case has the same n. It is 0 when Cases < 2,
	// where it is undefined (CI is then "wilson").
	SECR float64
	// SEMiller is Miller's eq. 4 (the same without the C/(C-1) factor), for
	// comparison with his paper; 0 when N < 2.
	SEMiller float64

	// Lo and Hi bound Rate: Rate -/+ t(0.975, C-1)*SECR clamped to [0,1] when
	// CI is "t"; the pooled Wilson interval when CI is "wilson" (SECR is 0 or
	// Cases < 2), so the interval never has zero width.
	Lo, Hi float64
	CI     string // CIT or CIWilson
}

// ArmStats computes an Arm from per-case failures and per-case sample counts
// (fails[c] of n[c]; counts may differ between cases when some calls
// errored). Cases with n = 0 are dropped. It returns an error when the slices
// differ in length, a count is negative, fails exceed n, or no case has a
// sample.
func ArmStats(fails, n []int) (Arm, error) {
	if len(fails) != len(n) {
		return Arm{}, invalid("arm", "%d failure counts for %d sample counts", len(fails), len(n))
	}
	var a Arm
	for c := range fails {
		if n[c] < 0 || fails[c] < 0 || fails[c] > n[c] {
			return Arm{}, invalid("arm", "case %d: %d failures of %d samples", c, fails[c], n[c])
		}
		if n[c] == 0 {
			continue
		}
		a.Cases++
		a.N += n[c]
		a.Fails += fails[c]
	}
	if a.N == 0 {
		return Arm{}, invalid("arm", "no samples")
	}
	N := float64(a.N)
	C := float64(a.Cases)
	p := float64(a.Fails) / N
	a.Rate = p
	a.SENaive = math.Sqrt(p * (1 - p) / N)

	var fixed, clus, sumsq, cross float64
	for c := range fails {
		if n[c] == 0 {
			continue
		}
		f, nc := float64(fails[c]), float64(n[c])
		pc := f / nc
		fixed += pc * (1 - pc) / nc
		r := f - nc*p // sum of residuals s_i - p over the case
		clus += r * r
		sq := f*(1-p)*(1-p) + (nc-f)*p*p // sum of squared residuals over the case
		sumsq += sq
		cross += r*r - sq
	}
	a.SEFixed = math.Sqrt(fixed) / C
	if a.Cases >= 2 {
		a.SECR = math.Sqrt(C/(C-1)*clus) / N
	}
	if a.N >= 2 {
		a.SEMiller = math.Sqrt(math.Max(0, sumsq/((N-1)*N)+cross/(N*N)))
	}

	if a.Cases >= 2 && a.SECR > 0 {
		t := t975(a.Cases - 1)
		a.Lo = clamp(p-t*a.SECR, 0, 1)
		a.Hi = clamp(p+t*a.SECR, 0, 1)
		a.CI = CIT
		return a, nil
	}
	w := wilsonP(p, N)
	a.Lo, a.Hi, a.CI = w.Lo, w.Hi, CIWilson
	return a, nil
}

// Paired is the per-case paired difference deleted - baseline on the same
// cases (STATS section 3). Rates are per case, d_c = p_del,c - p_base,c, and
// every case weighs the same, whatever its n.
type Paired struct {
	D          float64 // mean_c d_c; the pooled difference when n is the same everywhere
	SEPair     float64 // sd(d_c)/sqrt(C): the case is the unit of pairing
	SEUnpaired float64 // sqrt(SE_del^2 + SE_base^2), each sd(p_c)/sqrt(C); discards the pairing
	Corr       float64 // correlation of per-case rates across variants; 0 when either variance is 0
	SEFixed    float64 // sqrt(sum_c [pd(1-pd)/nd_c + pb(1-pb)/nb_c]) / C: sampling noise only
	// Lo and Hi are D -/+ t(0.975, C-1)*SEPair, clamped to [-1,1]. The
	// interval has zero width when every case has the same difference (for
	// example all 0/n): never use it alone for a verdict.
	Lo, Hi float64
	Cases  int // C: cases with samples in both variants
}

// PairedDiff computes the paired difference deleted - baseline from per-case
// failures and samples of each variant: del[c] of delN[c] against base[c] of
// baseN[c], the same cases in the same order. Sample counts may differ
// between variants and cases (errored calls); a case with no sample in either
// variant is dropped. It returns an error when the slices differ in length, a
// count is invalid, or fewer than two cases remain.
func PairedDiff(del, delN, base, baseN []int) (Paired, error) {
	if len(del) != len(delN) || len(base) != len(baseN) || len(del) != len(base) {
		return Paired{}, invalid("paired", "slice lengths differ (deleted %d/%d, baseline %d/%d)",
			len(del), len(delN), len(base), len(baseN))
	}
	pd := make([]float64, 0, len(del))
	pb := make([]float64, 0, len(del))
	var fixed float64
	for c := range del {
		for _, v := range [][2]int{{del[c], delN[c]}, {base[c], baseN[c]}} {
			if v[1] < 0 || v[0] < 0 || v[0] > v[1] {
				return Paired{}, invalid("paired", "case %d: %d failures of %d samples", c, v[0], v[1])
			}
		}
		if delN[c] == 0 || baseN[c] == 0 {
			continue
		}
		a := float64(del[c]) / float64(delN[c])
		b := float64(base[c]) / float64(baseN[c])
		pd = append(pd, a)
		pb = append(pb, b)
		fixed += a*(1-a)/float64(delN[c]) + b*(1-b)/float64(baseN[c])
	}
	C := len(pd)
	if C < 2 {
		return Paired{}, invalid("paired", "%d case(s) with samples in both variants, need at least 2", C)
	}
	fc := float64(C)
	ma, mb := mean(pd), mean(pb)
	var vd, va, vb, cov float64
	D := ma - mb
	for i := range pd {
		d := pd[i] - pb[i] - D
		vd += d * d
		va += (pd[i] - ma) * (pd[i] - ma)
		vb += (pb[i] - mb) * (pb[i] - mb)
		cov += (pd[i] - ma) * (pb[i] - mb)
	}
	vd /= fc - 1
	va /= fc - 1
	vb /= fc - 1
	cov /= fc - 1
	p := Paired{
		D:          D,
		SEPair:     math.Sqrt(vd / fc),
		SEUnpaired: math.Sqrt((va + vb) / fc),
		SEFixed:    math.Sqrt(fixed) / fc,
		Cases:      C,
	}
	if va > 0 && vb > 0 {
		p.Corr = clamp(cov/math.Sqrt(va*vb), -1, 1)
	}
	t := t975(C - 1)
	p.Lo = clamp(D-t*p.SEPair, -1, 1)
	p.Hi = clamp(D+t*p.SEPair, -1, 1)
	return p, nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

package stats

import "math"

// RecallCorrected returns the true failure rate implied by a measured rate m
// (on nm responses) from a grader with sensitivity (recall) se, measured on
// nSe labelled violations, and specificity sp: the Rogan-Gladen estimate
// (m + sp - 1)/(se + sp - 1), clamped to [0,1] (STATS section 5).
//
// The interval is the delta method on the log scale,
// est * exp(-/+ z * relSE), with relSE^2 = m(1-m)/(nm a^2) + se(1-se)/(nSe b^2),
// a = m + sp - 1 and b = se + sp - 1 (m and se independent; sp is taken as
// known, as no count for it is given). With sp = 1 this is the formula of
// STATS section 5. The bounds are clamped to [0,1].
//
// When a <= 0 (m = 0 when sp = 1, or more generally m no larger than the
// false-positive rate 1 - sp) the log scale is undefined: the estimate is 0
// and the interval is [0, (W + sp - 1)/(R_L + sp - 1)], W being the Wilson
// upper bound of round(m*nm) of nm and R_L the Wilson lower bound of
// round(se*nSe) of nSe; the upper bound is 1 when R_L + sp - 1 <= 0.
//
// It returns an error when m, se or sp is outside [0,1], nm or nSe is not
// positive, or se + sp - 1 <= 0 (the grader is no better than chance and
// cannot correct anything).
func RecallCorrected(m float64, nm int, se float64, nSe int, sp float64) (est float64, ci Interval, err error) {
	const fn = "recall-corrected rate"
	switch {
	case !(m >= 0 && m <= 1):
		return 0, Interval{}, invalid(fn, "measured rate %v outside [0,1]", m)
	case !(se >= 0 && se <= 1):
		return 0, Interval{}, invalid(fn, "recall %v outside [0,1]", se)
	case !(sp >= 0 && sp <= 1):
		return 0, Interval{}, invalid(fn, "specificity %v outside [0,1]", sp)
	case nm <= 0:
		return 0, Interval{}, invalid(fn, "measured on %d responses", nm)
	case nSe <= 0:
		return 0, Interval{}, invalid(fn, "recall measured on %d violations", nSe)
	case se+sp-1 <= 0:
		return 0, Interval{}, invalid(fn, "recall %v + specificity %v - 1 <= 0", se, sp)
	}
	a, b := m+sp-1, se+sp-1
	if a <= 0 {
		w := wilsonP(math.Round(m*float64(nm))/float64(nm), float64(nm))
		r := wilsonP(math.Round(se*float64(nSe))/float64(nSe), float64(nSe))
		hi := 1.0
		if den := r.Lo + sp - 1; den > 0 {
			hi = clamp((w.Hi+sp-1)/den, 0, 1)
		}
		return 0, Interval{Lo: 0, Hi: hi}, nil
	}
	pi := a / b
	rel := math.Sqrt(m*(1-m)/(float64(nm)*a*a) + se*(1-se)/(float64(nSe)*b*b))
	est = clamp(pi, 0, 1)
	ci = Interval{
		Lo: clamp(pi*math.Exp(-z975*rel), 0, est),
		Hi: clamp(pi*math.Exp(z975*rel), est, 1),
	}
	return est, ci, nil
}

// Stratum is one stratum of a stratified labelling sample: N responses in the
// stratum (for example all responses the predicate flagged), of which
// Labelled were labelled by a human and Violations of those were violations.
type Stratum struct {
	N, Labelled, Violations int
}

// check validates a stratum; name is "flagged" or "passed".
func (s Stratum) check(fn, name string) error {
	switch {
	case s.N < 0 || s.Labelled < 0 || s.Violations < 0:
		return invalid(fn, "%s stratum has a negative count (%+v)", name, s)
	case s.Labelled > s.N:
		return invalid(fn, "%s stratum: %d labelled of %d", name, s.Labelled, s.N)
	case s.Violations > s.Labelled:
		return invalid(fn, "%s stratum: %d violations in %d labels", name, s.Violations, s.Labelled)
	case s.N > 0 && s.Labelled == 0:
		return invalid(fn, "%s stratum has %d responses and no labels", name, s.N)
	}
	return nil
}

// total returns the stratum's estimated number of violations N*v/n and its
// variance N^2 (1 - n/N) f(1-f)/(n-1), f = v/n. The variance is 0 when the
// whole stratum is labelled; with one label of a larger stratum it is
// undefined and ok is false.
func (s Stratum) total() (t, v float64, ok bool) {
	if s.N == 0 {
		return 0, 0, true
	}
	N, n := float64(s.N), float64(s.Labelled)
	f := float64(s.Violations) / n
	t = N * f
	if s.Labelled == s.N {
		return t, 0, true
	}
	if s.Labelled < 2 {
		return t, 0, false
	}
	return t, N * N * (1 - n/N) * f * (1 - f) / (n - 1), true
}

// IPWRecall estimates a grader's recall from a labelling sample stratified by
// the grader's verdict (STATS section 6): flagged holds the responses the
// grader failed, passed those it passed. Each stratum's violations are
// weighted by N/Labelled: TP = w_F v_F, FN = w_P v_P, recall = TP/(TP+FN),
// and se is the delta-method standard error
// sqrt([FN^2 Var(TP) + TP^2 Var(FN)] / (TP+FN)^4) with finite-population
// correction. NormalInterval(est, se) gives a clamped 95% interval.
//
// It returns an error when a stratum's counts are inconsistent, a non-empty
// stratum has no labels, a partly labelled stratum has a single label (its
// variance is undefined), or no violation was found.
func IPWRecall(flagged, passed Stratum) (est, se float64, err error) {
	const fn = "ipw recall"
	if err := flagged.check(fn, "flagged"); err != nil {
		return 0, 0, err
	}
	if err := passed.check(fn, "passed"); err != nil {
		return 0, 0, err
	}
	tp, vtp, ok1 := flagged.total()
	fnn, vfn, ok2 := passed.total()
	if !ok1 || !ok2 {
		return 0, 0, invalid(fn, "a partly labelled stratum needs at least 2 labels")
	}
	sum := tp + fnn
	if sum <= 0 {
		return 0, 0, invalid(fn, "no violations among the labels")
	}
	est = tp / sum
	se = math.Sqrt((fnn*fnn*vtp + tp*tp*vfn) / (sum * sum * sum * sum))
	return est, se, nil
}

// IPWPrecision returns the grader's precision from the flagged stratum of a
// stratified labelling sample: v_F/n_F, the share of labelled flagged
// responses that are violations (no weighting is needed inside one stratum;
// Wilson(v_F, n_F) gives its interval). It returns an error when the stratum
// is inconsistent or has no labels.
func IPWPrecision(flagged Stratum) (float64, error) {
	const fn = "ipw precision"
	if err := flagged.check(fn, "flagged"); err != nil {
		return 0, err
	}
	if flagged.Labelled == 0 {
		return 0, invalid(fn, "no labelled flagged responses")
	}
	return float64(flagged.Violations) / float64(flagged.Labelled), nil
}

// Kappa returns Cohen's kappa for two raters' binary judgements of the same
// items, with the observed agreement po, the chance agreement pe and Cohen's
// large-sample standard error sqrt(po(1-po)/(n(1-pe)^2)). a counts items both
// rate a violation, b items only the first does, c items only the second, d
// neither. When violations are rare kappa is low even at high agreement: show
// po and the disagreements b+c beside it. It returns an error when a count is
// negative, there are no items, or pe = 1 (both raters gave every item the
// same single label, so kappa is undefined).
func Kappa(a, b, c, d int) (k, po, pe, se float64, err error) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return 0, 0, 0, 0, invalid("kappa", "negative count in (%d, %d, %d, %d)", a, b, c, d)
	}
	n := a + b + c + d
	if n == 0 {
		return 0, 0, 0, 0, invalid("kappa", "no items")
	}
	fn := float64(n)
	po = float64(a+d) / fn
	r1, r2 := float64(a+b)/fn, float64(a+c)/fn
	pe = r1*r2 + (1-r1)*(1-r2)
	if pe >= 1 {
		return 0, po, pe, 0, invalid("kappa", "chance agreement is 1 (every item got one label from both raters)")
	}
	k = (po - pe) / (1 - pe)
	se = math.Sqrt(po * (1 - po) / (fn * (1 - pe) * (1 - pe)))
	return k, po, pe, se, nil
}

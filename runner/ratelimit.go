package runner

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Window is what a response's rate-limit headers say about the provider's
// rate-limit windows: whether one of them has nothing left, and when it
// resets. Both providers read it from every response, answered or not, so
// the runner can hold an endpoint's calls until a spent window resets
// instead of collecting a 429 for each of them.
type Window struct {
	// Spent reports that a window has no requests or tokens left: a
	// "remaining" header said 0.
	Spent bool
	// Reset is how long after the response the spent windows have all
	// reset; 0 when the headers do not say (or nothing is spent).
	Reset time.Duration
}

// The header families read, each "<prefix><what>-remaining" (Anthropic) or
// "<prefix>remaining-<what>" (OpenAI) with the matching "reset":
//
//	x-ratelimit-remaining-requests: 0        x-ratelimit-reset-requests: 6m0s
//	x-ratelimit-remaining-tokens: 0          x-ratelimit-reset-tokens: 20ms
//	anthropic-ratelimit-requests-remaining: 0
//	anthropic-ratelimit-requests-reset: 2026-01-01T00:00:30Z (and -tokens, -input-tokens, -output-tokens)
//	x-ratelimit-remaining: 0                 x-ratelimit-reset: 1767225630000 (OpenRouter: epoch ms)
//	ratelimit-remaining: 0                   ratelimit-reset: 30 (the IETF draft: seconds)

// rateWindow reads the rate-limit headers of a response received at now.
func rateWindow(h http.Header, now time.Time) Window {
	var w Window
	for name, vals := range h {
		if len(vals) == 0 {
			continue
		}
		reset, ok := resetHeaderFor(strings.ToLower(name))
		if !ok {
			continue
		}
		left, err := strconv.ParseFloat(strings.TrimSpace(vals[0]), 64)
		if err != nil || left > 0 || math.IsNaN(left) {
			continue
		}
		w.Spent = true
		w.Reset = max(w.Reset, parseReset(h.Get(reset), now))
	}
	return w
}

// resetHeaderFor returns the name of the reset header that goes with a
// "remaining" header, and false for any other header.
func resetHeaderFor(name string) (string, bool) {
	switch {
	case strings.HasPrefix(name, "anthropic-ratelimit-") && strings.HasSuffix(name, "-remaining"):
		return strings.TrimSuffix(name, "-remaining") + "-reset", true
	case name == "x-ratelimit-remaining", name == "ratelimit-remaining":
		return strings.TrimSuffix(name, "remaining") + "reset", true
	case strings.HasPrefix(name, "x-ratelimit-remaining-"):
		return "x-ratelimit-reset-" + strings.TrimPrefix(name, "x-ratelimit-remaining-"), true
	}
	return "", false
}

// parseReset reads a reset header relative to now: a duration as OpenAI
// writes it ("6m0s", "20ms", "1.5s"), an RFC 3339 time (Anthropic), an HTTP
// date, or a number: seconds from now, or a Unix time in seconds or
// milliseconds when it is that large. 0 when it cannot be read or has
// passed; capped at a day, as Retry-After is.
func parseReset(v string, now time.Time) time.Duration {
	const ceiling = 24 * time.Hour
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		switch {
		case f >= 1e12: // Unix milliseconds
			d = time.UnixMilli(int64(f)).Sub(now)
		case f >= 1e9: // Unix seconds
			d = time.Unix(int64(f), 0).Sub(now)
		case f >= ceiling.Seconds():
			d = ceiling
		default:
			d = time.Duration(f * float64(time.Second))
		}
	} else if pd, err := time.ParseDuration(v); err == nil {
		d = pd
	} else if t, err := time.Parse(time.RFC3339, v); err == nil {
		d = t.Sub(now)
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), ceiling)
}

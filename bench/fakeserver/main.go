// Command fakeserver is a small OpenAI-compatible chat-completions server for
// auditor's whole-process benchmarks. It answers POST .../chat/completions
// after a fixed latency, rate-limits a deterministic fraction of requests
// with 429 and Retry-After: 1, can cap the requests it serves at once (a
// request beyond the cap is answered 429 with Retry-After: 1 at once, as a
// server with a concurrency limit does), keeps every request's arrival time
// in memory,
// can answer its first request with an answer of any size (a broken or
// hostile server's 30 MB to max_tokens = 300),
// can fail a deterministic fraction of requests with 500 (-rate500: a retry
// may succeed) or every request of a fraction of bodies (-fail: failed for
// good whatever the retries), answers a judge (a system prompt asking for a
// VERDICT line) with reasoning and a verdict read from the answer it grades,
// and on SIGTERM or SIGINT writes a summary (and optionally the per-request
// log) as JSON, so a benchmark can check that no call was retried before
// the server's Retry-After.
//
// The server cannot see a call's sample index (it is not sent), so requests
// are identified by their body (model, system prompt and user message). When
// several calls share a body, which 429 a later request retries is
// ambiguous; the summary then reports the retry gaps of the most favourable
// assignment (a minimum below the Retry-After proves an early retry, one
// above it is consistent with none). With one call per body (samples = 1)
// the assignment is forced and the gaps are exact.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	var (
		addr     = flag.String("addr", "127.0.0.1:0", "address to listen on")
		addrFile = flag.String("addr-file", "", "write the address listened on to this file once ready")
		latency  = flag.Duration("latency", 0, "time before each answer")
		rate429  = flag.Float64("rate429", 0, "fraction of requests answered 429 with Retry-After: 1")
		capN     = flag.Int("cap", 0, "requests served at once; one beyond is answered 429 with Retry-After: 1 at once (0: no cap)")
		rule     = flag.String("rule", "", "rule text: without it in the system prompt, some answers violate it")
		summary  = flag.String("summary", "", "write the summary JSON here on exit (default: standard output)")
		logFile  = flag.String("log", "", "write one JSON line per request (arrival, body hash, status) here on exit")
		huge     = flag.Int("huge", 0, "bytes of the first answer's text (0: an ordinary answer)")
		rate500  = flag.Float64("rate500", 0, "fraction of requests answered 500 (fixed by body and arrival: a retry may succeed)")
		failFrac = flag.Float64("fail", 0, "fraction of request bodies always answered 500 (failed for good)")
	)
	flag.Parse()

	s := &server{latency: *latency, rate429: *rate429, cap: *capN, rule: *rule, huge: *huge, rate500: *rate500, fail: *failFrac, start: time.Now(), arrivals: map[string]int{}}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *addrFile != "" {
		if err := os.WriteFile(*addrFile+".tmp", []byte(ln.Addr().String()), 0o644); err != nil {
			log.Fatal(err)
		}
		if err := os.Rename(*addrFile+".tmp", *addrFile); err != nil {
			log.Fatal(err)
		}
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
			log.Fatal(err)
		}
	}()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	hs.Close()

	if err := s.writeSummary(*summary); err != nil {
		log.Fatal(err)
	}
	if *logFile != "" {
		if err := s.writeLog(*logFile); err != nil {
			log.Fatal(err)
		}
	}
}

// request is one arrival as logged.
type request struct {
	AtMS   float64 `json:"at_ms"` // since the server started
	Body   string  `json:"body"`  // hash of model, system prompt and user message
	N      int     `json:"n"`     // requests with the same body before this one
	Status int     `json:"status"`
	Capped bool    `json:"capped,omitempty"` // a 429 for the concurrency cap
	at     time.Time
}

type server struct {
	latency time.Duration
	rate429 float64
	cap     int
	rule    string
	huge    int // bytes of the first answer, when above 0
	rate500 float64
	fail    float64
	start   time.Time

	mu       sync.Mutex
	arrivals map[string]int
	log      []request
	inFlight int // requests admitted and not yet answered
	peak     int // the most inFlight ever was
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req chatRequest
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, `{"error":{"message":"invalid JSON body"}}`, http.StatusBadRequest)
		return
	}
	var system, user string
	for _, m := range req.Messages {
		var text string
		_ = json.Unmarshal(m.Content, &text)
		switch m.Role {
		case "system":
			system = text
		case "user":
			user = text
		}
	}
	sum := sha256.Sum256([]byte(req.Model + "\x00" + system + "\x00" + user))
	id := fmt.Sprintf("%x", sum[:8])

	s.mu.Lock()
	n := s.arrivals[id]
	s.arrivals[id]++
	capped := s.cap > 0 && s.inFlight >= s.cap
	limited := capped || (s.rate429 > 0 && draw(sum[:], n) < s.rate429)
	// A fault draws from its own stream (arrival -1-n; -1 for a body's
	// lasting fault), so adding one leaves the 429s where they were.
	fault := !limited && ((s.fail > 0 && draw(sum[:], -1) < s.fail) || (s.rate500 > 0 && draw(sum[:], -2-n) < s.rate500))
	status := http.StatusOK
	switch {
	case limited:
		status = http.StatusTooManyRequests
	case fault:
		status = http.StatusInternalServerError
	}
	first := len(s.log) == 0
	s.log = append(s.log, request{Body: id, N: n, Status: status, Capped: capped, at: now})
	if !capped {
		s.inFlight++
		s.peak = max(s.peak, s.inFlight)
	}
	s.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	if capped {
		// Refused at the door: no latency, and it holds no place.
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Too many concurrent requests. Please try again in 1s.","type":"requests","code":"rate_limit_exceeded"}}`)
		return
	}
	if s.latency > 0 {
		t := time.NewTimer(s.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
		}
	}
	// The place is free before the answer leaves: a client that sends its
	// next request when this answer arrives never finds it taken.
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	if limited {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"Rate limit reached for requests per minute. Please try again in 1s.","type":"requests","code":"rate_limit_exceeded"}}`)
		return
	}
	if fault {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"internal server error","type":"server_error"}}`)
		return
	}
	text := "I can't confirm dates for unreleased features; the public roadmap is the place to watch."
	switch {
	case strings.Contains(system, "VERDICT:"):
		text = judgeAnswer(user)
	case s.rule != "" && !strings.Contains(system, s.rule) && n%3 == 0:
		text = "Good news: it ships next quarter."
	}
	if first && s.huge > 0 {
		text = strings.Repeat("x", s.huge)
	}
	prompt := (len(system) + len(user)) / 4
	resp, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-" + id, "object": "chat.completion", "created": now.Unix(), "model": req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": text},
		}},
		"usage": map[string]any{
			"prompt_tokens": prompt, "completion_tokens": len(text) / 4, "total_tokens": prompt + len(text)/4,
			"prompt_tokens_details": map[string]any{"cached_tokens": 0},
		},
	})
	w.Write(resp)
}

// judgeAnswer grades the answer quoted in a judge's rubric: a date is a
// violation. The reasoning comes first, the verdict line last.
func judgeAnswer(rubric string) string {
	if strings.Contains(rubric, "next quarter") {
		return "The reply promises a date (\"next quarter\") for an unreleased feature.\nVERDICT: VIOLATION"
	}
	return "The reply names no date and points to the public roadmap.\nVERDICT: OK"
}

// draw returns a number in [0, 1) fixed by the body and its arrival index,
// so a rerun of the benchmark rate-limits the same requests.
func draw(body []byte, n int) float64 {
	h := sha256.New()
	h.Write(body)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
	return float64(binary.BigEndian.Uint64(h.Sum(nil)[:8])>>11) / (1 << 53)
}

// Summary is what the server writes on exit.
type Summary struct {
	Requests    int `json:"requests"`
	Answers     int `json:"answers"`
	RateLimited int `json:"rate_limited"`
	// Capped counts, of RateLimited, the 429s of the concurrency cap.
	Capped    int     `json:"capped"`
	Bodies    int     `json:"bodies"`
	LatencyMS float64 `json:"latency_ms"`
	Rate429   float64 `json:"rate429"`
	Cap       int     `json:"cap"`
	// PeakInFlight is the most requests the server served at once.
	PeakInFlight int `json:"peak_in_flight"`
	// SpanMS is the time from the first to the last arrival.
	SpanMS float64 `json:"span_ms"`
	// RetryGap describes the time from each 429 to the arrival of its
	// retry.
	RetryGap RetryGap `json:"retry_gap"`
}

// RetryGap summarises the waits between 429s and their retries.
type RetryGap struct {
	Matched int     `json:"matched"` // 429s whose retry arrived
	MinMS   float64 `json:"min_ms"`  // shortest gap; -1 when none matched
	MeanMS  float64 `json:"mean_ms"`
	// Exact is true when every rate-limited body was called once, so each
	// retry is known; otherwise the gaps are those of the most favourable
	// assignment of later requests to 429s.
	Exact bool `json:"exact"`
	// Unmatched counts 429s with no later request of the same body: calls
	// never retried (the run stopped, or the gap was too short to match).
	Unmatched int `json:"unmatched"`
}

func (s *server) summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := Summary{Requests: len(s.log), Bodies: len(s.arrivals), LatencyMS: ms(s.latency), Rate429: s.rate429,
		Cap: s.cap, PeakInFlight: s.peak}
	byBody := map[string][]request{}
	for _, r := range s.log {
		if r.Status == http.StatusOK {
			sum.Answers++
		} else {
			sum.RateLimited++
		}
		if r.Capped {
			sum.Capped++
		}
		byBody[r.Body] = append(byBody[r.Body], r)
	}
	if len(s.log) > 0 {
		sum.SpanMS = ms(s.log[len(s.log)-1].at.Sub(s.log[0].at))
	}
	sum.RetryGap = retryGaps(byBody)
	return sum
}

// retryGaps matches each 429 with a later request of the same body. With
// one call per body a request after a 429 can only be its retry; with
// several, it picks the assignment that makes the smallest gap largest, so
// a reported minimum below the Retry-After cannot be an artefact of the
// assignment.
func retryGaps(byBody map[string][]request) RetryGap {
	g := RetryGap{MinMS: -1, Exact: true}
	var total float64
	for _, rs := range byBody {
		sort.Slice(rs, func(i, j int) bool { return rs[i].at.Before(rs[j].at) })
		var limited []int
		for i, r := range rs {
			if r.Status == http.StatusTooManyRequests {
				limited = append(limited, i)
			}
		}
		if len(limited) == 0 {
			continue
		}
		// With k 429s, a body called once has k+1 requests; more means
		// several calls share the body.
		if len(rs) > len(limited)+1 {
			g.Exact = false
		}
		gaps := bestAssignment(rs, limited)
		g.Unmatched += len(limited) - len(gaps)
		for _, d := range gaps {
			g.Matched++
			total += d
			if g.MinMS < 0 || d < g.MinMS {
				g.MinMS = d
			}
		}
	}
	if g.Matched > 0 {
		g.MeanMS = total / float64(g.Matched)
	}
	return g
}

// bestAssignment returns the gaps (ms) of an assignment of each 429 in
// limited to a distinct later request that maximises the smallest gap,
// among assignments matching as many 429s as possible.
func bestAssignment(rs []request, limited []int) []float64 {
	assign := func(min time.Duration) []float64 {
		used := make([]bool, len(rs))
		var gaps []float64
		for _, li := range limited {
			// Requests are sorted by time, and so are the 429s: the
			// earliest unused request at least min after each 429 is the
			// greedy choice, which is optimal for thresholds on one side.
			j := li + 1
			for j < len(rs) && (used[j] || rs[j].at.Sub(rs[li].at) < min) {
				j++
			}
			if j == len(rs) {
				continue
			}
			used[j] = true
			gaps = append(gaps, ms(rs[j].at.Sub(rs[li].at)))
		}
		return gaps
	}
	best := assign(0)
	lo, hi := time.Duration(0), 10*time.Minute
	for hi-lo > time.Millisecond {
		mid := (lo + hi) / 2
		if g := assign(mid); len(g) == len(best) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return assign(lo)
}

func (s *server) writeSummary(path string) error {
	b, err := json.MarshalIndent(s.summary(), "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func (s *server) writeLog(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range s.log {
		r.AtMS = ms(r.at.Sub(s.start))
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

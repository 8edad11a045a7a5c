package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// RequestLog records every HTTP request a provider sends and the response
// it gets, one JSON object per line and per attempt, for --debug. Keys never
// reach it: the headers that carry credentials are replaced by
// "[REDACTED]", and so is every occurrence of a key the providers know,
// in URLs, headers and bodies alike. It is safe for concurrent use.
type RequestLog struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer
	err    error // the first write error; later writes are dropped
}

// NewRequestLog returns a log that writes to w.
func NewRequestLog(w io.Writer) *RequestLog { return &RequestLog{w: w} }

// OpenRequestLog opens the file at path for appending, creating it readable
// by its owner only, and returns a log writing to it. It appends: a run
// that submits a batch and the run that collects it, or a run and its
// resume, leave one log between them. A last line an earlier process left
// unfinished (killed while writing) is ended first, so every line stays
// one JSON object.
func OpenRequestLog(path string) (*RequestLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("runner: request log: %w", err)
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, fmt.Errorf("runner: request log: %w", err)
			}
		}
	}
	return &RequestLog{w: f, closer: f}, nil
}

// Close closes the file OpenRequestLog opened and returns the first error
// met while writing, if any.
func (l *RequestLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closer != nil {
		if err := l.closer.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.closer = nil
	}
	return l.err
}

// logEntry is one line of the request log.
type logEntry struct {
	Time       time.Time         `json:"time"`
	Endpoint   string            `json:"endpoint,omitempty"`
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"request_headers"`
	Body       string            `json:"request_body,omitempty"`
	Status     int               `json:"status,omitempty"`
	RespHeader map[string]string `json:"response_headers,omitempty"`
	RespBody   string            `json:"response_body,omitempty"`
	Error      string            `json:"error,omitempty"`
	LatencyMS  int64             `json:"latency_ms"`
}

func (l *RequestLog) write(e logEntry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	if _, err := l.w.Write(append(b, '\n')); err != nil {
		l.err = err
	}
}

// secretHeaders are the request and response headers whose values are
// never logged.
var secretHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "x-api-key": true, "api-key": true,
	"cookie": true, "set-cookie": true,
}

// maxLoggedBody caps each body in the log; answers are far smaller.
const maxLoggedBody = 256 << 10

// loggingTransport sends requests through base and records them in log.
type loggingTransport struct {
	base     http.RoundTripper
	log      *RequestLog
	endpoint string
	secrets  []string // keys to redact wherever they appear
}

func (t *loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	e := logEntry{Time: time.Now().UTC(), Endpoint: t.endpoint, Method: req.Method,
		URL: t.redact(model.RedactURL(req.URL.String())), Headers: t.headers(req.Header)}
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		e.Body = t.body(body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	start := time.Now()
	res, err := t.base.RoundTrip(req)
	e.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		e.Error = t.redact(err.Error())
		t.log.write(e)
		return nil, err
	}
	e.Status = res.StatusCode
	e.RespHeader = t.headers(res.Header)
	body, rerr := io.ReadAll(io.LimitReader(res.Body, maxLoggedBody+1))
	rest := res.Body
	e.RespBody = t.body(body)
	if rerr != nil {
		e.Error = t.redact("reading the response: " + rerr.Error())
	}
	t.log.write(e)
	// The caller reads what was logged, then whatever is left.
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), errReader{rerr}, rest), rest}
	return res, nil
}

// errReader returns err (when not nil) where the body failed to read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

func (t *loggingTransport) headers(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if secretHeaders[strings.ToLower(k)] {
			out[k] = "[REDACTED]"
			continue
		}
		out[k] = t.redact(strings.Join(v, ", "))
	}
	return out
}

func (t *loggingTransport) body(b []byte) string {
	s := string(b)
	if len(s) > maxLoggedBody {
		s = s[:maxLoggedBody] + "…[cut]"
	}
	return t.redact(s)
}

func (t *loggingTransport) redact(s string) string { return redact(s, t.secrets...) }

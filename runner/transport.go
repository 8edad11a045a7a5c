package runner

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/auditor-dev/auditor/model"
)

// checkEndpoint checks what every provider needs of its endpoint: an
// absolute http(s) base URL (named without its password in the error) and
// a key that can be sent in a header. Whether plain http is allowed is the
// caller's decision (see model.CheckBaseURL): tests and local servers use
// it.
func checkEndpoint(provider, base, key string) error {
	if err := model.CheckBaseURL(base, true); err != nil {
		return fmt.Errorf("runner: %s: base URL %v", provider, err)
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e {
			return fmt.Errorf("runner: %s: API key contains a character that cannot be sent in a header (space, control or non-ASCII)", provider)
		}
	}
	return nil
}

// httpClient returns the client a provider sends with: given, or else one
// whose transport (returned, so the provider can close its idle
// connections) keeps up to 128 idle connections per host, so a run's
// workers reuse connections instead of redialling. With log set, every
// request and response goes to it, with secrets redacted.
func httpClient(given *http.Client, log *RequestLog, endpoint string, secrets ...string) (*http.Client, *http.Transport) {
	var owned *http.Transport
	client := given
	if client == nil {
		owned = &http.Transport{
			Proxy: http.ProxyFromEnvironment,
			DialContext: (&net.Dialer{
				Timeout:   30 * time.Second,
				KeepAlive: 30 * time.Second,
			}).DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   128,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
		client = &http.Client{Transport: owned}
	}
	if log != nil {
		base := client.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c := *client
		c.Transport = &loggingTransport{base: base, log: log, endpoint: endpoint, secrets: secrets}
		client = &c
	}
	return client, owned
}

// unreachable reports whether a transport error means the endpoint could
// not be reached at all: refused, unknown host, a failed dial or TLS
// handshake, a certificate that does not verify. A reset or a timeout in
// the middle of a request is not: the endpoint was there.
func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var cert *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var recordHeader tls.RecordHeaderError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return true
	case errors.As(err, &dns), errors.As(err, &cert), errors.As(err, &unknownAuth), errors.As(err, &hostname),
		errors.As(err, &recordHeader):
		return true
	case errors.As(err, &op) && op.Op == "dial":
		return true
	}
	return false
}

// redact replaces every occurrence of each secret (an endpoint's API key)
// in s with "[REDACTED]": the one redaction the request log, the
// providers' error messages and the answers they return all use. An
// endpoint that echoes the key it was sent ("your key is Bearer sk-...")
// must not have it stored, exported or put on a blind sheet. A secret
// under 4 bytes is left alone: replacing it would mangle text without
// hiding anything.
func redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, "[REDACTED]")
		}
	}
	return s
}

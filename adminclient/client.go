// Package adminclient is a Go client of Sluice's admin API (/admin/v1 on
// the admin listener), generated from the API's OpenAPI document
// (admin.gen.go, ops.gen.go: make clients) with a small hand-written layer
// (this file):
//
//   - New authenticates every request with an admin token (`sluice
//     admintoken create`);
//   - a create is sent with an Idempotency-Key (a fresh one, unless its
//     params carry one), so a retry never makes it twice;
//   - an answer 429, or 503 to a request safe to repeat (a GET, PUT or
//     DELETE, or a create under its key), is retried after its
//     Retry-After, up to Retries times;
//   - every refusal is an error of type *Problem, the API's RFC 9457
//     problem detail, whatever the status;
//   - every list operation that pages by cursor has an iterator,
//     <Operation>All, an iter.Seq2 over its items across pages.
//
// Every operation of the document is a method of Client: <Operation> (the
// raw *http.Response) and <Operation>WithResponse (the answer parsed; its
// JSON200 or JSON201 field holds the body). The package is versioned with
// Sluice: it speaks the API of the release it ships with.
package adminclient

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client is the admin API at one address with one token.
type Client struct {
	*ClientWithResponses
}

// Option configures New.
type Option func(*settings)

type settings struct {
	http    *http.Client
	retries int
	maxWait time.Duration
}

// UseHTTPClient sends the requests through c (default http.DefaultClient):
// its Transport for TLS to the admin listener, its Timeout per attempt.
func UseHTTPClient(c *http.Client) Option { return func(s *settings) { s.http = c } }

// Retries sets how many times a request answered 429 or 503 is sent
// again (default 4; 0: never), and the longest wait between two attempts
// the client accepts (default 30s): an answer asking for a longer
// Retry-After is returned as its *Problem at once rather than waited on.
func Retries(n int, maxWait time.Duration) Option {
	return func(s *settings) { s.retries, s.maxWait = n, maxWait }
}

// New returns a client of the admin API at baseURL (the admin listener,
// e.g. http://127.0.0.1:8082) that authenticates with token.
func New(baseURL, token string, opts ...Option) (*Client, error) {
	s := settings{http: http.DefaultClient, retries: 4, maxWait: 30 * time.Second}
	for _, o := range opts {
		o(&s)
	}
	d := &doer{settings: s, token: token}
	c, err := NewClientWithResponses(baseURL, WithHTTPClient(d))
	if err != nil {
		return nil, fmt.Errorf("adminclient: %w", err)
	}
	return &Client{ClientWithResponses: c}, nil
}

// Error is the problem's title and detail.
func (p *Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sluice admin API: %d", deref(p.Status))
	if t := deref(p.Title); t != "" {
		b.WriteString(" " + t)
	}
	if d := deref(p.Detail); d != "" {
		b.WriteString(": " + d)
	}
	for _, e := range deref(p.Errors) {
		fmt.Fprintf(&b, "; %s: %s", deref(e.Location), deref(e.Message))
	}
	return b.String()
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// IdempotencyKey is a fresh key for a create (what the client sends when
// the params carry none); pass one of your own to make a create safe to
// send again across processes.
func IdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// doer sends each request with the token, a create's key and retries, and
// turns every refusal into a *Problem.
type doer struct {
	settings
	token string
}

func (d *doer) Do(req *http.Request) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+d.token)
	create := isCreate(req)
	if create && req.Header.Get("Idempotency-Key") == "" {
		req.Header.Set("Idempotency-Key", IdempotencyKey())
	}
	for attempt := 0; ; attempt++ {
		resp, err := d.http.Do(req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 400 {
			return resp, nil
		}
		wait, again := d.retry(req, resp, create, attempt)
		if !again {
			return nil, problemOf(resp)
		}
		_ = resp.Body.Close()
		if req, err = rewind(req); err != nil {
			return nil, err
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(wait):
		}
	}
}

// retry decides whether resp is worth another attempt, and after how long.
func (d *doer) retry(req *http.Request, resp *http.Response, create bool, attempt int) (time.Duration, bool) {
	if attempt >= d.retries {
		return 0, false
	}
	safe := create || req.Method == http.MethodGet || req.Method == http.MethodPut || req.Method == http.MethodDelete
	if resp.StatusCode != http.StatusTooManyRequests && (resp.StatusCode != http.StatusServiceUnavailable || !safe) {
		return 0, false
	}
	wait, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now())
	if !ok {
		wait = min(time.Duration(1<<attempt)*250*time.Millisecond, d.maxWait)
	}
	return wait, wait <= d.maxWait
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(h string, now time.Time) (time.Duration, bool) {
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(h); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// rewind is req ready to be sent again, its body from the start.
func rewind(req *http.Request) (*http.Request, error) {
	if req.Body == nil || req.GetBody == nil {
		return req, nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, fmt.Errorf("adminclient: resend: %w", err)
	}
	again := req.Clone(req.Context())
	again.Body = body
	return again, nil
}

func isCreate(req *http.Request) bool {
	for _, c := range creates {
		if req.Method == c.method && c.path.MatchString(req.URL.Path) {
			return true
		}
	}
	return false
}

// problemOf reads a refusal's problem detail; an answer that is not one
// (a proxy's page) becomes a Problem of its status.
func problemOf(resp *http.Response) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("adminclient: read %d answer: %w", resp.StatusCode, err)
	}
	status := int64(resp.StatusCode)
	p := &Problem{}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/problem+json" || mt == "application/json" {
		_ = json.Unmarshal(body, p)
	}
	if p.Status == nil {
		p.Status = &status
	}
	if p.Title == nil {
		title := http.StatusText(resp.StatusCode)
		p.Title = &title
	}
	if p.Detail == nil && p.Errors == nil && len(body) > 0 && !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		detail := strings.TrimSpace(string(body[:min(len(body), 200)]))
		p.Detail = &detail
	}
	return p
}

// unexpected is an answer the document does not describe (a 2xx without
// the body it promises).
func unexpected(resp *http.Response, body []byte) error {
	status := 0
	if resp != nil {
		status = resp.StatusCode
	}
	return fmt.Errorf("adminclient: unexpected answer %d (%d bytes)", status, len(body))
}

// pages yields the items of every page, from cursor on, until a page names
// no next one or an error.
func pages[T any](cursor *string, page func(cursor *string) ([]T, *string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			items, next, err := page(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil || *next == "" {
				return
			}
			cursor = next
		}
	}
}

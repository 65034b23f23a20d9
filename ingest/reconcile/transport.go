package reconcile

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// retrying is the transport under every provider API client: it honours a
// 429's Retry-After (as a lower bound, capped by maxWait) and retries 5xx
// answers and network errors of requests that are safe to repeat, with
// exponential backoff and jitter. Provider clients that retry on their own
// (stripe-go retries 5xx and network errors, not 429) then see fewer
// failures, never more.
//
// Each attempt has its own timeout (perTry), so waiting out a Retry-After
// never eats the next attempt's time; the caller's context bounds them all.
type retrying struct {
	next     http.RoundTripper
	attempts int
	base     time.Duration
	maxWait  time.Duration
	perTry   time.Duration
}

func newRetrying(next http.RoundTripper, perTry time.Duration) *retrying {
	if next == nil {
		next = http.DefaultTransport
	}
	return &retrying{next: next, attempts: 5, base: 200 * time.Millisecond, maxWait: 30 * time.Second, perTry: perTry}
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := t.try(req)
		wait, retry := t.decide(req, resp, err, attempt)
		if !retry {
			return resp, err
		}
		if resp != nil {
			resp.Body.Close()
		}
		if req.Body != nil && req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		if err := sleep(req.Context(), wait); err != nil {
			return nil, err
		}
	}
}

// try is one attempt within perTry, reading the body included.
func (t *retrying) try(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.perTry)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// decide says whether to try again, and after how long.
func (t *retrying) decide(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if attempt >= t.attempts || req.Context().Err() != nil || (req.Body != nil && req.GetBody == nil) {
		return 0, false
	}
	backoff := t.base << (attempt - 1)
	backoff = min(backoff/2+rand.N(backoff/2+1), t.maxWait)
	// A request that failed before an answer may have been applied; only
	// reads are repeated blindly. A 429 was refused, so anything is.
	safe := req.Method == http.MethodGet || req.Method == http.MethodHead
	switch {
	case errors.Is(err, ErrBudget):
		return 0, false // waiting would not refill it this hour
	case err != nil:
		return backoff, safe
	case resp.StatusCode == http.StatusTooManyRequests:
		return max(backoff, min(retryAfter(resp.Header.Get("Retry-After")), t.maxWait)), true
	case resp.StatusCode >= 500:
		return max(backoff, min(retryAfter(resp.Header.Get("Retry-After")), t.maxWait)), safe
	}
	return 0, false
}

// retryAfter reads Retry-After in seconds or as an HTTP date; 0 when absent.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

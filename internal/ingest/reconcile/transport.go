package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
)

// client is the HTTP client of one source's API: every attempt, retries
// included, is drawn from the source's shared budget (and counted in
// requests), and retried as the transport decides. The timeout moves into
// the transport, per attempt: on the client it would bound an attempt and
// its retries together.
func (r *Runner) client(sourceID string, kind provider.Kind, requests *atomic.Int64) *http.Client {
	client := *r.cfg.HTTPClient
	budget := &budgeted{next: client.Transport, pool: r.pool, sourceID: sourceID, limit: r.cfg.Budget, requests: requests}
	t := newRetrying(budget, cmp.Or(client.Timeout, 30*time.Second))
	t.maxWait = r.cfg.MaxBackoff
	t.waited = func(throttled bool, d time.Duration) {
		if throttled {
			r.metrics.throttled.WithLabelValues(string(kind)).Inc()
		}
		r.metrics.waited.WithLabelValues(string(kind)).Add(d.Seconds())
	}
	client.Transport = t
	client.Timeout = 0
	return &client
}

// retrying is the transport under every provider API client. A 429 is the
// provider's rate limit: it is waited out as often as it comes, with
// exponential backoff and jitter and its Retry-After as the least wait,
// for as long as the caller's context (the run's deadline) allows; a wait
// that would outlast it ends the request with errThrottled. 5xx answers and
// network errors of requests that are safe to repeat are retried a few
// times (attempts), with the same backoff. Provider clients that retry on
// their own (stripe-go retries 5xx and network errors, not 429) then see
// fewer failures, never more.
//
// Each attempt has its own timeout (perTry), so waiting out a Retry-After
// never eats the next attempt's time; the caller's context bounds them all.
type retrying struct {
	next     http.RoundTripper
	attempts int
	base     time.Duration
	maxWait  time.Duration
	perTry   time.Duration
	// waited, when set, hears of each wait before a retry.
	waited func(throttled bool, d time.Duration)
}

// errThrottled: the provider keeps answering 429 beyond the run's time.
var errThrottled = errors.New("reconcile: the provider throttles beyond the run's deadline")

func newRetrying(next http.RoundTripper, perTry time.Duration) *retrying {
	if next == nil {
		next = http.DefaultTransport
	}
	return &retrying{next: next, attempts: 5, base: 200 * time.Millisecond, maxWait: 30 * time.Second, perTry: perTry}
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	failures, throttles := 0, 0
	for {
		resp, err := t.try(req)
		throttled := err == nil && resp.StatusCode == http.StatusTooManyRequests
		if throttled {
			throttles++
		} else {
			failures++
		}
		wait, retry := t.decide(req, resp, err, failures, throttles)
		if !retry {
			return resp, err
		}
		if resp != nil {
			resp.Body.Close()
		}
		if deadline, ok := req.Context().Deadline(); ok && time.Until(deadline) < wait {
			return nil, fmt.Errorf("%w: %s %s answered %d; the next attempt is allowed in %s", errThrottled, req.Method, req.URL.Path,
				http.StatusTooManyRequests, wait.Round(time.Millisecond))
		}
		if req.Body != nil && req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, gerr
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
		if t.waited != nil {
			t.waited(throttled, wait)
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

// decide says whether to try again, and after how long: failures counts
// the attempts that failed otherwise than by a 429, throttles the 429s.
func (t *retrying) decide(req *http.Request, resp *http.Response, err error, failures, throttles int) (time.Duration, bool) {
	if req.Context().Err() != nil || (req.Body != nil && req.GetBody == nil) {
		return 0, false
	}
	backoff := func(n int) time.Duration {
		d := t.base << min(n-1, 16)
		return min(d/2+rand.N(d/2+1), t.maxWait)
	}
	// A request that failed before an answer may have been applied; only
	// reads are repeated blindly. A 429 was refused, so anything is.
	safe := req.Method == http.MethodGet || req.Method == http.MethodHead
	switch {
	case errors.Is(err, ErrBudget):
		return 0, false // waiting would not refill it this hour
	case err == nil && resp.StatusCode == http.StatusTooManyRequests:
		return max(backoff(throttles), retryAfter(resp.Header.Get("Retry-After"))), true
	case failures >= t.attempts:
		return 0, false
	case err != nil:
		return backoff(failures), safe
	case resp.StatusCode >= 500:
		return max(backoff(failures), min(retryAfter(resp.Header.Get("Retry-After")), t.maxWait)), safe
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

package reconcile

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// Provider API faults: a 429 waits at least its Retry-After, a 5xx and a
// timed-out read are retried, a refused write (4xx) is not.
func TestTransportHonoursRetryAfterAndRetriesTransientFaults(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := calls.Add(1); {
		case r.URL.Path == "/bad":
			http.Error(w, "no", http.StatusBadRequest)
		case n == 1:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		case n == 2:
			http.Error(w, "oops", http.StatusBadGateway)
		case n == 3:
			time.Sleep(300 * time.Millisecond) // past the client's timeout
		default:
			w.Write([]byte("ok"))
		}
	}))
	t.Cleanup(srv.Close)
	retry := newRetrying(nil, 200*time.Millisecond)
	retry.base = 10 * time.Millisecond
	client := &http.Client{Transport: retry}

	start := time.Now()
	resp, err := client.Get(srv.URL + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || calls.Load() != 4 {
		t.Fatalf("status %d after %d calls, want 200 after 4 (429, 502, timeout, ok)", resp.StatusCode, calls.Load())
	}
	if waited := time.Since(start); waited < time.Second {
		t.Fatalf("answered after %s: Retry-After: 1 was not honoured", waited)
	}

	calls.Store(10)
	resp, err = client.Post(srv.URL+"/bad", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || calls.Load() != 11 {
		t.Fatalf("a 400 was retried: %d calls", calls.Load()-10)
	}
}

package ingest

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestClientIPBelievesForwardedForOnlyFromTrustedProxies(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	cases := map[string]struct {
		remote string
		xff    string
		want   string
	}{
		"direct, no header":             {"203.0.113.7:5000", "", "203.0.113.7"},
		"direct, forged header ignored": {"203.0.113.7:5000", "198.51.100.1", "203.0.113.7"},
		"through a trusted proxy":       {"10.1.2.3:5000", "198.51.100.1", "198.51.100.1"},
		"client spoofs the left part":   {"10.1.2.3:5000", "1.2.3.4, 198.51.100.1", "198.51.100.1"},
		"two trusted hops":              {"10.1.2.3:5000", "198.51.100.1, 10.9.9.9", "198.51.100.1"},
		"garbage hop stops the chain":   {"10.1.2.3:5000", "198.51.100.1, nonsense", "10.1.2.3"},
		"ipv4-mapped ipv6 peer":         {"[::ffff:203.0.113.7]:5000", "", "203.0.113.7"},
	}
	for name, tc := range cases {
		r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := clientIP(r, trusted); got.String() != tc.want {
			t.Errorf("%s: %s, want %s", name, got, tc.want)
		}
	}
	r := &http.Request{RemoteAddr: "10.1.2.3:5000", Header: http.Header{"X-Forwarded-For": {"198.51.100.1"}}}
	if got := clientIP(r, nil); got.String() != "10.1.2.3" {
		t.Errorf("no trusted proxies configured: %s, want the peer", got)
	}
}

func TestLimitersRefuseBeyondTheBucketAndSayWhen(t *testing.T) {
	t.Parallel()
	l := newLimiters(10, 5)
	now := time.Now()
	if _, ok := l.take("a", 5, now); !ok {
		t.Fatal("burst refused")
	}
	wait, ok := l.take("a", 1, now)
	if ok || wait <= 0 || wait > 200*time.Millisecond {
		t.Fatalf("after the burst: ok=%v wait=%v, want refused with ~100ms", ok, wait)
	}
	if _, ok := l.take("b", 1, now); !ok {
		t.Fatal("another key shares the first one's bucket")
	}
	if _, ok := l.take("a", 6, now.Add(time.Hour)); ok {
		t.Fatal("more than the burst at once passed")
	}
	if retryAfterSeconds(100*time.Millisecond) != "1" || retryAfterSeconds(2500*time.Millisecond) != "3" {
		t.Fatal("Retry-After must be whole seconds, rounded up, at least 1")
	}
}

func TestFairQueueServesTenantsInTurn(t *testing.T) {
	t.Parallel()
	q := newFairQueue(100, 150)
	flood := make([]*request, 100)
	for i := range flood {
		flood[i] = &request{d: &delivery{TenantID: "a"}}
	}
	if !q.push("a", flood...) {
		t.Fatal("push refused")
	}
	if q.push("a", &request{d: &delivery{TenantID: "a"}}) {
		t.Fatal("a tenant went past its own bound")
	}
	if !q.push("b", &request{d: &delivery{TenantID: "b"}}) {
		t.Fatal("a full tenant blocked another")
	}
	batch, ok := q.take(nil, 4)
	if !ok || len(batch) != 4 {
		t.Fatalf("take: %d, %v", len(batch), ok)
	}
	seenB := false
	for _, r := range batch {
		seenB = seenB || r.d.TenantID == "b"
	}
	if !seenB {
		t.Fatal("the lone tenant waited behind the flood")
	}
	q.close()
	total := len(batch)
	for {
		b, ok := q.take(nil, 64)
		if !ok {
			break
		}
		total += len(b)
	}
	if total != 101 {
		t.Fatalf("drained %d, want 101", total)
	}
}

func TestCacheSharesConcurrentLoadsAndStaysBounded(t *testing.T) {
	t.Parallel()
	var loads atomic.Int32
	release := make(chan struct{})
	c := newTTLCache(time.Minute, func(ctx context.Context, key string) (int, error) {
		loads.Add(1)
		<-release
		return len(key), nil
	})
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if v, err := c.get(context.Background(), "abc"); err != nil || v != 3 {
				t.Errorf("get = %d, %v", v, err)
			}
		}()
	}
	for loads.Load() == 0 {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads for one key requested at once, want 1", n)
	}
	for i := range maxCached + 100 {
		c.put(strconv.Itoa(i), i, time.Now())
	}
	if n := len(c.items); n > maxCached {
		t.Fatalf("cache holds %d entries, bound is %d", n, maxCached)
	}
}

// A delivery whose client went away before its batch was taken is not
// committed: it was answered 5xx already, and the provider will redo it.
func TestAbandonedDeliveriesAreLeftOutOfTheBatch(t *testing.T) {
	t.Parallel()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	kept := &request{ctx: context.Background(), d: &delivery{EventID: "kept"}, done: make(chan result, 1)}
	left := &request{ctx: gone, d: &delivery{EventID: "left"}, done: make(chan result, 1)}
	batch := dropAbandoned([]*request{left, kept})
	if len(batch) != 1 || batch[0] != kept {
		t.Fatalf("batch = %v, want only the request still waited for", batch)
	}
	if res := <-left.done; !errors.Is(res.err, ErrNotCommitted) {
		t.Fatalf("abandoned request got %v, want ErrNotCommitted", res.err)
	}
}

package ingest

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiters keeps one token bucket per key (a tenant, or a source for failed
// authentications). Buckets live in this process: with N ingest instances
// behind a load balancer a tenant's effective limit is about N times the
// configured one. That is the documented trade: no shared store on the hot
// path, and nothing that can fail open.
type limiters struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newLimiters(perSecond float64, burst int) *limiters {
	return &limiters{limit: rate.Limit(perSecond), burst: burst, buckets: map[string]*rate.Limiter{}}
}

// Override is a key's own rate and burst in place of the limiters'
// (a tenant's row in tenant_limits); nil: the limiters'.
type Override struct {
	Rate  float64
	Burst int
}

// bucket returns key's bucket, set to the override's rate and burst, or
// the limiters'. A changed override adjusts the bucket it finds: the
// tokens already there stay, the rate and the ceiling change.
func (l *limiters) bucket(key string, o *Override, now time.Time) *rate.Limiter {
	limit, burst := l.limit, l.burst
	if o != nil {
		limit, burst = rate.Limit(o.Rate), o.Burst
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		b = rate.NewLimiter(limit, burst)
		l.buckets[key] = b
		return b
	}
	if b.Limit() != limit {
		b.SetLimitAt(now, limit)
	}
	if b.Burst() != burst {
		b.SetBurstAt(now, burst)
	}
	return b
}

// take spends n tokens of key's bucket, or none: then it says how long until
// n tokens are there (the Retry-After), and ok is false. A request larger
// than the burst can never pass and is told to wait a second per burst.
func (l *limiters) take(key string, n int, now time.Time) (retryAfter time.Duration, ok bool) {
	return l.takeWith(key, n, now, nil)
}

// takeWith is take under a key's own override (nil: the limiters').
func (l *limiters) takeWith(key string, n int, now time.Time, o *Override) (retryAfter time.Duration, ok bool) {
	b := l.bucket(key, o, now)
	r := b.ReserveN(now, n)
	if !r.OK() {
		return time.Second, false
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// peek says whether key's bucket holds a token now, without taking it, and
// when it does not, how long until it will. A flood far beyond its rate is
// refused so before its body is read or its signature checked: each such
// refusal costs a lookup, not an HMAC and a parse. Spending nothing, a
// request nobody signed cannot drain a tenant's bucket; only a verified
// delivery is charged (takeWith, after verification).
func (l *limiters) peek(key string, o *Override, now time.Time) (retryAfter time.Duration, ok bool) {
	b := l.bucket(key, o, now)
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return 0, true
	}
	if b.Limit() <= 0 {
		return time.Second, false
	}
	return time.Duration((1 - tokens) / float64(b.Limit()) * float64(time.Second)), false
}

// retryAfterSeconds renders a wait as a Retry-After value: whole seconds,
// at least one.
func retryAfterSeconds(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// clientIP is the address a request came from. X-Forwarded-For is believed
// only when the peer is one of the trusted proxies: then the client is the
// right-most address not itself a trusted proxy. Otherwise anyone could
// claim any address and walk past an allowlist.
func clientIP(r *http.Request, trusted []netip.Prefix) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	peer = peer.Unmap()
	if !inPrefixes(peer, trusted) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			// An unreadable hop: stop believing the chain here.
			return peer
		}
		a = a.Unmap()
		if !inPrefixes(a, trusted) {
			return a
		}
		peer = a
	}
	return peer
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

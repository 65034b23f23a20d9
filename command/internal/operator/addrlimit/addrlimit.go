// Package addrlimit keeps a token bucket per client address: the admin
// API charges each failed authentication to it, the portal each use of a
// link (each guess of a secret costs a look-up). A client without a token
// left is answered 429 with Retry-After. Memory stays bounded: at most
// MaxAddresses buckets are kept.
package addrlimit

import (
	"math"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// MaxAddresses bounds the addresses remembered.
const MaxAddresses = 10_000

// Limiter is a token bucket per client address (an IPv6 address by its
// /64, which one client usually holds whole).
type Limiter struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[netip.Addr]*rate.Limiter
}

// New is a limiter refilling perSecond tokens a second per address, up to
// burst.
func New(perSecond float64, burst int) *Limiter {
	return &Limiter{limit: rate.Limit(perSecond), burst: burst, buckets: map[netip.Addr]*rate.Limiter{}}
}

// Take spends a token of ip's bucket: false when it had one, else true with
// how long until it has one again.
func (l *Limiter) Take(ip netip.Addr, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[ip]
	if !ok {
		if len(l.buckets) >= MaxAddresses {
			l.forget(now)
		}
		b = rate.NewLimiter(l.limit, l.burst)
		l.buckets[ip] = b
	}
	if b.AllowN(now, 1) {
		return 0, false
	}
	return time.Duration((1 - b.TokensAt(now)) / float64(l.limit) * float64(time.Second)), true
}

// forget drops the buckets that refilled (nothing is lost), or, when every
// one is still spending, all of them: memory stays bounded under a flood
// of addresses, at the price of forgetting their budgets.
func (l *Limiter) forget(now time.Time) {
	for ip, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.buckets, ip)
		}
	}
	if len(l.buckets) >= MaxAddresses {
		clear(l.buckets)
	}
}

// ClientAddr is the peer's address (a request's RemoteAddr), an IPv6 one
// cut to its /64 (what one host is given: otherwise a guesser would get a
// fresh budget per address of its prefix). X-Forwarded-For is never
// believed: behind a proxy, every client is the proxy's address.
func ClientAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	addr, _ := netip.ParseAddr(host)
	addr = addr.Unmap()
	if addr.Is6() {
		if p, err := addr.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return addr
}

// RetryAfter is a Retry-After header's value for wait: whole seconds, at
// least 1.
func RetryAfter(wait time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(wait.Seconds()))))
}

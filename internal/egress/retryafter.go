package egress

import (
	"net/http"
	"strconv"
	"time"
)

// RetryAfter reads a Retry-After header: delay seconds or an HTTP date
// (RFC 9110 10.2.3); false when absent or unreadable.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

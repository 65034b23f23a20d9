package adminclient

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"3", 3 * time.Second, true},
		{now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
		{"", 0, false},
		{"soon", 0, false},
	} {
		got, ok := retryAfter(c.header, now)
		if got != c.want || ok != c.ok {
			t.Errorf("Retry-After %q: %s %v, want %s %v", c.header, got, ok, c.want, c.ok)
		}
	}
}

package consumers

import (
	"errors"
	"testing"
	"time"
)

func TestBackoffGrowsIsCappedAndJittered(t *testing.T) {
	t.Parallel()
	base, ceiling := 100*time.Millisecond, 2*time.Second
	for attempt := 1; attempt <= 12; attempt++ {
		step := min(base<<(attempt-1), ceiling)
		seen := map[time.Duration]bool{}
		for range 50 {
			d := backoff(base, ceiling, attempt)
			if d < step/2 || d > step {
				t.Fatalf("attempt %d: %s outside [%s, %s]", attempt, d, step/2, step)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Errorf("attempt %d: no jitter", attempt)
		}
	}
}

func TestRetryAfterIsTransientWithItsDelay(t *testing.T) {
	t.Parallel()
	err := RetryAfter(errors.New("429"), 3*time.Second)
	if IsPermanent(err) {
		t.Error("a Retry-After error is permanent")
	}
	if d, ok := RetryDelay(err); !ok || d != 3*time.Second {
		t.Errorf("delay = %s, %v", d, ok)
	}
	if _, ok := RetryDelay(errors.New("plain")); ok {
		t.Error("a plain error has a delay")
	}
}

package console

import (
	"testing"
	"time"
)

// Every time reads one way: relative to the page's moment, in the largest
// unit that fits, past or future.
func TestATimeReadsRelativeToThePage(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		0: "just now", -9 * time.Second: "just now", -42 * time.Second: "42 s ago", -5 * time.Minute: "5 min ago",
		-3 * time.Hour: "3 h ago", -47 * time.Hour: "47 h ago", -72 * time.Hour: "3 days ago", 5 * time.Minute: "in 5 min",
	} {
		if got := relative(now.Add(d), now); got != want {
			t.Errorf("%v from now reads %q, want %q", d, got, want)
		}
	}
	if got := string(timeTag(now.Add(-time.Minute), now)); got != `<time datetime="2026-01-02T15:03:05Z" title="2026-01-02 15:03:05 UTC">1 min ago</time>` {
		t.Errorf("a time's tag is %s", got)
	}
}

// A long id is shortened, marked so; a short one is shown whole.
func TestALongIDIsShortened(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"3f2a9c1b-4d5e-4f60-8a7b-9c0d1e2f3a4b": "3f2a9c1b…",
		"evt_1NvXYZabcdefghijkl":               "evt_1NvXYZab…",
		"evt_short":                            "evt_short",
		"42":                                   "42",
	} {
		if got := shortID(id); got != want {
			t.Errorf("%q reads %q, want %q", id, got, want)
		}
	}
}

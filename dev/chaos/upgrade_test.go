package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The upgrade run rolls back only when the newest section of the
// changelog says "safe"; an older section's verdict does not count.
func TestRollbackFollowsTheNewestChangelogSection(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		safe bool
	}{
		{"# Changelog\n\n## Unreleased\n\n- **Rollback**: safe. The previous binaries run.\n\n## 0.1.0\n\n- **Rollback**: not safe.\n", true},
		{"# Changelog\n\n## Unreleased\n\n- **Rollback**: not safe: 00040 drops a column 0.1.0 reads.\n\n## 0.1.0\n\n- **Rollback**: safe.\n", false},
		{"# Changelog\n\n## Unreleased\n\n- **Schema**: 38.\n\n## 0.1.0\n\n- **Rollback**: safe.\n", false},
	} {
		path := filepath.Join(t.TempDir(), "CHANGELOG.md")
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if safe, why := rollbackSafe(path); safe != c.safe || why == "" {
			t.Errorf("rollbackSafe = %v (%s), want %v for:\n%s", safe, why, c.safe, c.text)
		}
	}
	// And the repository's own says something.
	if _, why := rollbackSafe("../../CHANGELOG.md"); strings.Contains(why, "says nothing") {
		t.Errorf("CHANGELOG.md: %s", why)
	}
}

// The balancer sends to a ready instance, passes over one that refuses the
// connection, and answers 503 with Retry-After when none takes a request.
func TestTheBalancerSkipsWhatRefusesAndSays503WhenNoneIsLeft(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there: connections are refused
	// No health check within the test: the instance that went still
	// counts as ready, as between two checks.
	b, err := newBalancer([]string{gone, up.URL}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	for i := range 4 {
		resp, err := http.Post(b.url+"/v1/ingest/x", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("request %d: %d, want the ready instance's 202", i, resp.StatusCode)
		}
	}
	up.Close()
	resp, err := http.Post(b.url+"/v1/ingest/x", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("with no instance left: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

package adminclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
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

// A create answered 503 is sent again after its Retry-After under the same
// Idempotency-Key; a non-create POST answered 503 is not (it may have acted).
func TestA503CreateIsRetriedUnderItsKey(t *testing.T) {
	t.Parallel()
	var keys []string
	actions := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/admin/v1/tenants" {
			actions++
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"status":503,"title":"Service Unavailable","detail":"try later"}`))
			return
		}
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		if len(keys) < 3 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"t1","name":"acme","created_at":"2026-01-02T03:04:05Z"}`))
	}))
	defer srv.Close()
	c, err := New(srv.URL, "slk_adm_test")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.CreateTenantWithResponse(context.Background(), nil, TenantCreateInBody{Name: "acme"})
	if err != nil || got.JSON201 == nil || got.JSON201.Id != "t1" {
		t.Fatalf("create: %v %+v", err, got)
	}
	if len(keys) != 3 || keys[0] == "" || keys[1] != keys[0] || keys[2] != keys[0] {
		t.Fatalf("attempts' keys %q, want three of one key", keys)
	}
	_, err = c.DisableSourceWithResponse(context.Background(), uuid.New())
	var p *Problem
	if !errors.As(err, &p) || *p.Status != http.StatusServiceUnavailable || *p.Detail != "try later" || actions != 1 {
		t.Fatalf("a 503 action: %v after %d attempts, want its *Problem after one", err, actions)
	}
}

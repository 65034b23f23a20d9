package delivery_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// A test event goes out signed, and only to an endpoint that is a target:
// one disabled, or without a signing secret in force, is a conflict that
// says why, and its receiver hears nothing.
func TestATestEventIsSignedAndOnlyForATarget(t *testing.T) {
	e := newEnv(t)
	var (
		mu    sync.Mutex
		sigs  []string
		typed []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body, _ := io.ReadAll(r.Body)
		sigs = append(sigs, r.URL.Path+" "+r.Header.Get("webhook-signature"))
		typed = append(typed, r.Header.Get("ce-type")+" "+string(body))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	store := endpoints.Store{Pool: e.pool, Ring: e.ring}
	signed := e.newEndpoint(t, srv.URL+"/signed")
	disabled := e.newEndpoint(t, srv.URL+"/disabled")
	if _, err := store.DisableEndpoint(ctx, disabled); err != nil {
		t.Fatal(err)
	}
	paused := e.newEndpoint(t, srv.URL+"/paused")
	if _, err := store.PauseEndpoint(ctx, paused); err != nil {
		t.Fatal(err)
	}
	var bare string
	if err := e.pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters) VALUES ($1, $2, '{*}') RETURNING id::text`,
		e.tenant, srv.URL+"/bare").Scan(&bare); err != nil {
		t.Fatal(err)
	}
	client := egress.NewClient(egress.Config{Policy: egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, ConnectTimeout: time.Second})
	d := delivery.New(delivery.Config{Client: client, Timeout: 2 * time.Second}, slog.New(slog.NewTextHandler(io.Discard, nil)), e.pool, store)

	a, err := d.TestEndpoint(ctx, signed, endpoints.TestEvent{})
	if err != nil || a.Status != http.StatusNoContent {
		t.Fatalf("test of a signed endpoint: %+v, %v; want its 204", a, err)
	}
	// A test of a chosen type carries the type and the body it is given.
	if a, err := d.TestEndpoint(ctx, signed, endpoints.TestEvent{Type: "stripe.invoice.paid", Body: []byte(`{"id":"masked"}`)}); err != nil || !a.OK() {
		t.Fatalf("test of a chosen type: %+v, %v", a, err)
	}
	for id, why := range map[string]string{disabled: "disabled or paused", paused: "disabled or paused", bare: "no signing secret in force"} {
		if _, err := d.TestEndpoint(ctx, id, endpoints.TestEvent{}); !errors.Is(err, refusal.ErrConflict) || !strings.Contains(err.Error(), why) {
			t.Errorf("test of endpoint %s: %v; want a conflict that says %q", id, err, why)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sigs) != 2 || !strings.HasPrefix(sigs[0], "/signed v1,") || !strings.HasPrefix(sigs[1], "/signed v1,") {
		t.Errorf("the receiver heard %q; want two signed requests at /signed", sigs)
	}
	if len(typed) != 2 || !strings.HasPrefix(typed[0], "sluice.test {") || typed[1] != `stripe.invoice.paid {"id":"masked"}` {
		t.Errorf("the receiver got %q; want sluice.test, then the chosen type's body", typed)
	}
}

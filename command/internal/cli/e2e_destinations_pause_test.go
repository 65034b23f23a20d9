package cli

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// owned says whether a deliverer holds endpoint's lock (delivery's owner:
// lockSpace "sluice.deliver"), that is whether a loop may send to it.
func owned(t *testing.T, endpoint string) bool {
	t.Helper()
	return count(t, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND classid::bigint = hashtext('sluice.deliver')::bigint & 4294967295 AND objid::bigint = hashtext($1)::bigint & 4294967295`, endpoint) > 0
}

// A paused endpoint's deliveries are written but none is sent; resumed, it
// receives every one of them, each resource's in the order sent, once.
func TestPausedEndpointReceivesNothingThenEverythingInOrder(t *testing.T) {
	t.Parallel()
	h := newHMACTenant(t)
	h.declareOrders(t, catalogStore(t))
	var (
		mu      sync.Mutex
		arrival = map[string][]string{} // per resource, event ids in order of receipt
		ok      = map[string]int{}      // receipts per webhook-id
	)
	rc := newEndpointServer(t, func(r *http.Request, _ []byte) int {
		mu.Lock()
		defer mu.Unlock()
		ok[r.Header.Get("webhook-id")]++
		arrival[r.Header.Get("ce-subject")] = append(arrival[r.Header.Get("ce-subject")], r.Header.Get("ce-id"))
		return http.StatusOK
	})
	paused, _ := newEndpoint(t, h.tenantID, rc.URL, true, "hmac.order.placed")
	witness, _ := newEndpoint(t, h.tenantID, newEndpointServer(t, nil).URL, true, "hmac.order.placed")
	s := testenv.RandomSuffix()
	if code := h.send(t, orderPlaced("first-"+s, "r0-"+s, 0)); code/100 != 2 {
		t.Fatalf("first: %d", code)
	}
	waitDelivered(t, paused, 1, 30*time.Second)

	store := endpointsStore(t)
	e, err := store.PauseEndpoint(context.Background(), paused)
	if err != nil || !e.Paused || !e.Enabled {
		t.Fatalf("pause: %+v, %v", e, err)
	}
	// Once no deliverer holds it, no loop sends to it.
	for deadline := time.Now().Add(10 * time.Second); owned(t, paused); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the paused endpoint is still owned after 10s")
		}
	}
	const events, resources = 60, 5
	sent := map[string][]string{}
	for i := range events {
		id, ref := fmt.Sprintf("ord-%d-%s", i, s), fmt.Sprintf("r%d-%s", i%resources, s)
		if code := h.send(t, orderPlaced(id, ref, i)); code/100 != 2 {
			t.Fatalf("event %d: %d", i, code)
		}
		sent[ref] = append(sent[ref], id)
	}
	// The witness has them all: the fan-out wrote the paused endpoint's
	// rows in the same transactions.
	waitDelivered(t, witness, events+1, time.Minute)
	if n := count(t, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1`, paused); n != events+1 {
		t.Fatalf("the paused endpoint has %d deliveries, want %d: they keep being written", n, events+1)
	}
	if owned(t, paused) {
		t.Fatal("a deliverer took the paused endpoint")
	}
	mu.Lock()
	got := len(ok)
	mu.Unlock()
	if got != 1 {
		t.Fatalf("the paused endpoint received %d events, want only the one before the pause", got)
	}

	if _, err := store.ResumeEndpoint(context.Background(), paused); err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, paused, events+1, time.Minute)
	mu.Lock()
	defer mu.Unlock()
	for ref, want := range sent {
		if ref == "r0-"+s {
			want = append([]string{"first-" + s}, want...)
		}
		if !slices.Equal(arrival[ref], want) {
			t.Errorf("resource %s: received %v, want %v", ref, arrival[ref], want)
		}
	}
	for id, n := range ok {
		if n != 1 {
			t.Errorf("webhook-id %s received %d times", id, n)
		}
	}
}

package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/ingest"
)

type batchAnswer struct {
	Results []ingest.EventResult `json:"results"`
}

func (b *bundle) postEvents(t *testing.T, key string, events ...string) (int, batchAnswer) {
	t.Helper()
	body := []byte(`{"events":[` + strings.Join(events, ",") + `]}`)
	status, raw := b.post(t, "/v1/events", body, http.Header{"Authorization": {"Bearer " + key}})
	var a batchAnswer
	if status == http.StatusOK || status == http.StatusServiceUnavailable {
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
	}
	return status, a
}

func TestEventBatchGivesPerEventResultsUnderTheWebhookRules(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	ctx := context.Background()
	_, key, err := b.store.CreateAPIKey(ctx, b.tenantID)
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := b.pool.QueryRow(ctx, `SELECT key_sha256 FROM api_keys WHERE tenant_id = $1`, b.tenantID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), key) || len(stored) != 32 {
		t.Fatal("the API key is not stored as a SHA-256 digest")
	}

	first := `{"id":"e1","type":"order.placed","object_id":"o1","time":"2026-01-01T00:00:00Z","data":{"total":5}}`
	status, a := b.postEvents(t, key, first,
		`{"id":"e2","type":"order.placed","object_id":"o2","data":{}}`,
		`{"id":"e3","type":"order.placed"}`,
		`"not an object"`)
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	want := []int{http.StatusAccepted, http.StatusAccepted, http.StatusBadRequest, http.StatusBadRequest}
	for i, r := range a.Results {
		if r.Index != i || r.Status != want[i] {
			t.Errorf("result %d: %+v, want status %d", i, r, want[i])
		}
	}
	// The same event again is a duplicate; same id, other content, a conflict.
	status, a = b.postEvents(t, key, first, `{"id":"e2","type":"order.placed","object_id":"o2","data":{"changed":true}}`)
	if status != http.StatusOK || a.Results[0].Outcome != ingest.OutcomeDuplicate || a.Results[1].Outcome != ingest.OutcomeConflict {
		t.Fatalf("status %d results %+v, want duplicate then conflict", status, a.Results)
	}
	if n := b.inbox(t); n != 2 {
		t.Fatalf("inbox rows = %d, want 2", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND event_id = 'e1' AND event_time = '2026-01-01T00:00:00Z'`); n != 1 {
		t.Fatal("the event time was not kept")
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1`); n != 4 {
		t.Fatalf("attempts = %d, want 4 (2 new, 1 duplicate, 1 conflict)", n)
	}
}

func TestEventBatchLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{TenantRate: 0.01, TenantBurst: 1000})
	_, key, err := b.store.CreateAPIKey(context.Background(), b.tenantID)
	if err != nil {
		t.Fatal(err)
	}
	events := make([]string, ingest.MaxBatchEvents+1)
	for i := range events {
		events[i] = fmt.Sprintf(`{"id":"b%d","type":"order.placed","object_id":"o%d","data":{}}`, i, i)
	}
	if status, _ := b.postEvents(t, key, events...); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("1,001 events: status %d, want 413", status)
	}
	status, a := b.postEvents(t, key, events[:ingest.MaxBatchEvents]...)
	if status != http.StatusOK || len(a.Results) != ingest.MaxBatchEvents {
		t.Fatalf("1,000 events: status %d, %d results", status, len(a.Results))
	}
	// The bucket is spent: the next batch is refused whole, nothing stored.
	if status, _ := b.postEvents(t, key, `{"id":"late","type":"order.placed","object_id":"o","data":{}}`); status != http.StatusTooManyRequests {
		t.Fatalf("over the rate: status %d, want 429", status)
	}
	if n := b.inbox(t); n != ingest.MaxBatchEvents {
		t.Fatalf("inbox rows = %d, want %d", n, ingest.MaxBatchEvents)
	}
}

package ingest_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/ingest"
	"github.com/sluicehq/sluice/internal/lifecycle"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// ownDatabase is a fresh database for a test that moves the lifecycle
// manager's clock: dropping the current partitions would break every other
// test sharing the package's database.
func ownDatabase(t *testing.T) string {
	t.Helper()
	services, err := testenv.Find()
	if err != nil {
		t.Fatal(err)
	}
	db, err := services.NewDatabase(context.Background(), "ingest_lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	return db.URL
}

// passAt runs one lifecycle pass as if it were now+ahead, with the default
// horizons (payloads 7 days, keys 30 days) and daily partitions.
func passAt(t *testing.T, url string, ahead time.Duration) lifecycle.Report {
	t.Helper()
	pool, err := pg.Connect(context.Background(), url, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	m := lifecycle.New(lifecycle.Config{Now: func() time.Time { return time.Now().Add(ahead) }}, pool, slog.New(slog.DiscardHandler), nil)
	r, err := m.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Skipped {
		t.Fatal("pass skipped: another manager holds the lock")
	}
	return r
}

func TestRedeliveryAfterPayloadDroppedIsStillADuplicate(t *testing.T) {
	t.Parallel()
	url := ownDatabase(t)
	b := setupIn(t, ingest.Config{}, url, url)
	original := paid("evt_lc", "in_lc")
	if got := b.send(t, original, nil); got != http.StatusAccepted {
		t.Fatalf("original: status %d", got)
	}

	// Eight days later the payload's partition is past the 7-day horizon;
	// the key (30 days) is not.
	if r := passAt(t, url, 8*24*time.Hour); r.Dropped == 0 || r.KeysDeleted != 0 {
		t.Fatalf("pass 8 days on: %+v, want partitions dropped and no key deleted", r)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_payloads p JOIN inbox i ON i.id = p.inbox_id WHERE i.tenant_id = $1`); n != 0 {
		t.Fatalf("payloads kept = %d, want 0 after their partition was dropped", n)
	}
	// Back to the real clock: the manager fills the current partitions in
	// again (the ones it dropped were also today's).
	if r := passAt(t, url, 0); r.Created == 0 {
		t.Fatalf("pass now: %+v, want today's partitions created again", r)
	}

	if got := b.send(t, original, nil); got != http.StatusOK {
		t.Fatalf("same bytes after the payload is gone: status %d, want 200 (duplicate)", got)
	}
	reserialised := []byte(strings.ReplaceAll(string(original), `,"`, `, "`))
	if got := b.send(t, reserialised, nil); got != http.StatusOK {
		t.Fatalf("same JSON, other bytes, after the payload is gone: status %d, want 200 (duplicate)", got)
	}
	if got := b.send(t, paid("evt_lc", "in_other"), nil); got != http.StatusAccepted {
		t.Fatalf("other content after the payload is gone: status %d, want 202 (conflict kept)", got)
	}
	if n := b.inbox(t); n != 1 {
		t.Fatalf("inbox rows = %d, want 1", n)
	}
	if n := b.outbox(t); n != 1 {
		t.Fatalf("outbox rows = %d, want 1: a duplicate publishes nothing", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id WHERE i.tenant_id = $1`); n != 1 {
		t.Fatalf("conflicts = %d, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1 AND outcome = 'duplicate'`); n != 2 {
		t.Fatalf("duplicates in the delivery log = %d, want 2", n)
	}
}

// After the key horizon nothing of the event is left, so a redelivery is a
// new event: accepted and published again (consumers' business keys keep
// its effect single; see README "Storage and retention").
func TestRedeliveryAfterKeyHorizonIsAcceptedAsNew(t *testing.T) {
	t.Parallel()
	url := ownDatabase(t)
	b := setupIn(t, ingest.Config{}, url, url)
	original := paid("evt_lk", "in_lk")
	if got := b.send(t, original, nil); got != http.StatusAccepted {
		t.Fatalf("original: status %d", got)
	}
	var first int64
	if err := b.pool.QueryRow(context.Background(), `SELECT id FROM inbox WHERE tenant_id = $1`, b.tenantID).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if r := passAt(t, url, 31*24*time.Hour); r.KeysDeleted != 1 {
		t.Fatalf("pass 31 days on: %+v, want the one key deleted", r)
	}
	passAt(t, url, 0)
	if got := b.send(t, original, nil); got != http.StatusAccepted {
		t.Fatalf("redelivery after the key horizon: status %d, want 202 (a new event)", got)
	}
	var second int64
	if err := b.pool.QueryRow(context.Background(), `SELECT id FROM inbox WHERE tenant_id = $1`, b.tenantID).Scan(&second); err != nil {
		t.Fatal(err)
	}
	if second == first {
		t.Fatal("the redelivery found the expired key")
	}
	if n := b.outbox(t); n != 2 {
		t.Fatalf("outbox rows = %d, want 2: the redelivery is published as new", n)
	}
}

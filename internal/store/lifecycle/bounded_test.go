package lifecycle_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// A manager that stops running leaves the partitions it made ahead: the
// operators' check fails once less than one interval is left, ingest's
// once nothing holds now; a pass puts both right. Dropping the future
// partitions has the same effect at once.
func TestReadinessFailsWhenPartitionsRunOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.pass(t) // partitions to now+3m (the current minute and 2 ahead)
	ready := func(when string, ahead, writable bool) {
		t.Helper()
		errA, errW := b.m.CheckAhead(ctx), b.m.CheckWritable(ctx)
		if (errA == nil) != ahead || (errW == nil) != writable {
			t.Fatalf("%s: CheckAhead %v, CheckWritable %v; want ahead ok=%v, writable ok=%v", when, errA, errW, ahead, writable)
		}
		for _, err := range []error{errA, errW} {
			if err != nil && (!errors.Is(err, lifecycle.ErrPartitionsRunningOut) || !strings.Contains(err.Error(), "inbox_payloads")) {
				t.Fatalf("%s: %v, want ErrPartitionsRunningOut naming the table", when, err)
			}
		}
	}
	ready("after a pass", true, true)
	if left := metric(t, b.reg, "sluice_lifecycle_partition_coverage_seconds", "inbox_payloads"); left < 120 || left > 180 {
		t.Fatalf("coverage gauge after a pass = %vs, want 2-3 minutes", left)
	}

	b.advance(2*time.Minute + 30*time.Second) // no pass meanwhile
	ready("2.5 minutes without a pass", false, true)
	b.advance(time.Minute)
	ready("3.5 minutes without a pass", false, false)
	b.pass(t)
	ready("after the next pass", true, true)

	// Only the current partition of each table left.
	for _, table := range []string{"inbox_payloads", "inbox_duplicates", "inbox_conflicts", "dispatch_deliveries"} {
		for _, p := range b.partitions(t, table) {
			if !strings.Contains(p, "_p"+b.clock().Truncate(time.Minute).UTC().Format("20060102t150405")+"_") {
				if _, err := b.pool.Exec(ctx, "DROP TABLE "+p); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	ready("future partitions dropped", false, true)
	b.pass(t)
	ready("recreated", true, true)

	// A gap right after the current partition: what lies beyond it does
	// not count.
	next := b.clock().Truncate(time.Minute).Add(time.Minute).UTC().Format("20060102t150405")
	if _, err := b.pool.Exec(ctx, "DROP TABLE inbox_payloads_p"+next+"_"+b.clock().Truncate(time.Minute).Add(2*time.Minute).UTC().Format("20060102t150405")); err != nil {
		t.Fatal(err)
	}
	ready("the next partition missing", false, true)
}

// The dispatcher's record of sends is partitioned and dropped whole past
// the key horizon; the table it replaced is read through the dedup view
// while it holds a send within the horizon, then dropped from under it.
func TestDispatchDeliveriesAgeOutAndTheOldTableIsRetired(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	old, recent := uuid.NewString(), uuid.NewString()
	if _, err := b.pool.Exec(ctx, `INSERT INTO dispatch_log (idempotency_key, consumer_group, topic, partition, "offset", status, sent_at)
		VALUES ($1, 'g', 't', 0, 1, 202, $2)`, old, b.clock()); err != nil {
		t.Fatal(err)
	}
	if r := b.pass(t); r.LegacyDropped && b.count(t, `SELECT count(*) FROM pg_class WHERE relname = 'dispatch_log'`) == 0 {
		t.Fatalf("first pass dropped dispatch_log holding a send within the key horizon: %+v", r)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO dispatch_deliveries (idempotency_key, consumer_group, topic, partition, "offset", status, sent_at)
		VALUES ($1, 'g', 't', 0, 2, 202, $2)`, recent, b.clock()); err != nil {
		t.Fatal(err)
	}
	if n := b.count(t, `SELECT count(*) FROM dispatch_delivered WHERE idempotency_key IN ($1, $2)`, old, recent); n != 2 {
		t.Fatalf("dispatch_delivered sees %d of the 2 sends, want both tables read", n)
	}
	b.advance(6 * time.Minute) // both past the 5-minute key horizon
	r := b.pass(t)
	if !r.LegacyDropped || b.count(t, `SELECT count(*) FROM pg_class WHERE relname = 'dispatch_log'`) != 0 {
		t.Fatalf("pass past the key horizon: %+v, want dispatch_log dropped", r)
	}
	if n := b.count(t, `SELECT count(*) FROM dispatch_delivered`); n != 0 {
		t.Fatalf("dispatch_delivered holds %d sends past the key horizon, want their partition dropped", n)
	}
	if got := metric(t, b.reg, "sluice_lifecycle_partitions_dropped_total", "dispatch_deliveries"); got < 5 {
		t.Errorf("dispatch_deliveries partitions dropped = %v, want the 4 daily and the first minute's", got)
	}
}

// Dead letters are deleted only once replayed, and only past the payload
// horizon from their replay; one never replayed stays however old it is,
// and a replay of a deleted one is answered expired, not unknown.
func TestOnlyReplayedDeadLettersAgeOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.pass(t)
	letter := func(offset int, replayedAt *time.Time) int64 {
		var id int64
		err := b.pool.QueryRow(ctx, `INSERT INTO dead_letters (consumer_group, topic, partition, "offset", headers, reason, attempts,
			first_failed_at, last_failed_at, replayed_at) VALUES ('g', 't', 0, $1, '{}', 'poison', 3, $2, $2, $3) RETURNING id`,
			offset, b.clock().Add(-time.Hour), replayedAt).Scan(&id)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	at := b.clock()
	unresolved, replayed := letter(1, nil), letter(2, &at)
	b.advance(time.Minute)
	at2 := b.clock()
	recent := letter(3, &at2)

	b.advance(90 * time.Second) // the first replay 2.5 minutes ago, the second 1.5: payload horizon 2 minutes
	if r := b.pass(t); r.DeadLettersDeleted != 1 {
		t.Fatalf("pass: %+v, want the dead letter replayed past the horizon deleted", r)
	}
	for id, want := range map[int64]int{unresolved: 1, replayed: 0, recent: 1} {
		if n := b.count(t, `SELECT count(*) FROM dead_letters WHERE id = $1`, id); n != want {
			t.Errorf("dead letter %d: %d rows, want %d", id, n, want)
		}
	}
	b.advance(365 * 24 * time.Hour)
	b.pass(t)
	if n := b.count(t, `SELECT count(*) FROM dead_letters WHERE id = $1`, unresolved); n != 1 {
		t.Fatalf("a dead letter never replayed was deleted a year on")
	}
	if got := metric(t, b.reg, "sluice_lifecycle_resolved_deleted_total", "dead_letters"); got != 2 {
		t.Errorf("sluice_lifecycle_resolved_deleted_total{table=dead_letters} = %v, want 2", got)
	}
	noHandler := func(string) (consumers.Handler, error) { return nil, errors.New("no handler in this test") }
	if err := consumers.ReplayDeadLetter(ctx, b.pool, replayed, noHandler); !errors.Is(err, consumers.ErrDeadLetterExpired) {
		t.Fatalf("replay of a deleted dead letter: %v, want ErrDeadLetterExpired", err)
	}
	if err := consumers.ReplayDeadLetter(ctx, b.pool, unresolved+1000, noHandler); err == nil || errors.Is(err, consumers.ErrDeadLetterExpired) {
		t.Fatalf("replay of an id never issued: %v, want does not exist", err)
	}
}

// Parked relay records likewise: deleted only once released, past the
// payload horizon from their release.
func TestOnlyReleasedParkedRecordsAgeOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.pass(t)
	park := func() int64 {
		var id int64
		if err := b.pool.QueryRow(ctx, `INSERT INTO cdc_parked (slot, lsn, reason) VALUES ('s', '0/1', 'too large') RETURNING id`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	kept, released, recent := park(), park(), park()
	if err := cdc.ReleaseParked(ctx, b.pool, released); err != nil {
		t.Fatal(err)
	}
	if err := cdc.ReleaseParked(ctx, b.pool, released); !errors.Is(err, cdc.ErrAlreadyReleased) {
		t.Fatalf("second release: %v, want ErrAlreadyReleased", err)
	}
	// Released "now" by the database's clock, which is days before the
	// manager's; the recent one is released at the manager's now.
	if _, err := b.pool.Exec(ctx, `UPDATE cdc_parked SET released_at = $2 WHERE id = $1`, recent, b.clock()); err != nil {
		t.Fatal(err)
	}
	if r := b.pass(t); r.ParkedDeleted != 1 {
		t.Fatalf("pass: %+v, want the record released days ago deleted", r)
	}
	for id, want := range map[int64]int{kept: 1, released: 0, recent: 1} {
		if n := b.count(t, `SELECT count(*) FROM cdc_parked WHERE id = $1`, id); n != want {
			t.Errorf("parked record %d: %d rows, want %d", id, n, want)
		}
	}
	b.advance(365 * 24 * time.Hour)
	if r := b.pass(t); r.ParkedDeleted != 1 || b.count(t, `SELECT count(*) FROM cdc_parked WHERE id = $1`, kept) != 1 {
		t.Fatalf("pass a year on: %+v, want the released one deleted and the one never released kept", r)
	}
	if err := cdc.ReleaseParked(ctx, b.pool, released); !errors.Is(err, cdc.ErrParkedExpired) {
		t.Fatalf("release of a deleted record: %v, want ErrParkedExpired", err)
	}
}

// With cleanup off the manager still makes partitions ahead, and removes
// nothing.
func TestNoCleanupKeepsEverything(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.m = lifecycle.New(lifecycle.Config{PayloadHorizon: 2 * time.Minute, KeyHorizon: 5 * time.Minute,
		Interval: time.Minute, Ahead: 2, Now: b.clock, NoCleanup: true}, b.pool, b.log(), nil)
	if r := b.pass(t); r.Created != 12 || r.Dropped != 0 || r.LegacyDropped {
		t.Fatalf("first pass without cleanup: %+v, want partitions created, nothing dropped", r)
	}
	tenant := uuid.NewString()
	b.accept(t, tenant, `{}`)
	b.advance(10 * time.Minute)
	if r := b.pass(t); r.Dropped != 0 || r.KeysDeleted != 0 || r.Created == 0 {
		t.Fatalf("pass past both horizons without cleanup: %+v", r)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_payloads p JOIN inbox i ON i.id = p.inbox_id WHERE i.tenant_id = $1`, tenant); n != 1 {
		t.Fatalf("payload removed with cleanup off")
	}
}

// The admin API's Idempotency-Keys are kept a day (IdempotencyHorizon,
// the manager's clock) and then deleted, in flight or done; their token
// is untouched.
func TestIdempotencyKeysAgeOutAfterTheirHorizon(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.configure(func(c *lifecycle.Config) { c.IdempotencyHorizon = 10 * time.Minute })
	var token string
	if err := b.pool.QueryRow(ctx, `INSERT INTO admin_tokens (role, token_sha256) VALUES ('operate', '\x01') RETURNING id::text`).Scan(&token); err != nil {
		t.Fatal(err)
	}
	key := func(name string, at time.Time, done bool) {
		var completed *time.Time
		if done {
			completed = &at
		}
		if _, err := b.pool.Exec(ctx, `INSERT INTO admin_idempotency_keys (token_id, key, operation, salt, request_sha256, created_at, completed_at, status)
			VALUES ($1, $2, 'create-tenant', '\x00', '\x00', $3, $4, 201)`, token, name, at, completed); err != nil {
			t.Fatal(err)
		}
	}
	key("old-done", b.clock().Add(-11*time.Minute), true)
	key("old-in-flight", b.clock().Add(-11*time.Minute), false)
	key("young", b.clock().Add(-9*time.Minute), true)
	if r := b.pass(t); r.IdempotencyKeysDeleted != 2 {
		t.Errorf("pass: %+v, want the two keys past the horizon deleted", r)
	}
	rows, err := b.pool.Query(ctx, `SELECT key FROM admin_idempotency_keys ORDER BY key`)
	if err != nil {
		t.Fatal(err)
	}
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(left) != 1 || left[0] != "young" {
		t.Errorf("keys left: %v %v, want [young]", left, err)
	}
	if n := b.count(t, `SELECT count(*) FROM admin_tokens WHERE id = $1`, token); n != 1 {
		t.Error("the token went with its keys")
	}
	if got := metric(t, b.reg, "sluice_lifecycle_aged_deleted_total", "admin_idempotency_keys"); got != 2 {
		t.Errorf("sluice_lifecycle_aged_deleted_total{table=admin_idempotency_keys} = %v, want 2", got)
	}
	if d := (lifecycle.Config{}).WithDefaults().IdempotencyHorizon; d != 24*time.Hour {
		t.Errorf("default idempotency horizon %s, want 24h", d)
	}
}

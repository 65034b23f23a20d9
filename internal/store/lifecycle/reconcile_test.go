package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// source makes a tenant and a Stripe source of it, and returns the
// source's id.
func (b *bundle) source(t *testing.T) string {
	t.Helper()
	var id string
	if err := b.pool.QueryRow(context.Background(), `WITH t AS (INSERT INTO tenants (name) VALUES ($1) RETURNING id)
		INSERT INTO sources (tenant_id, kind, account) SELECT id, 'stripe', 'acct_' || $1 FROM t RETURNING id::text`,
		uuid.NewString()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// run is a reconciliation run as ingest/reconcile records it.
type run struct {
	until       time.Time // zero: no window (a refused run's may be unknown)
	started     time.Time
	finished    time.Time // zero: it never ended (its process died)
	dry         bool
	err         string
	corrections int
}

// record stores r as a run of source, with its corrections, and returns
// its id.
func (b *bundle) record(t *testing.T, source string, r run) int64 {
	t.Helper()
	var until, finished *time.Time
	if !r.until.IsZero() {
		until = &r.until
	}
	if !r.finished.IsZero() {
		finished = &r.finished
	}
	var id int64
	if err := b.pool.QueryRow(context.Background(), `WITH r AS (
		INSERT INTO reconcile_runs (source_id, since, until, dry_run, started_at, finished_at, error)
		VALUES ($1, $2::timestamptz - interval '1 hour', $2, $3, $4, $5, $6) RETURNING id)
		, c AS (INSERT INTO reconcile_corrections (run_id, source_id, event_id, outcome)
		        SELECT r.id, $1, 'evt_' || n, 'recovered' FROM r, generate_series(1, $7) n)
		SELECT id FROM r`, source, until, r.dry, r.started, finished, r.err, r.corrections).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// watermark is the source's watermark as its runs record it (the query
// reconciliation resumed from before reconcile_positions, 00025); nil
// before any good run.
func (b *bundle) watermark(t *testing.T, source string) *time.Time {
	t.Helper()
	var at *time.Time
	if err := b.pool.QueryRow(context.Background(), `SELECT max(until) FROM reconcile_runs
		WHERE source_id = $1 AND finished_at IS NOT NULL AND error = '' AND NOT dry_run`, source).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// Reconciliation runs, and their corrections, go once they ended longer
// ago than the key horizon, failed, dry, refused or never ended alike; but
// each source keeps its newest good run however old, so the watermark its
// runs record never moves, even for a source whose runs have failed for
// longer than the horizon.
func TestReconcileRunsAgeOutButEachSourceKeepsItsWatermark(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.configure(func(c *lifecycle.Config) { c.KeyBatch = 2 }) // several batches
	b.pass(t)
	t0 := b.clock()
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ended := 10 * time.Second

	// A source reconciled all along: what is older than the horizon goes,
	// its newest good run is recent.
	active := b.source(t)
	activeGone := []int64{
		b.record(t, active, run{until: at(-time.Minute), started: t0, finished: at(ended), corrections: 2}),
		b.record(t, active, run{until: at(time.Minute), started: at(time.Minute), finished: at(time.Minute + ended), err: "budget", corrections: 1}),
		// A dry run is no watermark, though its window ends later.
		b.record(t, active, run{until: at(2 * time.Minute), started: at(2 * time.Minute), finished: at(2*time.Minute + ended), dry: true}),
		b.record(t, active, run{until: at(2 * time.Minute), started: at(2 * time.Minute)}), // died
	}
	// A run that began before the horizon but ended within it stays.
	long := b.record(t, active, run{until: t0, started: t0, finished: at(7 * time.Minute), err: "budget"})
	latest := b.record(t, active, run{until: at(8 * time.Minute), started: at(8 * time.Minute), finished: at(8*time.Minute + ended)})
	failing := b.record(t, active, run{until: at(9 * time.Minute), started: at(9 * time.Minute), finished: at(9*time.Minute + ended), err: "budget"})

	// A source whose runs stopped succeeding: its good run with the
	// greatest until stays, not the one that finished last (a manual run
	// of an older window), nor a failed, dry or dead one of a later window.
	stale := b.source(t)
	staleGone := []int64{
		b.record(t, stale, run{until: at(-10 * time.Minute), started: t0, finished: at(ended), corrections: 1}),
		b.record(t, stale, run{until: at(-30 * time.Minute), started: at(2 * time.Minute), finished: at(2*time.Minute + ended)}),
		b.record(t, stale, run{until: at(3 * time.Minute), started: at(3 * time.Minute), finished: at(3*time.Minute + ended), err: "unauthorized"}),
		b.record(t, stale, run{until: at(4 * time.Minute), started: at(4 * time.Minute), finished: at(4*time.Minute + ended), dry: true}),
		b.record(t, stale, run{until: at(4*time.Minute + ended), started: at(4*time.Minute + ended)}),                   // died
		b.record(t, stale, run{started: at(4 * time.Minute), finished: at(4 * time.Minute), err: "no API credentials"}), // refused
		// Without a window (none is written so today): no watermark either.
		b.record(t, stale, run{started: at(4 * time.Minute), finished: at(4*time.Minute + ended)}),
	}
	mark := b.record(t, stale, run{until: t0, started: at(time.Minute), finished: at(time.Minute + ended), corrections: 3})

	// A source never reconciled without error: nothing of it is kept.
	never := b.source(t)
	neverGone := []int64{
		b.record(t, never, run{until: t0, started: t0, finished: at(ended), err: "unauthorized", corrections: 1}),
		b.record(t, never, run{until: t0, started: t0, finished: at(ended), dry: true}),
	}

	before := map[string]*time.Time{active: b.watermark(t, active), stale: b.watermark(t, stale), never: b.watermark(t, never)}
	b.advance(10 * time.Minute) // the key horizon (5 minutes) ends at t0+5m
	r := b.pass(t)
	if r.ReconcileRunsDeleted != 13 || r.CorrectionsDeleted != 5 {
		t.Fatalf("pass: %+v, want 13 runs and their 5 corrections deleted", r)
	}
	runs := func(ids ...int64) int {
		return b.count(t, `SELECT count(*) FROM reconcile_runs WHERE id = ANY($1)`, ids)
	}
	gone := append(append(activeGone, staleGone...), neverGone...)
	if n := runs(gone...); n != 0 {
		t.Errorf("%d of the runs that ended before the horizon kept", n)
	}
	if n := runs(long, latest, failing, mark); n != 4 {
		t.Errorf("%d of the 4 runs to keep kept (ended within the horizon; the stale source's watermark)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_corrections WHERE run_id = ANY($1)`, gone); n != 0 {
		t.Errorf("%d corrections of deleted runs kept", n)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_corrections WHERE run_id = $1`, mark); n != 3 {
		t.Errorf("the kept run's corrections: %d, want 3", n)
	}
	for source, want := range before {
		if got := b.watermark(t, source); !sameTime(got, want) {
			t.Errorf("source %s: watermark %v after the pass, %v before", source, got, want)
		}
	}
	if got := metric(t, b.reg, "sluice_lifecycle_aged_deleted_total", "reconcile_runs"); got != 13 {
		t.Errorf("sluice_lifecycle_aged_deleted_total{table=reconcile_runs} = %v, want 13", got)
	}
	if got := metric(t, b.reg, "sluice_lifecycle_aged_deleted_total", "reconcile_corrections"); got != 5 {
		t.Errorf("sluice_lifecycle_aged_deleted_total{table=reconcile_corrections} = %v, want 5", got)
	}

	// A year on, each source's newest good run is all that is left.
	b.advance(365 * 24 * time.Hour)
	if r := b.pass(t); r.ReconcileRunsDeleted != 2 {
		t.Fatalf("pass a year on: %+v, want the 2 runs that are not a watermark deleted", r)
	}
	if n := runs(latest, mark); n != 2 {
		t.Fatalf("a year on, %d of the 2 sources' watermark runs kept", n)
	}
}

func sameTime(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

// Object links go past the links horizon, in batches, while a younger
// link stays. An event waiting for its object is not theirs to delete,
// however old: operators see it waiting, and reconciliation resolves it
// (ingest/lifecycle_test.go shows a refund after its link expired
// resolved); it goes with its key.
func TestLinksPastTheLinksHorizonAreDeletedAndWaitingEventsStay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.configure(func(c *lifecycle.Config) { c.LinksHorizon = 3 * time.Minute; c.KeyBatch = 2 })
	b.pass(t)
	ctx := context.Background()
	source := b.source(t)
	link := func(id string) {
		t.Helper()
		if _, err := b.pool.Exec(ctx, `INSERT INTO object_links (source_id, source_account, object_type, link_id, object_id, inbox_id, created_at)
			VALUES ($1, 'acct', 'invoice', $2, 'in_' || $2, 0, $3)`, source, id, b.clock()); err != nil {
			t.Fatal(err)
		}
	}
	links := func(ids ...string) int {
		return b.count(t, `SELECT count(*) FROM object_links WHERE source_id = $1 AND link_id = ANY($2)`, source, ids)
	}
	old := []string{"pi_1", "ch_1", "pi_2"}
	for _, id := range old {
		link(id)
	}
	waiting := b.wait(t, source, "pi_3")
	b.advance(2 * time.Minute)
	link("pi_young")

	b.advance(2 * time.Minute) // the old links 4 minutes old, the young one 2; keys live 5
	r := b.pass(t)
	if r.LinksDeleted != 3 || r.KeysDeleted != 0 {
		t.Fatalf("pass: %+v, want the 3 links past the links horizon deleted, no key", r)
	}
	if n := links(old...); n != 0 {
		t.Errorf("%d links past the links horizon kept", n)
	}
	if n := links("pi_young"); n != 1 {
		t.Errorf("the link within the links horizon deleted")
	}
	if n := b.count(t, `SELECT count(*) FROM inbox i JOIN inbox_waiting w ON w.inbox_id = i.id
		WHERE i.id = $1 AND i.status = 'waiting'`, waiting); n != 1 {
		t.Errorf("the waiting event older than the links horizon: %d waiting rows, want it kept", n)
	}
	if got := metric(t, b.reg, "sluice_lifecycle_aged_deleted_total", "object_links"); got != 3 {
		t.Errorf("sluice_lifecycle_aged_deleted_total{table=object_links} = %v, want 3", got)
	}

	b.advance(2 * time.Minute) // the waiting event's key past the key horizon
	if r := b.pass(t); r.KeysDeleted != 1 || r.LinksDeleted != 1 {
		t.Fatalf("pass 2 minutes on: %+v, want the waiting event's key and the last link deleted", r)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_waiting WHERE inbox_id = $1`, waiting); n != 0 {
		t.Errorf("waiting row kept after its key was deleted")
	}
}

// wait stores an event of source waiting for its object, as ingest does
// (sql/wait.sql) for a refund that names only its payment (via), at the
// clock's time, and returns its inbox id.
func (b *bundle) wait(t *testing.T, source, via string) int64 {
	t.Helper()
	var id int64
	err := b.pool.QueryRow(context.Background(), `WITH s AS (SELECT id, tenant_id, account FROM sources WHERE id = $1)
		, i AS (INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, status, body_sha256, received_at)
		        SELECT tenant_id, id, account, $2, 'charge.refunded', 'waiting', sha256('{}'::bytea), $3 FROM s RETURNING id)
		INSERT INTO inbox_waiting (inbox_id, tenant_id, source_id, source_account, object_type, via, topic, headers, created_at)
		SELECT i.id, s.tenant_id, s.id, s.account, 'invoice', ARRAY[$4::text], 'sluice.invoices', '{}', $3 FROM i, s RETURNING inbox_id`,
		source, "evt_"+uuid.NewString(), b.clock(), via).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The links horizon is the key horizon unless set; a negative one is
// refused, a shorter one allowed (it only sends more refunds to
// reconciliation).
func TestLinksHorizonDefaultsToTheKeyHorizon(t *testing.T) {
	t.Parallel()
	if got := (lifecycle.Config{KeyHorizon: 48 * time.Hour}).WithDefaults().LinksHorizon; got != 48*time.Hour {
		t.Errorf("links horizon with a 48h key horizon: %s, want 48h", got)
	}
	if got := (lifecycle.Config{}).WithDefaults().LinksHorizon; got != 30*24*time.Hour {
		t.Errorf("links horizon by default: %s, want the key horizon's 720h", got)
	}
	if err := (lifecycle.Config{LinksHorizon: -time.Hour}).Validate(); err == nil {
		t.Error("a negative links horizon accepted")
	}
	if err := (lifecycle.Config{LinksHorizon: time.Hour}).Validate(); err != nil {
		t.Errorf("a links horizon shorter than the key horizon: %v", err)
	}
}

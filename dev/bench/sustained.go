package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// sustained ingests at a steady rate (BENCH_SUSTAINED_RATE events/s,
// default 500; 0 for as fast as ingest takes them) for
// BENCH_SUSTAINED_MINUTES (default 12, 6 quick) while the lifecycle manager rolls
// partitions, with the horizons shrunk to fractions of the run, and records the
// database's size each minute: it should level off once the key horizon
// has passed, instead of growing with the events. It also splits the WAL
// between cleanup (the LSN differences around the manager's passes, less
// what ingest wrote meanwhile at its average rate) and everything else.
//
// Only ingest runs: the outbox, which the relay's own retention keeps
// (outside this step), is truncated each minute instead, so its growth does
// not hide the tables this step is about. WAL positions are the cluster's:
// other databases' writes on a shared server count in the totals.
func (b *bench) sustained(ctx context.Context) error {
	minutes, err := envInt("BENCH_SUSTAINED_MINUTES", pick(b.quick, 6, 12))
	if err != nil {
		return err
	}
	// The horizons follow the run's length (3 and 5 minutes, partitions of
	// one, in 12), so a short run also drops partitions and deletes keys
	// for most of its time: with and without cleanup then differ by the
	// deletions, not only by the passes.
	run := time.Duration(minutes) * time.Minute
	payloads, keys := (run / 4).Round(time.Second), (run * 5 / 12).Round(time.Second)
	interval := (payloads / 3).Round(time.Second)
	rate, err := envInt("BENCH_SUSTAINED_RATE", 500)
	if err != nil {
		return err
	}
	env := append(b.sluiceEnv(b.stageAddr, b.slot("unused")),
		"SLUICE_PAYLOAD_HORIZON="+payloads.String(), "SLUICE_KEY_HORIZON="+keys.String(),
		"SLUICE_PARTITION_INTERVAL="+interval.String(), "SLUICE_TOPIC_RETENTION="+payloads.String())
	// The migration's partitions are a day each (the default interval):
	// rows would stay in today's for the whole step. They are replaced by
	// partitions of the step's interval before ingest starts.
	if err := b.repartition(ctx, env); err != nil {
		return err
	}
	p, err := start("sluice-ingest-sustained", b.bin, []string{"ingest"}, env, b.stageAddr, b.adminAddr, "/readyz", b.outDir)
	if err != nil {
		return err
	}
	b.opsAddr = p.ops
	defer p.terminate()

	lsn := func() (wal float64) {
		_ = b.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn`).Scan(&wal)
		return wal
	}
	// Sizes in MiB: the database, the event keys (inbox), the payloads.
	size := func() (db, keys, payloads float64) {
		_ = b.pool.QueryRow(ctx, `SELECT pg_database_size(current_database()), pg_total_relation_size('inbox'),
			coalesce((SELECT sum(pg_total_relation_size(i.inhrelid)) FROM pg_inherits i
			WHERE i.inhparent IN ('inbox_payloads'::regclass, 'inbox_duplicates'::regclass, 'inbox_conflicts'::regclass)), 0)`).Scan(&db, &keys, &payloads)
		return db / (1 << 20), keys / (1 << 20), payloads / (1 << 20)
	}
	walStart := lsn()
	done := make(chan result, 1)
	go func() {
		g, d := b.generatorFor(b.stageAddr, conns), time.Duration(minutes)*time.Minute
		if rate == 0 { // as fast as ingest takes them: its throughput with (or without) cleanup
			done <- g.saturate(conns, d)
			return
		}
		done <- g.paced(rate, conns, d)
	}()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	var r result
	for m := 1; ; m++ {
		select {
		case r = <-done:
		case <-tick.C:
			if _, err := b.pool.Exec(ctx, `TRUNCATE outbox`); err != nil {
				return err
			}
			db, keys, payloads := size()
			b.results[fmt.Sprintf("sustained_db_mb_minute_%02d", m)] = db
			b.results[fmt.Sprintf("sustained_keys_mb_minute_%02d", m)] = keys
			b.results[fmt.Sprintf("sustained_payloads_mb_minute_%02d", m)] = payloads
			if m == 1 { // nothing aged out yet: what one event costs
				var events float64
				_ = b.pool.QueryRow(ctx, `SELECT count(*) FROM inbox`).Scan(&events)
				b.results["sustained_key_bytes_per_event"] = keys * (1 << 20) / max(1, events)
				b.results["sustained_payload_bytes_per_event"] = payloads * (1 << 20) / max(1, events)
			}
			log.Printf("sustained: minute %d, database %.1f MiB, keys %.1f MiB, payloads and delivery records %.1f MiB", m, db, keys, payloads)
			continue
		}
		break
	}
	walTotal := lsn() - walStart
	val, err := metricsOf(b.opsAddr)
	if err != nil {
		return err
	}
	passWAL, passSecs := val("sluice_lifecycle_pass_wal_bytes_total"), val("sluice_lifecycle_pass_seconds_total")
	elapsed := r.elapsed.Seconds()
	if rate > 0 {
		elapsed += 2 // the paced generator's warm-up is not in elapsed
	}
	cleanup := max(0, passWAL-walTotal/elapsed*passSecs)
	b.results["sustained_events_per_s"] = r.rate()
	b.results["sustained_p99_ms"] = ms(r.percentile(0.99))
	b.results["sustained_wal_mb"] = walTotal / (1 << 20)
	b.results["sustained_cleanup_wal_mb_upper"] = passWAL / (1 << 20)
	b.results["sustained_cleanup_wal_mb"] = cleanup / (1 << 20)
	b.results["sustained_cleanup_wal_ratio"] = cleanup / max(1, walTotal-cleanup)
	b.results["sustained_partitions_dropped"] = val(`sluice_lifecycle_partitions_dropped_total{table="inbox_payloads"}`) +
		val(`sluice_lifecycle_partitions_dropped_total{table="inbox_duplicates"}`) + val(`sluice_lifecycle_partitions_dropped_total{table="inbox_conflicts"}`)
	b.results["sustained_keys_deleted"] = val("sluice_lifecycle_keys_deleted_total")
	logStalls("sustained", r.slow)
	b.results["sustained_cleanup_on"] = 1
	if cleanupLabel() == "off" {
		b.results["sustained_cleanup_on"] = 0
	}
	b.note("sustained %d min at %s (cleanup %s; payloads %s, keys %s, partitions of %s): %.0f events/s, p99 %.1f ms, %d errors; WAL %.0f MiB, cleanup %.2f MiB (%.2f%% of the rest; passes' upper bound %.1f MiB over %.1f s)",
		minutes, rateLabel(rate), cleanupLabel(), payloads, keys, interval, r.rate(), ms(r.percentile(0.99)), r.errors, walTotal/(1<<20), cleanup/(1<<20),
		100*b.results["sustained_cleanup_wal_ratio"], passWAL/(1<<20), passSecs)
	return nil
}

// repartition drops the partitions of the lifecycle's tables and has
// `sluice lifecycle` make new ones of the interval env sets.
func (b *bench) repartition(ctx context.Context, env []string) error {
	rows, err := b.pool.Query(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent IN ('inbox_payloads'::regclass, 'inbox_duplicates'::regclass, 'inbox_conflicts'::regclass)`)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := b.pool.Exec(ctx, "DROP TABLE "+pgx.Identifier{n}.Sanitize()); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, b.bin, "lifecycle")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("sluice lifecycle: %w: %s", err, out)
	}
	log.Printf("sustained: %d daily partitions replaced: %s", len(names), strings.TrimSpace(string(out)))
	return nil
}

// envInt reads a whole number from the environment, def when unset.
func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number >= 0", name, v)
	}
	return n, nil
}

func rateLabel(rate int) string {
	if rate == 0 {
		return "full speed"
	}
	return fmt.Sprintf("%d/s", rate)
}

func cleanupLabel() string {
	if os.Getenv("BENCH_LIFECYCLE") == "off" {
		return "off"
	}
	return "on"
}

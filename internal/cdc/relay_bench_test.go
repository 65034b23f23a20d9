package cdc

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkRelayThroughput measures the relay alone on WAL written before it
// starts: 200,000 outbox rows in transactions of 1,000, from the slot to
// Kafka's acknowledgement. It reports rows/s; b.N is not used (one pass is
// the measurement). Guide only: `make bench` is the reference measurement.
func BenchmarkRelayThroughput(b *testing.B) {
	const rows, perTxn = 200_000, 1000
	bb := setup(b, "bench")
	ctx := context.Background()
	first := bb.startRelay(Config{}, bb.db.URL)
	first.waitStreaming(b)
	first.stop()
	recvSlot := bb.slot + "_recvlogical"
	if _, err := bb.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, recvSlot); err != nil {
		b.Fatal(err)
	}
	for range rows / perTxn {
		_, err := bb.pool.Exec(ctx, `INSERT INTO outbox (topic, key, headers, payload)
			SELECT $1, convert_to('tenant/thing/k' || (g % 64), 'UTF8'),
			       jsonb_build_object('ce_specversion', '1.0', 'ce_id', 'evt_' || g, 'ce_type', 'stripe.invoice.paid',
			           'ce_tenantid', '6c0e1c5e-7f3a-4d0b-9a57-0c3f1f0e9b11', 'ce_source', '/tenants/6c0e/sources/9a57',
			           'ce_partitionkey', 'tenant/thing/k' || (g % 64), 'ce_time', '2026-11-30T01:00:00Z', 'content-type', 'application/json'),
			       convert_to(repeat('x', 600), 'UTF8')
			FROM generate_series(1, $2::int) g`, bb.topic, perTxn)
		if err != nil {
			b.Fatal(err)
		}
	}
	// The same WAL through pg_recvlogical, Postgres's own client: the
	// decoding limit the relay is measured against.
	var end string
	if err := bb.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&end); err != nil {
		b.Fatal(err)
	}
	recvStart := time.Now()
	out, err := exec.Command("pg_recvlogical", "-d", bb.db.URL, "--slot", recvSlot, "--start", "--no-loop",
		"-o", "proto_version=1", "-o", "publication_names="+Config{}.WithDefaults().Publication, "-E", end, "-f", "/dev/null").CombinedOutput()
	recvElapsed := time.Since(recvStart)
	if _, dropErr := bb.pool.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, recvSlot); dropErr != nil {
		b.Fatal(dropErr)
	}
	if err != nil {
		b.Logf("pg_recvlogical: %v %s (no comparison)", err, out)
	}

	b.ResetTimer()
	start := time.Now()
	r := bb.startRelay(Config{}, bb.db.URL)
	for r.counter(b, "sluice_cdc_records_acked_total") < rows {
		if time.Since(start) > 5*time.Minute {
			b.Fatalf("only %v rows acknowledged after 5 minutes", r.counter(b, "sluice_cdc_records_acked_total"))
		}
		time.Sleep(5 * time.Millisecond) // polling for the end of the run
	}
	elapsed := time.Since(start)
	b.StopTimer()
	r.stop()
	b.ReportMetric(float64(rows)/elapsed.Seconds(), "rows/s")
	if err == nil {
		b.ReportMetric(float64(rows)/recvElapsed.Seconds(), "pg_recvlogical-rows/s")
	}
	b.ReportMetric(r.counter(b, "sluice_cdc_backpressure_waits_total"), "backpressure-waits")
}

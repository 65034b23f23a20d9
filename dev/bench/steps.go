package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// conns is how many concurrent clients the generator runs at saturation.
const conns = 64

func (b *bench) nullCeiling(context.Context) error {
	p, err := start("null", b.self, []string{"null-server", b.nullAddr}, nil, b.nullAddr, "", "/", b.outDir)
	if err != nil {
		return err
	}
	defer p.terminate()
	var rates []float64
	cpu := map[string][]float64{}
	for range b.runs() {
		before := b.cpu.sample(p)
		r := b.generatorFor(b.nullAddr, conns).saturate(conns, b.window())
		b.cpu.perEvent("null", before, b.cpu.sample(p).only("null", "generator"), float64(r.ok), cpu)
		rates = append(rates, r.rate())
		log.Printf("null: %.0f req/s (%d errors)", r.rate(), r.errors)
	}
	b.results["null_ceiling_per_s"] = median(rates)
	b.medians(cpu)
	return nil
}

func (b *bench) ingestPaused(ctx context.Context) error {
	p, err := b.startSluice("ingest", b.stageAddr, b.slot("unused"))
	if err != nil {
		return err
	}
	defer p.terminate()
	cpu := map[string][]float64{}
	if err := b.firstUseOfTypes(p, cpu); err != nil {
		return err
	}
	if os.Getenv("BENCH_PROFILE") != "" {
		go b.profile("ingest", b.opsAddr, b.window()-time.Second)
	}
	var rates []float64
	allocs := b.allocs(b.opsAddr)
	for range b.runs() {
		if err := b.quietPostgres(ctx, "ingest"); err != nil {
			return err
		}
		before, allocsBefore := b.cpu.sample(p), allocs()
		r := b.generatorFor(b.stageAddr, conns).saturate(conns, b.window())
		b.cpu.perEvent("ingest", before, b.cpu.sample(p).only("sluice", "postgres", "generator"), float64(r.ok), cpu)
		allocs().perEvent("ingest", allocsBefore, float64(r.ok), cpu)
		rates = append(rates, r.rate())
		log.Printf("ingest: %.0f events/s accepted, %d rejected, %d errors, p99 %.1f ms", r.rate(), r.rejected, r.errors, ms(r.percentile(0.99)))
	}
	b.results["ingest_events_per_s"] = median(rates)
	b.medians(cpu)
	b.logCommitStats(b.opsAddr)
	b.results["ingest_ratio_of_null"] = median(rates) / b.results["null_ceiling_per_s"]
	for _, rate := range []int{1000, pacedCompared} {
		before := b.cpu.sample(p)
		r := b.generatorFor(b.stageAddr, 4*conns).paced(rate, 4*conns, b.window())
		if rate == pacedCompared {
			// The warm-up's requests are served too, and counted here.
			b.cpu.perEvent(fmt.Sprintf("ingest_at_%d", rate), before, b.cpu.sample(p).only("sluice", "postgres", "generator"),
				float64(r.ok)+float64(rate)*pacedWarmup.Seconds(), cpu)
			b.medians(cpu)
		}
		b.results[fmt.Sprintf("ingest_p50_ms_at_%d", rate)] = ms(r.percentile(0.50))
		b.results[fmt.Sprintf("ingest_p99_ms_at_%d", rate)] = ms(r.percentile(0.99))
		log.Printf("ingest at %d/s: achieved %.0f/s, p50 %.2f ms, p99 %.2f ms, %d rejected, %d errors",
			rate, r.rate(), ms(r.percentile(0.5)), ms(r.percentile(0.99)), r.rejected, r.errors)
		logStalls(fmt.Sprintf("ingest at %d/s", rate), r.slow)
	}
	if err := b.nullAtRate(pacedCompared); err != nil {
		return err
	}
	b.results["ingest_peak_rss_mb"], b.results["ingest_peak_anon_rss_mb"] = p.peak(), p.peakAnonRSS()
	b.note("ingest alone peaked at %.0f MiB RSS, %.0f MiB of it anonymous (heap and stacks; the rest is the executable's pages)", p.peak(), p.peakAnonRSS())
	return nil
}

// pacedCompared is the rate at which ingest and the null server are also
// compared side by side, both paced: saturated, the null server answers four
// times as many requests a second as ingest, and a busier server spends less
// per request (more requests per wake-up and per system call), so the
// saturated ratio measures how busy each was as much as what each does.
const pacedCompared = 5000

// nullAtRate measures the null server's CPU per request paced at rate, with
// the connections of ingest's paced runs, when the null step ran.
func (b *bench) nullAtRate(rate int) error {
	if _, ran := b.results["null_ceiling_per_s"]; !ran {
		return nil
	}
	p, err := start("null", b.self, []string{"null-server", b.nullAddr}, nil, b.nullAddr, "", "/", b.outDir)
	if err != nil {
		return err
	}
	defer p.terminate()
	cpu := map[string][]float64{}
	before := b.cpu.sample(p)
	r := b.generatorFor(b.nullAddr, 4*conns).paced(rate, 4*conns, b.window())
	step := fmt.Sprintf("null_at_%d", rate)
	b.cpu.perEvent(step, before, b.cpu.sample(p).only("null", "generator"), float64(r.ok)+float64(rate)*pacedWarmup.Seconds(), cpu)
	b.medians(cpu)
	log.Printf("null server paced at %d/s: %.1f us of CPU per request (saturated: %.1f); ingest at the same pace: %.1f", rate,
		b.results[step+"_null_cpu_us_per_event"], b.results["null_null_cpu_us_per_event"], b.results[fmt.Sprintf("ingest_at_%d_sluice_cpu_us_per_event", rate)])
	return nil
}

// firstUseOfTypes sends one event of each tenant's own type (with
// BENCH_CATALOGUE_TRAFFIC) before the timed runs, and records what that
// first use costs (each type's schema is read and compiled once per
// process): the runs then measure the steady state, not a start-up cost
// that a short run would spread over its few events.
func (b *bench) firstUseOfTypes(p *proc, cpu map[string][]float64) error {
	if b.results["catalogue_types"] == 0 || os.Getenv("BENCH_CATALOGUE_TRAFFIC") != "1" {
		return nil
	}
	began, before := time.Now(), b.cpu.sample(p)
	n, err := b.generatorFor(b.stageAddr, conns).everyType(conns)
	if err != nil {
		return fmt.Errorf("first event of each type: %w", err)
	}
	b.cpu.perEvent("catalogue_first_use", before, b.cpu.sample(p).only("sluice", "postgres"), float64(n), cpu)
	b.results["catalogue_first_use_ms"] = float64(time.Since(began).Milliseconds())
	log.Printf("first event of each of %d types: %s", n, time.Since(began).Round(time.Millisecond))
	return nil
}

func (b *bench) ingestFull(ctx context.Context) error {
	p, err := b.startSluice("serve", b.stageAddr, b.slot("serve"))
	if err != nil {
		return err
	}
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	start, err := b.committed(ctx, adm)
	if err != nil {
		return err
	}
	b.settle(ctx, "whole pipeline")
	if err := b.quietPostgres(ctx, "whole pipeline"); err != nil {
		return err
	}
	if os.Getenv("BENCH_PROFILE") != "" {
		go b.profile("full", b.opsAddr, b.window()-time.Second)
	}
	before := b.cpu.sample(p)
	r := b.generatorFor(b.stageAddr, conns).saturate(conns, b.window())
	// What the pipeline spends on the accepted events includes what is still
	// queued when the load stops: the second sample waits until they are
	// applied and the e-mails they caused relayed.
	ended := time.Now()
	if err := b.waitApplied(ctx, adm, start, b.slot("serve"), 50*time.Millisecond); err != nil {
		return err
	}
	b.results["full_drain_s"] = time.Since(ended).Seconds()
	cpu := map[string][]float64{}
	b.cpu.perEvent("full", before, b.cpu.sample(p), float64(r.ok), cpu)
	b.medians(cpu)
	b.logConsumerStats(b.opsAddr, b.prefix+".credits")
	b.results["ingest_full_pipeline_events_per_s"] = r.rate()
	b.results["peak_rss_mb"] = p.peak()
	log.Printf("ingest with the whole pipeline: %.0f events/s, p99 %.1f ms; applied and relayed %.1f s after the load", r.rate(),
		ms(r.percentile(0.99)), b.results["full_drain_s"])
	p.terminate()
	// Its slot would make later steps relay this run's leftovers first.
	_, err = b.pool.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, b.slot("serve"))
	return err
}

// waitApplied waits until the credits group of the running stage applied
// every record past start, its committed offsets when it began, and then
// until the relay on slot confirmed the WAL written meanwhile.
func (b *bench) waitApplied(ctx context.Context, adm *kadm.Client, start int64, slot string, every time.Duration) error {
	if err := b.waitRelayed(ctx, slot); err != nil {
		return err
	}
	end, err := b.endOffsets(ctx, adm)
	if err != nil {
		return err
	}
	applied := `sluice_consumer_records_applied_total{group="` + b.prefix + `.credits"}`
	if err := waitEvery(ctx, 10*time.Minute, every, "the credits group to apply the load", func() (bool, error) {
		val, err := metricsOf(b.opsAddr)
		if err != nil {
			return false, err
		}
		return int64(val(applied)) >= end-start, nil
	}); err != nil {
		return err
	}
	return b.waitRelayed(ctx, slot)
}

// waitRelayed waits until slot's relay confirmed the WAL written so far.
func (b *bench) waitRelayed(ctx context.Context, slot string) error {
	var walEnd string
	if err := b.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&walEnd); err != nil {
		return err
	}
	return waitFor(ctx, 10*time.Minute, "the relay to catch up", func() (bool, error) {
		var caughtUp bool
		err := b.pool.QueryRow(ctx, `SELECT confirmed_flush_lsn >= $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1`,
			slot, walEnd).Scan(&caughtUp)
		return caughtUp, err
	})
}

// insertOutbox writes n invoice.paid rows in the record format, as ingest
// would, in transactions of chunk rows. Invoices are unique, customers are
// mapped, so each row is one grant for the consumers.
func (b *bench) insertOutbox(ctx context.Context, n, chunk int, tag string) error {
	var tenants, sources, accounts, customers []string
	for _, s := range b.sources {
		for _, c := range s.customers[:10] {
			tenants, sources, accounts, customers = append(tenants, s.tenantID), append(sources, s.sourceID), append(accounts, s.account), append(customers, c)
		}
	}
	const q = `
INSERT INTO outbox (topic, key, headers, payload)
SELECT $1,
       convert_to(t.tenant || '/invoice/in_' || $2 || '_' || g, 'UTF8'),
       jsonb_build_object('ce_specversion', '1.0', 'ce_id', 'evt_' || $2 || '_' || g,
           'ce_source', '/tenants/' || t.tenant || '/sources/' || t.source, 'ce_type', 'stripe.invoice.paid',
           'ce_subject', 'in_' || $2 || '_' || g, 'ce_tenantid', t.tenant, 'ce_sourceaccount', t.account,
           'ce_partitionkey', t.tenant || '/invoice/in_' || $2 || '_' || g, 'content-type', 'application/json'),
       convert_to(format('{"id":"evt_%s_%s","object":"event","type":"invoice.paid","created":%s,"data":{"object":{"id":"in_%s_%s","object":"invoice","customer":"%s","amount_paid":2000,"currency":"usd","status":"paid","description":"%s"}}}',
           $2, g, extract(epoch FROM now())::bigint, $2, g, t.customer, repeat('x', 640)), 'UTF8')
FROM generate_series($3::bigint, $4::bigint) g
JOIN LATERAL (SELECT ($5::text[])[1 + g % $9] AS tenant, ($6::text[])[1 + g % $9] AS source,
                     ($7::text[])[1 + g % $9] AS account, ($8::text[])[1 + g % $9] AS customer) t ON true`
	topic := b.prefix + ".invoices"
	for from := 1; from <= n; from += chunk {
		to := min(n, from+chunk-1)
		if _, err := b.pool.Exec(ctx, q, topic, tag, from, to, tenants, sources, accounts, customers, len(tenants)); err != nil {
			return fmt.Errorf("insert outbox rows: %w", err)
		}
	}
	return nil
}

func (b *bench) admin() (*kadm.Client, func(), error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(b.brokers, ",")...))
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

func (b *bench) endOffsets(ctx context.Context, adm *kadm.Client) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, b.prefix+".invoices")
	if err != nil {
		return 0, err
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			sum += o.Offset
		} else if err == nil && !errors.Is(o.Err, kerr.UnknownTopicOrPartition) {
			err = o.Err // a topic serve has not created yet counts as empty
		}
	})
	return sum, err
}

func (b *bench) committed(ctx context.Context, adm *kadm.Client) (int64, error) {
	offs, err := adm.FetchOffsets(ctx, b.prefix+".credits")
	// A broker formatted moments ago (a fresh clone's CI) has no group
	// coordinator until __consumer_offsets is made and led.
	for deadline := time.Now().Add(time.Minute); err != nil && kerr.IsRetriable(err) && time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
		offs, err = adm.FetchOffsets(ctx, b.prefix+".credits")
	}
	if err != nil {
		return 0, err
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.At > 0 {
			sum += o.At
		}
	})
	return sum, nil
}

// relayBacklog writes one backlog of outbox rows and lets the relay and
// pg_recvlogical read the same WAL, each from a slot of its own made before
// the rows. One round decides nothing on a shared machine (single rounds
// ranged from 0.5 to 1.5), so slots for more rounds are made too, and
// relayRounds reads them once the consumers' backlog step has read round
// 1's records (run now, theirs would reach the consumers as duplicates).
func (b *bench) relayBacklog(ctx context.Context) error {
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	for i := range b.rounds() {
		for _, slot := range []string{b.roundSlot("relay", i), b.roundSlot("recv", i)} {
			if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
				return err
			}
		}
	}
	b.relayRows = b.backlog()
	t := time.Now()
	if err := b.insertOutbox(ctx, b.relayRows, 5000, "rb"+b.run); err != nil {
		return err
	}
	log.Printf("relay: %d outbox rows written in %s", b.relayRows, time.Since(t).Round(time.Millisecond))
	if err := b.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&b.relayEnd); err != nil {
		return err
	}
	if err := b.createTopics(ctx); err != nil {
		return err
	}
	return b.relayRound(ctx, adm, 0)
}

// createTopics starts a relay on an empty slot and stops it once ready:
// the first relay on a fresh topic prefix spends seconds creating topics,
// which a deployment pays once and round 1 would count (it read 0.07 of
// pg_recvlogical while the rounds after it read 0.9 to 2.8).
func (b *bench) createTopics(ctx context.Context) error {
	slot := b.slot("topics")
	if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
		return err
	}
	p, err := b.startSluice("cdc", b.stageAddr, slot)
	if err != nil {
		return err
	}
	p.terminate()
	return b.dropSlot(ctx, slot)
}

// dropSlot drops a slot once its reader's walsender let go of it (it may
// outlive the reader by a moment on a busy machine).
func (b *bench) dropSlot(ctx context.Context, slot string) error {
	if err := waitFor(ctx, 30*time.Second, "slot "+slot+" to be released", func() (bool, error) {
		var active bool
		err := b.pool.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&active)
		return !active, err
	}); err != nil {
		return err
	}
	_, err := b.pool.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot)
	return err
}

// relayRounds reads the slots relayBacklog left for the other rounds.
func (b *bench) relayRounds(ctx context.Context) error {
	if b.relayEnd == "" {
		return nil // the relay step did not run
	}
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	for i := 1; i < b.rounds(); i++ {
		if err := b.relayRound(ctx, adm, i); err != nil {
			return err
		}
	}
	return b.skipRounds(ctx, adm)
}

// skipRounds moves every bench group already past round 1's records to the
// end of the invoices topic: the other rounds' records are the same rows
// again, a by-product of measuring the relay, and the later steps' consumers
// would otherwise spend their time on hundreds of thousands of duplicates.
// No consumer runs between steps, so the groups are empty.
func (b *bench) skipRounds(ctx context.Context, adm *kadm.Client) error {
	topic := b.prefix + ".invoices"
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return fmt.Errorf("end offsets of %s: %w", topic, err)
	}
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	for _, g := range groups.Groups() {
		if !strings.HasPrefix(g, b.prefix+".") {
			continue
		}
		committed, err := adm.FetchOffsets(ctx, g)
		if err != nil {
			return fmt.Errorf("offsets of group %s: %w", g, err)
		}
		to := kadm.Offsets{}
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Topic != topic || o.Err != nil {
				return
			}
			if end, ok := ends.Lookup(topic, o.Partition); ok && end.Err == nil {
				to.Add(kadm.Offset{Topic: topic, Partition: o.Partition, At: end.Offset, LeaderEpoch: -1})
			}
		})
		if len(to) == 0 {
			continue
		}
		if err := adm.CommitAllOffsets(ctx, g, to); err != nil {
			return fmt.Errorf("skip the relay rounds' records for group %s: %w", g, err)
		}
	}
	return nil
}

func (b *bench) rounds() int { return pick(b.quick, 3, 5) }

// relayRound reads round i's slots, the relay's then pg_recvlogical's, and
// records the results of the rounds so far.
func (b *bench) relayRound(ctx context.Context, adm *kadm.Client, i int) error {
	relay, err := b.relayOnce(ctx, adm, "relay", b.roundSlot("relay", i), b.relayRows, b.relayCPU)
	if err != nil {
		return err
	}
	recv, err := b.recvOnce(ctx, b.roundSlot("recv", i), b.relayEnd, b.relayRows, b.relayCPU)
	if err != nil {
		return err
	}
	b.relayRates, b.recvRates, b.relayRatios = append(b.relayRates, relay), append(b.recvRates, recv), append(b.relayRatios, relay/recv)
	log.Printf("relay round %d: relay %.0f rows/s, pg_recvlogical %.0f rows/s, ratio %.2f", i+1, relay, recv, relay/recv)
	b.medians(b.relayCPU)
	b.results["relay_rows_per_s"] = median(b.relayRates)
	b.results["pg_recvlogical_rows_per_s"] = median(b.recvRates)
	b.results["relay_ratio_of_pg_recvlogical"] = median(b.relayRatios)
	b.results["relay_ratio_of_pg_recvlogical_min"] = slices.Min(b.relayRatios)
	b.results["relay_ratio_of_pg_recvlogical_max"] = slices.Max(b.relayRatios)
	b.results["relay_rounds"] = float64(len(b.relayRatios))
	return nil
}

func (b *bench) roundSlot(reader string, round int) string {
	return b.slot(fmt.Sprintf("%s%d", reader, round))
}

// relayOnce runs the relay on slot until Kafka acknowledged n more records
// and returns its rows/s; its CPU per row goes under step's keys.
func (b *bench) relayOnce(ctx context.Context, adm *kadm.Client, step, slot string, n int, cpu map[string][]float64) (float64, error) {
	before, err := b.endOffsets(ctx, adm)
	if err != nil {
		return 0, err
	}
	p, err := b.startSluice("cdc", b.stageAddr, slot)
	if err != nil {
		return 0, err
	}
	defer p.terminate()
	var t0 time.Time
	var cpuBefore cpuSample
	if err := waitFor(ctx, time.Minute, "the relay to open its slot", func() (bool, error) {
		var active bool
		err := b.pool.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&active)
		t0, cpuBefore = time.Now(), b.cpu.sample(p)
		return active, err
	}); err != nil {
		return 0, err
	}
	if os.Getenv("BENCH_PROFILE") != "" && step != "relay" {
		go b.profile(strings.TrimSuffix(step, "_sluice"), b.opsAddr, 5*time.Second)
	}
	if err := waitFor(ctx, 10*time.Minute, "Kafka to acknowledge the backlog", func() (bool, error) {
		end, err := b.endOffsets(ctx, adm)
		return end-before >= int64(n), err
	}); err != nil {
		return 0, err
	}
	took := time.Since(t0)
	b.cpu.perEvent(step, cpuBefore, b.cpu.sample(p).only("sluice", "postgres", "postgres_server", "kafka", "kafka_aside"), float64(n), cpu)
	return float64(n) / took.Seconds(), nil
}

// recvOnce reads slot to endLSN with pg_recvlogical and returns its rows/s.
func (b *bench) recvOnce(ctx context.Context, slot, endLSN string, n int, cpu map[string][]float64) (float64, error) {
	bindir, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return 0, fmt.Errorf("pg_config: %w", err)
	}
	recv := exec.CommandContext(ctx, filepath.Join(strings.TrimSpace(string(bindir)), "pg_recvlogical"),
		"-d", b.dbURL, "--slot", slot, "--start", "--endpos", endLSN, "--no-loop",
		"-o", "proto_version=1", "-o", "publication_names=sluice_outbox", "-f", os.DevNull)
	t := time.Now()
	before := b.cpu.sample()
	if out, err := recv.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("pg_recvlogical: %w: %s", err, out)
	}
	took := time.Since(t)
	after := b.cpu.sample()
	after["pg_recvlogical"] = childCPU(recv.ProcessState)
	b.cpu.perEvent("pg_recvlogical", before, after.only("postgres", "pg_recvlogical"), float64(n), cpu)
	_, err = b.pool.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, slot)
	return float64(n) / took.Seconds(), err
}

func (b *bench) consumeBacklog(ctx context.Context) error {
	n, took, _, err := b.consumeOnce(ctx, "consume")
	if err != nil {
		return err
	}
	b.results["consume_events_per_s"] = float64(n) / took.Seconds()
	log.Printf("consumers: %d records applied in %s: %.0f events/s", n, took.Round(time.Millisecond), b.results["consume_events_per_s"])
	return nil
}

// consumeOnce starts `sluice consume` and waits until the credits group
// applied what the invoices topic holds past its committed offsets: the
// records applied and how long that took, its CPU per record under step's
// keys. The stage's metrics stay readable at b.opsAddr until it stops.
func (b *bench) consumeOnce(ctx context.Context, step string) (n int64, took time.Duration, batch float64, err error) {
	adm, done, err := b.admin()
	if err != nil {
		return 0, 0, 0, err
	}
	defer done()
	end, err := b.endOffsets(ctx, adm)
	if err != nil {
		return 0, 0, 0, err
	}
	start0, err := b.committed(ctx, adm)
	if err != nil {
		return 0, 0, 0, err
	}
	p, err := b.startSluice("consume", b.stageAddr, b.slot("unused"))
	if err != nil {
		return 0, 0, 0, err
	}
	defer p.terminate()
	// Time from the moment the group is Stable (members joined, partitions
	// assigned), so joining is not counted but the first batches are.
	var t0 time.Time
	var cpuBefore cpuSample
	allocs := b.allocs(b.opsAddr)
	var allocsBefore heapAllocs
	if err := waitFor(ctx, time.Minute, "the credits group to be stable", func() (bool, error) {
		groups, err := adm.DescribeGroups(ctx, b.prefix+".credits")
		if err != nil {
			return false, err
		}
		g := groups[b.prefix+".credits"]
		t0, cpuBefore, allocsBefore = time.Now(), b.cpu.sample(p), allocs()
		return g.State == "Stable" && len(g.Members) > 0, nil
	}); err != nil {
		return 0, 0, 0, err
	}
	if os.Getenv("BENCH_PROFILE") != "" {
		go b.profile(strings.TrimSuffix(step, "_sluice"), b.opsAddr, 8*time.Second)
	}
	// Applied, not committed: offsets reach Kafka up to a second after
	// their batch, which would count against a run of seconds.
	want := end - start0
	applied := `sluice_consumer_records_applied_total{group="` + b.prefix + `.credits"}`
	// The ladder reads CPU, not the rate: its scrapes are fewer, so less
	// of the stage's CPU is the bench's reading of /metrics.
	every := 50 * time.Millisecond
	if strings.HasPrefix(step, "ladder") {
		every = 250 * time.Millisecond
	}
	if err := waitEvery(ctx, 15*time.Minute, every, "the credits group to catch up", func() (bool, error) {
		val, err := metricsOf(b.opsAddr)
		if err != nil {
			return false, err
		}
		n = int64(val(applied))
		return n >= want, nil
	}); err != nil {
		return 0, 0, 0, err
	}
	took = time.Since(t0)
	cpu := map[string][]float64{}
	allocs().perEvent(step, allocsBefore, float64(n), cpu)
	b.cpu.perEvent(step, cpuBefore, b.cpu.sample(p).only("sluice", "postgres", "postgres_server", "kafka", "kafka_aside"), float64(n), cpu)
	b.medians(cpu)
	b.logConsumerStats(b.opsAddr, b.prefix+".credits")
	if val, err := metricsOf(b.opsAddr); err == nil {
		if batches := val(`sluice_consumer_batch_seconds_count{group="` + b.prefix + `.credits"}`); batches > 0 {
			batch = val(applied) / batches
		}
	}
	return n, took, batch, nil
}

// relayLatency inserts outbox rows at 5,000/s while the relay runs and reads
// them back from Kafka: commit (row created) to visible to a consumer.
func (b *bench) relayLatency(ctx context.Context) error {
	p, err := b.startSluice("cdc", b.stageAddr, b.slot("relay"))
	if err != nil {
		return err
	}
	defer p.terminate()
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(b.brokers, ",")...), kgo.ConsumeTopics(b.prefix+".invoices"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.FetchMaxWait(10*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	// Make sure the reader sits at the end before writing.
	if err := cl.Ping(ctx); err != nil {
		return err
	}
	seenCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	seen := map[int64]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for seenCtx.Err() == nil {
			fetches := cl.PollFetches(seenCtx)
			now := time.Now()
			mu.Lock()
			fetches.EachRecord(func(r *kgo.Record) {
				for _, h := range r.Headers {
					if h.Key == "sluice_outboxid" {
						id, _ := strconv.ParseInt(string(h.Value), 10, 64)
						seen[id] = now
					}
				}
			})
			mu.Unlock()
		}
	}()
	// The slot may hold what earlier steps wrote (the consume step's e-mail
	// intents): latency is measured from a relay that has caught up.
	if err := b.waitRelayed(ctx, b.slot("relay")); err != nil {
		return err
	}
	time.Sleep(time.Second) // let the reader's first fetch settle at the end offset
	tag := "rl" + b.run
	const rate, tick = 5000, 10 * time.Millisecond
	perTick := int(rate * tick / time.Second)
	var first int64
	_ = b.pool.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM outbox`).Scan(&first)
	// The first seconds of a paced load pay for connections and metadata
	// on every side (the relay's producer, the reader's fetch sessions):
	// rows of the warm-up are written but not measured.
	const warmup = 3 * time.Second
	syscall.Sync() // see paced
	measureFrom := time.Now().Add(warmup)
	deadline := measureFrom.Add(b.window())
	next := time.Now()
	for i := 0; time.Now().Before(deadline); i++ {
		if err := b.insertOutbox(ctx, perTick, perTick, fmt.Sprintf("%s_%d", tag, i)); err != nil {
			return err
		}
		next = next.Add(tick)
		time.Sleep(time.Until(next))
	}
	var last int64
	_ = b.pool.QueryRow(ctx, `SELECT max(id) FROM outbox`).Scan(&last)
	_ = waitFor(ctx, time.Minute, "the rows to reach Kafka", func() (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		_, ok := seen[last]
		return ok, nil
	})
	stopReading()
	wg.Wait()
	rows, err := b.pool.Query(ctx, `SELECT id, created_at FROM outbox WHERE id > $1 AND id <= $2`, first, last)
	if err != nil {
		return err
	}
	var lat result
	// Every row's latency by commit time, to tell a stall from a spread.
	var csv strings.Builder
	csv.WriteString("created_unix_ms,latency_ms\n")
	for rows.Next() {
		var id int64
		var created time.Time
		if err := rows.Scan(&id, &created); err != nil {
			return err
		}
		if at, ok := seen[id]; ok && !created.Before(measureFrom) {
			lat.latencies = append(lat.latencies, at.Sub(created))
			fmt.Fprintf(&csv, "%d,%.1f\n", created.UnixMilli(), ms(at.Sub(created)))
		}
	}
	_ = os.WriteFile(filepath.Join(b.outDir, "relay_latency.csv"), []byte(csv.String()), 0o644)
	if len(lat.latencies) == 0 {
		return fmt.Errorf("no record came back")
	}
	b.results["relay_p50_ms_at_5000"] = ms(lat.percentile(0.5))
	b.results["relay_p99_ms_at_5000"] = ms(lat.percentile(0.99))
	log.Printf("relay latency over %d rows: p50 %.1f ms, p99 %.1f ms", len(lat.latencies), b.results["relay_p50_ms_at_5000"], b.results["relay_p99_ms_at_5000"])
	return nil
}

func (b *bench) waitConsumed(ctx context.Context, adm *kadm.Client, timeout time.Duration) error {
	return waitFor(ctx, timeout, "the credits group to catch up", func() (bool, error) {
		end, err := b.endOffsets(ctx, adm)
		if err != nil {
			return false, err
		}
		c, err := b.committed(ctx, adm)
		return c >= end, err
	})
}

// endToEnd paces signed webhooks at 2,000/s through `sluice serve` and
// measures from each 2xx to the grant it caused (the grant's processed_at,
// its transaction's start: a slight underestimate of the commit).
func (b *bench) endToEnd(ctx context.Context) error {
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	p, err := b.startSluice("serve", b.stageAddr, b.slot("e2e"))
	if err != nil {
		return err
	}
	defer p.terminate()
	if err := b.waitConsumed(ctx, adm, 10*time.Minute); err != nil {
		return err
	}
	// One stalled second decides a p99 of ten: like the other cheap steps,
	// the full run repeats this one and reports the medians.
	var p50s, p99s []float64
	for run := range b.runs() {
		lat, err := b.endToEndRun(ctx, adm, 2000, b.window(), run == 0)
		if err != nil {
			return err
		}
		p50s, p99s = append(p50s, ms(lat.percentile(0.5))), append(p99s, ms(lat.percentile(0.99)))
		log.Printf("e2e over %d grants: p50 %.1f ms, p99 %.1f ms", len(lat.latencies), p50s[run], p99s[run])
	}
	b.logConsumerStats(b.opsAddr, b.prefix+".credits")
	b.results["e2e_p50_ms_at_2000"] = median(p50s)
	b.results["e2e_p99_ms_at_2000"] = median(p99s)
	// A trickle: what a quiet hour's events wait (the relay's linger, for
	// one, must not hold a lone transaction).
	lat, err := b.endToEndRun(ctx, adm, 20, max(b.window(), 10*time.Second), false)
	if err != nil {
		return err
	}
	b.results["e2e_p50_ms_at_20"], b.results["e2e_p99_ms_at_20"] = ms(lat.percentile(0.5)), ms(lat.percentile(0.99))
	log.Printf("e2e at 20/s over %d grants: p50 %.1f ms, p99 %.1f ms", len(lat.latencies), b.results["e2e_p50_ms_at_20"], b.results["e2e_p99_ms_at_20"])
	b.results["peak_rss_mb"] = max(b.results["peak_rss_mb"], p.peak())
	return nil
}

// endToEndRun paces one window of webhooks and reads, for each 2xx, the
// grant it caused.
func (b *bench) endToEndRun(ctx context.Context, adm *kadm.Client, rate int, window time.Duration, profile bool) (result, error) {
	answered := map[string]time.Time{}
	var mu sync.Mutex
	g := b.generatorFor(b.stageAddr, 2*conns)
	g.onSuccess = func(ev sentEvent, at time.Time) {
		mu.Lock()
		if _, ok := answered[ev.eventID]; !ok {
			answered[ev.eventID] = at
		}
		mu.Unlock()
	}
	if profile && os.Getenv("BENCH_PROFILE") != "" {
		go b.profile("e2e", b.opsAddr, b.window()-time.Second)
	}
	began := time.Now()
	r := g.paced(rate, 2*conns, window)
	log.Printf("e2e load: %.0f events/s accepted, %d rejected, %d errors", r.rate(), r.rejected, r.errors)
	if err := b.waitConsumed(ctx, adm, 5*time.Minute); err != nil {
		return result{}, err
	}
	ids := make([]string, 0, len(answered))
	for id := range answered {
		ids = append(ids, id)
	}
	rows, err := b.pool.Query(ctx, `SELECT event_id, processed_at FROM credit_grants WHERE event_id = ANY($1)`, ids)
	if err != nil {
		return result{}, err
	}
	defer rows.Close()
	var lat result
	effects := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return result{}, err
		}
		lat.latencies = append(lat.latencies, at.Sub(answered[id]))
		effects[id] = at
	}
	if err := rows.Err(); err != nil {
		return result{}, err
	}
	if len(lat.latencies) == 0 {
		return result{}, fmt.Errorf("no grant came from the load")
	}
	if legs, err := b.legs(ctx, adm, began, answered, effects); err != nil {
		log.Printf("e2e legs: %v", err)
	} else {
		log.Printf("e2e legs over %d grants: %s", legs.n, legs)
	}
	return lat, nil
}

// legs splits end-to-end latency where the record entered Kafka (the
// relay's produce time, the record's timestamp): 2xx to produce is the relay
// reading the commit, produce to effect is Kafka, the fetch and the
// consumer's batch. It reads the topic afterwards, so it adds no load to the
// window it explains.
func (b *bench) legs(ctx context.Context, adm *kadm.Client, began time.Time, answered, effects map[string]time.Time) (legs, error) {
	topic := b.prefix + ".invoices"
	starts, err := adm.ListOffsetsAfterMilli(ctx, began.UnixMilli(), topic)
	if err != nil {
		return legs{}, err
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return legs{}, err
	}
	// Read from each partition's first record of the window to its end; a
	// partition the window did not reach starts at its end.
	at, want := map[int32]int64{}, map[int32]int64{}
	starts.Each(func(o kadm.ListedOffset) { at[o.Partition] = o.Offset })
	ends.Each(func(o kadm.ListedOffset) { want[o.Partition] = o.Offset })
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(b.brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AfterMilli(began.UnixMilli())))
	if err != nil {
		return legs{}, err
	}
	defer cl.Close()
	readCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var relay, consume result
	done := func() bool {
		for p, end := range want {
			if at[p] < end {
				return false
			}
		}
		return true
	}
	for !done() {
		fetches := cl.PollFetches(readCtx)
		if err := readCtx.Err(); err != nil {
			return legs{}, err
		}
		fetches.EachRecord(func(r *kgo.Record) {
			at[r.Partition] = r.Offset + 1
			for _, h := range r.Headers {
				if h.Key != envelope.HeaderID {
					continue
				}
				id := string(h.Value)
				if eff, ok := effects[id]; ok {
					relay.latencies = append(relay.latencies, r.Timestamp.Sub(answered[id]))
					consume.latencies = append(consume.latencies, eff.Sub(r.Timestamp))
				}
			}
		})
	}
	return legs{n: len(relay.latencies), relayP50: ms(relay.percentile(0.5)), relayP99: ms(relay.percentile(0.99)),
		consumeP50: ms(consume.percentile(0.5)), consumeP99: ms(consume.percentile(0.99))}, nil
}

// legs are end-to-end latency's two legs, in ms.
type legs struct {
	n                                          int
	relayP50, relayP99, consumeP50, consumeP99 float64
}

func (l legs) String() string {
	return fmt.Sprintf("2xx->produce p50 %.1f p99 %.1f ms; produce->effect p50 %.1f p99 %.1f ms", l.relayP50, l.relayP99, l.consumeP50, l.consumeP99)
}

var tpsLine = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)

// pgbench runs Postgres alone on copies of the inbox and outbox tables that
// no publication includes: what one event per transaction and 100 events per
// transaction cost here, to read ingest's figure against.
func (b *bench) pgbench(ctx context.Context) error {
	drop, err := b.pgbenchTables(ctx)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		key  string
		rows int
	}{{"pgbench_single_tps", 1}, {"pgbench_batch100_events_per_s", 100}} {
		var vals []float64
		cpu := map[string][]float64{}
		// Three rounds even in quick mode: the guard divides by this
		// baseline, and one 4-second round of 100-event transactions once
		// read 16 us of Postgres CPU per event against 41-43 in the others.
		for range max(b.runs(), 3) {
			rate, err := b.pgbenchRound(ctx, strings.TrimSuffix(strings.TrimSuffix(c.key, "_tps"), "_events_per_s"), c.rows, b.window(), cpu)
			if err != nil {
				return err
			}
			vals = append(vals, rate)
		}
		b.medians(cpu)
		b.results[c.key] = median(vals)
		log.Printf("pgbench %d event(s) per transaction: %.0f events/s", c.rows, median(vals))
	}
	return drop()
}

// pgbenchTables makes pgbench's copies of the inbox and outbox tables; drop
// removes them.
func (b *bench) pgbenchTables(ctx context.Context) (drop func() error, err error) {
	if _, err := b.pool.Exec(ctx, `CREATE TABLE bench_inbox (LIKE inbox INCLUDING ALL);
		CREATE TABLE bench_outbox (LIKE outbox INCLUDING ALL)`); err != nil {
		return nil, err
	}
	return func() error {
		_, err := b.pool.Exec(context.WithoutCancel(ctx), `DROP TABLE bench_inbox, bench_outbox`)
		return err
	}, nil
}

// pgbenchRound runs pgbench for window, after a quiet Postgres, each
// transaction writing rows events (an inbox row with a 1 KB body and its
// outbox row) to pgbenchTables' tables, and records Postgres's and
// pgbench's CPU per event under step. It returns the events per second.
func (b *bench) pgbenchRound(ctx context.Context, step string, rows int, window time.Duration, cpu map[string][]float64) (float64, error) {
	script := filepath.Join(b.outDir, fmt.Sprintf("pgbench_%d.sql", rows))
	body := fmt.Sprintf(`\set n random(1, 1000000000)
WITH i AS (INSERT INTO bench_inbox (tenant_id, source_id, source_account, event_id, event_type, status, body_sha256, body)
  SELECT gen_random_uuid(), gen_random_uuid(), 'acct', 'evt_' || :client_id || '_' || :n || '_' || g, 'invoice.paid', 'published',
         sha256(convert_to(repeat('x', 1000) || g, 'UTF8')), convert_to(repeat('x', 1000), 'UTF8')
  FROM generate_series(1, %d) g ON CONFLICT DO NOTHING RETURNING id)
INSERT INTO bench_outbox (topic, key, headers, payload, inbox_id)
  SELECT 'bench', '\x00', '{"ce_specversion":"1.0"}', convert_to(repeat('x', 1000), 'UTF8'), id FROM i;
`, rows)
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		return 0, err
	}
	bindir, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return 0, err
	}
	if err := b.quietPostgres(ctx, "pgbench"); err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(strings.TrimSpace(string(bindir)), "pgbench"), "-n", "-c", "16", "-j", "2",
		"-T", strconv.Itoa(int(window.Seconds())), "-f", script, b.dbURL)
	before := b.cpu.sample()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %w: %s", err, out)
	}
	after := b.cpu.sample()
	after["pgbench"] = childCPU(cmd.ProcessState)
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps: %s", out)
	}
	tps, _ := strconv.ParseFloat(string(m[1]), 64)
	// Events done: the rate times the window pgbench ran for.
	b.cpu.perEvent(step, before, after.only("postgres", "pgbench"), tps*float64(rows)*window.Seconds(), cpu)
	return tps * float64(rows), nil
}

// rssBacklog starts `sluice serve` with a large backlog waiting in its slot
// (and so, once relayed, in Kafka) and samples its memory until it drained.
func (b *bench) rssBacklog(ctx context.Context) error {
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, b.slot("rss")); err != nil {
		return err
	}
	n := b.bigBacklog()
	t := time.Now()
	if err := b.insertOutbox(ctx, n, 10000, "rss"+b.run); err != nil {
		return err
	}
	log.Printf("rss: %d-row backlog written in %s", n, time.Since(t).Round(time.Second))
	// Read before serve starts: its relay may publish before it answers
	// /readyz, and a later reading would wait for rows already counted.
	before, err := b.endOffsets(ctx, adm)
	if err != nil {
		return err
	}
	p, err := b.startSluice("serve", b.stageAddr, b.slot("rss"))
	if err != nil {
		return err
	}
	defer p.terminate()
	t = time.Now()
	if err := waitFor(ctx, 20*time.Minute, "the relay to publish the backlog", func() (bool, error) {
		end, err := b.endOffsets(ctx, adm)
		return end-before >= int64(n), err
	}); err != nil {
		return err
	}
	if err := b.waitConsumed(ctx, adm, 20*time.Minute); err != nil {
		return err
	}
	peak := p.peak()
	b.results["peak_rss_mb"] = max(b.results["peak_rss_mb"], peak)
	b.results["backlog_rows"] = float64(n)
	b.note("sluice serve drained a %d-event backlog (slot, then Kafka) in %s with a peak RSS of %.0f MiB",
		n, time.Since(t).Round(time.Second), peak)
	return nil
}

// profile saves a CPU profile of the stage at addr (BENCH_PROFILE=1), for
// `go tool pprof bin/sluice .run/bench/<name>.cpu.pprof`, with what the
// window allocated (<name>.allocs.pprof, read beside the CPU: a stage that
// exits when its work is done, the consumers' backlog, has nothing left to
// ask afterwards) and the live heap at its end.
func (b *bench) profile(name, addr string, d time.Duration) {
	allocs := make(chan struct{})
	go func() {
		defer close(allocs)
		b.saveProfile(fmt.Sprintf("http://%s/debug/pprof/allocs?seconds=%d", addr, int(d.Seconds())), name+".allocs.pprof")
	}()
	defer func() { <-allocs }()
	if !b.saveProfile(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())), name+".cpu.pprof") {
		return
	}
	// The live heap at the end of the window (after a collection): what
	// the collector's target is a multiple of.
	b.saveProfile(fmt.Sprintf("http://%s/debug/pprof/heap?gc=1", addr), name+".heap.pprof")
}

// saveProfile writes what url answers to the bench's output as file, and
// says whether it did.
func (b *bench) saveProfile(url, file string) bool {
	resp, err := http.Get(url)
	if err != nil {
		log.Printf("profile %s: %v", file, err)
		return false
	}
	defer resp.Body.Close()
	out := filepath.Join(b.outDir, file)
	f, err := os.Create(out)
	if err != nil {
		log.Printf("profile %s: %v", file, err)
		return false
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		log.Printf("profile %s: %v", file, err)
		return false
	}
	log.Printf("profile written: %s", out)
	return true
}

// metricsOf reads a stage's metrics; the returned func gives a sample's
// value by its name as exposed, labels included.
func metricsOf(addr string) (func(name string) float64, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	samples := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		// name{labels} value; label values may hold spaces, values do not.
		if i := strings.LastIndexByte(line, ' '); i > 0 && !strings.HasPrefix(line, "#") {
			samples[line[:i]], _ = strconv.ParseFloat(line[i+1:], 64)
		}
	}
	return func(name string) float64 { return samples[name] }, nil
}

// logConsumerStats prints a group's mean batch and transaction time: with
// processed_at taken when a batch's transaction begins, a record waits for
// its partition's previous batch, so this bounds end-to-end latency.
func (b *bench) logConsumerStats(addr, group string) {
	val, err := metricsOf(addr)
	if err != nil {
		return
	}
	l := `{group="` + group + `"}`
	batches := val("sluice_consumer_batch_seconds_count" + l)
	if batches == 0 {
		return
	}
	partitions := "" // builds before shared batch transactions lack it
	if n := val("sluice_consumer_batch_partitions_sum" + l); n > 0 {
		partitions = fmt.Sprintf(" from %.1f partitions", n/batches)
	}
	b.note("consumer group %s: %.0f batch transactions, mean %.1f records%s and %.1f ms each, %.1f ms of it waiting for a transaction slot", group, batches,
		val("sluice_consumer_records_applied_total"+l)/batches, partitions, 1000*val("sluice_consumer_batch_seconds_sum"+l)/batches,
		1000*val("sluice_consumer_transaction_wait_seconds_sum"+l)/batches)
}

// logCommitStats prints the mean group-commit batch size and transaction
// time, read from the stage's own metrics: what bounds ingest.
func (b *bench) logCommitStats(addr string) {
	val, err := metricsOf(addr)
	if err != nil {
		return
	}
	batches := val("sluice_ingest_commit_batch_size_count")
	if batches == 0 {
		return
	}
	b.note("ingest group commit: %.0f transactions, mean %.1f deliveries each, mean %.1f ms per transaction",
		batches, val("sluice_ingest_commit_batch_size_sum")/batches, 1000*val("sluice_ingest_commit_seconds_sum")/val("sluice_ingest_commit_seconds_count"))
}

// slot names a replication slot of this run: slot names are server-wide, so
// two benches (or a bench and a leftover) must not share one.
func (b *bench) slot(name string) string { return "bench_" + name + "_" + b.run }

// logStalls says in which seconds requests waited over 100 ms: a few
// seconds of many tell a stall (a checkpoint, a pause) from a spread.
func logStalls(what string, slow []time.Time) {
	if len(slow) == 0 {
		return
	}
	slices.SortFunc(slow, time.Time.Compare)
	perSecond := map[string]int{}
	var order []string
	for _, at := range slow {
		k := at.Format("15:04:05")
		if perSecond[k] == 0 {
			order = append(order, k)
		}
		perSecond[k]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s:%d", k, perSecond[k]))
	}
	log.Printf("%s: %d requests over 100 ms, by second due: %s", what, len(slow), strings.Join(parts, " "))
}

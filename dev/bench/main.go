// Command bench measures the Sluice pipeline on this machine, each figure
// beside a baseline measured in the same run (`make bench`; BENCH_QUICK=1
// for a short run; BENCH_ONLY=e2e,... for some steps; BENCH_SLUICE=path to
// measure another build). It starts sluice stages as separate processes against a
// database and topics of its own, drives them with a load generator, and
// prints a table and .run/bench/results.json.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/migrations"
)

type bench struct {
	// nullAddr and stageAddr are where the null server and the sluice stage
	// under test listen.
	nullAddr, stageAddr string
	// adminAddr is the stage's admin listener; opsAddr is where the running
	// stage serves /metrics and profiles (adminAddr, or stageAddr for a
	// build from before the admin listener).
	adminAddr, opsAddr string
	quick              bool
	run                string
	bin                string
	self               string
	adminURL           string
	dbName             string
	dbURL              string
	brokers            string
	secretKey          string
	prefix             string
	outDir             string
	pool               *pgxpool.Pool
	stmts              bool // BENCH_STATEMENTS: per-window statements (statements.go)
	ladderRoundN       int  // the ladder's round, from 0 (BENCH_LADDER_ROUNDS)
	store              tenancy.Store
	targets            []target // filled per ingest address
	sources            []benchSource
	results            map[string]float64
	notes              []string
	cpu                *meter
	// The relay's rounds: the backlog they read and what they measured.
	relayRows                          int
	relayEnd                           string
	relayRates, recvRates, relayRatios []float64
	relayCPU                           map[string][]float64
	// searchFilled: the search step's rows are in the inbox (the console
	// step reads them too).
	searchFilled bool
	// freshRuns are the fresh and river steps' rounds, for their table.
	freshRuns []freshRun
	// riverBin is the River comparator (dev/bench/river, built by
	// dev/bench.sh).
	riverBin string
}

type benchSource struct {
	tenantID, sourceID, account, secret string
	customers                           []string
	types                               []string // its tenant's own event types sent (BENCH_CATALOGUE_TRAFFIC)
}

// sizes of each step, full and quick.
func (b *bench) runs() int { return pick(b.quick, 1, 3) }
func (b *bench) window() time.Duration {
	return pick(b.quick, 4*time.Second, 10*time.Second)
}
func (b *bench) backlog() int    { return pick(b.quick, 40_000, 200_000) }
func (b *bench) bigBacklog() int { return pick(b.quick, 100_000, 1_000_000) }

func pick[T any](quick bool, q, full T) T {
	if quick {
		return q
	}
	return full
}

func main() {
	log.SetFlags(log.Ltime)
	if len(os.Args) == 3 && os.Args[1] == "null-server" {
		log.Fatal(nullServer(os.Args[2]))
	}
	if len(os.Args) > 1 && strings.HasSuffix(os.Args[1], "-floor") {
		if err := runFloor(os.Args[1], os.Args[2:]); err != nil {
			log.Fatal(err)
		}
		return
	}
	ctx := context.Background()
	b, err := setup(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer b.cleanup()
	began := time.Now()
	steps := []struct {
		key, name string
		fn        func(context.Context) error
	}{
		{"null", "null ceiling", b.nullCeiling},
		{"ingest", "ingest, relay and consumers paused", b.ingestPaused},
		{"full", "ingest, whole pipeline", b.ingestFull},
		{"relay", "relay backlog and pg_recvlogical", b.relayBacklog},
		{"consume", "consumers backlog", b.consumeBacklog},
		// Before the steps whose WAL could pass max_slot_wal_keep_size
		// and invalidate the rounds' slots (pgbench's and rss's wrote
		// more than 8 GB together).
		{"relay", "relay and pg_recvlogical, the other rounds", b.relayRounds},
		// After the relay's rounds (whose slots would read its WAL) and
		// before the steps that leave slots of their own.
		{"ladder", "the cost ladder: each stage beside its floor", b.ladder},
		// Databases and topics of their own, made and dropped per round.
		{"fresh", "fresh databases: sluice serve saturated with one tenant, a new database each round", b.fresh},
		{"river", "a River design beside Sluice, alternating rounds on fresh databases", b.versusRiver},
		{"latency", "relay latency at 5,000 rows/s", b.relayLatency},
		{"e2e", "end to end at 2,000 events/s", b.endToEnd},
		// Its tenants and endpoints are its own, disabled when it ends.
		{"deliver", "destinations: saturated with and without, 2xx -> delivered at 1,000/s, bad endpoints' isolation", b.deliver},
		{"pgbench", "pgbench baselines", b.pgbench},
		{"rss", "peak RSS under a backlog", b.rssBacklog},
		// Before sustained, whose partitions of minutes would not cover
		// its writes after it.
		{"reconcile", "reconcile a provider window of 1,000,000 events (quick: 100,000)", b.reconcile},
		{"sustained", "sustained ingest while partitions roll", b.sustained},
		{"neighbours", "noisy neighbours: ten tenants alone and beside a lock, poison, a flood, big pushes", b.neighbours},
		{"search", "admin search on a large inbox", b.adminSearch},
		{"console", "the console's pages over the search step's inbox", b.consolePages},
	}
	// BENCH_ONLY=null,ingest runs some steps (for profiling; the full
	// report needs them all).
	only := map[string]bool{}
	for _, k := range strings.Split(os.Getenv("BENCH_ONLY"), ",") {
		if k != "" {
			only[k] = true
		}
	}
	for _, s := range steps {
		if len(only) > 0 && !only[s.key] {
			continue
		}
		log.Printf("== %s", s.name)
		if err := s.fn(ctx); err != nil {
			b.cleanup()
			log.Fatalf("%s: %v", s.name, err)
		}
	}
	b.results["bench_seconds"] = time.Since(began).Seconds()
	b.cpuRatios()
	b.report()
	if path := os.Getenv("BENCH_GUARD"); path != "" {
		if err := b.guard(path); err != nil {
			b.cleanup()
			log.Fatal(err)
		}
	}
}

func setup(ctx context.Context) (*bench, error) {
	b := &bench{quick: os.Getenv("BENCH_QUICK") == "1", results: map[string]float64{}, relayCPU: map[string][]float64{}}
	b.run = time.Now().UTC().Format("0102150405")
	root, _ := os.Getwd()
	b.bin = filepath.Join(root, "bin/sluice")
	b.riverBin = filepath.Join(root, "bin/sluice-bench-river")
	// BENCH_SLUICE=path measures another build (an A/B of a change,
	// alternating runs on the same machine).
	if bin := os.Getenv("BENCH_SLUICE"); bin != "" {
		b.bin = bin
	}
	b.outDir = filepath.Join(root, ".run/bench")
	if err := os.MkdirAll(b.outDir, 0o755); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	b.self = self
	b.adminURL, b.brokers = os.Getenv("SLUICE_DATABASE_URL"), os.Getenv("SLUICE_KAFKA_BROKERS")
	if b.adminURL == "" || b.brokers == "" {
		return nil, fmt.Errorf("SLUICE_DATABASE_URL and SLUICE_KAFKA_BROKERS must be set (make bench sets them)")
	}
	if _, err := os.Stat(b.bin); err != nil {
		return nil, fmt.Errorf("%s missing: run make build", b.bin)
	}
	// BENCH_PORT picks the three loopback ports the bench listens on (it and
	// the next two), so two benches on one machine do not measure each other.
	port := 18090
	if p, err := strconv.Atoi(os.Getenv("BENCH_PORT")); err == nil {
		port = p
	}
	b.nullAddr, b.stageAddr, b.adminAddr = fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("127.0.0.1:%d", port+1), fmt.Sprintf("127.0.0.1:%d", port+2)
	b.prefix = "bench" + b.run
	b.dbName = "sluice_bench_" + b.run
	admin, err := pgx.Connect(ctx, b.adminURL)
	if err != nil {
		return nil, err
	}
	defer admin.Close(ctx)
	// Earlier interrupted runs may have left databases and slots behind;
	// one still in use belongs to a bench running now, and stays.
	rows, _ := admin.Query(ctx, `SELECT datname FROM pg_database d WHERE datname LIKE 'sluice_bench_%'
		AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`)
	stale, _ := pgx.CollectRows(rows, pgx.RowTo[string])
	for _, name := range stale {
		dropDatabase(ctx, admin, name)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+b.dbName); err != nil {
		return nil, err
	}
	u, _ := url.Parse(b.adminURL)
	u.Path = "/" + b.dbName
	b.dbURL = u.String()
	if b.pool, err = pg.Connect(ctx, b.dbURL, 16); err != nil {
		return nil, err
	}
	if err := pg.Migrate(ctx, b.pool, migrations.FS, discardLogger()); err != nil {
		return nil, err
	}
	if err := b.dropIndexes(ctx); err != nil {
		return nil, err
	}
	// Slots made before the relay starts (for pg_recvlogical, for the
	// backlogs) need the publication to exist already, since pgoutput looks
	// publications up as of the slot's start. The migrations make it from
	// 00035 on; an older schema (BENCH_SLUICE of an older build migrates
	// the same way) gets it here.
	if _, err := b.pool.Exec(ctx, `DO $$ BEGIN
		IF NOT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = 'sluice_outbox') THEN
			CREATE PUBLICATION sluice_outbox FOR TABLE outbox WITH (publish = 'insert');
		END IF;
	END $$`); err != nil {
		return nil, err
	}
	if b.secretKey, err = keyring.Generate(); err != nil {
		return nil, err
	}
	ring, _ := keyring.Parse(b.secretKey)
	b.store = tenancy.Store{Pool: b.pool, Ring: ring, Providers: kinds.Builtin()}
	if b.sources, err = b.newSources(ctx, "bench", 8); err != nil {
		return nil, err
	}
	n, err := catalogueSize()
	if err != nil {
		return nil, err
	}
	if err := b.declareCatalogue(ctx, n); err != nil {
		return nil, err
	}
	if b.cpu, err = b.newMeter(ctx); err != nil {
		return nil, err
	}
	if b.stmts, err = b.statementsOn(ctx); err != nil {
		return nil, err
	}
	log.Printf("bench database %s, topic prefix %s, %s mode", b.dbName, b.prefix, pick(b.quick, "quick", "full"))
	return b, nil
}

// newSources makes n tenants named name-0..., each with a Stripe source
// and 100 mapped customers.
func (b *bench) newSources(ctx context.Context, name string, n int) ([]benchSource, error) {
	return b.newSourcesWith(ctx, name, n, 100)
}

// newSourcesWith is newSources with customers mapped customers each.
func (b *bench) newSourcesWith(ctx context.Context, name string, n, customers int) ([]benchSource, error) {
	var sources []benchSource
	for i := range n {
		s := benchSource{account: fmt.Sprintf("acct_%s_%d", name, i), secret: fmt.Sprintf("whsec_%s_%s_%d", name, b.run, i)}
		var err error
		if s.tenantID, err = b.store.CreateTenant(ctx, fmt.Sprintf("%s-%d", name, i)); err != nil {
			return nil, err
		}
		if s.sourceID, err = b.store.CreateSource(ctx, tenancy.NewSource{TenantID: s.tenantID, Kind: "stripe", Account: s.account, Secret: s.secret}); err != nil {
			return nil, err
		}
		for c := range customers {
			cust := fmt.Sprintf("cus_%s_%d_%d", name, i, c)
			if _, err := b.store.CreateWorkspace(ctx, s.tenantID, cust, ""); err != nil {
				return nil, err
			}
			s.customers = append(s.customers, cust)
		}
		sources = append(sources, s)
	}
	return sources, nil
}

func (b *bench) cleanup() {
	if b.pool != nil {
		b.pool.Close()
		b.pool = nil
	}
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, b.adminURL)
	if err != nil {
		return
	}
	defer admin.Close(ctx)
	dropDatabase(ctx, admin, b.dbName)
	if adm, done, err := b.admin(); err == nil {
		if err := kafka.DeleteTopicsWithPrefix(ctx, adm, b.prefix+"."); err != nil {
			log.Printf("delete this run's topics: %v", err)
		}
		done()
	}
}

func dropDatabase(ctx context.Context, admin *pgx.Conn, name string) {
	_, _ = admin.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`, name)
	_, _ = admin.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, name)
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

// sluiceEnv is the environment of a sluice stage started by the bench.
func (b *bench) sluiceEnv(addr, slot string) []string {
	return append([]string{
		"SLUICE_DATABASE_URL=" + b.dbURL,
		"SLUICE_KAFKA_BROKERS=" + b.brokers,
		"SLUICE_SECRET_KEY=" + b.secretKey,
		"SLUICE_TOPIC_PREFIX=" + b.prefix,
		"SLUICE_HTTP_ADDR=" + addr,
		"SLUICE_ADMIN_ADDR=" + b.adminAddr,
		"SLUICE_SLOT=" + slot,
		"SLUICE_LOG_LEVEL=" + cmp.Or(os.Getenv("BENCH_LOG_LEVEL"), "warn"), // info: see what the stages did
		// The bench measures capacity, not the per-tenant limit.
		"SLUICE_TENANT_RATE=1000000",
		"SLUICE_TENANT_BURST=1000000",
		"SLUICE_PPROF=true",
	}, lifecycleEnv()...)
}

// lifecycleEnv maps the bench's lifecycle switches onto the stages'
// settings, so ingest can be measured with the lifecycle manager cleaning
// up and without (alternate the two in one sitting):
// BENCH_LIFECYCLE=off runs it with --no-lifecycle-cleanup (partitions are
// still created ahead, nothing is dropped or deleted); BENCH_LIFECYCLE_EVERY
// sets its pause between passes (a Go duration).
func lifecycleEnv() []string {
	var env []string
	switch v := os.Getenv("BENCH_LIFECYCLE"); v {
	case "", "on":
	case "off":
		env = append(env, "SLUICE_LIFECYCLE_CLEANUP=false")
	default:
		log.Fatalf("BENCH_LIFECYCLE=%q: want on or off", v)
	}
	if v := os.Getenv("BENCH_LIFECYCLE_EVERY"); v != "" {
		if _, err := time.ParseDuration(v); err != nil {
			log.Fatalf("BENCH_LIFECYCLE_EVERY: %v", err)
		}
		env = append(env, "SLUICE_LIFECYCLE_EVERY="+v)
	}
	return env
}

func (b *bench) startSluice(stage, addr, slot string) (*proc, error) {
	p, err := start("sluice-"+stage, b.bin, []string{stage}, b.sluiceEnv(addr, slot), addr, b.adminAddr, "/readyz/stages", b.outDir)
	if err == nil {
		b.opsAddr = p.ops
	}
	return p, err
}

func (b *bench) generatorFor(addr string, conns int) *generator {
	return b.generatorOf(addr, conns, b.sources)
}

// generatorOf sends to the given sources' ingest URLs at addr.
func (b *bench) generatorOf(addr string, conns int, sources []benchSource) *generator {
	var ts []target
	for _, s := range sources {
		ts = append(ts, target{url: "http://" + addr + "/v1/ingest/" + s.sourceID, secret: s.secret, customers: s.customers, types: s.types})
	}
	return newGenerator(ts, conns, b.run+fmt.Sprint(time.Now().UnixNano()%1e6))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (b *bench) note(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	b.notes = append(b.notes, line)
	log.Print(line)
}

func (b *bench) report() {
	keys := []struct{ key, label, unit string }{
		{"catalogue_types", "tenants' event types declared (BENCH_CATALOGUE)", "types"},
		{"catalogue_first_use_ms", "  first event of each, before the timed runs (BENCH_CATALOGUE_TRAFFIC)", "ms"},
		{"catalogue_first_use_sluice_cpu_us_per_event", "  Sluice CPU per first event of a type", "us"},
		{"null_ceiling_per_s", "null endpoint (HTTP + signing ceiling)", "req/s"},
		{"ingest_events_per_s", "ingest, relay+consumers paused, saturated", "events/s"},
		{"ingest_ratio_of_null", "  as a share of the null ceiling", "ratio"},
		{"ingest_p50_ms_at_1000", "ingest p50 at 1,000/s", "ms"},
		{"ingest_p99_ms_at_1000", "ingest p99 at 1,000/s", "ms"},
		{"ingest_p50_ms_at_5000", "ingest p50 at 5,000/s", "ms"},
		{"ingest_p99_ms_at_5000", "ingest p99 at 5,000/s", "ms"},
		{"ingest_peak_rss_mb", "ingest alone, peak RSS", "MiB"},
		{"ingest_peak_anon_rss_mb", "  of it anonymous (what the memory limit bounds)", "MiB"},
		{"ingest_full_pipeline_events_per_s", "ingest, whole pipeline running, saturated", "events/s"},
		{"full_drain_s", "  then applied and relayed after the load stopped", "s"},
		{"pgbench_single_tps", "pgbench: 1 event per transaction", "events/s"},
		{"pgbench_batch100_events_per_s", "pgbench: 100 events per transaction", "events/s"},
		{"relay_rows_per_s", "relay: backlog acknowledged by Kafka", "rows/s"},
		{"pg_recvlogical_rows_per_s", "pg_recvlogical on the same WAL", "rows/s"},
		{"relay_ratio_of_pg_recvlogical", "  relay as a share of pg_recvlogical (median of rounds)", "ratio"},
		{"relay_ratio_of_pg_recvlogical_min", "  lowest round", "ratio"},
		{"relay_ratio_of_pg_recvlogical_max", "  highest round", "ratio"},
		{"relay_rounds", "  rounds", ""},
		{"relay_p50_ms_at_5000", "relay commit -> consumer visible, p50 at 5,000/s", "ms"},
		{"relay_p99_ms_at_5000", "relay commit -> consumer visible, p99 at 5,000/s", "ms"},
		{"consume_events_per_s", "consumers (credits group) from a backlog", "events/s"},
		{"e2e_p50_ms_at_2000", "end to end 2xx -> effect, p50 at 2,000/s", "ms"},
		{"e2e_p99_ms_at_2000", "end to end 2xx -> effect, p99 at 2,000/s", "ms"},
		{"e2e_p50_ms_at_20", "end to end 2xx -> effect, p50 at 20/s", "ms"},
		{"e2e_p99_ms_at_20", "end to end 2xx -> effect, p99 at 20/s", "ms"},
		{"peak_rss_mb", "peak RSS of sluice serve", "MiB"},
		{"fresh_rounds", "fresh databases: rounds of sluice serve saturated by one tenant, a new database each", "rounds"},
		{"fresh_events_per_s", "  accepted, median of the rounds", "events/s"},
		{"fresh_events_per_s_min", "  lowest round", "events/s"},
		{"fresh_events_per_s_spread", "  highest round over the median", "ratio"},
		{"fresh_postgres_cpu_us_per_event", "  Postgres CPU per accepted event, median", "us"},
		{"fresh_postgres_cpu_spread", "  highest round over the median (target <= 1.3)", "ratio"},
		{"fresh_postgres_cpu_spread_below", "  the median over the lowest round (slow rounds in the majority)", "ratio"},
		{"fresh_sluice_cpu_us_per_event", "  Sluice CPU per accepted event, median", "us"},
		{"fresh_inbox_seq_scans_per_event_max", "  inbox seq scans per accepted event, highest round (target ~0)", "scans"},
		{"fresh_inbox_seq_tup_read_per_event_max", "  rows they read per accepted event, highest round", "rows"},
		{"river_rounds", "a River design beside Sluice: alternating pairs of fresh rounds", "pairs"},
		{"river_events_per_s", "  River design accepted, median", "events/s"},
		{"river_sluice_events_per_s", "  Sluice accepted, median", "events/s"},
		{"river_rate_ratio", "  Sluice / River accepted rate, median of the pairs (target >= 4)", "ratio"},
		{"river_rate_ratio_min", "  lowest pair (target >= 3)", "ratio"},
		{"river_total_cpu_us_per_event", "  River design's CPU per event: its process and Postgres", "us"},
		{"river_sluice_total_cpu_us_per_event", "  Sluice's: its process, Postgres and Kafka", "us"},
		{"river_sluice_kafka_cpu_us_per_event", "    of it Kafka's (its JIT and metadata threads apart: each round makes its topics)", "us"},
		{"river_cpu_ratio", "  Sluice / River CPU per event, median of the pairs (target <= 0.25)", "ratio"},
		{"river_cpu_ratio_max", "  highest pair", "ratio"},
		{"river_generator_cpu_us_per_event", "  the generator's CPU per event beside River", "us"},
		{"river_sluice_generator_cpu_us_per_event", "  beside Sluice", "us"},
		{"deliver_events_per_s", "whole pipeline saturated, an endpoint per tenant taking every event", "events/s"},
		{"deliver_without_events_per_s", "  the same windows' alternates without endpoints", "events/s"},
		{"deliver_ratio_of_without", "  with / without (target >= 0.7)", "ratio"},
		{"deliver_drain_s", "  every accepted event delivered, after the load stopped", "s"},
		{"deliver_sluice_cpu_us_per_delivery", "  Sluice CPU per delivery (beyond the same events without endpoints)", "us"},
		{"deliver_postgres_cpu_us_per_delivery", "  Postgres CPU per delivery (the same way)", "us"},
		{"deliver_kafka_cpu_us_per_delivery", "  Kafka CPU per delivery (the same way)", "us"},
		{"deliver_row_ops_per_delivery", "  row operations per delivery (rows inserted, updated and deleted in the destinations' tables)", "rows"},
		{"deliver_hot_update_share", "  of the deliveries' updates, heap-only (no index entry)", "ratio"},
		{"deliver_postgres_cpu_ratio_of_pgbench_row", "  Postgres CPU per delivery / per event of pgbench's 100-event transactions, in this step (target <= 2.5)", "ratio"},
		{"deliver_sluice_cpu_ratio_of_null_request", "  Sluice CPU per delivery / the null server's per request, in this step (target <= 3)", "ratio"},
		{"deliver_rabbitmq_sluice_cpu_us_per_delivery", "  RabbitMQ endpoints (a queue of a local node, publisher confirms): Sluice CPU per delivery, HTTP's plus the difference in alternating paced windows", "us"},
		{"deliver_rabbitmq_sluice_cpu_ratio_of_http", "    / HTTP's", "ratio"},
		{"deliver_rabbitmq_postgres_cpu_us_per_delivery", "    Postgres CPU per delivery (the node's own CPU is not counted)", "us"},
		{"deliver_kafka_sluice_cpu_us_per_delivery", "  Kafka endpoints (a topic of the bench's own cluster): Sluice CPU per delivery, the same way", "us"},
		{"deliver_kafka_sluice_cpu_ratio_of_http", "    / HTTP's", "ratio"},
		{"deliver_kafka_kafka_cpu_us_per_delivery", "    Kafka CPU per delivery (the pipeline's records and the endpoints' both)", "us"},
		{"deliver_http_filtered_sluice_cpu_us_per_delivery", "  HTTP endpoints with a filter expression over the body: Sluice CPU per delivery, the same way", "us"},
		{"deliver_http_filtered_sluice_cpu_ratio_of_http", "    / HTTP's without one", "ratio"},
		{"deliver_http_transformed_sluice_cpu_us_per_delivery", "  HTTP endpoints with a transformation (a wrapper of the event's data): Sluice CPU per delivery, the same way", "us"},
		{"deliver_http_transformed_sluice_cpu_ratio_of_http", "    / HTTP's without one", "ratio"},
		{"deliver_p50_ms_at_1000", "2xx -> arrival at the endpoint, p50 at 1,000/s", "ms"},
		{"deliver_p99_ms_at_1000", "2xx -> arrival at the endpoint, p99 at 1,000/s (target < 250)", "ms"},
		{"deliver_isolation_p99_ms_without_bad", "ten endpoints at 500/s in all, 2xx -> arrival p99", "ms"},
		{"deliver_isolation_p99_ms_with_bad", "  with a refusing and a 5 s endpoint on two more tenants", "ms"},
		{"deliver_isolation_p99_ratio", "  with / without (target <= 1.2)", "ratio"},
		{"deliver_undelivered_events", "  accepted events that never arrived (must be 0)", "events"},
		{"deliver_seconds", "  the destinations step's duration", "s"},
		{"neighbours_beyond_p99_ratio", "ten tenants' p99 2xx -> grant beside one sending far beyond its rate / alone (target <= 1.5)", "ratio"},
		{"neighbours_beyond_p99_ms_alone", "  the ten's p99 alone", "ms"},
		{"neighbours_beyond_p99_ms_with", "  beside the flood", "ms"},
		{"neighbours_beyond_accepted_per_s", "  the flood accepted (its tenant rate)", "events/s"},
		{"neighbours_beyond_refused_per_s", "  the flood refused (429, after authentication)", "req/s"},
		{"sustained_events_per_s", "sustained ingest while partitions roll (BENCH_SUSTAINED_RATE, 0: full speed)", "events/s"},
		{"sustained_cleanup_wal_ratio", "  cleanup WAL / other WAL", "ratio"},
		{"reconcile_window_events", "reconcile: events in the provider's window", "events"},
		{"reconcile_handled_events", "  of them of types the catalogue handles", "events"},
		{"reconcile_recovered_per_s", "  recovered (entered), per second of the run", "events/s"},
		{"reconcile_listing_requests", "  listing requests to the provider", "requests"},
		{"reconcile_listing_requests_per_handled", "  listing requests per handled event", "ratio"},
		{"reconcile_cpu_us_per_event", "  Sluice CPU per recovered event", "us"},
		{"admin_search_event_id_p99_ms", "admin search by provider event id, p99", "ms"},
		{"admin_search_object_id_p99_ms", "admin search by object id, p99", "ms"},
		{"admin_search_tenant_time_p99_ms", "admin search, one tenant over an hour, p99", "ms"},
		{"admin_search_p99_ms_at_1m_rows", "admin search p99, worst of the three, 1,000,000 inbox rows", "ms"},
		{"console_server_p95_ms", "console pages' server time p95, worst page, unscoped and scoped tokens (target < 100)", "ms"},
		{"console_navigation_p95_ms", "  Chromium's navigation to load p95, worst page (target < 300)", "ms"},
		{"bench_seconds", "bench duration", "s"},
	}
	var sb strings.Builder
	// No date: the table is copied into the manual, which states what is
	// (a commit message says when a figure was measured).
	fmt.Fprintf(&sb, "\nSluice bench, %s mode (medians of %d runs where repeated)\n\n", pick(b.quick, "quick", "full"), b.runs())
	fmt.Fprintf(&sb, "| measure | value | unit |\n|---|---:|---|\n")
	for _, k := range keys {
		v, ok := b.results[k.key]
		if !ok {
			continue
		}
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", k.label, format(v), k.unit)
	}
	b.cpuTable(&sb)
	b.ladderTable(&sb)
	b.freshTable(&sb)
	for _, n := range b.notes {
		fmt.Fprintf(&sb, "\n- %s", n)
	}
	fmt.Println(sb.String())
	_ = os.WriteFile(filepath.Join(b.outDir, "results.md"), []byte(sb.String()+"\n"), 0o644)
	// A ratio whose baseline step did not run (BENCH_ONLY) is not a number,
	// and encoding/json would refuse the whole file for it.
	for k, v := range b.results {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			delete(b.results, k)
		}
	}
	out, _ := json.MarshalIndent(b.results, "", "  ")
	if err := os.WriteFile(filepath.Join(b.outDir, "results.json"), out, 0o644); err != nil {
		log.Print(err)
	}
	log.Printf("wrote %s", filepath.Join(b.outDir, "results.json"))
}

func format(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v > 0 && v < 0.1: // three figures: a ratio such as listing requests per event
		return fmt.Sprintf("%.3g", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

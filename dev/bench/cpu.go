package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/dev/procfs"
)

// A step's rate says how fast the machine went; its CPU per event says what
// each process cost, which holds however busy the machine was and whoever
// else ran on it (the load generator shares the two cores). Both are read
// from /proc around the same window.

// meter names the processes whose CPU a step reads.
type meter struct {
	postmaster int // Postgres: the postmaster, its live children and the reaped ones
	kafka      int // the broker's JVM
	// scope, when set, reads "postgres" as the bench database's backends
	// only (the ladder step; pgscope.go), the server's whole CPU as
	// "postgres_server".
	scope *pgScope
}

// newMeter finds Postgres through one of its backends and Kafka through the
// pid file `make up` wrote.
func (b *bench) newMeter(ctx context.Context) (*meter, error) {
	var backend int
	if err := b.pool.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return nil, err
	}
	m := &meter{postmaster: procfs.Parent(backend)}
	if m.postmaster == 0 {
		return nil, fmt.Errorf("postgres: no postmaster above backend %d (is it on this machine?)", backend)
	}
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(b.outDir), "kafka", "kafka.pid"))
	if err == nil {
		m.kafka, _ = strconv.Atoi(strings.TrimSpace(string(raw)))
	}
	if m.kafka == 0 {
		log.Printf("kafka's pid file not found: its CPU is not measured")
	}
	return m, nil
}

// cpuSample is the CPU each named process had used at one moment.
type cpuSample map[string]time.Duration

// sample reads every process the step names: "postgres", "kafka",
// "generator" (this process: the load generator and the bench's own
// bookkeeping) and the given procs by name.
func (m *meter) sample(procs ...*proc) cpuSample {
	s := cpuSample{"generator": procfs.CPU(os.Getpid(), false)}
	pg := procfs.CPU(m.postmaster, true)
	for _, c := range procfs.Children(m.postmaster) {
		pg += procfs.CPU(c, false)
	}
	s["postgres"] = pg
	if m.scope != nil {
		s["postgres_server"], s["postgres"] = pg, m.scope.used()
	}
	if m.kafka != 0 {
		s["kafka"] = procfs.CPU(m.kafka, false)
		s["kafka_aside"] = m.kafkaAside()
	}
	for _, p := range procs {
		name := p.name
		if strings.HasPrefix(name, "sluice-") {
			name = "sluice"
		}
		s[name] += procfs.CPU(p.cmd.Process.Pid, false) // separate stages add up
	}
	return s
}

// kafkaAside is the broker's CPU in threads no event asks for: its JIT
// compilers (warming up for many minutes after a restart, long past the
// first run) and its metadata and controller threads (the bench's own topics
// created and deleted for every run). Within "kafka", reported apart so that
// a run can be read without them.
func (m *meter) kafkaAside() time.Duration {
	var d time.Duration
	for name, t := range procfs.ThreadCPU(m.kafka) {
		if kafkaAsideThread(name) {
			d += t
		}
	}
	return d
}

func kafkaAsideThread(name string) bool {
	return strings.Contains(name, "CompilerThre") || strings.Contains(name, "metadat") ||
		strings.HasPrefix(name, "quorum-controll") || strings.Contains(name, "-raft-")
}

// settle waits, up to a minute, until the broker's threads no event asks
// for are quiet (under 5% of a core over a second): a step started while it
// still creates the run's topics or compiles measures that, not the events.
func (b *bench) settle(ctx context.Context, step string) {
	if b.cpu.kafka == 0 {
		return
	}
	began := time.Now()
	for time.Since(began) < time.Minute && ctx.Err() == nil {
		before := b.cpu.kafkaAside()
		time.Sleep(time.Second)
		if b.cpu.kafkaAside()-before < 50*time.Millisecond {
			log.Printf("%s: the broker settled in %s", step, time.Since(began).Round(time.Second))
			return
		}
	}
	log.Printf("%s: the broker did not settle in a minute (JIT or metadata work); measuring anyway", step)
}

// quietPostgres vacuums the bench database, checkpoints and waits, up to a
// minute, for autovacuum to finish what earlier steps left it: the steps
// whose Postgres CPU is compared (ingest, pgbench, the ladder's rungs and
// floors) would otherwise count the checkpointer and the vacuum workers of
// other steps' rows. pgbench's 100-event baseline once read 27.8 and once
// 65.5 us per event for that. Waiting alone is not enough: the launcher
// starts a worker for the rows of the step before within its naptime, in
// the next window, which counts it (its backend is the bench database's).
// A VACUUM here pays that debt and resets the counts it starts workers for,
// so a window's autovacuum is for its own rows. Tables still empty are left
// alone: analysed empty, the planner would take them for empty as they
// fill within the window (the first ingest window's Postgres read 372
// against 75 us per event so). Call it before a window's first CPU sample:
// what it waits for is not the window's.
func (b *bench) quietPostgres(ctx context.Context, step string) error {
	rows, err := b.pool.Query(ctx, `SELECT format('%I.%I', schemaname, relname) FROM pg_stat_user_tables
		WHERE n_live_tup > 0 AND (n_dead_tup > 0 OR n_ins_since_vacuum > 0 OR n_mod_since_analyze > 0)`)
	if err != nil {
		return fmt.Errorf("tables to vacuum before %s: %w", step, err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("tables to vacuum before %s: %w", step, err)
	}
	if len(tables) > 0 {
		if _, err := b.pool.Exec(ctx, `VACUUM (ANALYZE) `+strings.Join(tables, ", ")); err != nil {
			return fmt.Errorf("vacuum before %s: %w", step, err)
		}
	}
	if _, err := b.pool.Exec(ctx, `CHECKPOINT`); err != nil {
		return fmt.Errorf("checkpoint before %s: %w", step, err)
	}
	began := time.Now()
	for time.Since(began) < time.Minute {
		var workers int
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`).Scan(&workers); err != nil {
			return err
		}
		if workers == 0 {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	log.Printf("%s: autovacuum still running after a minute; measuring anyway", step)
	return nil
}

// only keeps the named processes: a step reports those that work for it.
func (s cpuSample) only(names ...string) cpuSample {
	kept := cpuSample{}
	for _, n := range names {
		if v, ok := s[n]; ok { // postgres_server is read only in the ladder step
			kept[n] = v
		}
	}
	return kept
}

// perEvent turns two samples around a window into microseconds of CPU per
// event for each process, under keys <step>_<process>_cpu_us_per_event.
func (m *meter) perEvent(step string, before, after cpuSample, events float64, into map[string][]float64) {
	if events <= 0 {
		return
	}
	for name, t := range after {
		used := t - before[name]
		into[fmt.Sprintf("%s_%s_cpu_us_per_event", step, name)] = append(into[fmt.Sprintf("%s_%s_cpu_us_per_event", step, name)],
			float64(used.Microseconds())/events)
	}
}

// medians records the median of each key's values.
func (b *bench) medians(vals map[string][]float64) {
	for k, v := range vals {
		b.results[k] = median(v)
	}
}

// allocs reads a stage's heap allocations so far, in objects and bytes
// (Go's counters on its /metrics); 0 when they cannot be read. Bytes are
// what sets how often the collector runs, and, unlike CPU, they do not move
// with how busy the machine is.
func (b *bench) allocs(addr string) func() heapAllocs {
	return func() heapAllocs {
		val, err := metricsOf(addr)
		if err != nil {
			return heapAllocs{}
		}
		return heapAllocs{val("go_memstats_mallocs_total"), val("go_memstats_alloc_bytes_total")}
	}
}

// heapAllocs are a stage's allocations so far.
type heapAllocs struct{ objects, bytes float64 }

// perEvent records what was allocated since before, per event, as
// <step>_sluice_allocs_per_event and <step>_sluice_alloc_bytes_per_event.
func (a heapAllocs) perEvent(step string, before heapAllocs, events float64, into map[string][]float64) {
	into[step+"_sluice_allocs_per_event"] = append(into[step+"_sluice_allocs_per_event"], (a.objects-before.objects)/events)
	into[step+"_sluice_alloc_bytes_per_event"] = append(into[step+"_sluice_alloc_bytes_per_event"], (a.bytes-before.bytes)/events)
}

// childCPU is what an exited child of the bench (pgbench, pg_recvlogical)
// used.
func childCPU(state *os.ProcessState) time.Duration {
	if state == nil {
		return 0
	}
	return state.UserTime() + state.SystemTime()
}

// cpuSteps and cpuProcs lay out the CPU table: a row per saturated step, a
// column per process.
var (
	cpuSteps = []struct{ key, label string }{
		{"null", "null server, per request"},
		{"null_at_5000", "null server paced at 5,000/s, per request"},
		{"ingest", "ingest alone, per accepted event"},
		{"ingest_at_5000", "ingest alone paced at 5,000/s, per accepted event"},
		{"full", "whole pipeline, per accepted event"},
		{"deliver", "whole pipeline, an endpoint per tenant, per accepted event"},
		{"deliver_without", "  its alternate windows without endpoints, per accepted event"},
		{"deliver_null", "  null server beside them, per request"},
		{"deliver_pgbench", "  pgbench 100 events/tx beside them, per event"},
		{"relay", "relay backlog, per row"},
		{"pg_recvlogical", "pg_recvlogical, per row"},
		{"consume", "consumers backlog, per record"},
		{"pgbench_single", "pgbench 1 event/tx, per event"},
		{"pgbench_batch100", "pgbench 100 events/tx, per event"},
		{"reconcile", "reconcile, per recovered event"},
	}
	cpuProcs = []string{"sluice", "postgres", "kafka", "generator", "null", "pgbench", "pg_recvlogical"}
)

// cpuRatios derives the same-run ratios the cost targets are stated in.
func (b *bench) cpuRatios() {
	ratio := func(key, num, den string) {
		n, ok1 := b.results[num]
		d, ok2 := b.results[den]
		if ok1 && ok2 && d > 0 {
			b.results[key] = n / d
		}
	}
	ratio("ingest_sluice_cpu_ratio_of_null", "ingest_sluice_cpu_us_per_event", "null_null_cpu_us_per_event")
	ratio("ingest_sluice_cpu_ratio_of_null_at_5000", "ingest_at_5000_sluice_cpu_us_per_event", "null_at_5000_null_cpu_us_per_event")
	ratio("ingest_postgres_cpu_ratio_of_pgbench100", "ingest_postgres_cpu_us_per_event", "pgbench_batch100_postgres_cpu_us_per_event")
	// What a destination per event multiplies the pipeline's costs by:
	// the deliver step's windows with endpoints over its alternates
	// without (a same-run ratio, for the guard).
	ratio("deliver_sluice_cpu_ratio_of_without", "deliver_sluice_cpu_us_per_event", "deliver_without_sluice_cpu_us_per_event")
	ratio("deliver_postgres_cpu_ratio_of_without", "deliver_postgres_cpu_us_per_event", "deliver_without_postgres_cpu_us_per_event")
	if s, ok := b.results["full_sluice_cpu_us_per_event"]; ok {
		b.results["full_pipeline_cpu_us_per_event"] = s + b.results["full_postgres_cpu_us_per_event"] + b.results["full_kafka_cpu_us_per_event"]
		b.results["full_pipeline_cpu_us_per_event_kafka_aside_excluded"] = b.results["full_pipeline_cpu_us_per_event"] - b.results["full_kafka_aside_cpu_us_per_event"]
	}
}

// cpuTable prints the CPU each process spent per event, by step.
func (b *bench) cpuTable(sb *strings.Builder) {
	var rows []string
	for _, s := range cpuSteps {
		cells, any := "", false
		for _, p := range cpuProcs {
			v, ok := b.results[fmt.Sprintf("%s_%s_cpu_us_per_event", s.key, p)]
			if ok {
				cells += " " + format(v) + " |"
				any = true
			} else {
				cells += " |"
			}
		}
		if any {
			rows = append(rows, "| "+s.label+" |"+cells)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(sb, "\nCPU per event, microseconds (from /proc, medians of the runs)\n\n| step | %s |\n|---|%s\n",
		strings.Join(cpuProcs, " | "), strings.Repeat("---:|", len(cpuProcs)))
	for _, r := range rows {
		fmt.Fprintln(sb, r)
	}
	for _, k := range []struct{ key, label string }{
		{"ingest_sluice_cpu_ratio_of_null", "sluice per accepted event / null server per request"},
		{"ingest_sluice_cpu_ratio_of_null_at_5000", "both paced at 5,000/s: sluice per accepted event / null server per request"},
		{"ingest_postgres_cpu_ratio_of_pgbench100", "postgres per ingested event / per event in pgbench's 100-event transactions"},
		{"full_pipeline_cpu_us_per_event", "whole pipeline (sluice + postgres + kafka), us per event"},
		{"full_kafka_aside_cpu_us_per_event", "  of Kafka's, in its JIT compilers and metadata/controller threads (no event asks for these)"},
		{"full_pipeline_cpu_us_per_event_kafka_aside_excluded", "  whole pipeline without those"},
		{"deliver_sluice_cpu_ratio_of_without", "sluice per accepted event with an endpoint per tenant / without"},
		{"deliver_postgres_cpu_ratio_of_without", "postgres per accepted event with an endpoint per tenant / without"},
		{"ingest_sluice_allocs_per_event", "ingest allocations per event"},
		{"consume_sluice_allocs_per_event", "consumer allocations per event"},
		{"ingest_sluice_alloc_bytes_per_event", "ingest bytes allocated per event"},
		{"consume_sluice_alloc_bytes_per_event", "consumer bytes allocated per event"},
		{"ladder_consumers_sluice_sluice_allocs_per_event", "ladder consumers: allocations per record"},
		{"ladder_consumers_sluice_sluice_alloc_bytes_per_event", "ladder consumers: bytes allocated per record"},
	} {
		if v, ok := b.results[k.key]; ok {
			fmt.Fprintf(sb, "\n- %s: %s", k.label, format(v))
		}
	}
	fmt.Fprintln(sb)
}

// guard fails the run when a key regressed far outside noise against the
// baseline recorded in path: {"key": {"baseline": x, "max_factor": f}}, or
// passed a bound that holds whatever the baseline: {"key": {"max": m}}
// (a spread, or scans that should not happen at all). Only ratios measured
// in the same run belong there, so the guard holds on a machine of any
// speed.
func (b *bench) guard(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("bench guard: %w", err)
	}
	var limits map[string]struct {
		Baseline  float64 `json:"baseline"`
		MaxFactor float64 `json:"max_factor"`
		Max       float64 `json:"max"`
	}
	if err := json.Unmarshal(raw, &limits); err != nil {
		return fmt.Errorf("bench guard %s: %w", path, err)
	}
	var failed []string
	for key, l := range limits {
		v, ok := b.results[key]
		switch {
		case !ok:
			failed = append(failed, key+": not measured")
		case l.Max > 0 && v > l.Max:
			failed = append(failed, fmt.Sprintf("%s = %s, over its bound %g", key, format(v), l.Max))
		case l.Max > 0:
			log.Printf("bench guard: %s = %s (bound %g)", key, format(v), l.Max)
		case v > l.Baseline*l.MaxFactor:
			failed = append(failed, fmt.Sprintf("%s = %s, over %g x the baseline %s", key, format(v), l.MaxFactor, format(l.Baseline)))
		default:
			log.Printf("bench guard: %s = %s (baseline %s, limit %g x)", key, format(v), format(l.Baseline), l.MaxFactor)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("bench guard: %s", strings.Join(failed, "; "))
	}
	return nil
}

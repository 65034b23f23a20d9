package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/dev/bench/floor"
)

// The ladder step: each stage's CPU per event (its process, Postgres and
// Kafka together) beside a floor that does the stage's mandatory work and
// nothing else (dev/bench/floor), measured in the same run, and their
// ratio. The stages feed each other as in a deployment: the relay's rung
// reads the WAL the ingest rungs wrote, the consumers' rung reads the
// records the relay's rung sent.
//
// Rungs (keys ladder_<rung>_...):
//   - ingest, ingest_1tenant, ingest_at_1000: `sluice ingest` (relay and
//     consumers paused) against the ingest floor, saturated with the bench's
//     eight tenants, saturated with one, paced at 1,000 events/s with eight;
//   - relay: `sluice cdc` against pg_recvlogical (the relay's pgoutput
//     options) piped into the floor's producer, over the same WAL;
//   - consumers: `sluice consume` against Kafka's ConsumerPerformance over
//     the floor's records plus pgbench running the credits handler's
//     statements at the consumers' mean batch;
//   - pipeline: `sluice serve` saturated, counted until applied and
//     relayed, against the sum of the floors per event.

// ladderRate is the paced rungs' rate.
const ladderRate = 1000

// floorSuffix is appended to the topics the relay floor produces to, so
// its records reach no Sluice consumer.
const floorSuffix = ".floor"

func (b *bench) ladder(ctx context.Context) error {
	// The server may serve other databases meanwhile (a shared machine):
	// the rungs count this database's backends (pgscope.go).
	scope, err := newPGScope(ctx, b.cpu.postmaster, b.adminURL, b.dbName)
	if err != nil {
		return err
	}
	b.cpu.scope = scope
	defer func() {
		b.cpu.scope.close()
		b.cpu.scope = nil
	}()
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	// The relay rungs read what the ingest rungs write: their slots are
	// made first, and a throwaway relay creates the run's topics (a
	// deployment does that once).
	if err := b.createTopics(ctx); err != nil {
		return err
	}
	relaySlot, floorSlot := b.slot("ladder_relay"), b.slot("ladder_floor")
	for _, slot := range []string{relaySlot, floorSlot} {
		if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
			return err
		}
	}
	var firstRow int64
	if err := b.pool.QueryRow(ctx, `SELECT COALESCE(max(id), 0) FROM outbox`).Scan(&firstRow); err != nil {
		return err
	}
	if err := b.ladderIngest(ctx); err != nil {
		return err
	}
	var rows int
	var endLSN string
	if err := b.pool.QueryRow(ctx, `SELECT count(*), pg_current_wal_lsn()::text FROM outbox WHERE id > $1`, firstRow).Scan(&rows, &endLSN); err != nil {
		return err
	}
	if err := b.ladderRelay(ctx, adm, relaySlot, floorSlot, endLSN, rows); err != nil {
		return err
	}
	if err := b.ladderConsumers(ctx, adm, rows); err != nil {
		return err
	}
	if err := b.ladderPipeline(ctx, adm); err != nil {
		return err
	}
	b.ladderRatios()
	return nil
}

// ladderWindow is one measured window of the generator against addr.
type ladderWindow struct {
	rung    string
	sources []benchSource
	paced   bool
}

func (b *bench) ladderWindows() []ladderWindow {
	return []ladderWindow{
		{"ingest", b.sources, false},
		{"ingest_1tenant", b.sources[:1], false},
		{"ingest_at_1000", b.sources, true},
	}
}

// ladderIngest runs each ingest window against `sluice ingest`, then against
// the floor with the mean group commit Sluice made in that window.
func (b *bench) ladderIngest(ctx context.Context) error {
	p, err := b.startSluice("ingest", b.stageAddr, b.slot("unused"))
	if err != nil {
		return err
	}
	batches := map[string]float64{}
	cpu := map[string][]float64{}
	for _, w := range b.ladderWindows() {
		before, beforeBatch := b.cpu.sample(p), commitTotals(b.opsAddr)
		ok, err := b.ladderLoad(ctx, w)
		if err != nil {
			p.terminate()
			return err
		}
		b.cpu.perEvent("ladder_"+w.rung+"_sluice", before, b.cpu.sample(p).only("sluice", "postgres", "postgres_server"), ok, cpu)
		after := commitTotals(b.opsAddr)
		batches[w.rung] = (after[0] - beforeBatch[0]) / max(1, after[1]-beforeBatch[1])
		b.results["ladder_"+w.rung+"_commit_batch"] = batches[w.rung]
	}
	p.terminate()
	sourcesFile := filepath.Join(b.outDir, "ladder_sources.json")
	var srcs []floor.Source
	for _, s := range b.sources {
		srcs = append(srcs, floor.Source{ID: s.sourceID, Tenant: s.tenantID, Account: s.account, Secret: s.secret})
	}
	raw, _ := json.Marshal(srcs)
	if err := os.WriteFile(sourcesFile, raw, 0o600); err != nil {
		return err
	}
	for _, w := range b.ladderWindows() {
		batch := max(1, int(math.Round(batches[w.rung])))
		var env []string
		if os.Getenv("BENCH_PROFILE") != "" {
			env = []string{"BENCH_FLOOR_PROFILE=" + filepath.Join(b.outDir, "floor_"+w.rung+".cpu.pprof")}
		}
		f, err := start("floor", b.self, []string{"ingest-floor", b.stageAddr, b.dbURL, b.prefix + ".invoices", strconv.Itoa(batch), sourcesFile},
			env, b.stageAddr, "", "/healthz", b.outDir)
		if err != nil {
			return err
		}
		before := b.cpu.sample(f)
		ok, err := b.ladderLoad(ctx, w)
		after := b.cpu.sample(f)
		f.terminate()
		if err != nil {
			return err
		}
		b.cpu.perEvent("ladder_"+w.rung+"_floor", before, after.only("floor", "postgres", "postgres_server"), ok, cpu)
		log.Printf("ladder %s: floor with group commits of %d", w.rung, batch)
	}
	b.medians(cpu)
	return nil
}

// with is s with name set to d.
func (s cpuSample) with(name string, d time.Duration) cpuSample {
	s[name] = d
	return s
}

// ladderLoad sends one window and returns the events accepted (the paced
// warm-up's included: they are served and counted by the CPU samples).
func (b *bench) ladderLoad(ctx context.Context, w ladderWindow) (float64, error) {
	if err := b.quietPostgres(ctx, "ladder "+w.rung); err != nil {
		return 0, err
	}
	g := b.generatorOf(b.stageAddr, conns, w.sources)
	if !w.paced {
		r := g.saturate(conns, b.window())
		log.Printf("ladder %s: %.0f events/s, %d rejected, %d errors", w.rung, r.rate(), r.rejected, r.errors)
		return float64(r.ok), nil
	}
	r := g.paced(ladderRate, conns, b.window())
	log.Printf("ladder %s: %.0f events/s, %d rejected, %d errors", w.rung, r.rate(), r.rejected, r.errors)
	return float64(r.ok) + float64(ladderRate)*pacedWarmup.Seconds(), nil
}

// commitTotals reads ingest's group-commit counters: deliveries, batches.
func commitTotals(addr string) [2]float64 {
	val, err := metricsOf(addr)
	if err != nil {
		return [2]float64{}
	}
	return [2]float64{val("sluice_ingest_commit_batch_size_sum"), val("sluice_ingest_commit_batch_size_count")}
}

// ladderRelay reads the ingest rungs' WAL with `sluice cdc` on one slot and
// with pg_recvlogical into the floor's producer on the other.
func (b *bench) ladderRelay(ctx context.Context, adm *kadm.Client, relaySlot, floorSlot, endLSN string, rows int) error {
	b.settle(ctx, "ladder relay")
	cpu := map[string][]float64{}
	if _, err := b.relayOnce(ctx, adm, "ladder_relay_sluice", relaySlot, rows, cpu); err != nil {
		return err
	}
	if err := b.dropSlot(ctx, relaySlot); err != nil {
		return err
	}
	if err := b.floorTopics(ctx, adm); err != nil {
		return err
	}
	bindir, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return fmt.Errorf("pg_config: %w", err)
	}
	recv := exec.CommandContext(ctx, filepath.Join(strings.TrimSpace(string(bindir)), "pg_recvlogical"),
		"-d", b.dbURL, "--slot", floorSlot, "--start", "--endpos", endLSN, "--no-loop",
		"-o", "proto_version=2", "-o", "binary=true", "-o", "messages=true", "-o", "publication_names=sluice_outbox", "-f", "-")
	producer := exec.CommandContext(ctx, b.self, "relay-floor", b.brokers, floorSuffix)
	pipe, err := recv.StdoutPipe()
	if err != nil {
		return err
	}
	producer.Stdin = pipe
	var recvErr, prodOut strings.Builder
	recv.Stderr, producer.Stdout, producer.Stderr = &recvErr, &prodOut, &prodOut
	before := b.cpu.sample()
	if err := producer.Start(); err != nil {
		return err
	}
	if err := recv.Run(); err != nil {
		_ = producer.Process.Kill()
		return fmt.Errorf("pg_recvlogical: %w: %s", err, recvErr.String())
	}
	if err := producer.Wait(); err != nil {
		return fmt.Errorf("relay floor: %w: %s", err, prodOut.String())
	}
	after := b.cpu.sample()
	after["floor"] = childCPU(recv.ProcessState) + childCPU(producer.ProcessState)
	b.cpu.perEvent("ladder_relay_floor", before, after.only("floor", "postgres", "postgres_server", "kafka", "kafka_aside"), float64(rows), cpu)
	log.Printf("ladder relay: %d rows; floor: %s", rows, strings.TrimSpace(prodOut.String()))
	b.medians(cpu)
	if err := b.dropSlot(ctx, floorSlot); err != nil {
		return err
	}
	return nil
}

// floorTopics creates the floor's topics beside the run's, with as many
// partitions.
func (b *bench) floorTopics(ctx context.Context, adm *kadm.Client) error {
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		return err
	}
	for _, t := range topics.Sorted() {
		if !strings.HasPrefix(t.Topic, b.prefix+".") || strings.HasSuffix(t.Topic, floorSuffix) {
			continue
		}
		if _, err := adm.CreateTopic(ctx, int32(len(t.Partitions)), -1, nil, t.Topic+floorSuffix); err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
			return fmt.Errorf("create %s: %w", t.Topic+floorSuffix, err)
		}
	}
	return nil
}

// ladderConsumers applies the relay rung's records with `sluice consume`,
// then reads the floor's copy of them with Kafka's ConsumerPerformance and
// runs the credits handler's statements with pgbench at the consumers' mean
// batch.
func (b *bench) ladderConsumers(ctx context.Context, adm *kadm.Client, rows int) error {
	var grantsBefore, grantsAfter int64
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM credit_grants`).Scan(&grantsBefore); err != nil {
		return err
	}
	if err := b.quietPostgres(ctx, "ladder consumers"); err != nil {
		return err
	}
	n, _, batch, err := b.consumeOnce(ctx, "ladder_consumers_sluice")
	if err != nil {
		return err
	}
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM credit_grants`).Scan(&grantsAfter); err != nil {
		return err
	}
	grantShare := float64(grantsAfter-grantsBefore) / float64(n)
	b.results["ladder_consumers_batch"], b.results["ladder_consumers_grants_per_record"] = batch, grantShare
	cpu := map[string][]float64{}
	if err := b.consumerPerf(ctx, rows, cpu); err != nil {
		return err
	}
	if err := b.creditsPgbench(ctx, rows, batch, grantShare, cpu); err != nil {
		return err
	}
	b.medians(cpu)
	return nil
}

// consumerPerf reads the floor's invoices topic with ConsumerPerformance,
// twice: a tenth of the records, then all; the difference over the
// difference in records is Kafka's and the reader's CPU per record, a JVM's
// start and warm-up left out.
func (b *bench) consumerPerf(ctx context.Context, rows int, cpu map[string][]float64) error {
	script, err := filepath.Abs("dev/kafka/bin/kafka-run-class")
	if err != nil {
		return err
	}
	var used [2]cpuSample
	counts := [2]int{rows / 10, rows}
	for i, n := range counts {
		cmd := exec.CommandContext(ctx, script, "org.apache.kafka.tools.ConsumerPerformance",
			"--bootstrap-server", b.brokers, "--topic", b.prefix+".invoices"+floorSuffix, "--messages", strconv.Itoa(n),
			"--group", fmt.Sprintf("%s.floor-perf-%d", b.prefix, i), "--timeout", "60000")
		before := b.cpu.sample()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("ConsumerPerformance: %w: %s", err, out)
		}
		after := b.cpu.sample()
		used[i] = cpuSample{"floor": childCPU(cmd.ProcessState), "kafka": after["kafka"] - before["kafka"], "kafka_aside": after["kafka_aside"] - before["kafka_aside"]}
		log.Printf("ladder consumers: ConsumerPerformance read %d records: %s", n, lastLine(out))
	}
	b.cpu.perEvent("ladder_consumers_kafka_floor", used[0], used[1], float64(counts[1]-counts[0]), cpu)
	return nil
}

func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// creditsPgbench runs the credits handler's statements for rows records in
// transactions of batch records, grantShare of them making a grant, and
// records pgbench's and Postgres's CPU per record.
func (b *bench) creditsPgbench(ctx context.Context, rows int, batch, grantShare float64, cpu map[string][]float64) error {
	var customers []floor.Customer
	dbRows, err := b.pool.Query(ctx, `SELECT w.tenant_id::text, w.workspace_id::text, w.customer_id FROM workspace_customers w`)
	if err != nil {
		return err
	}
	for dbRows.Next() {
		var c floor.Customer
		if err := dbRows.Scan(&c.Tenant, &c.Workspace, &c.Customer); err != nil {
			return err
		}
		customers = append(customers, c)
	}
	if err := dbRows.Err(); err != nil {
		return err
	}
	sources := map[string]benchSource{}
	for _, s := range b.sources {
		sources[s.tenantID] = s
	}
	var picked []floor.Customer
	records := max(1, int(math.Round(batch)))
	for range max(1, int(math.Round(float64(records)*grantShare))) {
		c := customers[rand.IntN(len(customers))]
		for _, ok := sources[c.Tenant]; !ok; _, ok = sources[c.Tenant] {
			c = customers[rand.IntN(len(customers))]
		}
		c.Source, c.Account = sources[c.Tenant].sourceID, sources[c.Tenant].account
		picked = append(picked, c)
	}
	script := filepath.Join(b.outDir, "ladder_credits.sql")
	if err := os.WriteFile(script, []byte(floor.CreditsScript(picked, b.prefix+".invoices", b.prefix+".notifications")), 0o644); err != nil {
		return err
	}
	bindir, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return err
	}
	if err := b.quietPostgres(ctx, "ladder credits floor"); err != nil {
		return err
	}
	txs := max(1, rows/records)
	cmd := exec.CommandContext(ctx, filepath.Join(strings.TrimSpace(string(bindir)), "pgbench"), "-n", "-M", "prepared",
		"-c", "1", "-t", strconv.Itoa(txs), "-f", script, b.dbURL)
	before := b.cpu.sample()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgbench credits: %w: %s", err, out)
	}
	after := b.cpu.sample()
	after["floor"] = childCPU(cmd.ProcessState)
	b.cpu.perEvent("ladder_consumers_pg_floor", before.with("floor", 0), after.only("floor", "postgres", "postgres_server"), float64(txs*records), cpu)
	log.Printf("ladder consumers: pgbench ran %d transactions of %d records, %d grants each", txs, records, len(picked))
	return nil
}

// ladderPipeline runs `sluice serve` saturated and counts its CPU until the
// consumers applied the load and the relay confirmed the e-mails it caused.
func (b *bench) ladderPipeline(ctx context.Context, adm *kadm.Client) error {
	slot := b.slot("ladder_serve")
	p, err := b.startSluice("serve", b.stageAddr, slot)
	if err != nil {
		return err
	}
	defer func() {
		p.terminate()
		if err := b.dropSlot(context.WithoutCancel(ctx), slot); err != nil {
			log.Printf("ladder: %v", err)
		}
	}()
	// What earlier rungs left in the topic (the floor's records are on
	// topics of their own) is applied before the window.
	if err := b.waitPipeline(ctx, slot); err != nil {
		return err
	}
	start, err := b.committed(ctx, adm)
	if err != nil {
		return err
	}
	b.settle(ctx, "ladder pipeline")
	if err := b.quietPostgres(ctx, "ladder pipeline"); err != nil {
		return err
	}
	before := b.cpu.sample(p)
	r := b.generatorFor(b.stageAddr, conns).saturate(conns, b.window())
	if err := b.waitApplied(ctx, adm, start, slot); err != nil {
		return err
	}
	cpu := map[string][]float64{}
	b.cpu.perEvent("ladder_pipeline_sluice", before, b.cpu.sample(p).only("sluice", "postgres", "postgres_server", "kafka", "kafka_aside"), float64(r.ok), cpu)
	b.medians(cpu)
	log.Printf("ladder pipeline: %.0f events/s", r.rate())
	return nil
}

// ladderRungs are the table's rows: each rung's Sluice and floor keys.
var ladderRungs = []struct{ key, label string }{
	{"ingest", "ingest, 8 tenants, saturated"},
	{"ingest_1tenant", "ingest, 1 tenant, saturated"},
	{"ingest_at_1000", "ingest, 8 tenants, 1,000 events/s"},
	{"relay", "relay, per outbox row"},
	{"consumers", "consumers (credits), per record"},
	{"pipeline", "whole pipeline (sluice serve), per accepted event"},
}

// ladderRatios sums each rung's processes and divides Sluice's by the
// floor's: ladder_<rung>_sluice_us, _floor_us, _ratio.
func (b *bench) ladderRatios() {
	sum := func(prefix string, procs ...string) (float64, bool) {
		var total float64
		found := false
		for _, p := range procs {
			if v, ok := b.ladderCPU(prefix, p); ok {
				total, found = total+v, true
			}
		}
		return total, found
	}
	for _, r := range ladderRungs[:5] {
		s, ok1 := sum("ladder_"+r.key+"_sluice", "sluice", "postgres", "kafka")
		f, ok2 := sum("ladder_"+r.key+"_floor", "floor", "postgres", "kafka")
		if r.key == "consumers" {
			k, _ := sum("ladder_consumers_kafka_floor", "floor", "kafka")
			pg, _ := sum("ladder_consumers_pg_floor", "floor", "postgres")
			f, ok2 = k+pg, k > 0 && pg > 0
		}
		if ok1 && ok2 {
			b.results["ladder_"+r.key+"_sluice_us"], b.results["ladder_"+r.key+"_floor_us"] = s, f
			b.results["ladder_"+r.key+"_ratio"] = s / f
		}
	}
	// The pipeline's floor: an event is ingested once, relayed once with
	// each e-mail its grant caused, and consumed once.
	s, ok := sum("ladder_pipeline_sluice", "sluice", "postgres", "kafka")
	in, ok1 := b.results["ladder_ingest_floor_us"]
	relay, ok2 := b.results["ladder_relay_floor_us"]
	consume, ok3 := b.results["ladder_consumers_floor_us"]
	if ok && ok1 && ok2 && ok3 {
		f := in + relay*(1+b.results["ladder_consumers_grants_per_record"]) + consume
		b.results["ladder_pipeline_sluice_us"], b.results["ladder_pipeline_floor_us"] = s, f
		b.results["ladder_pipeline_ratio"] = s / f
	}
}

// ladderCPU is a process's CPU per event in a rung; Kafka's without its
// JIT compilers and metadata threads (kafkaAside), which no event asks
// for and which other users of a shared broker keep busy.
func (b *bench) ladderCPU(prefix, proc string) (float64, bool) {
	v, ok := b.results[prefix+"_"+proc+"_cpu_us_per_event"]
	if proc == "kafka" {
		v -= b.results[prefix+"_kafka_aside_cpu_us_per_event"]
	}
	return v, ok
}

// ladderTable prints the ladder: per rung Sluice's total, the floor's, the
// ratio, and what each total is made of.
func (b *bench) ladderTable(sb *strings.Builder) {
	if _, ok := b.results["ladder_ingest_ratio"]; !ok {
		return
	}
	fmt.Fprintf(sb, "\nCost ladder: CPU per event, microseconds, Sluice's stage beside a floor doing its mandatory work (same run)\n\n")
	fmt.Fprintf(sb, "| rung | sluice (process + postgres + kafka) | floor (process + postgres + kafka) | ratio |\n|---|---:|---:|---:|\n")
	parts := func(prefix, self string) string {
		var ps []string
		for _, p := range []string{self, "postgres", "kafka"} {
			if v, ok := b.ladderCPU(prefix, p); ok {
				ps = append(ps, format(v))
			}
		}
		return strings.Join(ps, " + ")
	}
	for _, r := range ladderRungs {
		s, ok := b.results["ladder_"+r.key+"_sluice_us"]
		if !ok {
			continue
		}
		f := b.results["ladder_"+r.key+"_floor_us"]
		sParts, fParts := parts("ladder_"+r.key+"_sluice", "sluice"), parts("ladder_"+r.key+"_floor", "floor")
		switch r.key {
		case "consumers":
			fParts = parts("ladder_consumers_kafka_floor", "floor") + "; " + parts("ladder_consumers_pg_floor", "floor")
		case "pipeline":
			fParts = "sum of the floors"
		}
		fmt.Fprintf(sb, "| %s | %s (%s) | %s (%s) | %s |\n", r.label, format(s), sParts, format(f), fParts, format(b.results["ladder_"+r.key+"_ratio"]))
	}
	fmt.Fprintf(sb, "\n- Group commits: Sluice's mean per window (the floor's batch): %s saturated, %s one tenant, %s at 1,000/s. "+
		"Credits transactions: %s records, %s grants per record.\n",
		format(b.results["ladder_ingest_commit_batch"]), format(b.results["ladder_ingest_1tenant_commit_batch"]),
		format(b.results["ladder_ingest_at_1000_commit_batch"]), format(b.results["ladder_consumers_batch"]),
		format(b.results["ladder_consumers_grants_per_record"]))
}

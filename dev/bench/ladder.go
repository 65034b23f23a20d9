package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/dev/bench/floor"
	"github.com/sluicehq/sluice/dev/procfs"
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
//   - pipeline: `sluice serve` (or the stages as separate processes),
//     saturated and paced, counted until applied and relayed, against the
//     floors run live as one pipeline at the rate Sluice's window reached,
//     with its group commits and credits batches (and, saturated, beside
//     the sum of the stages' floors per event).

// ladderRate is the paced rungs' rate.
const ladderRate = 1000

// floorSuffix is appended to the topics the relay floor produces to, so
// its records reach no Sluice consumer.
const floorSuffix = ".floor"

func (b *bench) ladder(ctx context.Context) error {
	// BENCH_LADDER_ROUNDS=n repeats the ladder in one sitting and reports
	// each figure's median (a ratio: the median of the rounds' ratios).
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("BENCH_LADDER_ROUNDS")); err == nil && n > 1 {
		rounds = n
	}
	seen := map[string][]float64{}
	for i := range rounds {
		if rounds > 1 {
			log.Printf("ladder round %d of %d", i+1, rounds)
		}
		b.ladderRoundN = i
		if err := b.ladderRound(ctx); err != nil {
			return err
		}
		b.ladderRatios()
		for k, v := range b.results {
			if strings.HasPrefix(k, "ladder_") {
				seen[k] = append(seen[k], v)
			}
		}
	}
	b.medians(seen)
	b.results["ladder_rounds"] = float64(rounds)
	return nil
}

// ladderSlot names a slot of this round's: a relay records the slots it
// streamed from and refuses one that vanished (it would have lost events),
// so a round never reuses an earlier round's name.
func (b *bench) ladderSlot(name string) string {
	return b.slot(fmt.Sprintf("ladder%d_%s", b.ladderRoundN, name))
}

// ladderRound measures every rung once.
func (b *bench) ladderRound(ctx context.Context) error {
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
	relaySlot, floorSlot := b.ladderSlot("relay"), b.ladderSlot("floor")
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
	return b.deliveryFloor(ctx)
}

// deliveryConns is the deliveries floor's clients: the deliver step's
// endpoints, one per tenant.
const deliveryConns = 8

// deliveryFloor sends signed requests to the null server for a window
// (deliver-floor) and records the client's CPU per request: the floor of
// the deliver step's Sluice CPU per delivery, reported beside it without a
// target.
func (b *bench) deliveryFloor(ctx context.Context) error {
	null, err := start("null", b.self, []string{"null-server", b.nullAddr}, nil, b.nullAddr, "", "/", b.outDir)
	if err != nil {
		return err
	}
	defer null.terminate()
	cmd := exec.CommandContext(ctx, b.self, "deliver-floor", "http://"+b.nullAddr+"/endpoint", strconv.Itoa(deliveryConns),
		b.window().String(), "1000")
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("deliver-floor: %w", err)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || n == 0 {
		return fmt.Errorf("deliver-floor answered %q", out)
	}
	b.results["ladder_deliveries_floor_us"] = float64(childCPU(cmd.ProcessState).Microseconds()) / n
	log.Printf("ladder deliveries: floor %.0f requests/s, %.1f us of CPU each", n/b.window().Seconds(), b.results["ladder_deliveries_floor_us"])
	return nil
}

// ladderWindow is one measured window of the generator against addr.
type ladderWindow struct {
	rung    string
	sources []benchSource
	rate    int // events/s; 0: saturated
}

func (b *bench) ladderWindows() []ladderWindow {
	return []ladderWindow{
		{"ingest", b.sources, 0},
		{"ingest_1tenant", b.sources[:1], 0},
		{"ingest_at_1000", b.sources, ladderRate},
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
		// Quiet first: a profile taken from here would cover the wait.
		if err := b.quietPostgres(ctx, "ladder "+w.rung); err != nil {
			p.terminate()
			return err
		}
		if os.Getenv("BENCH_PROFILE") != "" {
			go b.profile("ladder_"+w.rung, b.opsAddr, b.window()-time.Second)
		}
		stmts := b.readStatements(ctx)
		before, beforeBatch := b.cpu.sample(p), commitTotals(b.opsAddr)
		ok, err := b.ladderLoad(ctx, w)
		if err != nil {
			p.terminate()
			return err
		}
		b.cpu.perEvent("ladder_"+w.rung+"_sluice", before, b.cpu.sample(p).only("sluice", "postgres", "postgres_server"), ok, cpu)
		b.writeStatements(ctx, "ladder_"+w.rung, stmts, ok)
		after := commitTotals(b.opsAddr)
		batches[w.rung] = (after[0] - beforeBatch[0]) / max(1, after[1]-beforeBatch[1])
		b.results["ladder_"+w.rung+"_commit_batch"] = batches[w.rung]
	}
	p.terminate()
	for _, w := range b.ladderWindows() {
		batch := max(1, int(math.Round(batches[w.rung])))
		f, err := b.startIngestFloor(batch, w.rung)
		if err != nil {
			return err
		}
		if err := b.quietPostgres(ctx, "ladder "+w.rung+" floor"); err != nil {
			f.terminate()
			return err
		}
		stmts := b.readStatements(ctx)
		before := b.cpu.sample(f)
		ok, err := b.ladderLoad(ctx, w)
		after := b.cpu.sample(f)
		f.terminate()
		if err != nil {
			return err
		}
		b.writeStatements(ctx, "floor_"+w.rung, stmts, ok)
		b.cpu.perEvent("ladder_"+w.rung+"_floor", before, after.only("floor", "postgres", "postgres_server"), ok, cpu)
		log.Printf("ladder %s: floor with group commits of %d", w.rung, batch)
	}
	b.medians(cpu)
	return nil
}

// startIngestFloor starts the ingest floor at the stage's address with
// group commits of batch (BENCH_PROFILE: profiled into floor_<rung>).
func (b *bench) startIngestFloor(batch int, rung string) (*proc, error) {
	sourcesFile := filepath.Join(b.outDir, "ladder_sources.json")
	var srcs []floor.Source
	for _, s := range b.sources {
		srcs = append(srcs, floor.Source{ID: s.sourceID, Tenant: s.tenantID, Account: s.account, Secret: s.secret})
	}
	raw, _ := json.Marshal(srcs)
	if err := os.WriteFile(sourcesFile, raw, 0o600); err != nil {
		return nil, err
	}
	var env []string
	if os.Getenv("BENCH_PROFILE") != "" {
		env = []string{"BENCH_FLOOR_PROFILE=" + filepath.Join(b.outDir, "floor_"+rung+".cpu.pprof")}
	}
	return start("floor", b.self, []string{"ingest-floor", b.stageAddr, b.dbURL, b.prefix + ".invoices", strconv.Itoa(batch), sourcesFile},
		env, b.stageAddr, "", "/healthz", b.outDir)
}

// with is s with name set to d.
func (s cpuSample) with(name string, d time.Duration) cpuSample {
	s[name] = d
	return s
}

// ladderLoad sends one window and returns the events accepted (the paced
// warm-up's included: they are served and counted by the CPU samples).
func (b *bench) ladderLoad(ctx context.Context, w ladderWindow) (float64, error) {
	g := b.generatorOf(b.stageAddr, conns, w.sources)
	if w.rate == 0 {
		r := g.saturate(conns, b.window())
		log.Printf("ladder %s: %.0f events/s, %d rejected, %d errors", w.rung, r.rate(), r.rejected, r.errors)
		return float64(r.ok), nil
	}
	r := g.paced(w.rate, conns, b.window())
	log.Printf("ladder %s: %.0f events/s, %d rejected, %d errors", w.rung, r.rate(), r.rejected, r.errors)
	return float64(r.ok) + float64(w.rate)*pacedWarmup.Seconds(), nil
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
	if err := b.quietPostgres(ctx, "ladder relay"); err != nil {
		return err
	}
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
	if err := b.quietPostgres(ctx, "ladder relay floor"); err != nil {
		return err
	}
	before := b.cpu.sample()
	live, err := b.startFloorRelay(ctx, floorSlot, endLSN)
	if err != nil {
		return err
	}
	if err := live.wait(); err != nil {
		return err
	}
	after := b.cpu.sample()
	after["floor"] = childCPU(live.recv.ProcessState) + childCPU(live.producer.ProcessState)
	b.cpu.perEvent("ladder_relay_floor", before, after.only("floor", "postgres", "postgres_server", "kafka", "kafka_aside"), float64(rows), cpu)
	log.Printf("ladder relay: %d rows; floor: %s", rows, strings.TrimSpace(live.out.String()))
	b.medians(cpu)
	if err := b.dropSlot(ctx, floorSlot); err != nil {
		return err
	}
	return nil
}

// floorRelay is pg_recvlogical piped into the relay floor.
type floorRelay struct {
	recv, producer *exec.Cmd
	out, recvErr   strings.Builder
}

// startFloorRelay reads slot with the relay's pgoutput options up to
// endLSN ("": until stopped) into the relay floor.
func (b *bench) startFloorRelay(ctx context.Context, slot, endLSN string) (*floorRelay, error) {
	args := []string{"-d", b.dbURL, "--slot", slot, "--start", "--no-loop",
		"-o", "proto_version=2", "-o", "binary=true", "-o", "messages=true", "-o", "publication_names=sluice_outbox", "-f", "-"}
	if endLSN != "" {
		args = append(args, "--endpos", endLSN)
	}
	l := &floorRelay{recv: exec.CommandContext(ctx, pgBin("pg_recvlogical"), args...),
		producer: exec.CommandContext(ctx, b.self, "relay-floor", b.brokers, floorSuffix)}
	pipe, err := l.recv.StdoutPipe()
	if err != nil {
		return nil, err
	}
	l.producer.Stdin = pipe
	l.recv.Stderr, l.producer.Stdout, l.producer.Stderr = &l.recvErr, &l.out, &l.out
	if err := l.producer.Start(); err != nil {
		return nil, err
	}
	if err := l.recv.Start(); err != nil {
		_ = l.producer.Process.Kill()
		_ = l.producer.Wait()
		return nil, err
	}
	return l, nil
}

// wait waits until pg_recvlogical reached its end and the floor had every
// record acknowledged.
func (l *floorRelay) wait() error {
	if err := l.recv.Wait(); err != nil {
		_ = l.producer.Process.Kill()
		_ = l.producer.Wait()
		return fmt.Errorf("pg_recvlogical: %w: %s", err, l.recvErr.String())
	}
	if err := l.producer.Wait(); err != nil {
		return fmt.Errorf("relay floor: %w: %s", err, l.out.String())
	}
	return nil
}

// stop ends a live pipe: pg_recvlogical flushes and exits on SIGINT, the
// floor then has what it read acknowledged.
func (l *floorRelay) stop() {
	_ = l.recv.Process.Signal(os.Interrupt)
	_ = l.recv.Wait()
	_ = l.producer.Wait()
}

// pgBin is a Postgres client program of the server's installation.
func pgBin(name string) string {
	bindir, err := exec.Command("pg_config", "--bindir").Output()
	if err != nil {
		return name
	}
	return filepath.Join(strings.TrimSpace(string(bindir)), name)
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
	var grantsBefore, grantsAfter, deadBefore, deadAfter int64
	if err := b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM credit_grants), (SELECT count(*) FROM dead_letters)`).Scan(&grantsBefore, &deadBefore); err != nil {
		return err
	}
	if err := b.quietPostgres(ctx, "ladder consumers"); err != nil {
		return err
	}
	n, _, batch, err := b.consumeOnce(ctx, "ladder_consumers_sluice")
	if err != nil {
		return err
	}
	if err := b.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM credit_grants), (SELECT count(*) FROM dead_letters)`).Scan(&grantsAfter, &deadAfter); err != nil {
		return err
	}
	// The ingest floor's rows are in the backlog too: a row Sluice's
	// consumers could not take would be a floor that skipped work.
	if deadAfter > deadBefore {
		return fmt.Errorf("the consumers dead-lettered %d of the ladder's records", deadAfter-deadBefore)
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
	var used [2]cpuSample
	counts := [2]int{rows / 10, rows}
	for i, n := range counts {
		before := b.cpu.sample()
		cmd, err := b.startConsumerPerf(ctx, n, strconv.Itoa(i))
		if err != nil {
			return err
		}
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("ConsumerPerformance: %w: %s", err, cmd.Stdout)
		}
		after := b.cpu.sample()
		used[i] = cpuSample{"floor": childCPU(cmd.ProcessState), "kafka": after["kafka"] - before["kafka"], "kafka_aside": after["kafka_aside"] - before["kafka_aside"]}
		log.Printf("ladder consumers: ConsumerPerformance read %d records: %s", n, lastLine(cmd.Stdout.(*strings.Builder).String()))
	}
	b.cpu.perEvent("ladder_consumers_kafka_floor", used[0], used[1], float64(counts[1]-counts[0]), cpu)
	return nil
}

// startConsumerPerf starts ConsumerPerformance reading n records of the
// floor's invoices topic in a group of its own; its output is its Stdout,
// a *strings.Builder.
func (b *bench) startConsumerPerf(ctx context.Context, n int, group string) (*exec.Cmd, error) {
	script, err := filepath.Abs("dev/kafka/bin/kafka-run-class")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, script, "org.apache.kafka.tools.ConsumerPerformance",
		"--bootstrap-server", b.brokers, "--topic", b.prefix+".invoices"+floorSuffix, "--messages", strconv.Itoa(n),
		"--group", b.prefix+".floor-perf-"+group, "--timeout", "60000")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	return cmd, cmd.Start()
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}

// creditsPgbench runs the credits handler's statements for rows records in
// transactions of batch records, grantShare of them making a grant, and
// records pgbench's and Postgres's CPU per record.
func (b *bench) creditsPgbench(ctx context.Context, rows int, batch, grantShare float64, cpu map[string][]float64) error {
	script, err := b.creditsScript(ctx, batch, grantShare)
	if err != nil {
		return err
	}
	if err := b.quietPostgres(ctx, "ladder credits floor"); err != nil {
		return err
	}
	records := max(1, int(math.Round(batch)))
	txs := max(1, rows/records)
	cmd := exec.CommandContext(ctx, pgBin("pgbench"), "-n", "-M", "prepared", "-c", "1", "-t", strconv.Itoa(txs), "-f", script, b.dbURL)
	before := b.cpu.sample()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgbench credits: %w: %s", err, out)
	}
	after := b.cpu.sample()
	after["floor"] = childCPU(cmd.ProcessState)
	b.cpu.perEvent("ladder_consumers_pg_floor", before.with("floor", 0), after.only("floor", "postgres", "postgres_server"), float64(txs*records), cpu)
	log.Printf("ladder consumers: pgbench ran %d transactions of %d records", txs, records)
	return nil
}

// creditsScript writes the pgbench script of one credits transaction of
// batch records, grantShare of them granting, for customers of the bench's
// tenants drawn at random; it returns its path.
func (b *bench) creditsScript(ctx context.Context, batch, grantShare float64) (string, error) {
	sources := map[string]benchSource{}
	for _, s := range b.sources {
		sources[s.tenantID] = s
	}
	rows, err := b.pool.Query(ctx, `SELECT tenant_id::text, workspace_id::text, customer_id FROM workspace_customers WHERE tenant_id = ANY($1::uuid[])`,
		slices.Collect(maps.Keys(sources)))
	if err != nil {
		return "", err
	}
	customers, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (floor.Customer, error) {
		var c floor.Customer
		err := r.Scan(&c.Tenant, &c.Workspace, &c.Customer)
		return c, err
	})
	if err != nil || len(customers) == 0 {
		return "", fmt.Errorf("the bench's customers: %d (%v)", len(customers), err)
	}
	var picked []floor.Customer
	records := max(1, int(math.Round(batch)))
	for range max(1, int(math.Round(float64(records)*grantShare))) {
		c := customers[rand.IntN(len(customers))]
		c.Source, c.Account = sources[c.Tenant].sourceID, sources[c.Tenant].account
		picked = append(picked, c)
	}
	script := filepath.Join(b.outDir, fmt.Sprintf("ladder_credits_%d.sql", records))
	return script, os.WriteFile(script, []byte(floor.CreditsScript(picked, b.prefix+".invoices", b.prefix+".notifications")), 0o644)
}

// pipelineRun is one whole-pipeline window: `sluice serve` or the stages
// as separate processes, saturated or paced, with the bench's tenants or
// one.
type pipelineRun struct {
	key      string
	separate bool
	paced    bool
	one      bool
}

// pipelineRuns are the whole pipeline's windows: the quick run measures
// the cells the targets read first (serve saturated and paced, the
// separate stages paced, one tenant saturated), the full run all eight.
func (b *bench) pipelineRuns() []pipelineRun {
	var runs []pipelineRun
	for _, separate := range []bool{false, true} {
		for _, paced := range []bool{false, true} {
			for _, one := range []bool{false, true} {
				key := "pipeline" + map[bool]string{false: "", true: "_separate"}[separate] +
					map[bool]string{false: "", true: "_at_1000"}[paced] + map[bool]string{false: "", true: "_1tenant"}[one]
				runs = append(runs, pipelineRun{key, separate, paced, one})
			}
		}
	}
	if !b.quick {
		return runs
	}
	quick := map[string]bool{"pipeline": true, "pipeline_at_1000": true, "pipeline_separate_at_1000": true, "pipeline_1tenant": true}
	var kept []pipelineRun
	for _, r := range runs {
		if quick[r.key] {
			kept = append(kept, r)
		}
	}
	return kept
}

// ladderPipeline runs each whole-pipeline window, then the floors as one
// live pipeline at each window's rate: paced, at ladderRate (one floor for
// serve and separate stages, with serve's batches); saturated, at the rate
// Sluice reached in that window, with its batches.
func (b *bench) ladderPipeline(ctx context.Context, adm *kadm.Client) error {
	cpu := map[string][]float64{}
	runs := b.pipelineRuns()
	for _, r := range runs {
		if err := b.pipelineWindow(ctx, adm, r, cpu); err != nil {
			return fmt.Errorf("%s: %w", r.key, err)
		}
	}
	b.medians(cpu)
	for _, r := range runs {
		if r.paced && r.separate {
			continue // serve's floor at the same rate
		}
		sources := b.sources
		if r.one {
			sources = sources[:1]
		}
		rate := ladderRate
		if !r.paced {
			rate = int(math.Round(b.results["ladder_"+r.key+"_rate"]))
		}
		if err := b.floorPipeline(ctx, adm, sources, r.key, max(1, rate)); err != nil {
			return fmt.Errorf("%s floor: %w", r.key, err)
		}
	}
	return nil
}

// pipelineStages starts the run's Sluice processes on slot: serve, or
// ingest, cdc and consume on ports of their own (BENCH_PORT's +3 to +7),
// consume last, so b.opsAddr reads its metrics.
func (b *bench) pipelineStages(r pipelineRun, slot string) ([]*proc, error) {
	if !r.separate {
		p, err := b.startSluice("serve", b.stageAddr, slot)
		return []*proc{p}, err
	}
	host, port, _ := strings.Cut(b.stageAddr, ":")
	base, _ := strconv.Atoi(port)
	var procs []*proc
	for i, stage := range []string{"ingest", "cdc", "consume"} {
		addr, admin := b.stageAddr, fmt.Sprintf("%s:%d", host, base+3+2*i)
		if stage != "ingest" {
			addr = fmt.Sprintf("%s:%d", host, base+2+2*i)
		}
		p, err := start("sluice-"+stage, b.bin, []string{stage}, append(b.sluiceEnv(addr, slot), "SLUICE_ADMIN_ADDR="+admin),
			addr, admin, "/readyz/stages", b.outDir)
		if err != nil {
			for _, q := range procs {
				q.terminate()
			}
			return nil, err
		}
		procs = append(procs, p)
		b.opsAddr = p.ops
	}
	return procs, nil
}

// pipelineWindow measures one window of the whole pipeline, its CPU counted
// until the consumers applied the load and the relay confirmed the e-mails
// it caused.
func (b *bench) pipelineWindow(ctx context.Context, adm *kadm.Client, r pipelineRun, cpu map[string][]float64) error {
	slot := b.ladderSlot(r.key)
	procs, err := b.pipelineStages(r, slot)
	if err != nil {
		return err
	}
	defer func() {
		for _, p := range procs {
			p.terminate()
		}
		if err := b.dropSlot(context.WithoutCancel(ctx), slot); err != nil {
			log.Printf("ladder: %v", err)
		}
	}()
	// What earlier windows left in the topic is applied before this one.
	if err := b.waitPipeline(ctx, slot); err != nil {
		return err
	}
	start, err := b.committed(ctx, adm)
	if err != nil {
		return err
	}
	b.settle(ctx, "ladder "+r.key)
	sources := b.sources
	if r.one {
		sources = sources[:1]
	}
	if err := b.quietPostgres(ctx, "ladder "+r.key); err != nil {
		return err
	}
	if os.Getenv("BENCH_PROFILE") != "" && !r.separate {
		go b.profile("ladder_"+r.key, b.opsAddr, b.window()-time.Second)
	}
	rate := 0
	if r.paced {
		rate = ladderRate
	}
	// The floors run at this window's batches: ingest's in the process
	// that ingests (serve, or the first of the stages), the credits
	// group's in the one that consumes (b.opsAddr).
	commitsBefore, creditsBefore := commitTotals(procs[0].ops), b.creditsTotals(b.opsAddr)
	stmts := b.readStatements(ctx)
	before, stagesBefore := b.cpu.sample(procs...), stageCPU(procs)
	ok, err := b.ladderLoad(ctx, ladderWindow{r.key, sources, rate})
	if err != nil {
		return err
	}
	if !r.paced {
		b.results["ladder_"+r.key+"_rate"] = ok / b.window().Seconds()
	}
	if err := b.waitApplied(ctx, adm, start, slot, 250*time.Millisecond); err != nil { // fewer scrapes of /metrics
		return err
	}
	if r.separate {
		// Each stage's own process, beside the floors' (ladderStages).
		for stage, used := range stageCPU(procs) {
			b.results["ladder_"+r.key+"_stage_"+stage+"_us"] = float64((used - stagesBefore[stage]).Microseconds()) / ok
		}
	}
	b.cpu.perEvent("ladder_"+r.key+"_sluice", before, b.cpu.sample(procs...).only("sluice", "postgres", "postgres_server", "kafka", "kafka_aside"), ok, cpu)
	b.writeStatements(ctx, "ladder_"+r.key, stmts, ok)
	// The floors' live pipeline commits and applies in batches of the
	// sizes Sluice's made in this window, its load and the drain after it.
	commits, credits := commitTotals(procs[0].ops), b.creditsTotals(b.opsAddr)
	b.results["ladder_"+r.key+"_commit_batch"] = (commits[0] - commitsBefore[0]) / max(1, commits[1]-commitsBefore[1])
	b.results["ladder_"+r.key+"_consumers_batch"] = (credits[0] - creditsBefore[0]) / max(1, credits[1]-creditsBefore[1])
	return nil
}

// stageCPU is each Sluice process's CPU so far, by stage.
func stageCPU(procs []*proc) map[string]time.Duration {
	used := map[string]time.Duration{}
	for _, p := range procs {
		used[strings.TrimPrefix(p.name, "sluice-")] = procfs.CPU(p.cmd.Process.Pid, false)
	}
	return used
}

// creditsTotals reads the credits group's counters: records applied,
// batch transactions.
func (b *bench) creditsTotals(addr string) [2]float64 {
	val, err := metricsOf(addr)
	if err != nil {
		return [2]float64{}
	}
	l := `{group="` + b.prefix + `.credits"}`
	return [2]float64{val("sluice_consumer_records_applied_total" + l), val("sluice_consumer_batch_seconds_count" + l)}
}

// floorPipeline runs the floors as one pipeline paced at rate, Sluice's in
// the window key: the ingest floor with the group commits Sluice's ingest
// made there, pg_recvlogical into the relay floor on a slot of its own,
// ConsumerPerformance on the floor's records and pgbench running the credits
// statements at the rate and batch Sluice's consumers applied at (-R). Each
// process is started before the window and read from /proc around it, so no
// start-up is counted.
func (b *bench) floorPipeline(ctx context.Context, adm *kadm.Client, sources []benchSource, key string, rate int) error {
	batch := max(1, int(math.Round(b.results["ladder_"+key+"_commit_batch"])))
	records := max(1, int(math.Round(b.results["ladder_"+key+"_consumers_batch"])))
	if err := b.floorTopics(ctx, adm); err != nil {
		return err
	}
	f, err := b.startIngestFloor(batch, key)
	if err != nil {
		return err
	}
	defer f.terminate()
	slot := b.ladderSlot("floor_" + key)
	if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
		return err
	}
	defer func() { // after the relay floor stopped (defers run last first)
		if err := b.dropSlot(context.WithoutCancel(ctx), slot); err != nil {
			log.Printf("ladder: %v", err)
		}
	}()
	live, err := b.startFloorRelay(ctx, slot, "")
	if err != nil {
		return err
	}
	defer live.stop()
	expect := int(float64(rate) * (b.window() + pacedWarmup).Seconds())
	perf, err := b.startConsumerPerf(ctx, expect, "live-"+key)
	if err != nil {
		return err
	}
	defer func() { _ = perf.Process.Kill(); _ = perf.Wait() }()
	script, err := b.creditsScript(ctx, float64(records), b.results["ladder_consumers_grants_per_record"])
	if err != nil {
		return err
	}
	txRate := float64(rate) / float64(records)
	pgbench := exec.CommandContext(ctx, pgBin("pgbench"), "-n", "-M", "prepared", "-c", "1", "-R", strconv.FormatFloat(txRate, 'f', 2, 64),
		"-T", strconv.Itoa(int((b.window() + pacedWarmup).Seconds())), "-f", script, b.dbURL)
	// The JVM's start is not counted: the window begins once its group
	// has its partitions.
	if err := waitFor(ctx, time.Minute, "ConsumerPerformance to join its group", func() (bool, error) {
		groups, err := adm.DescribeGroups(ctx, b.prefix+".floor-perf-live-"+key)
		if err != nil {
			return false, err
		}
		g := groups[b.prefix+".floor-perf-live-"+key]
		return g.State == "Stable" && len(g.Members) > 0, nil
	}); err != nil {
		return err
	}
	stages := map[string][]int{"ingest": {f.cmd.Process.Pid}, "cdc": {live.recv.Process.Pid, live.producer.Process.Pid}, "consume": {perf.Process.Pid}}
	all := slices.Concat(stages["ingest"], stages["cdc"], stages["consume"])
	stagesBefore := map[string]time.Duration{}
	for stage, pids := range stages {
		stagesBefore[stage] = pidsCPU(pids)
	}
	if err := b.quietPostgres(ctx, "ladder "+key+" floor"); err != nil {
		return err
	}
	stmts := b.readStatements(ctx)
	before := b.cpu.sample().with("floor", pidsCPU(all))
	if err := pgbench.Start(); err != nil {
		return err
	}
	ok, err := b.ladderLoad(ctx, ladderWindow{key + " floor", sources, rate})
	if err != nil {
		return err
	}
	if err := pgbench.Wait(); err != nil {
		return fmt.Errorf("pgbench: %w", err)
	}
	if err := b.waitRelayed(ctx, slot); err != nil {
		return err
	}
	// ConsumerPerformance reads what the floor sent within its fetch wait
	// (500 ms): counted, not waited for exactly (it reports at its end).
	time.Sleep(time.Second)
	after := b.cpu.sample().with("floor", pidsCPU(all)+childCPU(pgbench.ProcessState))
	for stage, pids := range stages {
		used := pidsCPU(pids) - stagesBefore[stage]
		if stage == "consume" {
			used += childCPU(pgbench.ProcessState)
		}
		b.results["ladder_"+key+"_floorstage_"+stage+"_us"] = float64(used.Microseconds()) / ok
	}
	cpu := map[string][]float64{}
	b.cpu.perEvent("ladder_"+key+"_floor", before, after.only("floor", "postgres", "postgres_server", "kafka", "kafka_aside"), ok, cpu)
	b.writeStatements(ctx, "floor_"+key, stmts, ok)
	b.medians(cpu)
	return nil
}

// pidsCPU is the CPU the processes used so far.
func pidsCPU(pids []int) time.Duration {
	var d time.Duration
	for _, pid := range pids {
		d += procfs.CPU(pid, false)
	}
	return d
}

// ladderRungs are the table's rows: each rung's Sluice and floor keys.
var ladderRungs = []struct{ key, label string }{
	{"ingest", "ingest, 8 tenants, saturated"},
	{"ingest_1tenant", "ingest, 1 tenant, saturated"},
	{"ingest_at_1000", "ingest, 8 tenants, 1,000 events/s"},
	{"relay", "relay, per outbox row (backlog)"},
	{"consumers", "consumers (credits), per record (backlog)"},
	{"pipeline", "whole pipeline, serve, 8 tenants, saturated"},
	{"pipeline_1tenant", "whole pipeline, serve, 1 tenant, saturated"},
	{"pipeline_at_1000", "whole pipeline, serve, 8 tenants, 1,000 events/s"},
	{"pipeline_at_1000_1tenant", "whole pipeline, serve, 1 tenant, 1,000 events/s"},
	{"pipeline_separate", "whole pipeline, separate stages, 8 tenants, saturated"},
	{"pipeline_separate_1tenant", "whole pipeline, separate stages, 1 tenant, saturated"},
	{"pipeline_separate_at_1000", "whole pipeline, separate stages, 8 tenants, 1,000 events/s"},
	{"pipeline_separate_at_1000_1tenant", "whole pipeline, separate stages, 1 tenant, 1,000 events/s"},
}

// pipelineFloor names the floor a whole-pipeline rung is read against:
// the floors run live as one pipeline at the rung's rate with its batches
// (paced: serve's window at 1,000/s, which separate stages share).
func (b *bench) pipelineFloor(key string) (float64, string, bool) {
	live := b.liveFloor(key)
	v, ok := b.ladderSum("ladder_"+live+"_floor", "floor")
	return v, fmt.Sprintf("the floors live at %s/s", format(b.liveRate(key))), ok
}

// liveFloor is the key of the floors' live pipeline a rung is read against.
func (b *bench) liveFloor(key string) string {
	if strings.Contains(key, "_at_1000") {
		return "pipeline_at_1000" + map[bool]string{false: "", true: "_1tenant"}[strings.HasSuffix(key, "_1tenant")]
	}
	return key
}

// liveRate is the rate of the floors' live pipeline of a rung.
func (b *bench) liveRate(key string) float64 {
	if strings.Contains(key, "_at_1000") {
		return ladderRate
	}
	return math.Round(b.results["ladder_"+key+"_rate"])
}

// floorSum is a saturated whole-pipeline rung's other floor: the sum of the
// stages' floors per event, each measured on its own (ingest saturated with
// as many tenants, the relay and the consumers from a backlog: batches of
// thousands of records, which a live pipeline does not make); an event is
// ingested once, relayed once with each e-mail its grant caused, consumed
// once.
func (b *bench) floorSum(key string) (float64, bool) {
	ingest := "ingest" + map[bool]string{false: "", true: "_1tenant"}[strings.HasSuffix(key, "_1tenant")]
	in, ok1 := b.results["ladder_"+ingest+"_floor_us"]
	relay, ok2 := b.results["ladder_relay_floor_us"]
	consume, ok3 := b.results["ladder_consumers_floor_us"]
	return in + relay*(1+b.results["ladder_consumers_grants_per_record"]) + consume, ok1 && ok2 && ok3
}

// ladderSum is a rung's processes' CPU per event summed: self (sluice or
// floor), Postgres and Kafka.
func (b *bench) ladderSum(prefix, self string) (float64, bool) {
	var total float64
	found := false
	for _, p := range []string{self, "postgres", "kafka"} {
		if v, ok := b.ladderCPU(prefix, p); ok {
			total, found = total+v, true
		}
	}
	return total, found
}

// ladderRatios sums each rung's processes and divides Sluice's by the
// floor's: ladder_<rung>_sluice_us, _floor_us, _ratio.
func (b *bench) ladderRatios() {
	for _, r := range ladderRungs {
		s, ok1 := b.ladderSum("ladder_"+r.key+"_sluice", "sluice")
		f, ok2 := b.ladderSum("ladder_"+r.key+"_floor", "floor")
		switch {
		case r.key == "consumers":
			k, _ := b.ladderSum("ladder_consumers_kafka_floor", "floor")
			pg, _ := b.ladderSum("ladder_consumers_pg_floor", "floor")
			f, ok2 = k+pg, k > 0 && pg > 0
		case strings.HasPrefix(r.key, "pipeline"):
			f, _, ok2 = b.pipelineFloor(r.key)
			if sum, ok := b.floorSum(r.key); ok1 && ok && sum > 0 && !strings.Contains(r.key, "_at_1000") {
				b.results["ladder_"+r.key+"_floor_sum_us"] = sum
				b.results["ladder_"+r.key+"_ratio_to_sum"] = s / sum
			}
		}
		if ok1 && ok2 && f > 0 {
			b.results["ladder_"+r.key+"_sluice_us"], b.results["ladder_"+r.key+"_floor_us"] = s, f
			b.results["ladder_"+r.key+"_ratio"] = s / f
		}
	}
}

// ladderSums prints the saturated pipeline rungs against the sum of the
// stages' floors, each measured alone (the relay's and the consumers' from
// a backlog): the measure before the floors ran live at Sluice's rate,
// kept beside it.
func (b *bench) ladderSums(sb *strings.Builder) {
	var cells []string
	for _, r := range ladderRungs {
		if v, ok := b.results["ladder_"+r.key+"_ratio_to_sum"]; ok {
			cells = append(cells, fmt.Sprintf("%s %s (%s against %s)", r.label, format(v),
				format(b.results["ladder_"+r.key+"_sluice_us"]), format(b.results["ladder_"+r.key+"_floor_sum_us"])))
		}
	}
	if len(cells) > 0 {
		fmt.Fprintf(sb, "\n- Saturated, against the sum of the stages' floors each measured alone (the relay's and the consumers' from a backlog, batches of thousands): %s.\n",
			strings.Join(cells, "; "))
	}
}

// ladderStages prints, at 1,000 events/s, each stage's own process beside
// its floor's, with the stages live together (Postgres and Kafka serve them
// all at once, so only the whole pipeline's totals include them).
func (b *bench) ladderStages(sb *strings.Builder) {
	if _, ok := b.results["ladder_pipeline_separate_at_1000_stage_ingest_us"]; !ok {
		return
	}
	if _, ok := b.results["ladder_pipeline_at_1000_floorstage_ingest_us"]; !ok {
		return
	}
	fmt.Fprintf(sb, "\nAt 1,000 events/s, stages live together, each stage's own process per accepted event (Postgres and Kafka in the pipeline's rows)\n\n")
	fmt.Fprintf(sb, "| stage | sluice | floor | ratio |\n|---|---:|---:|---:|\n")
	for _, st := range []struct{ key, label, floor string }{
		{"ingest", "ingest", "the ingest floor"},
		{"cdc", "relay", "pg_recvlogical + the relay floor"},
		{"consume", "consumers", "ConsumerPerformance + pgbench"},
	} {
		s := b.results["ladder_pipeline_separate_at_1000_stage_"+st.key+"_us"]
		f := b.results["ladder_pipeline_at_1000_floorstage_"+st.key+"_us"]
		b.results["ladder_"+st.key+"_process_ratio_at_1000"] = s / f
		fmt.Fprintf(sb, "| %s | %s | %s (%s) | %s |\n", st.label, format(s), format(f), st.floor, format(s/f))
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
	fmt.Fprintf(sb, "\nCost ladder: CPU per event, microseconds, Sluice's stage beside a floor doing its mandatory work (same run; medians of %d rounds, BENCH_LADDER_ROUNDS)\n\n",
		int(b.results["ladder_rounds"]))
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
		switch {
		case r.key == "consumers":
			fParts = parts("ladder_consumers_kafka_floor", "floor") + "; " + parts("ladder_consumers_pg_floor", "floor")
		case strings.HasPrefix(r.key, "pipeline"):
			_, fParts, _ = b.pipelineFloor(r.key)
			fParts += ": " + parts("ladder_"+b.liveFloor(r.key)+"_floor", "floor")
		}
		fmt.Fprintf(sb, "| %s | %s (%s) | %s (%s) | %s |\n", r.label, format(s), sParts, format(f), fParts, format(b.results["ladder_"+r.key+"_ratio"]))
	}
	b.ladderSums(sb)
	b.ladderStages(sb)
	if f, ok := b.results["ladder_deliveries_floor_us"]; ok {
		fmt.Fprintf(sb, "\n- Deliveries (no target): the floor, a client signing each request (Standard Webhooks) to a null server over %d connections, %s us per request", deliveryConns, format(f))
		if s, ok := b.results["deliver_sluice_cpu_us_per_delivery"]; ok {
			total := s + b.results["deliver_postgres_cpu_us_per_delivery"] + b.results["deliver_kafka_cpu_us_per_delivery"]
			b.results["ladder_deliveries_ratio"] = total / f
			fmt.Fprintf(sb, "; Sluice per delivery in the deliver step (beyond the same events without endpoints) %s (%s + %s + %s), %s times the floor",
				format(total), format(s), format(b.results["deliver_postgres_cpu_us_per_delivery"]), format(b.results["deliver_kafka_cpu_us_per_delivery"]), format(total/f))
		} else {
			fmt.Fprintf(sb, " (Sluice's figure comes from the deliver step, which did not run)")
		}
		fmt.Fprintln(sb, ".")
	}
	fmt.Fprintf(sb, "\n- Group commits: Sluice's mean per window (the floor's batch): %s saturated, %s one tenant, %s at 1,000/s. "+
		"Credits transactions: %s records, %s grants per record.\n",
		format(b.results["ladder_ingest_commit_batch"]), format(b.results["ladder_ingest_1tenant_commit_batch"]),
		format(b.results["ladder_ingest_at_1000_commit_batch"]), format(b.results["ladder_consumers_batch"]),
		format(b.results["ladder_consumers_grants_per_record"]))
	var cells []string
	for _, r := range b.pipelineRuns() {
		if _, ok := b.results["ladder_"+r.key+"_floor_us"]; ok && b.liveFloor(r.key) == r.key {
			cells = append(cells, fmt.Sprintf("%s: %s events/s, group commits of %s, credits transactions of %s", r.key,
				format(b.liveRate(r.key)), format(b.results["ladder_"+r.key+"_commit_batch"]), format(b.results["ladder_"+r.key+"_consumers_batch"])))
		}
	}
	if len(cells) > 0 {
		fmt.Fprintf(sb, "- The floors' live pipelines ran at Sluice's rate and batches: %s.\n", strings.Join(cells, "; "))
	}
}
